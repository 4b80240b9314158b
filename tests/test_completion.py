"""Completion (C1–C4, C6): when a call may run, and what each way a stream ends makes of it.

The parametrised tests follow the table "How a stream ends decides what its calls become" in
REQUIREMENTS.md row by row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from callstream.reference import Assembler, AssemblerClosedError, CallResult, Reason, Status
from tests.helpers import (
    NOW,
    args,
    assemble_every_way,
    chunk,
    header,
    quirks,
    simple_call,
    sse,
)

PARTIAL = simple_call(arguments='{"city": "Par', finish=None)
"""A call cut off inside its arguments, before any finish reason."""


def only_call(results: list[CallResult]) -> CallResult:
    """The single result of a one-call stream."""
    assert len(results) == 1, results
    return results[0]


def legacy_call(arguments: str, name: str | None = None) -> dict[str, Any]:
    """A chunk with a legacy ``delta.function_call`` (pre-``tools`` OpenAI)."""
    function_call = {"arguments": arguments} if name is None else {"name": name, "arguments": ""}
    payload = chunk()
    payload["choices"][0]["delta"]["function_call"] = function_call
    return payload


def feed_one_event_at_a_time(
    payloads: Sequence[dict[str, Any] | str], asm: Assembler | None = None
) -> list[list[CallResult]]:
    """What each ``feed()`` released when every payload arrives as its own SSE event."""
    asm = asm if asm is not None else Assembler()
    return [asm.feed(sse(payload, done=False)) for payload in payloads]


# --- finish reasons that complete ---------------------------------------------------------------


@pytest.mark.parametrize("done", [True, False], ids=["then-DONE", "then-EOF"])
@pytest.mark.parametrize("finish", ["tool_calls", "stop"])
def test_a_completing_finish_reason_makes_the_call_ready(finish: str, done: bool) -> None:
    """C1, table row 1: ``tool_calls`` or ``stop``, then ``[DONE]`` or EOF, completes the call;
    ``stop`` with calls and a missing ``[DONE]`` are recorded."""
    results, findings = assemble_every_way(sse(*simple_call(finish=finish), done=done))
    call = only_call(results)
    assert call.ready
    assert call.arguments == {"city": "Paris"}
    assert ("openai-chat/C16" in quirks(findings)) == (finish == "stop")
    assert ("openai-chat/C24" in quirks(findings)) == (not done)


def test_a_legacy_function_call_finish_completes_the_call() -> None:
    """C1, table row 1: a legacy ``delta.function_call`` ended by ``function_call`` is one ready
    call (with a synthesised id, since the legacy shape has none)."""
    payloads = [
        legacy_call("", name="get_weather"),
        legacy_call('{"city": '),
        legacy_call('"Paris"}'),
        chunk(finish="function_call"),
    ]
    results, findings = assemble_every_way(sse(*payloads))
    call = only_call(results)
    assert call.ready
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})
    assert call.synthetic_id
    assert call.id
    assert "openai-chat/C27" in quirks(findings)


def test_a_finish_in_the_same_chunk_as_the_last_fragment_includes_it() -> None:
    """C1: deltas are applied before the finish reason of the same chunk."""
    payloads = [
        chunk(header(0, "call_1", "get_weather", '{"city": '), role="assistant"),
        chunk(args(0, '"Paris"}'), finish="tool_calls"),
    ]
    results, _ = assemble_every_way(sse(*payloads))
    assert only_call(results).arguments == {"city": "Paris"}


def test_results_are_released_by_the_feed_that_carries_the_finish() -> None:
    """C1: the finish chunk's own ``feed()`` returns the ready call; ``[DONE]`` and ``close()``
    have nothing left to report."""
    asm = Assembler()
    released = feed_one_event_at_a_time([*simple_call(), "[DONE]"], asm)
    assert [len(batch) for batch in released] == [0, 0, 0, 0, 1, 0]
    assert released[4][0].ready
    assert asm.close() == []


# --- finish reasons that reject -----------------------------------------------------------------


@pytest.mark.parametrize("done", [True, False], ids=["then-DONE", "then-EOF"])
@pytest.mark.parametrize(
    ("finish", "reason"),
    [
        ("length", Reason.TRUNCATED),
        ("content_filter", Reason.FILTERED),
        ("insufficient_system_resource", Reason.PROVIDER_FINISH),
        ("error", Reason.STREAM_ERROR),
    ],
)
def test_a_non_completing_finish_reason_rejects_the_call(
    finish: str, reason: Reason, done: bool
) -> None:
    """C3, table rows 2–3: ``length``, ``content_filter``, vendor finish reasons and ``error``
    reject the call with their own reason, keeping the partial text but no value."""
    results, _ = assemble_every_way(sse(*PARTIAL, chunk(finish=finish), done=done))
    call = only_call(results)
    assert (call.status, call.reason) == (Status.REJECTED, reason)
    assert call.arguments_text == '{"city": "Par'
    assert call.arguments is None


def test_a_length_finish_rejects_even_text_that_parses() -> None:
    """C3: a token limit that happens to fall right after a closing brace is still a
    truncation, never a success."""
    stream = simple_call(finish="length")
    results, _ = assemble_every_way(sse(*stream))
    assert only_call(results).reason is Reason.TRUNCATED


def test_a_vendor_finish_reason_is_recorded() -> None:
    """C3: a finish reason outside the OpenAI set names itself in the detail and the finding."""
    results, findings = assemble_every_way(
        sse(*PARTIAL, chunk(finish="insufficient_system_resource"))
    )
    assert "insufficient_system_resource" in (only_call(results).detail or "")
    assert "openai-chat/C33" in quirks(findings)


# --- errors -------------------------------------------------------------------------------------

NESTED_ERROR = {"error": {"message": "The server had an error", "type": "server_error"}}
FLAT_ERROR = {"object": "error", "message": "The server had an error", "code": 50001}
OPENROUTER_ERROR = chunk(
    finish="error", error={"code": "server_error", "message": "The server had an error"}
)


@pytest.mark.parametrize(
    ("ending", "kept"),
    [
        pytest.param(sse(NESTED_ERROR, done=False), ["server_error"], id="nested"),
        pytest.param(sse(FLAT_ERROR, done=False), ["50001"], id="flat"),
        pytest.param(sse(OPENROUTER_ERROR, done=False), ["server_error"], id="chunk-with-error"),
        pytest.param(
            b'event: error\ndata: {"error": {"message": "The server had an error", '
            b'"type": "overloaded_error"}}\n\n',
            ["overloaded_error"],
            id="event-error",
        ),
        pytest.param(
            b"event: error\ndata: The server had an error\n\n", [], id="event-error-not-json"
        ),
    ],
)
def test_an_error_rejects_open_calls_with_the_provider_message(
    ending: bytes, kept: list[str]
) -> None:
    """C3, T4, table row 4: an error payload (nested, flat, inside a chunk) or an
    ``event: error`` rejects the open call as ``stream_error``, keeping the provider's message
    and code in the detail."""
    results, _ = assemble_every_way(sse(*PARTIAL, done=False) + ending)
    call = only_call(results)
    assert (call.status, call.reason) == (Status.REJECTED, Reason.STREAM_ERROR)
    assert call.detail is not None
    for text in ["The server had an error", *kept]:
        assert text in call.detail


def test_an_error_is_released_by_the_feed_that_carries_it_and_ends_the_stream() -> None:
    """C3: the error's own ``feed()`` reports the rejection; whatever follows (a finish,
    ``[DONE]``) changes nothing and nothing is reported again."""
    asm = Assembler()
    released = feed_one_event_at_a_time([*PARTIAL, NESTED_ERROR], asm)
    assert [len(batch) for batch in released] == [0, 0, 0, 0, 1]
    assert released[-1][0].reason is Reason.STREAM_ERROR
    assert feed_one_event_at_a_time([chunk(finish="tool_calls"), "[DONE]"], asm) == [[], []]
    assert asm.close() == []
    assert asm.failure is not None


def test_calls_released_before_an_error_stay_released() -> None:
    """C3: a call of a choice that already finished keeps its ready result; the error rejects
    only the other choice's open call, and nothing is reported twice."""
    payloads = [
        chunk(header(0, "call_a", "get_weather", '{"city": "Paris"}'), choice=0),
        chunk(header(0, "call_b", "get_weather", '{"city": "Tok'), choice=1),
        chunk(choice=0, finish="tool_calls"),
        NESTED_ERROR,
    ]
    asm = Assembler()
    released = feed_one_event_at_a_time(payloads, asm)
    released.append(asm.close())
    assert [[(r.choice, r.status, r.reason) for r in batch] for batch in released] == [
        [],
        [],
        [(0, Status.READY, None)],
        [(1, Status.REJECTED, Reason.STREAM_ERROR)],
        [],
    ]


# --- endings without a finish reason ------------------------------------------------------------


def test_done_without_a_finish_reason_leaves_calls_unfinished() -> None:
    """C2, table row 5: ``[DONE]`` before any finish reason rejects the call as ``unfinished``,
    even though its text is complete JSON."""
    results, _ = assemble_every_way(sse(*simple_call(finish=None)))
    call = only_call(results)
    assert call.reason is Reason.UNFINISHED
    assert call.arguments_text == '{"city": "Paris"}'


def test_eof_without_a_finish_reason_means_interrupted() -> None:
    """C2, C3, table row 6: the connection closing before any finish reason rejects the call as
    ``interrupted``, even though its text is complete JSON."""
    results, _ = assemble_every_way(sse(*simple_call(finish=None), done=False))
    assert only_call(results).reason is Reason.INTERRUPTED


def test_eof_inside_an_event_means_interrupted() -> None:
    """C2, C3: a stream cut in the middle of the finish event (no blank line after it) is
    interrupted: the half event is discarded, never taken as a finish."""
    data = sse(*simple_call(), done=False)[:-3]
    results, findings = assemble_every_way(data)
    assert only_call(results).reason is Reason.INTERRUPTED
    assert "openai-chat/T9" in quirks(findings)


# --- parameterless tools ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fragments", [[], [""], ["", ""]], ids=["no-fragment", "empty", "two-empty"]
)
def test_a_parameterless_call_without_arguments_completes_as_empty_object(
    fragments: list[str],
) -> None:
    """Table footnote, C13: a tool with no parameters whose arguments never arrived (no
    fragment, or only ``""``) completes as ``{}``, recorded as a finding."""
    payloads = [
        chunk(header(0, "call_t", NOW.name), role="assistant"),
        *(chunk(args(0, fragment)) for fragment in fragments),
        chunk(finish="tool_calls"),
    ]
    results, findings = assemble_every_way(sse(*payloads))
    call = only_call(results)
    assert call.ready
    assert (call.name, call.arguments) == (NOW.name, {})
    assert "openai-chat/C13" in quirks(findings)


def test_a_parameterless_call_with_explicit_empty_object_is_not_a_finding() -> None:
    """Table footnote: ``{}`` sent by the provider is ordinary, not the C13 normalisation."""
    results, findings = assemble_every_way(sse(*simple_call(name=NOW.name, arguments="{}")))
    assert only_call(results).arguments == {}
    assert "openai-chat/C13" not in quirks(findings)


def test_a_call_with_parameters_and_no_arguments_is_not_completed_as_empty() -> None:
    """Table footnote: the ``{}`` normalisation is for parameterless tools only; a tool with
    required parameters and no arguments is rejected."""
    payloads = [chunk(header(0, "call_1", "get_weather")), chunk(finish="tool_calls")]
    results, _ = assemble_every_way(sse(*payloads))
    call = only_call(results)
    assert call.reason is Reason.MALFORMED_JSON
    assert call.arguments is None


# --- C4 no premature execution ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fragments", "value"),
    [
        pytest.param(['{"city": "Paris"}'], {"city": "Paris"}, id="complete-object-early"),
        pytest.param(
            ["{", '"city": "Paris", ', '"units": "c"}'],
            {"city": "Paris", "units": "c"},
            id="empty-object-then-fields",
        ),
        pytest.param(['{"n": 1', "2}"], {"n": 12}, id="number-growing"),
        pytest.param(['{"n": 1', ".5e", "2}"], {"n": 150.0}, id="fraction-growing"),
        pytest.param(['{"flag": t', "rue}"], {"flag": True}, id="literal-growing"),
    ],
)
def test_nothing_is_released_before_the_finish_chunk(fragments: list[str], value: Any) -> None:
    """C4, C1: fed one event at a time, nothing is released until the finish chunk's feed; fed
    one byte at a time, the first release happens exactly at the last byte of the finish event.
    This holds even when the text so far parses (or nearly) earlier, and the release holds the
    full value."""
    before_finish = [
        chunk(header(0, "call_1", "get_weather"), role="assistant"),
        *(chunk(args(0, fragment)) for fragment in fragments),
        chunk(),
    ]
    by_event = feed_one_event_at_a_time([*before_finish, chunk(finish="tool_calls")])
    assert by_event[:-1] == [[]] * len(before_finish)
    assert [(r.ready, r.arguments) for r in by_event[-1]] == [(True, value)]
    through_finish = sse(*before_finish, chunk(finish="tool_calls"), done=False)
    data = through_finish + sse()
    asm = Assembler(tools=None)
    released_at = []
    for offset in range(len(data)):
        for result in asm.feed(data[offset : offset + 1]):
            released_at.append((offset + 1, result.ready, result.arguments))
    assert released_at == [(len(through_finish), True, value)]


def test_nothing_is_released_before_the_finish_even_with_preview_showing_a_value() -> None:
    """C4, A8: a preview that shows ``{"n": 1}`` while ``2`` is still coming does not make the
    call ready; only the finish does, with ``12``."""
    asm = Assembler(tools=None)
    assert asm.feed_event(chunk(header(0, "call_1", "get_weather", '{"n": 1'))) == []
    assert [preview.partial_arguments for preview in asm.preview()] == [{"n": 1}]
    assert asm.feed_event(chunk(args(0, "2}"))) == []
    (result,) = asm.feed_event(chunk(finish="tool_calls"))
    assert result.arguments == {"n": 12}


# --- C6 cancellation discards -------------------------------------------------------------------


def test_cancel_rejects_open_calls_as_cancelled() -> None:
    """C6: ``cancel()`` returns every open call rejected ``cancelled``, with its partial text,
    and never a value."""
    asm = Assembler()
    for payload in PARTIAL:
        asm.feed_event(payload)
    (call,) = asm.cancel()
    assert (call.status, call.reason) == (Status.REJECTED, Reason.CANCELLED)
    assert call.arguments_text == '{"city": "Par'
    assert call.arguments is None


def test_cancel_does_not_report_calls_already_released() -> None:
    """C6: a call released by its finish is not reported again by ``cancel()``; only the other
    choice's open call is."""
    asm = Assembler()
    asm.feed_event(chunk(header(0, "call_b", "get_weather", '{"city": "Tok'), choice=1))
    for payload in simple_call():
        asm.feed_event(payload)
    assert [(r.choice, r.reason) for r in asm.cancel()] == [(1, Reason.CANCELLED)]


@pytest.mark.parametrize("ending", ["close", "cancel"])
def test_an_ended_assembler_refuses_more_input(ending: str) -> None:
    """C6: after ``close()`` or ``cancel()``, any further ``feed``, ``feed_event``, ``close`` or
    ``cancel`` raises ``AssemblerClosedError``: discarded state is never replayed."""
    asm = Assembler()
    for payload in PARTIAL:
        asm.feed_event(payload)
    getattr(asm, ending)()
    with pytest.raises(AssemblerClosedError):
        asm.feed(sse(chunk(finish="tool_calls")))
    with pytest.raises(AssemblerClosedError):
        asm.feed_event(chunk(finish="tool_calls"))
    with pytest.raises(AssemblerClosedError):
        asm.close()
    with pytest.raises(AssemblerClosedError):
        asm.cancel()
    assert asm.preview() == []

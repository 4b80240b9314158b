"""Assembly (A1–A8): how fragments become calls.

Each stream is small enough to be run every way the network could cut it (whole, one byte at a
time, every two-way split) through ``assemble_every_way``, so no test depends on chunking.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from callstream.reference import Assembler, CallPreview, CallResult, Reason, Status
from callstream.reference.dialects._payloads import DECODER
from tests.helpers import (
    args,
    assemble,
    assemble_events,
    assemble_every_way,
    chunk,
    header,
    quirks,
    simple_call,
    splits,
    sse,
)


def only_call(results: list[CallResult]) -> CallResult:
    """The single result of a one-call stream."""
    assert len(results) == 1, results
    return results[0]


def one_call_stream(fragments: list[str], name: str = "get_weather") -> list[dict[str, Any]]:
    """Payloads of call ``call_1`` whose argument fragments are exactly ``fragments``."""
    return [
        chunk(header(0, "call_1", name), role="assistant"),
        *(chunk(args(0, fragment)) for fragment in fragments),
        chunk(finish="tool_calls"),
    ]


def utf16(text: str) -> bytes:
    """``text`` as UTF-16 code units, lone surrogates included."""
    return text.encode("utf-16-le", "surrogatepass")


def utf16_cuts(text: str) -> list[list[str]]:
    """``text`` cut in two at every UTF-16 code unit, as a JavaScript server would cut it: a cut
    inside a surrogate pair leaves each half as a lone surrogate in its own fragment."""
    units = utf16(text)
    return [
        [
            units[:cut].decode("utf-16-le", "surrogatepass"),
            units[cut:].decode("utf-16-le", "surrogatepass"),
        ]
        for cut in range(2, len(units), 2)
    ]


# --- A1 buffer, don't parse per chunk ---------------------------------------------------------


def test_fragments_that_are_not_json_on_their_own_are_buffered() -> None:
    """A1: no prefix of the text is valid JSON, yet the call assembles: a lone quote, a lone
    backslash and half a key are buffered, never parsed."""
    fragments = ['{"ci', 'ty": "', "\\", '"', "Paris", "\\", '"', '", "un', 'its": "c"}']
    results, _ = assemble_every_way(sse(*one_call_stream(fragments)))
    call = only_call(results)
    assert call.ready
    assert call.arguments == {"city": '"Paris"', "units": "c"}


def test_nothing_is_released_while_the_text_is_invalid() -> None:
    """A1: feeding invalid mid-stream text raises nothing and releases nothing."""
    asm = Assembler()
    payloads = one_call_stream(['{"city"', ': "Pa', 'ris"}'])
    released = [asm.feed_event(payload) for payload in payloads[:-1]]
    assert released == [[], [], [], []]
    assert [result.arguments for result in asm.feed_event(payloads[-1])] == [{"city": "Paris"}]


# --- A2 append arguments verbatim -------------------------------------------------------------

ESCAPE_TEXTS = [
    pytest.param('{"city": "Z\\u00fcrich"}', {"city": "Zürich"}, id="unicode-escape"),
    pytest.param(
        '{"q": "say \\"hi\\" \\\\ bye\\n\\/"}', {"q": 'say "hi" \\ bye\n/'}, id="short-escapes"
    ),
    pytest.param('{"e": "\\ud83d\\ude00"}', {"e": "😀"}, id="surrogate-pair-escapes"),
    pytest.param('{"city": "Zürich 😀"}', {"city": "Zürich 😀"}, id="raw-non-ascii"),
]


@pytest.mark.parametrize(("text", "value"), ESCAPE_TEXTS)
def test_text_cut_at_any_character_is_reassembled_exactly(text: str, value: Any) -> None:
    """A2: wherever the text is cut (inside ``\\uXXXX``, between a backslash and its escape,
    between the two escapes of a surrogate pair), the assembled text is the concatenation,
    escapes not re-encoded, and it parses to the intended value."""
    for cut in range(1, len(text)):
        results, _ = assemble_events(one_call_stream([text[:cut], text[cut:]]), tools=None)
        call = only_call(results)
        assert call.arguments_text == text, f"cut at {cut}"
        assert call.arguments == value, f"cut at {cut}"


@pytest.mark.parametrize(
    ("fragments", "value"),
    [
        pytest.param(['{"city": "Z\\u00', 'fcrich"}'], {"city": "Zürich"}, id="inside-uXXXX"),
        pytest.param(['{"q": "a\\', 'nb"}'], {"q": "a\nb"}, id="after-backslash"),
        pytest.param(['{"e": "\\ud83d', '\\ude00"}'], {"e": "😀"}, id="between-pair-escapes"),
    ],
)
def test_escape_split_survives_every_byte_split(fragments: list[str], value: Any) -> None:
    """A2: an escape cut between fragments, with the bytes cut every way, keeps its escape form
    in the text and its meaning in the value."""
    results, _ = assemble_every_way(sse(*one_call_stream(fragments)), tools=None)
    call = only_call(results)
    assert call.arguments_text == "".join(fragments)
    assert call.arguments == value


def test_surrogate_halves_sent_as_separate_fragments_make_one_character() -> None:
    """A2: when the chunk JSON itself carries the two halves of a non-BMP character as lone
    surrogates in separate fragments, the assembled text holds the one character, and can be
    encoded as UTF-8 to be sent back."""
    fragments = ['{"e": "a', "\ud83d", "\ude00", 'b"}']
    results, _ = assemble_every_way(sse(*one_call_stream(fragments)), tools=None)
    call = only_call(results)
    assert call.ready
    assert call.arguments_text == '{"e": "a😀b"}'
    assert call.arguments == {"e": "a😀b"}
    assert call.arguments_text.encode("utf-8") == '{"e": "a😀b"}'.encode()


def test_text_cut_at_any_utf16_unit_is_reassembled_exactly() -> None:
    """A2: cutting the text at every UTF-16 code unit (lone surrogates wherever the cut falls
    inside a pair) gives back the exact text."""
    text = '{"e": "😀x🎉"}'
    for fragments in utf16_cuts(text):
        results, _ = assemble_events(one_call_stream(fragments), tools=None)
        call = only_call(results)
        assert call.arguments_text == text, fragments
        assert call.arguments == {"e": "😀x🎉"}, fragments


def test_whitespace_is_kept_byte_for_byte() -> None:
    """A2: spaces, tabs and newlines inside and around the object are neither trimmed nor
    normalised."""
    fragments = ['\n{ "city" :', '\t"Paris" ,\r\n', '  "units": "c" }', "  \n"]
    results, _ = assemble_every_way(sse(*one_call_stream(fragments)))
    call = only_call(results)
    assert call.ready
    assert call.arguments_text == "".join(fragments)
    assert call.arguments == {"city": "Paris", "units": "c"}


def test_arguments_in_the_header_delta_are_kept() -> None:
    """A2: a header that already carries text (``{``, as llama.cpp sends) starts the buffer."""
    payloads = [
        chunk(header(0, "call_1", "get_weather", "{"), role="assistant"),
        chunk(args(0, '"city": "Paris"}')),
        chunk(finish="tool_calls"),
    ]
    results, _ = assemble_every_way(sse(*payloads))
    call = only_call(results)
    assert call.arguments_text == '{"city": "Paris"}'
    assert call.arguments == {"city": "Paris"}


# --- A3 set metadata, never concatenate it ----------------------------------------------------


@pytest.mark.parametrize("profile", ["lenient", "strict"])
def test_a_repeated_id_type_and_name_are_not_concatenated(profile: str) -> None:
    """A3: a provider that repeats id, type and name on every delta gets one call with the id
    and name once, in either profile; the repeats are recorded."""
    payloads = [
        chunk(header(0, "call_1", "get_weather", fragment))
        for fragment in ['{"city"', ': "Par', 'is"}']
    ]
    results, findings = assemble_every_way(
        sse(*payloads, chunk(finish="tool_calls")), profile=profile
    )
    call = only_call(results)
    assert (call.id, call.name, call.status) == ("call_1", "get_weather", Status.READY)
    assert call.arguments == {"city": "Paris"}
    assert {"openai-chat/C4", "openai-chat/C5"} <= quirks(findings)


def test_a_changed_name_is_rejected_not_concatenated() -> None:
    """A3: a different name for the same call is a conflict: the call is rejected and keeps its
    first name, never the two joined."""
    payloads = [
        chunk(header(0, "call_1", "get_weather", '{"city": ')),
        chunk({"index": 0, "function": {"name": "get_stock_price", "arguments": '"Paris"}'}}),
        chunk(finish="tool_calls"),
    ]
    results, _ = assemble_every_way(sse(*payloads))
    call = only_call(results)
    assert call.reason is Reason.PROTOCOL_ERROR
    assert call.name == "get_weather"


# --- A4 absent means "no update" --------------------------------------------------------------


@pytest.mark.parametrize("profile", ["lenient", "strict"])
def test_null_empty_or_missing_fields_never_erase(profile: str) -> None:
    """A4: later deltas with ``null`` or ``""`` id, type and name, a ``null`` function, ``null``
    or ``""`` arguments, or nothing but an index leave the call as it was."""
    payloads = [
        chunk(header(0, "call_1", "get_weather"), role="assistant"),
        chunk(
            {
                "index": 0,
                "id": None,
                "type": None,
                "function": {"name": None, "arguments": '{"city"'},
            }
        ),
        chunk({"index": 0, "id": "", "function": {"name": "", "arguments": ""}}),
        chunk({"index": 0}),
        chunk({"index": 0, "function": None}),
        chunk({"index": 0, "function": {"arguments": None}}),
        chunk(args(0, ': "Paris"}')),
        chunk(finish="tool_calls"),
    ]
    results, _ = assemble_every_way(sse(*payloads), profile=profile)
    call = only_call(results)
    assert (call.id, call.name, call.status) == ("call_1", "get_weather", Status.READY)
    assert call.arguments_text == '{"city": "Paris"}'


def test_empty_argument_fragments_are_no_ops() -> None:
    """A4: ``""`` fragments between real ones add nothing to the text."""
    fragments = ["", '{"city": ', "", "", '"Paris"}', ""]
    results, _ = assemble_every_way(sse(*one_call_stream(fragments)))
    assert only_call(results).arguments_text == '{"city": "Paris"}'


# --- A5 route by position, not by arrival order -----------------------------------------------


def two_calls_interleaved() -> list[dict[str, Any]]:
    """Two calls whose fragments alternate 0/1/0/1, one delta per chunk."""
    return [
        chunk(header(0, "call_w", "get_weather"), role="assistant"),
        chunk(header(1, "call_s", "get_stock_price")),
        chunk(args(0, '{"city": ')),
        chunk(args(1, '{"ticker": ')),
        chunk(args(0, '"Paris"}')),
        chunk(args(1, '"ACME"}')),
        chunk(finish="tool_calls"),
    ]


def test_interleaved_fragments_go_to_their_own_call() -> None:
    """A5: fragments of two calls alternating 0/1/0/1 build two separate, correct calls."""
    results, _ = assemble_every_way(sse(*two_calls_interleaved()))
    assert [(r.index, r.id, r.name, r.arguments) for r in results] == [
        (0, "call_w", "get_weather", {"city": "Paris"}),
        (1, "call_s", "get_stock_price", {"ticker": "ACME"}),
    ]
    assert all(result.ready for result in results)


def test_fragments_of_several_calls_in_one_chunk_are_routed_by_index() -> None:
    """A5: one delta carrying fragments for index 1 before index 0 routes each by its index."""
    payloads = [
        chunk(header(0, "call_w", "get_weather"), header(1, "call_s", "get_stock_price")),
        chunk(args(1, '{"ticker": "ACME"}'), args(0, '{"city": "Paris"}'), finish="tool_calls"),
    ]
    results, _ = assemble_every_way(sse(*payloads))
    assert [(r.id, r.arguments) for r in results] == [
        ("call_w", {"city": "Paris"}),
        ("call_s", {"ticker": "ACME"}),
    ]


def test_a_name_after_the_arguments_belongs_to_the_same_call() -> None:
    """A5: in the lenient profile a header without a name buffers its arguments, and the name
    that arrives later completes that same call (recorded as C6)."""
    payloads = [
        chunk(
            {"index": 0, "id": "call_1", "type": "function", "function": {"arguments": "{"}},
            role="assistant",
        ),
        chunk(args(0, '"city": "Paris"}')),
        chunk({"index": 0, "function": {"name": "get_weather"}}),
        chunk(finish="tool_calls"),
    ]
    results, findings = assemble_every_way(sse(*payloads))
    call = only_call(results)
    assert call.ready
    assert (call.id, call.name, call.arguments) == ("call_1", "get_weather", {"city": "Paris"})
    assert "openai-chat/C6" in quirks(findings)


def test_a_missing_index_falls_back_to_the_call_id() -> None:
    """A5: deltas without an index are routed by their id, even interleaved."""

    def delta(call_id: str, arguments: str, name: str | None = None) -> dict[str, Any]:
        function = {"arguments": arguments} if name is None else {"name": name, "arguments": ""}
        return {"id": call_id, "type": "function", "function": function}

    payloads = [
        chunk(delta("call_w", "", "get_weather")),
        chunk(delta("call_s", "", "get_stock_price")),
        chunk(delta("call_w", '{"city": ')),
        chunk(delta("call_s", '{"ticker": ')),
        chunk(delta("call_s", '"ACME"}')),
        chunk(delta("call_w", '"Paris"}')),
        chunk(finish="tool_calls"),
    ]
    results, findings = assemble_every_way(sse(*payloads))
    assert [(r.index, r.id, r.arguments) for r in results] == [
        (0, "call_w", {"city": "Paris"}),
        (1, "call_s", {"ticker": "ACME"}),
    ]
    assert all(result.ready for result in results)
    assert "openai-chat/C1" in quirks(findings)


def test_sparse_wire_indices_are_routed_and_numbered_by_first_appearance() -> None:
    """A5: wire indices 3 and 7 still route each fragment to its own call, and the results are
    numbered 0 and 1 in order of first appearance."""
    payloads = [
        chunk(header(3, "call_w", "get_weather")),
        chunk(header(7, "call_s", "get_stock_price")),
        chunk(args(7, '{"ticker": "ACME"}')),
        chunk(args(3, '{"city": "Paris"}')),
        chunk(finish="tool_calls"),
    ]
    results, _ = assemble_every_way(sse(*payloads))
    assert [(r.index, r.id, r.arguments) for r in results] == [
        (0, "call_w", {"city": "Paris"}),
        (1, "call_s", {"ticker": "ACME"}),
    ]


# --- A6 never key by function name ------------------------------------------------------------


def test_the_same_function_called_twice_keeps_two_calls() -> None:
    """A6: two interleaved calls of the same function keep separate buffers and results."""
    payloads = [
        chunk(header(0, "call_a", "get_weather")),
        chunk(header(1, "call_b", "get_weather")),
        chunk(args(1, '{"city": "To')),
        chunk(args(0, '{"city": "Pa')),
        chunk(args(0, 'ris"}')),
        chunk(args(1, 'kyo"}')),
        chunk(finish="tool_calls"),
    ]
    results, _ = assemble_every_way(sse(*payloads))
    assert [(r.index, r.id, r.name, r.arguments_text) for r in results] == [
        (0, "call_a", "get_weather", '{"city": "Paris"}'),
        (1, "call_b", "get_weather", '{"city": "Tokyo"}'),
    ]
    assert all(result.ready for result in results)


# --- A7 separate choices ----------------------------------------------------------------------


def test_choices_keep_their_own_calls() -> None:
    """A7: with n=2, two choices that both use tool index 0 (and even the same id) get one call
    each, never merged."""
    payloads = [
        chunk(header(0, "call_1", "get_weather"), choice=0),
        chunk(header(0, "call_1", "get_weather"), choice=1),
        chunk(args(0, '{"city": "Pa'), choice=0),
        chunk(args(0, '{"city": "To'), choice=1),
        chunk(args(0, 'kyo"}'), choice=1),
        chunk(args(0, 'ris"}'), choice=0),
        chunk(choice=0, finish="tool_calls"),
        chunk(choice=1, finish="tool_calls"),
    ]
    results, _ = assemble_every_way(sse(*payloads))
    assert [(r.choice, r.index, r.arguments) for r in results] == [
        (0, 0, {"city": "Paris"}),
        (1, 0, {"city": "Tokyo"}),
    ]
    assert all(result.ready for result in results)


def test_each_choice_is_ended_by_its_own_finish_reason() -> None:
    """A7: choice 0 finishing with tool_calls and choice 1 with length give one ready call and
    one truncated call."""
    payloads = [
        chunk(header(0, "call_a", "get_weather", '{"city": "Paris"}'), choice=0),
        chunk(header(0, "call_b", "get_weather", '{"city": "Tok'), choice=1),
        chunk(choice=0, finish="tool_calls"),
        chunk(choice=1, finish="length"),
    ]
    results, _ = assemble_every_way(sse(*payloads))
    assert [(r.choice, r.status, r.reason) for r in results] == [
        (0, Status.READY, None),
        (1, Status.REJECTED, Reason.TRUNCATED),
    ]


# --- A8 preview is not the buffer -------------------------------------------------------------


def test_preview_shows_a_partial_parse_of_the_text_so_far() -> None:
    """A8: mid-stream, the preview closes the open string and object for display."""
    asm = Assembler()
    for payload in one_call_stream(['{"city": "Par', 'is"}'])[:2]:
        asm.feed_event(payload)
    assert asm.preview() == [
        CallPreview(0, 0, "call_1", "get_weather", '{"city": "Par', {"city": "Par"})
    ]


def test_preview_never_changes_the_result() -> None:
    """A8: previewing after every byte (through escapes and surrogate halves) changes neither
    the results nor the findings."""
    fragments = ['{"city": "Z\\u00', "fc", "\ud83d", "\ude00", '", "units": "c"}']
    data = sse(*one_call_stream(fragments))
    full = utf16('{"city": "Z\\u00fc😀", "units": "c"}')
    asm = Assembler()
    results: list[CallResult] = []
    for piece in next(pieces for pieces in splits(data) if len(pieces) == len(data)):
        results += asm.feed(piece)
        for preview in asm.preview():
            assert full.startswith(utf16(preview.arguments_text))
    results += asm.close()
    assert (results, asm.findings) == assemble([data])
    assert only_call(results).arguments == {"city": "Zü😀", "units": "c"}


def test_preview_never_offers_a_call_to_run() -> None:
    """A8: a preview is not a result (it has no status), it drops calls once they are final,
    and a preview that looks complete does not make the call executable."""
    asm = Assembler()
    for payload in simple_call(arguments='{"city": "Paris"}', finish=None):
        asm.feed_event(payload)
    (preview,) = asm.preview()
    assert preview.partial_arguments == {"city": "Paris"}
    assert not isinstance(preview, CallResult)
    assert not hasattr(preview, "status")
    assert not hasattr(preview, "ready")
    (result,) = asm.feed_event("[DONE]")
    assert result.reason is Reason.UNFINISHED
    assert asm.preview() == []


def test_surrogate_halves_meet_across_hundreds_of_fragments() -> None:
    """A call of exactly as many fragments as the buffer packs into one string (256), whose
    text carries lone surrogate halves in separate fragments, still yields whole non-BMP
    characters (A2)."""
    pieces = ['{"city": "'] + ["\ud83d", "\ude00"] * 127 + ['"}']
    payloads = [chunk(header(0, "call_1", "get_weather"))]
    payloads += [chunk(args(0, piece)) for piece in pieces]
    payloads.append(chunk(finish="tool_calls"))
    results, _ = assemble_events(payloads)
    (result,) = results
    assert result.ready
    assert result.arguments == {"city": "😀" * 127}


@pytest.mark.parametrize(
    "data",
    [
        '{"a": 1}',
        '{"a": 1} ',
        ' {"a": 1}',
        '{"a": 1}\n{"a": 2}',
        "{} {}",
        "{}x",
        '{"a": ',
        '{"a": NaN}',
        "[1, 2]",
        '"[DONE]"',
        "{" * 100_000,
    ],
    ids=[
        "object",
        "space-after",
        "space-before",
        "two-objects",
        "two-on-a-line",
        "garbage-after",
        "cut",
        "nan",
        "array",
        "string",
        "too-deep",
    ],
)
def test_event_payloads_are_decoded_exactly_as_json_decodes_them(data: str) -> None:
    """The dialects' payload decoder reads every document as ``json.JSONDecoder`` does: the
    same value, or the same error at the same place."""

    def outcome(decode: Any) -> Any:
        try:
            return ("value", decode(data))
        except json.JSONDecodeError as exc:
            return ("error", exc.msg, exc.pos)
        except RecursionError:
            return ("too deep",)

    assert outcome(DECODER.decode) == outcome(json.JSONDecoder().decode)

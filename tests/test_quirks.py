"""Every openai-chat quirk of research/wire_formats.md §7, under the lenient and strict profiles.

Each test replays a stream shaped like the capture or provider the quirk table names, and checks
what the calls become (status, reason, exact argument text, parsed arguments, id, name, index)
and which quirk ids the assembler recorded. Quirks that are spec-legal (T1–T5, T12, C8, C9, C15,
C19) must be accepted *without* findings in both profiles. T7 and T8 concern Anthropic event
names and do not apply to openai-chat.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from callstream.reference import Assembler, CallResult, Reason, Status, Tool, release_order
from tests.helpers import (
    NOW,
    TOOLS,
    args,
    assemble,
    assemble_events,
    assemble_every_way,
    chunk,
    header,
    quirks,
    simple_call,
    sse,
)

PROFILES = ("lenient", "strict")
DONE = "[DONE]"
PARIS = '{"city": "Paris"}'
ROME = '{"city": "Rome"}'

Payload = dict[str, Any] | str
Outcome = tuple[int, str | None, str | None, str, Any, Status, Reason | None]


# -- local builders ---------------------------------------------------------------------------


def call(
    index: int, call_id: str | None, name: str | None, text: str, reason: Reason | None = None
) -> Outcome:
    """The outcome expected for one call: ready with ``text`` parsed, or rejected ``reason``."""
    if reason is None:
        return (index, call_id, name, text, json.loads(text), Status.READY, None)
    return (index, call_id, name, text, None, Status.REJECTED, reason)


def outcomes(results: Iterable[CallResult]) -> list[Outcome]:
    """What a user sees of each call, in release order."""
    return [
        (r.index, r.id, r.name, r.arguments_text, r.arguments, r.status, r.reason)
        for r in release_order(results)
    ]


def statuses(results: Iterable[CallResult]) -> list[tuple[int, Status, Reason | None]]:
    """Position, status and reason of each call, in release order."""
    return [(r.index, r.status, r.reason) for r in release_order(results)]


def run(
    payloads: Sequence[Payload],
    profile: str,
    tools: Sequence[Tool] | None = TOOLS,
    **options: Any,
) -> tuple[list[CallResult], set[str]]:
    """Feed decoded payloads, close; the results in release order and the quirk ids found."""
    results, findings = assemble_events(payloads, tools, profile=profile, **options)
    return release_order(results), quirks(findings)


def run_wire(data: bytes, profile: str, **options: Any) -> tuple[list[CallResult], set[str]]:
    """Feed raw bytes split every way (the outcome must not depend on the split)."""
    results, findings = assemble_every_way(data, profile=profile, **options)
    return release_order(results), quirks(findings)


def run_once(data: bytes, profile: str) -> tuple[list[CallResult], set[str]]:
    """Feed raw bytes in one piece and close."""
    results, findings = assemble([data], profile=profile)
    return release_order(results), quirks(findings)


def run_with_usage(payloads: Sequence[Payload], profile: str) -> tuple[list[CallResult], Any]:
    """Feed payloads to one assembler; its results and the usage it reports at the end."""
    asm = Assembler(TOOLS, profile=profile)
    results: list[CallResult] = []
    for payload in payloads:
        results += asm.feed_event(payload)
    results += asm.close()
    return results, asm.usage


def with_choice(payload: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """``payload`` with extra fields on its (single) choice."""
    choice = {**payload["choices"][0], **fields}
    return {**payload, "choices": [choice]}


def legacy(function_call: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
    """A chunk carrying the pre-``tools`` ``delta.function_call`` (gpt-3.5-turbo-0613, §2.5)."""
    payload = chunk(**options)
    if function_call is not None:
        payload["choices"][0]["delta"]["function_call"] = function_call
    return payload


CLEAN = simple_call(pieces=2)
CLEAN_CALLS = [call(0, "call_1", "get_weather", PARIS)]
USAGE = {"prompt_tokens": 149, "completion_tokens": 60, "total_tokens": 209}


# -- T: the SSE transport ---------------------------------------------------------------------


def _crlf_multi_line_data() -> bytes:
    events = []
    for payload in CLEAN:
        lines = json.dumps(payload).replace(', "', ',\r\ndata: "')
        events.append(f"data: {lines}\r\n\r\n")
    return ("".join(events) + "data: [DONE]\r\n\r\n").encode()


def _mixed_line_endings() -> bytes:
    # One event ends "CRLF LF", the next "LF CR", then "CR CRLF", then "LF CRLF".
    endings = ["\r\n\n", "\n\r", "\r\r\n", "\n\r\n"]
    payloads = [*CLEAN, DONE]
    out = ""
    for i, payload in enumerate(payloads):
        data = payload if isinstance(payload, str) else json.dumps(payload)
        out += f"data: {data}{endings[i % len(endings)]}"
    return out.encode()


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    "data",
    [
        pytest.param(sse(*CLEAN, newline="\r\n"), id="crlf"),
        pytest.param(sse(*CLEAN, newline="\r"), id="lone-cr"),
        pytest.param(_mixed_line_endings(), id="mixed"),
        pytest.param(_crlf_multi_line_data(), id="crlf-multi-line-data"),
    ],
)
def test_t1_crlf_and_lone_cr_line_endings_are_accepted_without_findings(
    data: bytes, profile: str
) -> None:
    """CRLF (Gemini/Vertex fixtures, CRLF proxies), lone CR and a mix of all three end lines,
    even when a CRLF pair is split across reads: a split pair is one line ending, so it never
    becomes a blank line that cuts a multi-line event in two."""
    results, found = run_wire(data, profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_t2_a_leading_bom_is_skipped_without_findings(profile: str) -> None:
    """One leading UTF-8 BOM is stripped, even when its three bytes arrive separately."""
    results, found = run_wire(b"\xef\xbb\xbf" + sse(*CLEAN), profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_t3_data_without_a_space_or_with_two_is_accepted_without_findings(profile: str) -> None:
    """``data:{…}`` (gateways; clients that required the space dropped every event) and
    ``data:  {…}`` (one space stripped, the other is JSON whitespace) both carry the chunk."""
    data = sse(*CLEAN).replace(b"data: ", b"data:").replace(b"data:{", b"data:  {", 1)
    results, found = run_wire(data, profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_t4_comment_lines_are_ignored_without_findings(profile: str) -> None:
    """OpenRouter's ``: OPENROUTER PROCESSING`` blocks and DeepSeek's ``: keep-alive`` lines,
    between events and inside one, change nothing."""
    data = b": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n" + sse(*CLEAN).replace(
        b"}\n\n", b"}\n: keep-alive\n\n"
    )
    results, found = run_wire(data, profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_t5_multi_line_data_is_joined_with_newlines_without_findings(profile: str) -> None:
    """Pretty-printed JSON sent as several ``data:`` lines of one event parses once joined."""
    events = []
    for payload in CLEAN:
        lines = json.dumps(payload, indent=2).splitlines()
        events.append("".join(f"data: {line}\n" for line in lines) + "\n")
    data = ("".join(events) + "data: [DONE]\n\n").encode()
    results, found = run_wire(data, profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_t6_an_event_line_without_data_dispatches_nothing(profile: str) -> None:
    """A block with only ``event:`` (CDNs and proxies splitting chunks) is not parsed as JSON."""
    data = b"event: ping\n\n" + sse(*CLEAN).replace(b"}\n\n", b"}\n\nevent: message\n\n", 1)
    results, found = run_wire(data, profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_t6_an_event_with_empty_data_is_not_parsed_as_json(profile: str) -> None:
    """An ``event:`` whose ``data:`` is empty (a proxy flush, an MCP-style priming event) is
    skipped and recorded: §7 T6 says never JSON-parse ``""``, so it must not fail the stream."""
    data = sse(*CLEAN).replace(b"}\n\n", b"}\n\nevent: ping\ndata:\n\n", 1)
    results, found = run_wire(data, profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == {"openai-chat/T6"}


@pytest.mark.parametrize("profile", PROFILES)
def test_t9_an_unterminated_last_event_is_discarded_and_the_call_interrupted(
    profile: str,
) -> None:
    """The finish chunk without its blank line is never dispatched (WHATWG): the call was cut
    off, and the truncation is recorded as T9."""
    data = sse(*CLEAN, done=False)[:-1]
    results, found = run_wire(data, profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", PARIS, Reason.INTERRUPTED)]
    assert found == {"openai-chat/T9"}


@pytest.mark.parametrize("profile", PROFILES)
def test_t9_an_unterminated_done_after_the_finish_keeps_the_call_ready(profile: str) -> None:
    """When only the ``[DONE]`` event lacks its blank line, the finish already completed the
    call; the discarded sentinel is recorded (T9) along with the missing ``[DONE]`` (C24)."""
    data = sse(*CLEAN).removesuffix(b"\n\n")
    results, found = run_wire(data, profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == {"openai-chat/T9", "openai-chat/C24"}


@pytest.mark.parametrize("profile", PROFILES)
def test_t10_events_separated_by_a_single_newline_fail_the_stream(profile: str) -> None:
    """GLM-4.7/Kimi providers separate events with one ``\\n``: the joined data is two JSON
    documents, so the open call is rejected ``protocol_error`` and T10 recorded."""
    first = json.dumps(chunk(args(0, '{"city": ')))
    second = json.dumps(chunk(args(0, '"Paris"}')))
    data = (
        sse(chunk(header(0, "call_1", "get_weather")), done=False)
        + f"data: {first}\ndata: {second}\n\n".encode()
        + sse(chunk(finish="tool_calls"))
    )
    results, found = run_wire(data, profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", "", Reason.PROTOCOL_ERROR)]
    assert "not JSON" in (results[0].detail or "")
    assert found == {"openai-chat/T10"}


@pytest.mark.parametrize("profile", PROFILES)
def test_t11_invalid_utf8_becomes_a_replacement_character_and_is_recorded(profile: str) -> None:
    """An invalid byte inside the arguments decodes to U+FFFD (no crash) and T11 is recorded."""
    data = sse(
        chunk(header(0, "call_1", "get_weather", '{"city": "ParXis"}')), chunk(finish="tool_calls")
    )
    results, found = run_wire(data.replace(b"ParXis", b"Par\xffis"), profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", '{"city": "Par\ufffdis"}')]
    assert found == {"openai-chat/T11"}


@pytest.mark.parametrize("profile", PROFILES)
def test_t11_a_multibyte_character_split_across_reads_is_not_damaged(profile: str) -> None:
    """Valid UTF-8 cut inside a character at any byte boundary decodes intact, without T11."""
    text = '{"city": "Zürich 東京 😀"}'
    data = sse(chunk(header(0, "call_1", "get_weather", text)), chunk(finish="tool_calls"))
    results, found = run_wire(data, profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", text)]
    assert found == set()


def test_t11_the_finding_does_not_depend_on_how_the_bytes_were_split() -> None:
    """Two invalid bytes give the same findings whether the stream arrives whole or a byte at
    a time: a certification report must not change with network chunking."""
    data = sse(
        chunk(header(0, "call_1", "get_weather", '{"city": "XaXb"}')), chunk(finish="tool_calls")
    )
    data = data.replace(b"XaXb", b"\xffa\xffb")
    whole = assemble([data])
    byte_by_byte = assemble([data[i : i + 1] for i in range(len(data))])
    assert byte_by_byte == whole


@pytest.mark.parametrize("profile", PROFILES)
def test_t12_json_with_trailing_whitespace_is_accepted_without_findings(profile: str) -> None:
    """Whitespace before the closing brace and after it (Anthropic-style fixtures) is valid
    JSON and changes nothing."""
    events = [json.dumps(payload)[:-1] + "  }   " for payload in CLEAN]
    results, found = run_wire(sse(*events), profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == set()


# -- C1: tool-call index missing --------------------------------------------------------------


def gemini_chunk(*tool_calls: dict[str, Any], finish: str | None = "stop") -> dict[str, Any]:
    """Gemini's OpenAI-compatible chunk (gemini-2.0-flash, 2025-02): no chunk id, no tool-call
    index, whole arguments, ``finish_reason: stop`` and usage in the same chunk."""
    return {
        "choices": [
            {
                "delta": {"role": "assistant", "tool_calls": list(tool_calls)},
                "finish_reason": finish,
                "index": 0,
            }
        ],
        "created": 1739723061,
        "model": "gemini-2.0-flash",
        "object": "chat.completion.chunk",
        "usage": {"completion_tokens": 54, "prompt_tokens": 4319, "total_tokens": 4373},
    }


GEMINI_CALL = {
    "function": {"arguments": PARIS, "name": "get_weather"},
    "id": "",
    "type": "function",
}


def test_c1_lenient_gemini_call_without_index_or_id_is_ready_with_a_synthetic_id() -> None:
    """The whole call without ``index`` and with ``id: ""`` becomes call 0 with a made-up id;
    the missing index (C1) and the synthesised id (C7) are recorded."""
    results, found = run([gemini_chunk(GEMINI_CALL), DONE], "lenient")
    assert outcomes(results) == [call(0, results[0].id, "get_weather", PARIS)]
    assert results[0].synthetic_id
    assert found == {
        "openai-chat/C1",
        "openai-chat/C7",
        "openai-chat/C16",
        "openai-chat/C21",
        "openai-chat/C23",
    }


def test_c1_strict_rejects_a_call_without_index() -> None:
    """The strict profile rejects the index-less Gemini call as a protocol error."""
    results, found = run([gemini_chunk(GEMINI_CALL), DONE], "strict")
    assert statuses(results) == [(0, Status.REJECTED, Reason.PROTOCOL_ERROR)]
    assert found == {"openai-chat/C1", "openai-chat/C16", "openai-chat/C21", "openai-chat/C23"}


def test_c1_index_less_fragments_continue_the_single_open_call_in_lenient_only() -> None:
    """Gemini can split arguments across index-less deltas (open-webui/computer#224): with one
    call open, the lenient profile appends a fragment with neither index nor id to it; the
    strict profile rejects the call."""
    stream = [
        chunk(
            {
                "id": "jm4owj31",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": '},
            }
        ),
        chunk({"function": {"arguments": '"Paris"}'}}),
        chunk(finish="tool_calls"),
        DONE,
    ]
    results, found = run(stream, "lenient")
    assert outcomes(results) == [call(0, "jm4owj31", "get_weather", PARIS)]
    assert found == {"openai-chat/C1"}
    strict, _ = run(stream, "strict")
    assert statuses(strict) == [(0, Status.REJECTED, Reason.PROTOCOL_ERROR)]


@pytest.mark.parametrize("profile", PROFILES)
def test_c1_an_index_less_fragment_with_two_calls_open_rejects_both(profile: str) -> None:
    """With two calls open, a fragment without index or id cannot be placed: guessing would
    corrupt one of them, so both are rejected ``protocol_error``."""
    stream = [
        chunk(
            header(0, "call_a", "get_weather", '{"city": "Paris"'),
            header(1, "call_b", "get_weather", '{"city": "Rome"'),
        ),
        chunk({"function": {"arguments": "}"}}),
        chunk(finish="tool_calls"),
        DONE,
    ]
    results, found = run(stream, profile)
    assert outcomes(results) == [
        call(0, "call_a", "get_weather", '{"city": "Paris"', Reason.PROTOCOL_ERROR),
        call(1, "call_b", "get_weather", '{"city": "Rome"', Reason.PROTOCOL_ERROR),
    ]
    assert all("index missing" in (r.detail or "") for r in results)
    assert found == {"openai-chat/C1"}


def test_c1_lenient_accepts_an_index_sent_as_a_digit_string() -> None:
    """``"index": "0"`` is read as index 0 and recorded as C1."""
    stream = [
        chunk({**header(0, "call_1", "get_weather", PARIS), "index": "0"}),
        chunk(finish="tool_calls"),
        DONE,
    ]
    results, found = run(stream, "lenient")
    assert outcomes(results) == CLEAN_CALLS
    assert found == {"openai-chat/C1"}


def test_c1_strict_rejects_an_index_sent_as_a_digit_string() -> None:
    """The quirk table's C1 row ("index missing or not an integer") is ``reject`` under strict:
    a string index must not yield a ready call."""
    stream = [
        chunk({**header(0, "call_1", "get_weather", PARIS), "index": "0"}),
        chunk(finish="tool_calls"),
        DONE,
    ]
    results, found = run(stream, "strict")
    assert statuses(results) == [(0, Status.REJECTED, Reason.PROTOCOL_ERROR)]
    assert found == {"openai-chat/C1"}


# -- C2, C3: index reused, id changed ---------------------------------------------------------

OLLAMA = [
    chunk(role="assistant", content="", system_fingerprint="fp_ollama"),
    chunk(header(0, "call_a1", "get_weather", PARIS), system_fingerprint="fp_ollama"),
    chunk(header(0, "call_b2", "get_weather", ROME), system_fingerprint="fp_ollama"),
    chunk(finish="tool_calls", system_fingerprint="fp_ollama"),
    DONE,
]


def test_c2_lenient_ollama_calls_all_on_index_0_stay_separate() -> None:
    """Ollama sends every parallel call at index 0, told apart by a new id with a name: each
    becomes its own call (never ``{…}{…}`` in one buffer), recorded as C2."""
    results, found = run(OLLAMA, "lenient")
    assert outcomes(results) == [
        call(0, "call_a1", "get_weather", PARIS),
        call(1, "call_b2", "get_weather", ROME),
    ]
    assert found == {"openai-chat/C2"}


def test_c2_strict_rejects_the_call_that_reuses_an_index() -> None:
    """The strict profile keeps the first call and rejects the one that reused index 0."""
    results, found = run(OLLAMA, "strict")
    assert outcomes(results)[0] == call(0, "call_a1", "get_weather", PARIS)
    assert statuses(results)[1] == (1, Status.REJECTED, Reason.PROTOCOL_ERROR)
    assert found == {"openai-chat/C2"}


LM_STUDIO = [
    chunk(
        {
            "index": 0,
            "id": "193629320",
            "function": {"name": "get_weather", "arguments": '{"city": '},
        }
    ),
    chunk({"index": 0, "id": "193629321", "function": {"name": "", "arguments": '"Par'}}),
    chunk({"index": 0, "id": "193629322", "function": {"name": "", "arguments": 'is"}'}}),
    chunk(finish="tool_calls"),
    DONE,
]


def test_c3_lenient_a_new_id_without_a_name_continues_the_call() -> None:
    """LM Studio sends a fresh id and an empty name on every chunk: one call, keeping its
    first id, not three fragments."""
    results, found = run(LM_STUDIO, "lenient")
    assert outcomes(results) == [call(0, "193629320", "get_weather", PARIS)]
    assert found == {"openai-chat/C3"}


def test_c3_strict_rejects_a_call_whose_id_changes() -> None:
    """The strict profile rejects the call when its id changes, keeping its first id and the
    text received up to and including the delta that changed it; later fragments are not
    buffered."""
    results, found = run(LM_STUDIO, "strict")
    assert outcomes(results) == [
        call(0, "193629320", "get_weather", '{"city": "Par', Reason.PROTOCOL_ERROR)
    ]
    assert found == {"openai-chat/C3"}


# -- C4, C5: repeated identity ----------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_c4_a_repeated_id_and_type_are_never_concatenated(profile: str) -> None:
    """LiteLLM repeats ``id`` and ``type`` on every chunk: the result is exactly that of the
    clean stream (no ``call_1call_1``), with C4 recorded."""
    fragments = ['{"ci', 'ty": "Pa', 'ris"}']
    litellm = [chunk(header(0, "call_1", "get_weather"))]
    litellm += [
        chunk({"index": 0, "id": "call_1", "type": "function", "function": {"arguments": f}})
        for f in fragments
    ]
    clean = [chunk(header(0, "call_1", "get_weather"))] + [chunk(args(0, f)) for f in fragments]
    tail: list[Payload] = [chunk(finish="tool_calls"), DONE]
    results, found = run(litellm + tail, profile)
    expected, clean_found = run(clean + tail, profile)
    assert results == expected
    assert outcomes(results) == CLEAN_CALLS
    assert (found, clean_found) == ({"openai-chat/C4"}, set())


@pytest.mark.parametrize("profile", PROFILES)
def test_c5_a_repeated_name_is_never_concatenated(profile: str) -> None:
    """MiniMax via NIM and old llama.cpp resend the full name on every chunk: the name stays
    ``get_weather`` (not ``get_weatherget_weather``), with C5 recorded."""
    fragments = ['{"ci', 'ty": "Pa', 'ris"}']
    stream: list[Payload] = [chunk(header(0, "call_1", "get_weather"))]
    stream += [
        chunk({"index": 0, "function": {"name": "get_weather", "arguments": f}}) for f in fragments
    ]
    results, found = run([*stream, chunk(finish="tool_calls"), DONE], profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == {"openai-chat/C5"}


@pytest.mark.parametrize("profile", PROFILES)
def test_c5_a_different_name_at_the_same_index_rejects_the_call(profile: str) -> None:
    """A second, different name for the same call cannot be trusted either way: rejected
    ``protocol_error`` in both profiles, the detail naming both names."""
    stream = [
        chunk(header(0, "call_1", "get_weather", '{"city"')),
        chunk({"index": 0, "function": {"name": "get_stock_price", "arguments": ': "Paris"}'}}),
        chunk(finish="tool_calls"),
        DONE,
    ]
    results, _ = run(stream, profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", '{"city"', Reason.PROTOCOL_ERROR)]
    assert "get_weather" in (results[0].detail or "")
    assert "get_stock_price" in (results[0].detail or "")


# -- C6, C7: incomplete or odd identity -------------------------------------------------------

NAME_LATE = [
    chunk({"index": 0, "id": "call_1", "type": "function", "function": {"arguments": '{"city"'}}),
    chunk({"index": 0, "function": {"name": "get_weather", "arguments": ': "Paris"}'}}),
    chunk(finish="tool_calls"),
    DONE,
]


def test_c6_lenient_a_name_after_the_arguments_still_names_the_call() -> None:
    """Some compatible providers send the first delta without ``function.name``: the buffered
    arguments and the later name form one ready call, recorded as C6."""
    results, found = run(NAME_LATE, "lenient")
    assert outcomes(results) == CLEAN_CALLS
    assert found == {"openai-chat/C6"}


def test_c6_strict_rejects_a_header_without_a_name() -> None:
    """The strict profile rejects the call when its name arrives late."""
    results, found = run(NAME_LATE, "strict")
    assert outcomes(results) == [call(0, "call_1", "get_weather", '{"city"', Reason.PROTOCOL_ERROR)]
    assert found == {"openai-chat/C6"}


NUMERIC_ID = [
    chunk(
        {
            "index": 0,
            "id": 7,
            "type": "function",
            "function": {"name": "get_weather", "arguments": PARIS},
        }
    ),
    chunk(finish="tool_calls"),
    DONE,
]


def test_c7_lenient_a_numeric_id_is_stringified() -> None:
    """Poolside sends integer ids: the lenient profile keeps it as ``"7"`` (not synthesised)."""
    results, found = run(NUMERIC_ID, "lenient")
    assert outcomes(results) == [call(0, "7", "get_weather", PARIS)]
    assert not results[0].synthetic_id
    assert found == {"openai-chat/C7"}


def test_c7_strict_rejects_a_numeric_id_as_missing() -> None:
    """The strict profile does not accept a non-string id: the call has none, so ``missing_id``."""
    results, found = run(NUMERIC_ID, "strict")
    assert outcomes(results) == [call(0, None, "get_weather", PARIS, Reason.MISSING_ID)]
    assert found == {"openai-chat/C7"}


# -- C8, C9, C15, C19: spec-legal shapes ------------------------------------------------------

MISTRAL_PREFIX = {
    "id": "7f62714e",
    "object": "chat.completion.chunk",
    "created": 1758000000,
    "model": "mistral-large-latest",
}
MISTRAL_CALLS = [
    {
        "id": "yBvJuId6u",
        "function": {"name": "get_weather", "arguments": '{"city": "Detroit"}'},
        "index": 0,
    },
    {
        "id": "ihQrVBDfy",
        "function": {"name": "get_stock_price", "arguments": '{"ticker": "DET"}'},
        "index": 1,
    },
]
MISTRAL_OUTCOMES = [
    call(0, "yBvJuId6u", "get_weather", '{"city": "Detroit"}'),
    call(1, "ihQrVBDfy", "get_stock_price", '{"ticker": "DET"}'),
]


def _mistral(**top: Any) -> bytes:
    role = {
        **MISTRAL_PREFIX,
        "choices": [
            {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
        ],
    }
    calls = {
        **MISTRAL_PREFIX,
        "choices": [
            {"index": 0, "delta": {"tool_calls": MISTRAL_CALLS}, "finish_reason": "tool_calls"}
        ],
        **top,
    }
    return sse(role, calls)


@pytest.mark.parametrize("profile", PROFILES)
def test_c8_two_whole_calls_in_one_delta_are_accepted_without_findings(profile: str) -> None:
    """Mistral sends both calls, whole and without ``type``, in one delta that also finishes
    the choice (C8, C19): two ready calls, nothing recorded."""
    results, found = run_wire(_mistral(), profile)
    assert outcomes(results) == MISTRAL_OUTCOMES
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_c8_the_mistral_capture_only_records_usage_in_the_finish_chunk(profile: str) -> None:
    """The real capture also carries usage and a ``p`` padding field in that chunk: the calls
    are unchanged and only the usage placement (C23) is recorded."""
    usage = {"prompt_tokens": 164, "total_tokens": 189, "completion_tokens": 25}
    results, found = run_wire(_mistral(usage=usage, p="abcdefghijklm"), profile)
    assert outcomes(results) == MISTRAL_OUTCOMES
    assert found == {"openai-chat/C23"}


@pytest.mark.parametrize("profile", PROFILES)
def test_c8_whole_arguments_in_the_header_delta_are_accepted_without_findings(
    profile: str,
) -> None:
    """Groq sends the entire call, arguments included, in its first delta."""
    stream = [
        chunk(role="assistant", content=""),
        chunk(header(0, "call_785j", "get_weather", PARIS)),
        chunk(finish="tool_calls"),
        DONE,
    ]
    results, found = run(stream, profile)
    assert outcomes(results) == [call(0, "call_785j", "get_weather", PARIS)]
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_c9_an_opening_brace_in_the_header_delta_is_part_of_the_arguments(profile: str) -> None:
    """llama.cpp puts ``{`` in the header delta; clients that drop header arguments lose it."""
    stream = [
        chunk(header(0, "call_1", "get_weather", "{")),
        chunk(args(0, '"city": ')),
        chunk(args(0, '"Paris"}')),
        chunk(finish="tool_calls"),
        DONE,
    ]
    results, found = run(stream, profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", '{"city": "Paris"}')]
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_c15_interleaved_fragments_of_two_calls_are_routed_by_index(profile: str) -> None:
    """Fragments alternating between index 0 and 1 land in their own buffers."""
    stream = [
        chunk(header(0, "call_a", "get_weather"), role="assistant"),
        chunk(header(1, "call_b", "get_weather")),
        chunk(args(1, '{"city": ')),
        chunk(args(0, '{"city": ')),
        chunk(args(0, '"Paris"}')),
        chunk(args(1, '"Rome"}')),
        chunk(finish="tool_calls"),
        DONE,
    ]
    results, found = run(stream, profile)
    assert outcomes(results) == [
        call(0, "call_a", "get_weather", PARIS),
        call(1, "call_b", "get_weather", ROME),
    ]
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_c19_a_finish_in_the_same_chunk_as_the_last_fragment_applies_the_fragment_first(
    profile: str,
) -> None:
    """vLLM sends the last fragment and ``finish_reason`` (plus ``stop_reason``) together: the
    fragment is part of the arguments."""
    last = with_choice(chunk(args(0, '"Paris"}'), finish="tool_calls"), stop_reason=128008)
    stream = [
        chunk(header(0, "chatcmpl-tool-1a2b", "get_weather")),
        chunk(args(0, '{"city": ')),
        last,
        DONE,
    ]
    results, found = run(stream, profile)
    assert outcomes(results) == [call(0, "chatcmpl-tool-1a2b", "get_weather", PARIS)]
    assert found == set()


# -- C10–C13: damaged or absent arguments ------------------------------------------------------

SNAPSHOTS = [
    chunk(header(0, "call_1", "get_weather")),
    chunk(args(0, '{"city"')),
    chunk(args(0, '{"city": "Par')),
    chunk(args(0, PARIS)),
    chunk(finish="tool_calls"),
    DONE,
]


@pytest.mark.parametrize("profile", PROFILES)
def test_c10_cumulative_snapshots_are_malformed_json_by_default(profile: str) -> None:
    """Without the per-route opt-in, snapshots are appended like deltas (never guessed at):
    the concatenation is not JSON."""
    results, found = run(SNAPSHOTS, profile)
    text = '{"city"{"city": "Par{"city": "Paris"}'
    assert outcomes(results) == [call(0, "call_1", "get_weather", text, Reason.MALFORMED_JSON)]
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_c10_snapshots_opt_in_keeps_the_last_snapshot(profile: str) -> None:
    """With ``snapshots=True`` (DeepSeek/Qianfan cumulative routes) each snapshot replaces the
    previous one; the call is ready and C10 recorded."""
    results, found = run(SNAPSHOTS, profile, snapshots=True)
    assert outcomes(results) == CLEAN_CALLS
    assert found == {"openai-chat/C10"}


@pytest.mark.parametrize("profile", PROFILES)
def test_c10_snapshots_opt_in_rejects_a_fragment_that_does_not_extend_the_text(
    profile: str,
) -> None:
    """On a route that opts in, every fragment after the first is a snapshot: an ordinary
    delta does not extend the text so far and rejects the call ``malformed_json`` (C10's words),
    never guessed to be a delta; no snapshot was read, so none is recorded."""
    deltas = [
        chunk(header(0, "call_1", "get_weather")),
        chunk(args(0, '{"city": ')),
        chunk(args(0, '"Paris"}')),
        chunk(finish="tool_calls"),
        DONE,
    ]
    results, found = run(deltas, profile, snapshots=True)
    assert [(r.status, r.reason) for r in results] == [(Status.REJECTED, Reason.MALFORMED_JSON)]
    assert found == set()


REPEATED = [
    chunk(header(0, "call_1", "get_weather")),
    chunk(args(0, '{"city": ')),
    chunk(args(0, '"Paris"}')),
    chunk(args(0, PARIS)),
    chunk(finish="tool_calls"),
    DONE,
]


@pytest.mark.parametrize("profile", PROFILES)
def test_c11_arguments_repeated_twice_are_recorded_and_rejected_by_default(profile: str) -> None:
    """LiteLLM's duplicate summary chunk doubles the arguments: recorded as C11, rejected
    ``malformed_json`` unless the route opts into repair."""
    results, found = run(REPEATED, profile)
    assert outcomes(results) == [
        call(0, "call_1", "get_weather", PARIS + PARIS, Reason.MALFORMED_JSON)
    ]
    assert found == {"openai-chat/C11"}


@pytest.mark.parametrize("profile", PROFILES)
def test_c11_repair_json_reads_the_repeated_value_once(profile: str) -> None:
    """With ``repair_json=True`` the call is ready with the value once; the text stays verbatim."""
    results, found = run(REPEATED, profile, repair_json=True)
    assert outcomes(results) == [
        (0, "call_1", "get_weather", PARIS + PARIS, {"city": "Paris"}, Status.READY, None)
    ]
    assert found == {"openai-chat/C11"}


MISSING_BRACE = [
    chunk(header(0, "call_1", "get_weather")),
    chunk(args(0, '{"city": ')),
    chunk(args(0, '"Paris"')),
    chunk(finish="tool_calls"),
    DONE,
]


@pytest.mark.parametrize("profile", PROFILES)
def test_c12_a_dropped_closing_brace_is_malformed_json_by_default(profile: str) -> None:
    """vLLM hermes drops the final ``}``: never repaired silently."""
    results, found = run(MISSING_BRACE, profile)
    assert outcomes(results) == [
        call(0, "call_1", "get_weather", '{"city": "Paris"', Reason.MALFORMED_JSON)
    ]
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_c12_repair_json_closes_the_brackets_and_records_it(profile: str) -> None:
    """With ``repair_json=True`` the missing ``}`` is supplied for parsing (text kept raw)."""
    results, found = run(MISSING_BRACE, profile, repair_json=True)
    assert outcomes(results) == [
        (0, "call_1", "get_weather", '{"city": "Paris"', {"city": "Paris"}, Status.READY, None)
    ]
    assert found == {"openai-chat/C12"}


@pytest.mark.parametrize("profile", PROFILES)
def test_c13_a_parameterless_call_without_arguments_completes_as_empty_object(
    profile: str,
) -> None:
    """vLLM hermes sends no ``{}`` for a parameterless tool: it completes as ``{}`` (C13)."""
    stream = [chunk(header(0, "call_1", NOW.name)), chunk(finish="tool_calls"), DONE]
    results, found = run(stream, profile)
    assert outcomes(results) == [(0, "call_1", "get_time", "", {}, Status.READY, None)]
    assert found == {"openai-chat/C13"}


@pytest.mark.parametrize("profile", PROFILES)
def test_c13_a_tool_with_parameters_and_no_arguments_is_malformed(profile: str) -> None:
    """Only a parameterless tool gets ``{}``; a tool with parameters and no arguments is not a
    call that can run."""
    stream = [chunk(header(0, "call_1", "get_weather")), chunk(finish="tool_calls"), DONE]
    results, found = run(stream, profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", "", Reason.MALFORMED_JSON)]
    assert found == set()


# -- C14: index gap ---------------------------------------------------------------------------

CLAUDE_INDEX_1 = [
    chunk(role="assistant", content="Let me check the weather."),
    chunk(header(1, "toolu_vrtx_01", "get_weather")),
    chunk(args(1, PARIS)),
    chunk(finish="tool_calls"),
    DONE,
]


def test_c14_lenient_an_index_starting_at_1_is_compacted_to_0() -> None:
    """Claude behind an OpenAI-compatible route numbers its first call 1 after a text block:
    the call is position 0, recorded as C14."""
    results, found = run(CLAUDE_INDEX_1, "lenient")
    assert outcomes(results) == [call(0, "toolu_vrtx_01", "get_weather", PARIS)]
    assert found == {"openai-chat/C14"}


def test_c14_strict_rejects_an_index_gap() -> None:
    """The strict profile rejects a call whose index skips 0."""
    results, found = run(CLAUDE_INDEX_1, "strict")
    assert statuses(results) == [(0, Status.REJECTED, Reason.PROTOCOL_ERROR)]
    assert found == {"openai-chat/C14"}


@pytest.mark.parametrize(
    "stream",
    [
        pytest.param(OLLAMA, id="C2-index-reused"),
        pytest.param(CLAUDE_INDEX_1, id="C14-index-gap"),
        pytest.param(
            [
                chunk(
                    {
                        "id": "jm4owj31",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": PARIS},
                    }
                ),
                chunk(finish="tool_calls"),
                DONE,
            ],
            id="C1-index-missing",
        ),
    ],
)
def test_a_call_the_strict_profile_rejects_keeps_the_id_and_name_it_was_sent(
    stream: list[Payload],
) -> None:
    """V6: a rejection carries the call id (and name) so the tool result can still answer it.
    The delta that the strict profile rejects had both; the result must not drop them."""
    results, _ = run(stream, "strict")
    rejected = [r for r in results if r.status is Status.REJECTED]
    assert rejected
    for result in rejected:
        assert result.id is not None
        assert result.name == "get_weather"


# -- C16–C18: finish reasons that disagree with the calls -------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_c16_finish_stop_with_calls_completes_them(profile: str) -> None:
    """Gemini-compat and named tool_choice finish with ``stop``: the calls are ready, C16
    recorded."""
    results, found = run([*simple_call(finish="stop"), DONE], profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == {"openai-chat/C16"}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("repair_json", [False, True])
def test_c17_finish_tool_calls_with_truncated_arguments_is_malformed(
    profile: str, repair_json: bool
) -> None:
    """vLLM rewrote ``length`` to ``tool_calls``: the cut-off text never parses, even with
    repair on (a string cut in the middle is not closable)."""
    stream = [*simple_call(arguments='{"city": "Par'), DONE]
    results, found = run(stream, profile, repair_json=repair_json)
    assert outcomes(results) == [
        call(0, "call_1", "get_weather", '{"city": "Par', Reason.MALFORMED_JSON)
    ]
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_c18_finish_length_mid_call_is_truncated(profile: str) -> None:
    """``length`` during a call: rejected ``truncated``, the partial text kept."""
    stream = [*simple_call(arguments='{"city": "Par', finish="length"), DONE]
    results, found = run(stream, profile)
    assert outcomes(results) == [
        call(0, "call_1", "get_weather", '{"city": "Par', Reason.TRUNCATED)
    ]
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_content_filter_finish_rejects_the_call_as_filtered(profile: str) -> None:
    """Azure's ``content_filter`` finish: the call is rejected ``filtered``."""
    results, found = run([*simple_call(finish="content_filter"), DONE], profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", PARIS, Reason.FILTERED)]
    assert found == set()


# -- C20–C24: chunks around the finish --------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_c20_chunks_after_the_finish_are_ignored_but_their_usage_kept(profile: str) -> None:
    """OpenRouter follows the finish with a usage chunk whose choices are non-empty, sometimes
    a duplicate finish; a tool delta after the finish must not touch the call. The first
    finish wins, C20 is recorded, and the usage is the last one sent."""
    first_usage = {**USAGE, "cost": 0.0001, "is_byok": False}
    last_usage = {**USAGE, "total_tokens": 210}
    stream: list[Payload] = [
        *simple_call(finish=None),
        with_choice(
            chunk(finish="tool_calls", provider="OpenAI"), native_finish_reason="completed"
        ),
        chunk(role="assistant", content="", usage=first_usage, provider="OpenAI"),
        chunk(finish="stop", usage=last_usage),
        chunk(args(0, ROME)),
        DONE,
    ]
    results, usage = run_with_usage(stream, profile)
    _, found = run(stream, profile)
    assert outcomes(results) == CLEAN_CALLS
    assert usage == last_usage
    assert found == {"openai-chat/C20", "openai-chat/C23"}


@pytest.mark.parametrize("profile", PROFILES)
def test_c20_events_after_done_are_ignored_and_recorded(profile: str) -> None:
    """Anything after ``[DONE]`` changes no call."""
    stream = [*simple_call(finish=None), DONE, chunk(finish="tool_calls"), DONE]
    results, found = run(stream, profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", PARIS, Reason.UNFINISHED)]
    assert found == {"openai-chat/C20"}


AZURE_PROMPT_FILTER = {
    "choices": [],
    "created": 0,
    "id": "",
    "model": "",
    "object": "",
    "prompt_filter_results": [
        {
            "prompt_index": 0,
            "content_filter_results": {"hate": {"filtered": False, "severity": "safe"}},
        }
    ],
}


@pytest.mark.parametrize("profile", PROFILES)
def test_c21_an_azure_first_chunk_with_empty_choices_is_accepted(profile: str) -> None:
    """Azure's first chunk has ``choices: []`` and blank metadata: nothing crashes, the chunk
    id is taken from the next chunk (so no C30 later), and C21 is recorded."""
    results, found = run([AZURE_PROMPT_FILTER, *CLEAN, DONE], profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == {"openai-chat/C21"}


@pytest.mark.parametrize("profile", PROFILES)
def test_c22_an_azure_annotation_choice_without_delta_is_an_empty_delta(profile: str) -> None:
    """Azure's asynchronous filter sends choices with filter results and no ``delta`` (and a
    blank chunk id): treated as an empty delta, recorded as C22 (and C30)."""
    annotation = {
        "choices": [
            {
                "index": 0,
                "finish_reason": None,
                "content_filter_results": {"hate": {"filtered": False, "severity": "safe"}},
                "content_filter_offsets": {"check_offset": 0, "start_offset": 0, "end_offset": 12},
            }
        ],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
    }
    stream = [*CLEAN[:2], annotation, *CLEAN[2:], DONE]
    results, found = run(stream, profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == {"openai-chat/C22", "openai-chat/C30"}


def _every_chunk_usage() -> list[Payload]:
    payloads = [{**payload, "usage": {"total_tokens": n}} for n, payload in enumerate(CLEAN)]
    return [*payloads, chunk(usage={"total_tokens": 99}, choices=[]), DONE]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("stream", "expected_usage", "expected_quirks"),
    [
        pytest.param(
            [*simple_call(finish=None), chunk(content="", finish="tool_calls", usage=USAGE), DONE],
            USAGE,
            {"openai-chat/C23"},
            id="deepseek-in-finish-chunk",
        ),
        pytest.param(
            _every_chunk_usage(), {"total_tokens": 99}, {"openai-chat/C23"}, id="vllm-every-chunk"
        ),
        pytest.param(
            [
                *simple_call(finish=None),
                chunk(finish="tool_calls", x_groq={"id": "req_01", "usage": USAGE}),
                DONE,
            ],
            USAGE,
            {"openai-chat/C23"},
            id="groq-x_groq",
        ),
        pytest.param(
            [*({**p, "usage": {}} for p in CLEAN), DONE],
            None,
            {"openai-chat/C23"},
            id="litellm-empty-usage",
        ),
        pytest.param(
            [*({**p, "usage": None} for p in CLEAN), chunk(usage=USAGE, choices=[]), DONE],
            USAGE,
            set(),
            id="openai-include-usage",
        ),
    ],
)
def test_c23_usage_is_the_last_non_null_one_wherever_it_came(
    stream: list[Payload], expected_usage: Any, expected_quirks: set[str], profile: str
) -> None:
    """Usage in the finish chunk, on every chunk or under ``x_groq`` is recorded as C23;
    ``Assembler.usage`` holds the last non-empty one; calls are unaffected."""
    results, usage = run_with_usage(stream, profile)
    _, found = run(stream, profile)
    assert outcomes(results) == CLEAN_CALLS
    assert usage == expected_usage
    assert found == expected_quirks


@pytest.mark.parametrize("profile", PROFILES)
def test_c24_end_of_file_after_the_finish_without_done_keeps_calls_ready(profile: str) -> None:
    """Every choice finished, then the connection closed without ``[DONE]``: the calls stand,
    C24 recorded."""
    results, found = run_once(sse(*CLEAN, done=False), profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == {"openai-chat/C24"}


# -- C25, C26, C33: streams that end badly ----------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_c25_end_of_file_without_a_finish_interrupts_the_call(profile: str) -> None:
    """The connection dropped mid-call (vLLM pre-first-token errors, proxies): rejected
    ``interrupted`` even though the text so far parses."""
    results, found = run_once(sse(*simple_call(finish=None), done=False), profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", PARIS, Reason.INTERRUPTED)]
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_done_without_a_finish_leaves_the_call_unfinished(profile: str) -> None:
    """``[DONE]`` before any finish_reason: rejected ``unfinished``."""
    results, found = run([*simple_call(finish=None), DONE], profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", PARIS, Reason.UNFINISHED)]
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("error", "expected_in_detail"),
    [
        pytest.param(
            {
                "error": {
                    "message": (
                        "The server had an error while processing your request. Sorry about that!"
                    ),
                    "type": "server_error",
                }
            },
            ["The server had an error while processing your request", "server_error"],
            id="openai-nested",
        ),
        pytest.param(
            {
                "object": "error",
                "message": "This model's maximum context length is 4096 tokens.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
            ["maximum context length is 4096 tokens", "400"],
            id="vllm-flat",
        ),
        pytest.param(
            chunk(
                content="",
                finish="error",
                provider="openai",
                error={"code": 502, "message": "Provider disconnected"},
            ),
            ["Provider disconnected", "502"],
            id="openrouter-int-code",
        ),
        pytest.param(
            chunk(
                content="",
                finish="error",
                provider="openai",
                error={"code": "server_error", "message": "Provider disconnected"},
            ),
            ["Provider disconnected", "server_error"],
            id="openrouter-string-code",
        ),
    ],
)
def test_c26_an_in_band_error_fails_the_call_with_the_provider_message(
    error: dict[str, Any], expected_in_detail: list[str], profile: str
) -> None:
    """An error payload inside the 200 stream rejects the open call ``stream_error`` with the
    provider's message and code in the detail; the partial text is kept, and a finish sent
    afterwards cannot revive the call."""
    stream = [*simple_call(finish=None), error, chunk(finish="tool_calls"), DONE]
    results, found = run(stream, profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", PARIS, Reason.STREAM_ERROR)]
    for text in expected_in_detail:
        assert text in (results[0].detail or "")
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
def test_c26_an_sse_error_event_fails_the_call(profile: str) -> None:
    """``event: error`` on the wire fails the stream the same way."""
    error = (
        b'event: error\ndata: {"error": {"message": "Overloaded", "type": "overloaded_error"}}\n\n'
    )
    data = sse(*simple_call(finish=None), done=False) + error + sse(chunk(finish="tool_calls"))
    results, found = run_once(data, profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", PARIS, Reason.STREAM_ERROR)]
    assert "Overloaded" in (results[0].detail or "")
    assert found == set()


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("finish", "reason"),
    [
        pytest.param("insufficient_system_resource", Reason.PROVIDER_FINISH, id="deepseek"),
        pytest.param("error", Reason.STREAM_ERROR, id="openrouter-error"),
    ],
)
def test_c33_an_unknown_finish_reason_never_completes_the_call(
    finish: str, reason: Reason, profile: str
) -> None:
    """A finish reason outside the OpenAI set leaves the call not executable, recorded C33."""
    results, found = run([*simple_call(finish=finish), DONE], profile)
    assert outcomes(results) == [call(0, "call_1", "get_weather", PARIS, reason)]
    assert finish in (results[0].detail or "")
    assert found == {"openai-chat/C33"}


# -- C27–C32: legacy calls, extras, envelope oddities ------------------------------------------

LEGACY = [
    legacy({"name": "get_weather", "arguments": ""}, role="assistant"),
    legacy({"arguments": '{"city": '}),
    legacy({"arguments": '"Paris"}'}),
    legacy(finish="function_call"),
    DONE,
]


def test_c27_lenient_a_legacy_function_call_is_ready_with_a_synthetic_id() -> None:
    """``delta.function_call`` has no index and no id: one call at position 0 with a made-up
    id, recorded as C27 and C7."""
    results, found = run(LEGACY, "lenient")
    assert outcomes(results) == [call(0, results[0].id, "get_weather", PARIS)]
    assert results[0].synthetic_id
    assert found == {"openai-chat/C27", "openai-chat/C7"}


def test_c27_strict_rejects_a_legacy_call_for_its_missing_id() -> None:
    """The strict profile makes up no id: the legacy call is rejected ``missing_id``."""
    results, found = run(LEGACY, "strict")
    assert outcomes(results) == [call(0, None, "get_weather", PARIS, Reason.MISSING_ID)]
    assert found == {"openai-chat/C27"}


THOUGHT = {"google": {"thought_signature": "CiQBcsjafHZT"}}


@pytest.mark.parametrize("profile", PROFILES)
def test_c28_extra_content_is_kept_on_the_call(profile: str) -> None:
    """Gemini 3 needs ``extra_content.google.thought_signature`` back next turn: it travels in
    ``result.extras``, recorded as C28."""
    stream = [
        chunk({**header(0, "function-call-1", "get_weather", PARIS), "extra_content": THOUGHT}),
        chunk(finish="tool_calls"),
        DONE,
    ]
    results, found = run(stream, profile)
    assert outcomes(results) == [call(0, "function-call-1", "get_weather", PARIS)]
    assert results[0].extras == {"extra_content": THOUGHT}
    assert found == {"openai-chat/C28"}


def test_c28_lenient_a_metadata_only_delta_attaches_extra_content() -> None:
    """Gemini sometimes sends the signature as a standalone, index-less delta after the call:
    it attaches to the one open call."""
    stream = [
        gemini_chunk(GEMINI_CALL, finish=None),
        gemini_chunk({"extra_content": THOUGHT}),
        DONE,
    ]
    results, found = run(stream, "lenient")
    assert outcomes(results) == [call(0, results[0].id, "get_weather", PARIS)]
    assert results[0].extras == {"extra_content": THOUGHT}
    assert {"openai-chat/C1", "openai-chat/C28"} <= found


@pytest.mark.parametrize("profile", PROFILES)
def test_c29_a_repeated_or_empty_role_is_accepted_and_recorded(profile: str) -> None:
    """OpenRouter repeats ``role: assistant`` on every delta; some schemas send ``role: ""``."""
    stream = [
        with_choice(p, delta={**p["choices"][0]["delta"], "role": "assistant"}) for p in CLEAN[:-1]
    ]
    stream += [chunk(finish="tool_calls", role=""), DONE]
    results, found = run(stream, profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == {"openai-chat/C29"}


@pytest.mark.parametrize("profile", PROFILES)
def test_c30_a_chunk_id_that_changes_is_accepted_and_recorded(profile: str) -> None:
    """Old LiteLLM gave every chunk a different ``id``: calls unaffected, C30 recorded."""
    stream = [{**p, "id": f"chatcmpl-{n}"} for n, p in enumerate(CLEAN)]
    results, found = run([*stream, DONE], profile)
    assert outcomes(results) == CLEAN_CALLS
    assert found == {"openai-chat/C30"}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    "pieces",
    [
        pytest.param(["<tool_", 'call>{"name": "get_weather"}</tool_call>'], id="hermes-split"),
        pytest.param(["[TOOL_", 'CALLS]get_weather{"city": "Paris"}'], id="mistral-split"),
    ],
)
def test_c31_tool_call_markup_in_content_is_recorded_not_executed(
    pieces: list[str], profile: str
) -> None:
    """A server without a tool parser leaks the call as text, even split over two content
    deltas: no call is made of it, and C31 is recorded."""
    stream = [
        chunk(role="assistant", content=pieces[0]),
        chunk(content=pieces[1]),
        chunk(finish="stop"),
        DONE,
    ]
    results, found = run(stream, profile)
    assert results == []
    assert found == {"openai-chat/C31"}


@pytest.mark.parametrize("profile", PROFILES)
def test_c31_plain_text_about_tools_is_not_flagged(profile: str) -> None:
    """Content that merely talks about tool calls is no finding."""
    stream = [
        chunk(role="assistant", content="I will make a tool"),
        chunk(content="_call now."),
        chunk(finish="stop"),
        DONE,
    ]
    results, found = run(stream, profile)
    assert results == []
    assert found == set()


OBJECT_ARGUMENTS = [
    chunk(
        {
            "index": 0,
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
        }
    ),
    chunk(finish="tool_calls"),
    DONE,
]


def test_c32_lenient_arguments_sent_as_an_object_are_serialised() -> None:
    """LiteLLM over Ollama sent arguments as a JSON object: the lenient profile serialises it
    and the call is ready, recorded as C32."""
    results, found = run(OBJECT_ARGUMENTS, "lenient")
    assert outcomes(results) == [call(0, "call_1", "get_weather", PARIS)]
    assert found == {"openai-chat/C32"}


def test_c32_strict_rejects_arguments_that_are_not_a_string() -> None:
    """The strict profile rejects a call whose arguments are not a string, keeping what the
    provider sent (serialised) for the log."""
    results, found = run(OBJECT_ARGUMENTS, "strict")
    assert statuses(results) == [(0, Status.REJECTED, Reason.PROTOCOL_ERROR)]
    assert (results[0].id, results[0].name) == ("call_1", "get_weather")
    assert results[0].arguments_text == '{"city": "Paris"}'
    assert found == {"openai-chat/C32"}


def test_c1_a_header_without_index_is_continued_by_indexed_fragments() -> None:
    """A call whose first delta had an id but no index, continued by fragments that carry
    ``index: 0`` and no id, stays one call (lenient), recorded as C1."""
    payloads = [
        chunk({"id": "call_1", "type": "function", "function": {"name": "get_weather"}}),
        chunk(args(0, '{"city": ')),
        chunk(args(0, '"Paris"}')),
        chunk(finish="tool_calls"),
    ]
    results, found = assemble_every_way(sse(*payloads))
    assert [(r.index, r.id, r.name, r.status, r.arguments) for r in results] == [
        (0, "call_1", "get_weather", Status.READY, {"city": "Paris"})
    ]
    assert quirks(found) == {"openai-chat/C1"}


def test_c1_an_indexed_fragment_never_joins_a_call_when_two_lack_an_index() -> None:
    """With two index-less calls open, a fragment naming a new index cannot be placed on
    either: it starts a call of its own, which fails for want of a name, and the two complete
    calls stay as they were."""
    payloads = [
        chunk(
            {"id": "call_a", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}},
            {"id": "call_b", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
        ),
        chunk(args(0, "}")),
        chunk(finish="tool_calls"),
    ]
    results, _ = assemble_every_way(sse(*payloads))
    assert [(r.index, r.status, r.reason) for r in results] == [
        (0, Status.READY, None),
        (1, Status.READY, None),
        (2, Status.REJECTED, Reason.MISSING_NAME),
    ]


def test_t11_is_recorded_as_soon_as_the_bad_bytes_arrive() -> None:
    """``findings`` reports invalid UTF-8 during the stream, not only after ``close()``."""
    asm = Assembler(TOOLS)
    asm.feed(b": keep-alive \xff\xfe\n\n")
    assert quirks(asm.findings) == {"openai-chat/T11"}

"""Mutant assemblers (``tests/mutants``): a faithful baseline, and one real bug per mutant.

The base assembler must give the reference's lenient results on ordinary streams, however the
network cuts them. Each mutant must give something else on a stream that exhibits its bug, while
the base gives the correct results on that same stream; the registry must list every mutant with
the rules it breaks and the public reports it reproduces.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

import tests.mutants
from callstream.reference import Assembler, Limits, Tool
from tests.helpers import TOOLS, args, chunk, header, simple_call, splits, sse
from tests.mutants import MUTANTS, BaseAssembler
from tests.mutants._anthropic_base import CALLSTREAM as ANTHROPIC_CALLSTREAM
from tests.mutants._anthropic_base import AnthropicAssembler
from tests.mutants._base import CALLSTREAM
from tests.mutants._responses_base import CALLSTREAM as RESPONSES_CALLSTREAM
from tests.mutants._responses_base import ResponsesAssembler
from tests.test_anthropic_mutants import EXHIBITED as ANTHROPIC_EXHIBITED
from tests.test_responses_mutants import EXHIBITED as RESPONSES_EXHIBITED

Result = dict[str, Any]
Payload = dict[str, Any]
TestFunction = TypeVar("TestFunction", bound=Callable[..., None])

RULES = {
    *(f"A{n}" for n in range(1, 9)),
    *(f"C{n}" for n in range(1, 7)),
    *(f"V{n}" for n in range(1, 7)),
    *(f"T{n}" for n in range(1, 5)),
    *(f"E{n}" for n in range(1, 5)),
}
"""The rules of REQUIREMENTS.md."""

LIST_FILES = Tool("list_files", {"type": "object", "properties": {"path": {"type": "string"}}})
"""A tool whose parameters are all optional, so ``{}`` passes its schema."""


# --- running assemblers ----------------------------------------------------------------------


def run(
    factory: Callable[..., BaseAssembler],
    pieces: Sequence[bytes],
    tools: Sequence[Tool] | None = TOOLS,
    limits: Limits | None = None,
) -> list[Result]:
    """Feed ``pieces`` to a fresh assembler made by ``factory`` and close it; every result."""
    asm = factory(tools=tools, limits=limits)
    results: list[Result] = []
    for piece in pieces:
        results += asm.feed(piece)
    return results + asm.close()


def released_per_event(
    factory: Callable[..., BaseAssembler], payloads: Sequence[Payload]
) -> list[list[Result]]:
    """What each ``feed()`` released when every payload arrives as its own event, then close."""
    asm = factory(tools=TOOLS, limits=None)
    return [asm.feed(sse(payload, done=False)) for payload in payloads] + [asm.close()]


def reference(data: bytes, tools: Sequence[Tool] | None, limits: Limits | None) -> list[Result]:
    """The reference assembler's lenient results, in the contract's shape."""
    asm = Assembler(tools, limits=limits)
    results = asm.feed(data) + asm.close()
    return [comparable(result.to_dict()) for result in results]


def comparable(result: Result) -> Result:
    """A result without what the base does not model: the detail, the wire index, and the
    value of a synthesised id (the reference's are unique per response, the base's per
    position)."""
    out = {key: value for key, value in result.items() if key not in ("detail", "wire_index")}
    if out.get("synthetic_id"):
        out["id"] = "<synthesised>"
    return out


def ready(
    arguments: dict[str, Any],
    *,
    text: str | None = None,
    call_id: str = "call_1",
    name: str = "get_weather",
    index: int = 0,
) -> Result:
    """A result that may run."""
    return {
        "choice": 0,
        "index": index,
        "id": call_id,
        "name": name,
        "arguments_text": json.dumps(arguments) if text is None else text,
        "arguments": arguments,
        "status": "ready",
        "reason": None,
    }


def rejected(
    reason: str,
    text: str,
    *,
    call_id: str | None = "call_1",
    name: str | None = "get_weather",
    index: int = 0,
) -> Result:
    """A result that must never run."""
    return {
        "choice": 0,
        "index": index,
        "id": call_id,
        "name": name,
        "arguments_text": text,
        "arguments": None,
        "status": "rejected",
        "reason": reason,
    }


# --- streams ---------------------------------------------------------------------------------

PARIS = ready({"city": "Paris"})
"""What ``simple_call()`` assembles to."""


def whole_call(index: int, call_id: str, name: str, arguments: str | Payload) -> Payload:
    """A tool-call delta carrying a whole call, as Mistral, Groq and Ollama send it."""
    return {"index": index, "id": call_id, "function": {"name": name, "arguments": arguments}}


def without(entry: Payload, key: str) -> Payload:
    """``entry`` without ``key``, or without ``function.key`` for ``name``/``arguments``."""
    if key in ("name", "arguments"):
        function = {k: v for k, v in entry["function"].items() if k != key}
        return {**entry, "function": function}
    return {k: v for k, v in entry.items() if k != key}


def legacy_chunk(function_call: Payload, **options: Any) -> Payload:
    """A chunk whose delta carries a legacy ``function_call`` (OpenAI before ``tools``)."""
    payload = chunk(**options)
    payload["choices"][0]["delta"]["function_call"] = function_call
    return payload


def raw_sse(*payloads: Payload) -> bytes:
    """Like ``sse``, but non-ASCII text travels as UTF-8 bytes, not as ``\\u`` escapes."""
    return sse(*(json.dumps(payload, ensure_ascii=False) for payload in payloads))


def multi_line_event(payload: Payload, newline: str) -> bytes:
    """One event whose JSON is pretty-printed over several ``data:`` lines."""
    lines = json.dumps(payload, indent=1).splitlines()
    return "".join(f"data: {line}{newline}" for line in lines).encode() + newline.encode()


TWO_CALLS = [
    chunk(header(0, "call_1", "get_weather"), role="assistant"),
    chunk(args(0, '{"city": ')),
    chunk(args(0, '"Paris"}')),
    chunk(header(1, "call_2", "get_stock_price")),
    chunk(args(1, '{"ticker": "ACME"}')),
    chunk(finish="tool_calls"),
]
INTERLEAVED = [
    chunk(header(0, "call_1", "get_weather"), role="assistant"),
    chunk(header(1, "call_2", "get_stock_price")),
    chunk(args(0, '{"city": ')),
    chunk(args(1, '{"ticker": ')),
    chunk(args(0, '"Paris"}')),
    chunk(args(1, '"ACME"}')),
    chunk(finish="tool_calls"),
]
SAME_TOOL_TWICE = [
    chunk(header(0, "call_1", "get_weather"), role="assistant"),
    chunk(args(0, '{"city": "Paris"}')),
    chunk(header(1, "call_2", "get_weather")),
    chunk(args(1, '{"city": "Rome"}')),
    chunk(finish="tool_calls"),
]
OLLAMA = [
    chunk(whole_call(0, "call_a", "get_weather", '{"city": "Paris"}'), role="assistant"),
    chunk(whole_call(0, "call_b", "get_weather", '{"city": "Rome"}')),
    chunk(finish="tool_calls"),
]
"""Ollama's parallel calls: each whole, all at index 0, told apart by their ids."""
GEMINI = [
    chunk(
        without(whole_call(0, "call_a", "get_weather", '{"city": "Paris"}'), "index"),
        without(whole_call(0, "call_b", "get_stock_price", '{"ticker": "ACME"}'), "index"),
        role="assistant",
    ),
    chunk(finish="tool_calls"),
]
"""Gemini's OpenAI-compatible endpoint: no ``index`` on its tool calls."""
AZURE_FIRST = {
    "id": "",
    "object": "",
    "created": 0,
    "model": "",
    "choices": [],
    "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}],
}
"""Azure OpenAI's first chunk: prompt filter results and no choices."""
USAGE = chunk(usage={"prompt_tokens": 9, "completion_tokens": 9, "total_tokens": 18}) | {
    "choices": []
}
"""The usage chunk ``include_usage`` adds before ``[DONE]``."""
SUMMARY = chunk(header(0, "call_1", "get_weather", '{"city": "Paris"}'))
"""LiteLLM's duplicate "summary" chunk after the finish chunk."""
OPENAI_ERROR = {"error": {"message": "The server had an error", "type": "server_error"}}
VLLM_ERROR = {"object": "error", "message": "overloaded", "type": "BadRequestError", "code": 400}
LONG_CITY = simple_call(arguments='{"city": "' + "P" * 300 + '"}', pieces=1)
"""A call whose single argument fragment makes a line of over 400 characters."""


@dataclass(frozen=True)
class Case:
    """An ordinary stream, and the (status, reason) of each call a correct assembler makes."""

    data: bytes
    outcome: list[tuple[str, str | None]]
    tools: Sequence[Tool] | None = tuple(TOOLS)
    limits: Limits | None = None


READY = ("ready", None)
CASES = {
    "one call": Case(sse(*simple_call()), [READY]),
    "stop and no [DONE]": Case(sse(*simple_call(finish="stop"), done=False), [READY]),
    "two calls then usage": Case(sse(*TWO_CALLS, USAGE), [READY, READY]),
    "interleaved calls": Case(sse(*INTERLEAVED), [READY, READY]),
    "same tool twice": Case(sse(*SAME_TOOL_TWICE), [READY, READY]),
    "two choices": Case(
        sse(
            chunk(header(0, "call_1", "get_weather"), role="assistant"),
            chunk(header(0, "call_2", "get_time"), choice=1, role="assistant"),
            chunk(args(0, '{"city": "Paris"}')),
            chunk(args(0, "{}"), choice=1),
            chunk(finish="tool_calls"),
            chunk(finish="tool_calls", choice=1),
        ),
        [READY, READY],
    ),
    "arguments in the header": Case(
        sse(
            chunk(header(0, "call_1", "get_weather", "{"), role="assistant"),
            chunk(args(0, '"city": "Paris"}')),
            chunk(finish="tool_calls"),
        ),
        [READY],
    ),
    "whole calls and finish in one chunk": Case(
        sse(
            chunk(
                whole_call(0, "yBvJuId6u", "get_weather", '{"city": "Paris"}'),
                whole_call(1, "ihQrVBDfy", "get_stock_price", '{"ticker": "ACME"}'),
                role="assistant",
                finish="tool_calls",
            )
        ),
        [READY, READY],
    ),
    "header repeated on every chunk": Case(
        sse(
            chunk(header(0, "call_1", "get_weather"), role="assistant"),
            chunk(header(0, "call_1", "get_weather", '{"city": ')),
            chunk(header(0, "call_1", "get_weather", '"Paris"}')),
            chunk(finish="tool_calls"),
        ),
        [READY],
    ),
    "name after the arguments": Case(
        sse(
            chunk(without(header(0, "call_1", "get_weather", '{"city": "Paris"}'), "name")),
            chunk({"index": 0, "function": {"name": "get_weather"}}),
            chunk(finish="tool_calls"),
        ),
        [READY],
    ),
    "no id": Case(
        sse(chunk(without(header(0, "call_1", "get_weather"), "id")), *simple_call()[1:]),
        [READY],
    ),
    "numeric id": Case(
        sse(chunk(header(0, "call_1", "get_weather") | {"id": 1667329132}), *simple_call()[1:]),
        [READY],
    ),
    "index as a string": Case(
        sse(
            chunk(header(0, "call_1", "get_weather") | {"index": "0"}),
            chunk(args(0, '{"city": "Paris"}') | {"index": "0"}),
            chunk(finish="tool_calls"),
        ),
        [READY],
    ),
    "header without an index, fragments with one": Case(
        sse(chunk(without(header(0, "call_1", "get_weather"), "index")), *simple_call()[1:]),
        [READY],
    ),
    "all calls at index 0": Case(sse(*OLLAMA), [READY, READY]),
    "no index": Case(sse(*GEMINI), [READY, READY]),
    "empty first chunk": Case(sse(AZURE_FIRST, *simple_call()), [READY]),
    "summary chunk after finish": Case(sse(*simple_call(), SUMMARY), [READY]),
    "arguments as an object": Case(
        sse(chunk(whole_call(0, "call_1", "get_weather", {"city": "Paris"}), finish="stop")),
        [READY],
    ),
    "parameterless tool without arguments": Case(
        sse(chunk(header(0, "call_1", "get_time"), role="assistant"), chunk(finish="tool_calls")),
        [READY],
    ),
    "no tools exposed": Case(sse(*simple_call(name="anything")), [READY], tools=None),
    "no arguments for a tool that takes some": Case(
        sse(chunk(header(0, "call_1", "list_files"), role="assistant"), chunk(finish="stop")),
        [("rejected", "malformed_json")],
        tools=(LIST_FILES,),
    ),
    "legacy function_call": Case(
        sse(
            legacy_chunk({"name": "get_weather", "arguments": ""}, role="assistant"),
            legacy_chunk({"arguments": '{"city": "Paris"}'}),
            chunk(finish="function_call"),
        ),
        [READY],
    ),
    "name changed at the same index": Case(
        sse(
            *simple_call(finish=None),
            chunk(header(0, "call_1", "get_time")),
            chunk(finish="tool_calls"),
        ),
        [("rejected", "protocol_error")],
    ),
    "surrogate pair split across fragments": Case(
        sse(
            chunk(header(0, "call_1", "get_weather"), role="assistant"),
            chunk(args(0, '{"city": "Paris \ud83c')),
            chunk(args(0, '\udf27"}')),
            chunk(finish="tool_calls"),
        ),
        [READY],
    ),
    # transport
    "CRLF": Case(sse(*simple_call(), newline="\r\n"), [READY]),
    "lone CR": Case(sse(*simple_call(), newline="\r"), [READY]),
    "data: without a space": Case(sse(*simple_call()).replace(b"data: ", b"data:"), [READY]),
    "BOM": Case(b"\xef\xbb\xbf" + sse(*simple_call()), [READY]),
    "empty data events": Case(
        sse(*simple_call()).replace(b"\n\ndata: {", b"\n\ndata:\n\ndata\n\ndata: \n\ndata: {"),
        [READY],
    ),
    "comments and event names": Case(
        b": OPENROUTER PROCESSING\n\nevent: message\n" + sse(*simple_call()) + b": ping\n\n",
        [READY],
    ),
    "multi-line data": Case(
        b"".join(multi_line_event(p, "\r\n") for p in simple_call()) + b"data: [DONE]\r\n\r\n",
        [READY],
    ),
    "UTF-8 in the arguments": Case(
        raw_sse(*simple_call(arguments='{"city": "Zürich 東京 🌧"}')), [READY]
    ),
    # endings
    "length": Case(sse(*simple_call(finish="length")), [("rejected", "truncated")]),
    "content_filter": Case(sse(*simple_call(finish="content_filter")), [("rejected", "filtered")]),
    "vendor finish reason": Case(
        sse(*simple_call(finish="insufficient_system_resource")),
        [("rejected", "provider_finish")],
    ),
    "nested error payload": Case(
        sse(*simple_call(finish=None), OPENAI_ERROR, done=False), [("rejected", "stream_error")]
    ),
    "flat error payload": Case(
        sse(*simple_call(finish=None), VLLM_ERROR), [("rejected", "stream_error")]
    ),
    "event: error": Case(
        sse(*simple_call(finish=None), done=False)
        + b'event: error\ndata: {"type": "overloaded_error"}\n\n',
        [("rejected", "stream_error")],
    ),
    "[DONE] before finish": Case(sse(*simple_call(finish=None)), [("rejected", "unfinished")]),
    "EOF before finish": Case(
        sse(*simple_call(finish=None), done=False), [("rejected", "interrupted")]
    ),
    # validation
    "malformed JSON": Case(
        sse(*simple_call(arguments='{"city": "Paris"')), [("rejected", "malformed_json")]
    ),
    "schema violation": Case(
        sse(*simple_call(arguments='{"city": 42}')), [("rejected", "schema_violation")]
    ),
    "unknown tool": Case(sse(*simple_call(name="get_news")), [("rejected", "unknown_tool")]),
    "no name": Case(
        sse(chunk(without(header(0, "call_1", "get_weather"), "name")), *simple_call()[1:]),
        [("rejected", "missing_name")],
    ),
    # limits
    "arguments too large": Case(
        sse(*simple_call()), [("rejected", "too_large")], limits=Limits(max_argument_bytes=8)
    ),
    "too many calls": Case(
        sse(*TWO_CALLS), [("rejected", "too_large")], limits=Limits(max_calls=1)
    ),
    "line too long": Case(
        sse(*LONG_CITY), [("rejected", "too_large")], limits=Limits(max_line_length=400)
    ),
    "event too large": Case(
        sse(*LONG_CITY), [("rejected", "too_large")], limits=Limits(max_event_size=400)
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_the_base_agrees_with_the_reference_however_the_stream_is_cut(name: str) -> None:
    """On ordinary streams the base gives the reference's lenient results, result for result,
    whole, one byte at a time and cut in two anywhere."""
    case = CASES[name]
    expected = reference(case.data, case.tools, case.limits)
    assert [(result["status"], result["reason"]) for result in expected] == case.outcome
    for pieces in splits(case.data):
        results = [comparable(r) for r in run(BaseAssembler, pieces, case.tools, case.limits)]
        assert results == expected, f"cut into {[len(piece) for piece in pieces][:3]}…"


# --- each mutant shows its bug ---------------------------------------------------------------

EXHIBITED: set[str] = set()
"""The mutants a test below shows at work, filled in at import."""


def exhibits(mutant: str) -> Callable[[TestFunction], TestFunction]:
    """Mark a test as showing ``mutant``'s bug."""

    def mark(test: TestFunction) -> TestFunction:
        EXHIBITED.add(mutant)
        return test

    return mark


def bug_shows(
    mutant: str,
    pieces: Sequence[bytes],
    correct: list[Result],
    tools: Sequence[Tool] | None = TOOLS,
) -> list[Result]:
    """The base gives ``correct`` on ``pieces`` and ``mutant`` something else, which is
    returned."""
    assert run(BaseAssembler, pieces, tools) == correct
    wrong = run(MUTANTS[mutant].factory, pieces, tools)
    assert wrong != correct
    return wrong


@exhibits("concatenates_repeated_id")
def test_an_id_sent_on_every_chunk_is_doubled() -> None:
    """concatenates_repeated_id: LiteLLM's id on every chunk comes out ``call_1call_1``."""
    data = sse(
        chunk(header(0, "call_1", "get_weather"), role="assistant"),
        chunk({**args(0, '{"city": "Paris"}'), "id": "call_1", "type": "function"}),
        chunk(finish="tool_calls"),
    )
    wrong = bug_shows("concatenates_repeated_id", [data], [PARIS])
    assert wrong == [{**PARIS, "id": "call_1call_1"}]


@exhibits("concatenates_repeated_id")
def test_a_name_sent_on_every_chunk_becomes_an_unknown_tool() -> None:
    """concatenates_repeated_id: NIM's name on every chunk makes ``get_weatherget_weather``,
    which is no exposed tool."""
    data = sse(
        chunk(header(0, "call_1", "get_weather"), role="assistant"),
        chunk({"index": 0, "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}),
        chunk(finish="tool_calls"),
    )
    wrong = bug_shows("concatenates_repeated_id", [data], [PARIS])
    text = '{"city": "Paris"}'
    assert wrong == [rejected("unknown_tool", text, name="get_weatherget_weather")]


@exhibits("releases_when_text_parses")
def test_a_call_is_released_as_soon_as_its_text_parses() -> None:
    """releases_when_text_parses: the call is released with the fragment that closes its JSON,
    not with the finish reason that completes it."""
    payloads = simple_call(pieces=2)
    base = released_per_event(BaseAssembler, payloads)
    mutant = released_per_event(MUTANTS["releases_when_text_parses"].factory, payloads)
    assert base == [[], [], [], [PARIS], []]
    assert mutant == [[], [], [PARIS], [], []]


@exhibits("releases_when_text_parses")
def test_a_call_whose_text_parses_runs_although_the_stream_then_fails() -> None:
    """releases_when_text_parses: an error after the closing brace cannot take the call back."""
    data = sse(*simple_call(finish=None), OPENAI_ERROR, done=False)
    correct = [rejected("stream_error", '{"city": "Paris"}')]
    assert bug_shows("releases_when_text_parses", [data], correct) == [PARIS]


@exhibits("drops_header_arguments")
def test_the_opening_brace_sent_with_the_name_is_lost() -> None:
    """drops_header_arguments: llama.cpp's ``{`` in the header delta is dropped, so the text is
    no longer JSON."""
    data = sse(
        chunk(header(0, "call_1", "get_weather", "{"), role="assistant"),
        chunk(args(0, '"city": "Paris"}')),
        chunk(finish="tool_calls"),
    )
    wrong = bug_shows("drops_header_arguments", [data], [PARIS])
    assert wrong == [rejected("malformed_json", '"city": "Paris"}')]


@exhibits("drops_header_arguments")
def test_a_call_sent_whole_in_one_delta_loses_all_its_arguments() -> None:
    """drops_header_arguments: Mistral's and Groq's whole calls arrive without arguments."""
    data = sse(chunk(whole_call(0, "call_1", "get_weather", '{"city": "Paris"}'), finish="stop"))
    assert bug_shows("drops_header_arguments", [data], [PARIS]) == [rejected("malformed_json", "")]


@exhibits("decodes_utf8_per_chunk")
def test_a_character_cut_between_chunks_is_replaced_yet_the_call_runs() -> None:
    """decodes_utf8_per_chunk: ``ü`` cut in two becomes two U+FFFD, and the damaged value still
    parses, so the call is ready with a city that does not exist."""
    data = raw_sse(*simple_call(arguments='{"city": "Zürich"}'))
    cut = data.index("ü".encode()) + 1
    correct = [ready({"city": "Zürich"}, text='{"city": "Zürich"}')]
    wrong = bug_shows("decodes_utf8_per_chunk", [data[:cut], data[cut:]], correct)
    damaged = '{"city": "Z\ufffd\ufffdrich"}'
    assert wrong == [ready({"city": "Z\ufffd\ufffdrich"}, text=damaged)]


@exhibits("splits_crlf_across_chunks")
def test_a_crlf_cut_between_chunks_splits_a_multi_line_event() -> None:
    """splits_crlf_across_chunks: the LF that starts a chunk makes a blank line, which
    dispatches half an event; that half is not JSON, and the stream fails."""
    events = [multi_line_event(payload, "\r\n") for payload in simple_call()]
    data = b"".join(events) + b"data: [DONE]\r\n\r\n"
    finish_event = len(b"".join(events[:-1]))
    cut = finish_event + events[-1].index(b"\r\n") + 1
    wrong = bug_shows("splits_crlf_across_chunks", [data[:cut], data[cut:]], [PARIS])
    assert wrong == [rejected("protocol_error", '{"city": "Paris"}')]


@exhibits("frames_on_lf_only")
@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["CRLF", "CR"])
def test_a_stream_without_lf_line_endings_yields_nothing(newline: str) -> None:
    """frames_on_lf_only: with CRLF or lone-CR line endings no event is ever dispatched, so
    the call silently disappears."""
    data = sse(*simple_call(), newline=newline)
    assert bug_shows("frames_on_lf_only", [data], [PARIS]) == []


@exhibits("routes_by_arrival")
def test_interleaved_calls_are_mixed_up() -> None:
    """routes_by_arrival: every fragment goes to the call opened last, so the first call gets
    nothing and the second a mash of both."""
    correct = [
        ready({"city": "Paris"}),
        ready({"ticker": "ACME"}, call_id="call_2", name="get_stock_price", index=1),
    ]
    wrong = bug_shows("routes_by_arrival", [sse(*INTERLEAVED)], correct)
    assert wrong == [
        rejected("malformed_json", ""),
        rejected(
            "malformed_json",
            '{"city": {"ticker": "Paris"}"ACME"}',
            call_id="call_2",
            name="get_stock_price",
            index=1,
        ),
    ]


@exhibits("keys_by_function_name")
def test_two_calls_to_the_same_tool_are_merged() -> None:
    """keys_by_function_name: the second call to ``get_weather`` is appended to the first."""
    correct = [
        ready({"city": "Paris"}),
        ready({"city": "Rome"}, call_id="call_2", index=1),
    ]
    wrong = bug_shows("keys_by_function_name", [sse(*SAME_TOOL_TWICE)], correct)
    assert wrong == [rejected("malformed_json", '{"city": "Paris"}{"city": "Rome"}')]


@exhibits("treats_length_as_done")
def test_a_call_cut_off_by_the_token_limit_runs() -> None:
    """treats_length_as_done: ``finish_reason: "length"`` completes the call."""
    data = sse(*simple_call(finish="length"))
    correct = [rejected("truncated", '{"city": "Paris"}')]
    assert bug_shows("treats_length_as_done", [data], correct) == [PARIS]


@exhibits("flushes_eof_as_success")
def test_a_stream_cut_off_before_its_finish_reason_runs_its_call() -> None:
    """flushes_eof_as_success: no finish reason, no ``[DONE]``, and yet the call is ready."""
    data = sse(*simple_call(finish=None), done=False)
    correct = [rejected("interrupted", '{"city": "Paris"}')]
    assert bug_shows("flushes_eof_as_success", [data], correct) == [PARIS]


@exhibits("crashes_on_missing_index")
def test_calls_without_an_index_crash_the_assembler() -> None:
    """crashes_on_missing_index: Gemini's calls, which carry ids but no index, raise
    ``TypeError``; the base routes them by id."""
    data = sse(*GEMINI)
    assert run(BaseAssembler, [data]) == [
        ready({"city": "Paris"}, call_id="call_a"),
        ready({"ticker": "ACME"}, call_id="call_b", name="get_stock_price", index=1),
    ]
    with pytest.raises(TypeError, match="NoneType"):
        run(MUTANTS["crashes_on_missing_index"].factory, [data])


@exhibits("crashes_on_empty_choices")
@pytest.mark.parametrize(
    "payloads",
    [[AZURE_FIRST, *simple_call()], [*simple_call(), USAGE]],
    ids=["Azure first chunk", "usage chunk"],
)
def test_a_chunk_without_choices_crashes_the_assembler(payloads: list[Payload]) -> None:
    """crashes_on_empty_choices: ``choices[0]`` of ``choices: []`` raises ``IndexError``."""
    data = sse(*payloads)
    assert run(BaseAssembler, [data]) == [PARIS]
    with pytest.raises(IndexError):
        run(MUTANTS["crashes_on_empty_choices"].factory, [data])


@exhibits("merges_index_zero_calls")
def test_calls_that_share_index_0_are_merged() -> None:
    """merges_index_zero_calls: Ollama's second call, a new id at index 0, is appended to the
    first."""
    correct = [
        ready({"city": "Paris"}, call_id="call_a"),
        ready({"city": "Rome"}, call_id="call_b", index=1),
    ]
    wrong = bug_shows("merges_index_zero_calls", [sse(*OLLAMA)], correct)
    assert wrong == [
        rejected("malformed_json", '{"city": "Paris"}{"city": "Rome"}', call_id="call_a")
    ]


@exhibits("appends_after_finish")
def test_a_chunk_after_the_finish_reason_is_appended() -> None:
    """appends_after_finish: LiteLLM's summary chunk doubles the arguments."""
    data = sse(*simple_call(), SUMMARY)
    wrong = bug_shows("appends_after_finish", [data], [PARIS])
    assert wrong == [rejected("malformed_json", '{"city": "Paris"}{"city": "Paris"}')]


@exhibits("empty_arguments_become_object")
def test_a_call_whose_arguments_never_came_runs_with_an_empty_object() -> None:
    """empty_arguments_become_object: only the name arrived, and the call runs with ``{}``
    because the tool's schema happens to allow it."""
    data = sse(chunk(header(0, "call_1", "list_files"), role="assistant"), chunk(finish="stop"))
    correct = [rejected("malformed_json", "", name="list_files")]
    wrong = bug_shows("empty_arguments_become_object", [data], correct, tools=[LIST_FILES])
    assert wrong == [ready({}, text="", name="list_files")]


@exhibits("ignores_error_events")
@pytest.mark.parametrize(
    ("tail", "reported"),
    [
        (sse(OPENAI_ERROR, done=False), "interrupted"),
        (sse(VLLM_ERROR), "unfinished"),
        (b'event: error\ndata: {"type": "overloaded_error"}\n\n', "interrupted"),
    ],
    ids=["nested", "flat", "event: error"],
)
def test_an_error_in_the_stream_goes_unnoticed(tail: bytes, reported: str) -> None:
    """ignores_error_events: the call is reported as merely cut off, not as failed by the
    provider."""
    data = sse(*simple_call(finish=None), done=False) + tail
    correct = [rejected("stream_error", '{"city": "Paris"}')]
    wrong = bug_shows("ignores_error_events", [data], correct)
    assert wrong == [rejected(reported, '{"city": "Paris"}')]


@exhibits("requires_space_after_data")
def test_data_lines_without_a_space_are_dropped() -> None:
    """requires_space_after_data: ``data:{…}`` is never read, so the call silently vanishes."""
    data = sse(*simple_call()).replace(b"data: ", b"data:")
    assert bug_shows("requires_space_after_data", [data], [PARIS]) == []


@exhibits("skips_schema_validation")
def test_arguments_that_break_the_schema_run() -> None:
    """skips_schema_validation: ``units: "kelvin"`` is outside the enum, and the call runs."""
    text = '{"city": "Paris", "units": "kelvin"}'
    data = sse(*simple_call(arguments=text))
    wrong = bug_shows("skips_schema_validation", [data], [rejected("schema_violation", text)])
    assert wrong == [ready({"city": "Paris", "units": "kelvin"}, text=text)]


@exhibits("keeps_bom")
def test_a_leading_bom_loses_the_first_event() -> None:
    """keeps_bom: the first line reads ``\\ufeffdata``, so the header event with the id and the
    name is lost and the call has no name."""
    data = b"\xef\xbb\xbf" + sse(*simple_call())
    wrong = bug_shows("keeps_bom", [data], [PARIS])
    assert wrong == [rejected("missing_name", '{"city": "Paris"}', call_id=None, name=None)]


# --- the registry ----------------------------------------------------------------------------


def test_the_registry_lists_every_mutant_module() -> None:
    """Every module of ``tests/mutants`` but the private ones is in ``MUTANTS``, and no other."""
    modules = {
        module.name
        for module in pkgutil.iter_modules(tests.mutants.__path__)
        if not module.name.startswith("_")
    }
    assert set(MUTANTS) == modules
    assert len(MUTANTS) >= 15


def test_every_mutant_is_shown_at_work() -> None:
    """Each mutant has a test above on which its bug shows and the base is right."""
    import tests.test_anthropic_mutants as anthropic

    for name, test in vars(anthropic).items():
        if name.startswith("test_"):
            test()  # each shows its mutant at work, once
    assert set(MUTANTS) == EXHIBITED | ANTHROPIC_EXHIBITED | RESPONSES_EXHIBITED


@pytest.mark.parametrize("name", MUTANTS)
def test_a_mutant_says_what_it_breaks_and_whose_bug_it_is(name: str) -> None:
    """A mutant's docstring opens with its bug in one line and names every rule it breaks and
    every source it cites; it declares what the base declares, and the harness can load it."""
    mutant = MUTANTS[name]
    assert mutant.bug.endswith(".")
    assert mutant.breaks
    assert set(mutant.breaks) <= RULES
    assert all(rule in mutant.doc for rule in mutant.breaks)
    assert mutant.cites
    assert all(source in mutant.doc for source in mutant.cites)
    assert mutant.declaration in (CALLSTREAM, ANTHROPIC_CALLSTREAM, RESPONSES_CALLSTREAM)
    module, _, attribute = mutant.connectable.removeprefix("py:").partition(":")
    assert getattr(importlib.import_module(module), attribute) is mutant.factory


@pytest.mark.parametrize("name", MUTANTS)
def test_a_mutant_only_overrides_hooks_of_the_base(name: str) -> None:
    """A mutant is the base with a hook or two replaced: no new machinery of its own."""
    factory = MUTANTS[name].factory
    assert inspect.isclass(factory)
    assert issubclass(factory, BaseAssembler)
    base = next(
        (base for base in (AnthropicAssembler, ResponsesAssembler) if issubclass(factory, base)),
        BaseAssembler,
    )
    overrides = {key for key, value in vars(factory).items() if inspect.isfunction(value)}
    assert overrides
    assert all(hasattr(base, key) for key in overrides)

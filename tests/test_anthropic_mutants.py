"""Each Anthropic mutant at work: on the stream of its bug the base (``_anthropic_base``) is
right and the mutant is wrong, as the bug it cites was."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from callstream.reference import Tool
from tests.mutants import MUTANTS
from tests.mutants._anthropic_base import AnthropicAssembler

EXHIBITED: set[str] = set()
"""The mutants shown at work here (``tests/test_mutants.py`` checks that every mutant is)."""

WEATHER = Tool(
    "get_weather",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CLOCK = Tool("get_time", {"type": "object", "properties": {}})
TOOLS = [WEATHER, CLOCK]
START = {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 1}}}
END = [
    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
    {"type": "message_stop"},
]


def sse(*events: Any, names: bool = True) -> bytes:
    out = ""
    for event in events:
        if isinstance(event, str):
            out += event
            continue
        name = f"event: {event['type']}\n" if names else ""
        out += f"{name}data: {json.dumps(event)}\n\n"
    return out.encode()


def block(index: int, name: str, call_id: str, *pieces: str, stop: bool = True) -> list[Any]:
    events: list[Any] = [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
        }
    ]
    events += [
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "input_json_delta", "partial_json": piece},
        }
        for piece in pieces
    ]
    return events + ([{"type": "content_block_stop", "index": index}] if stop else [])


def run(factory: Callable[..., Any], data: bytes) -> list[tuple[int, str, str | None]]:
    assembler = factory(tools=TOOLS)
    results = assembler.feed(data) + assembler.close()
    return [(r["index"], r["status"], r["reason"]) for r in results]


def shows(name: str, data: bytes) -> tuple[list[Any], list[Any]]:
    """What the base and the mutant ``name`` make of ``data``; they must differ."""
    EXHIBITED.add(name)
    right, wrong = run(AnthropicAssembler, data), run(MUTANTS[name].factory, data)
    assert right != wrong
    return right, wrong


def test_parses_empty_input() -> None:
    right, wrong = shows(
        "anthropic_parses_empty_input", sse(START, *block(0, "get_time", "t1", ""), *END)
    )
    assert (right, wrong) == ([(0, "ready", None)], [(0, "rejected", "malformed_json")])


def test_keeps_partial_input() -> None:
    data = sse(START, *block(0, "get_weather", "t1", '{"city": "Par'))
    data += sse({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}})
    right, wrong = shows("anthropic_keeps_partial_input", data)
    assert (right, wrong) == ([(0, "rejected", "truncated")], [(0, "ready", None)])


def test_ignores_error_events() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    data = sse(START, *block(0, "get_weather", "t1", '{"ci', stop=False)) + (
        f"event: error\ndata: {json.dumps(error)}\n\n".encode()
    )
    right, wrong = shows("anthropic_ignores_error_events", data)
    assert (right, wrong) == ([(0, "rejected", "stream_error")], [(0, "rejected", "interrupted")])


def test_raises_on_invalid_input() -> None:
    data = sse(
        START,
        *block(0, "get_weather", "t1", '{"city": "Paris"}'),
        *block(1, "get_weather", "t2", '{"city": Oslo}'),
        *END,
    )
    right, wrong = shows("anthropic_raises_on_invalid_input", data)
    assert right == [(0, "ready", None), (1, "rejected", "malformed_json")]
    assert wrong == [(0, "rejected", "protocol_error"), (1, "rejected", "protocol_error")]


def test_appends_to_last_block() -> None:
    first, second = block(0, "get_weather", "t1", stop=False), block(1, "get_weather", "t2")
    delta = {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'}
    data = sse(
        START,
        *first,
        second[0],
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {**second[0], "type": "content_block_delta", "delta": {**delta, "partial_json": "{}"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_stop", "index": 1},
        *END,
    )
    right, wrong = shows("anthropic_appends_to_last_block", data)
    assert right == [(0, "ready", None), (1, "rejected", "schema_violation")]
    assert wrong == [(0, "rejected", "schema_violation"), (1, "rejected", "malformed_json")]


def test_block_index_as_call_index() -> None:
    text = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}
    data = sse(
        START, text, {"type": "content_block_stop", "index": 0}, *block(1, "get_time", "t1"), *END
    )
    right, wrong = shows("anthropic_block_index_as_call_index", data)
    assert (right, wrong) == ([(0, "ready", None)], [(1, "ready", None)])


def test_requires_event_lines() -> None:
    data = sse(START, *block(0, "get_weather", "t1", '{"city": "Paris"}'), *END, names=False)
    right, wrong = shows("anthropic_requires_event_lines", data)
    assert (right, wrong) == ([(0, "ready", None)], [])


def test_parses_empty_data() -> None:
    data = sse(START, *block(0, "get_weather", "t1", '{"ci', stop=False), "event: ping\ndata:\n\n")
    data += sse(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": 'ty": "Paris"}'},
        },
        {"type": "content_block_stop", "index": 0},
        *END,
    )
    right, wrong = shows("anthropic_parses_empty_data", data)
    assert (right, wrong) == ([(0, "ready", None)], [(0, "rejected", "protocol_error")])

"""The reference's anthropic-messages dialect, event by event (research/wire_formats.md §4, §8
P-C; docs/rules.md D20–D39)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from callstream.reference import Assembler, CallResult, Tool

WEATHER = Tool(
    "get_weather",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CLOCK = Tool("get_time", {"type": "object", "properties": {}})
TOOLS = [WEATHER, CLOCK]


def sse(*events: Any, names: bool = True) -> bytes:
    """Events as SSE bytes, each with ``event: <type>`` unless ``names`` is False."""
    out = []
    for event in events:
        text = event if isinstance(event, str) else json.dumps(event)
        name = f"event: {event['type']}\n" if names and isinstance(event, dict) else ""
        out.append(f"{name}data: {text}\n\n")
    return "".join(out).encode()


START = {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 9}}}


def tool_start(index: int, name: str = "get_weather", call_id: str = "toolu_1", **extra: Any):
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}, **extra}
    return {"type": "content_block_start", "index": index, "content_block": block}


def part(index: int | None, text: str) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "content_block_delta",
        "delta": {"type": "input_json_delta", "partial_json": text},
    }
    if index is not None:
        event["index"] = index
    return event


def stop(index: int | None) -> dict[str, Any]:
    return {"type": "content_block_stop"} | ({} if index is None else {"index": index})


def ending(reason: str, output_tokens: int = 5) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }


END = {"type": "message_stop"}


def run(
    data: bytes, profile: str = "lenient", tools: list[Tool] | None = TOOLS
) -> tuple[Assembler, list[CallResult]]:
    assembler = Assembler(tools, dialect="anthropic-messages", profile=profile)  # type: ignore[arg-type]
    results = []
    for byte in range(len(data)):
        results += assembler.feed(data[byte : byte + 1])
    results += assembler.close()
    return assembler, results


def quirks(assembler: Assembler) -> set[str]:
    return {finding.quirk.partition("/")[2] for finding in assembler.findings}


CITY = ['{"ci', 'ty": "Par', 'is"}']


def test_a_tool_use_block_is_released_at_its_content_block_stop() -> None:
    """The prism capture's shape: text block, then a tool_use with a leading "" fragment; the
    call is ready at its content_block_stop, before the message ends (C5)."""
    text = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}
    delta = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "I"},
    }
    head = sse(START, text, delta, stop(0), tool_start(1), part(1, ""), *[part(1, p) for p in CITY])
    assembler = Assembler(TOOLS, dialect="anthropic-messages")
    assert assembler.feed(head) == []
    released = assembler.feed(sse(stop(1)))
    assert [(r.status, r.arguments, r.id, r.index, r.wire_index) for r in released] == [
        ("ready", {"city": "Paris"}, "toolu_1", 0, 1)
    ]
    assert assembler.feed(sse(ending("tool_use"), END)) == []
    assert assembler.close() == []
    assert assembler.usage == {"input_tokens": 9, "output_tokens": 5}
    assert assembler.findings == ()


def test_a_valid_prefix_is_never_ready_before_the_stop() -> None:
    """{} mid-stream is not the input (C4)."""
    assembler = Assembler(TOOLS, dialect="anthropic-messages")
    assert assembler.feed(sse(START, tool_start(0, "get_time"), part(0, "{}"))) == []
    assert [r.status for r in assembler.feed(sse(part(0, ""), stop(0)))] == ["ready"]


def test_a_parameterless_tool_with_no_input_completes_as_an_empty_object() -> None:
    """input {} and only partial_json "" (litellm#5063): the input is {}."""
    _, results = run(
        sse(START, tool_start(0, "get_time"), part(0, ""), stop(0), ending("tool_use"), END)
    )
    assert [(r.status, r.arguments) for r in results] == [("ready", {})]


def test_start_input_and_streamed_input_are_never_both_counted() -> None:
    """A start that carries the whole input, then streams it too: the streamed text is the
    input (A6)."""
    start = tool_start(0, input={"city": "Paris"})
    assembler, results = run(
        sse(START, start, *[part(0, p) for p in CITY], stop(0), ending("tool_use"), END)
    )
    assert [(r.status, r.arguments_text) for r in results] == [("ready", '{"city": "Paris"}')]
    assert quirks(assembler) == {"A6"}
    start_only = sse(START, start, stop(0), ending("tool_use"), END)
    assert [r.arguments for r in run(start_only)[1]] == [{"city": "Paris"}]


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("max_tokens", "truncated"),
        ("model_context_window_exceeded", "truncated"),
        ("refusal", "filtered"),
        ("pause_turn", "provider_finish"),
        ("tool_use", "malformed_json"),
    ],
)
def test_an_incomplete_input_at_its_stop_takes_the_reason_of_the_ending(
    reason: str, expected: str
) -> None:
    """Fine-grained streaming cut by the token limit: the block stops inside a value (A1); the
    stop reason that follows names why (C3, C5)."""
    data = sse(START, tool_start(0), part(0, '{"city": "Par'), stop(0), ending(reason), END)
    _, results = run(data)
    assert [(r.status, r.reason, r.arguments_text) for r in results] == [
        ("rejected", expected, '{"city": "Par')
    ]


def test_a_call_complete_at_its_stop_survives_a_later_truncation() -> None:
    """C5: the first call was released at its boundary; max_tokens cuts only the second."""
    data = sse(
        START,
        tool_start(0),
        *[part(0, p) for p in CITY],
        stop(0),
        tool_start(1, call_id="toolu_2"),
        part(1, '{"ci'),
        stop(1),
        ending("max_tokens"),
        END,
    )
    _, results = run(data)
    assert [(r.status, r.reason) for r in results] == [("ready", None), ("rejected", "truncated")]


def test_an_error_event_fails_open_calls_by_error_type() -> None:
    """aibridge's stream_error capture: error after a block started, no message_stop (A2)."""
    error = (
        '{"type": "error", "error": {"details": null, "type": "overloaded_error", '
        '"message": "Overloaded"}}   '
    )
    data = sse(START, tool_start(0), part(0, '{"ci')) + f"event: error\ndata: {error}\n\n".encode()
    _, results = run(data)
    assert [(r.status, r.reason) for r in results] == [("rejected", "stream_error")]
    assert "overloaded_error" in (results[0].detail or "")
    assert "Overloaded" in (results[0].detail or "")


@pytest.mark.parametrize(("tail", "reason"), [((), "interrupted"), ((END,), "unfinished")])
def test_no_stop_reason_rejects_open_calls(tail: tuple[Any, ...], reason: str) -> None:
    data = sse(START, tool_start(0), *[part(0, p) for p in CITY], *tail)
    assert [r.reason for r in run(data)[1]] == [reason]


def test_eof_without_message_stop_after_a_stop_reason_keeps_the_calls() -> None:
    data = sse(START, tool_start(0), *[part(0, p) for p in CITY], stop(0), ending("tool_use"))
    assembler, results = run(data)
    assert [r.status for r in results] == ["ready"]
    assert quirks(assembler) == {"C24"}


def test_missing_index_routes_to_the_single_open_block_leniently() -> None:
    """9router#2218: deltas without an index (C1); the strict profile rejects the call."""
    data = sse(
        START, tool_start(0), *[part(None, p) for p in CITY], stop(None), ending("tool_use"), END
    )
    assembler, results = run(data)
    assert [r.status for r in results] == ["ready"]
    assert quirks(assembler) == {"C1"}
    assert [r.reason for r in run(data, "strict")[1]] == ["protocol_error"]


def test_a_delta_for_an_unknown_index_fails_the_stream() -> None:
    data = sse(START, tool_start(0), part(3, "{}"), stop(0), ending("tool_use"), END)
    assembler, results = run(data)
    assert [r.reason for r in results] == ["protocol_error"]
    assert "A3" in quirks(assembler)


def test_a_delta_type_that_does_not_belong_to_its_block_fails_the_stream() -> None:
    text = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}
    data = sse(START, tool_start(0), text, stop(0), ending("tool_use"), END)
    assert [r.reason for r in run(data)[1]] == ["protocol_error"]


def test_server_tool_use_blocks_are_not_client_calls() -> None:
    server = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {},
        },
    }
    data = sse(
        START,
        server,
        part(0, '{"query": "x"}'),
        stop(0),
        tool_start(1),
        *[part(1, p) for p in CITY],
        stop(1),
        ending("tool_use"),
        END,
    )
    _, results = run(data)
    assert [(r.name, r.index) for r in results] == [("get_weather", 0)]


def test_events_without_names_and_unknown_types_are_routed_by_type() -> None:
    """pi#1983 (no event: lines, T7); unknown events are ignored (A4)."""
    data = sse(
        START,
        {"type": "future_event"},
        tool_start(0),
        *[part(0, p) for p in CITY],
        stop(0),
        ending("tool_use"),
        END,
        names=False,
    )
    assembler, results = run(data)
    assert [r.status for r in results] == ["ready"]
    assert quirks(assembler) == {"T7", "A4"}


def test_index_gap_is_recorded_and_rejected_strictly() -> None:
    data = sse(START, tool_start(2), *[part(2, p) for p in CITY], stop(2), ending("tool_use"), END)
    assembler, results = run(data)
    assert [(r.status, r.wire_index) for r in results] == [("ready", 2)]
    assert quirks(assembler) == {"C14"}
    assert [r.reason for r in run(data, "strict")[1]] == ["protocol_error"]

"""Builders for OpenAI chat-completion streams, and h11-style "every way of splitting" runners."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from callstream.reference import Assembler, CallResult, Finding, Tool

WEATHER = Tool(
    "get_weather",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "units": {"enum": ["c", "f"]}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
STOCK = Tool(
    "get_stock_price",
    {"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]},
)
NOW = Tool("get_time", {"type": "object", "properties": {}})
TOOLS = [WEATHER, STOCK, NOW]


def chunk(
    *tool_calls: dict[str, Any],
    choice: int = 0,
    finish: str | None = None,
    role: str | None = None,
    content: str | None = None,
    **top: Any,
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` payload with the given tool-call deltas."""
    delta: dict[str, Any] = {}
    if role is not None:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    if tool_calls:
        delta["tool_calls"] = list(tool_calls)
    payload: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "gpt-test",
        "choices": [{"index": choice, "delta": delta, "finish_reason": finish}],
    }
    payload.update(top)
    return payload


def header(index: int, call_id: str, name: str, arguments: str = "") -> dict[str, Any]:
    """The first delta of a call, as OpenAI sends it."""
    return {
        "index": index,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def args(index: int, fragment: str) -> dict[str, Any]:
    """A later delta of a call: only its index and an argument fragment."""
    return {"index": index, "function": {"arguments": fragment}}


def sse(*events: dict[str, Any] | str, done: bool = True, newline: str = "\n") -> bytes:
    """Encode payloads as ``data:`` events; strings are sent as raw data (``"[DONE]"``…)."""
    out = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event)
        out.append(f"data: {data}{newline}{newline}")
    if done:
        out.append(f"data: [DONE]{newline}{newline}")
    return "".join(out).encode()


def simple_call(
    call_id: str = "call_1",
    name: str = "get_weather",
    arguments: str = '{"city": "Paris"}',
    pieces: int = 3,
    finish: str | None = "tool_calls",
) -> list[dict[str, Any]]:
    """Payloads of one call whose arguments are cut into ``pieces`` fragments."""
    size = max(1, -(-len(arguments) // pieces))
    fragments = [arguments[i : i + size] for i in range(0, len(arguments), size)]
    payloads = [chunk(header(0, call_id, name), role="assistant")]
    payloads += [chunk(args(0, fragment)) for fragment in fragments]
    if finish is not None:
        payloads.append(chunk(finish=finish))
    return payloads


def splits(data: bytes) -> Iterator[list[bytes]]:
    """Whole, one byte at a time, and every two-way split (h11's way)."""
    yield [data]
    yield [data[i : i + 1] for i in range(len(data))]
    for cut in range(1, len(data)):
        yield [data[:cut], data[cut:]]


def assemble(
    pieces: Iterable[bytes], tools: Sequence[Tool] | None = TOOLS, **options: Any
) -> tuple[list[CallResult], tuple[Finding, ...]]:
    """Feed ``pieces`` to a fresh assembler and close it; all results and the findings."""
    asm = Assembler(tools, **options)
    results: list[CallResult] = []
    for piece in pieces:
        results += asm.feed(piece)
    results += asm.close()
    return results, asm.findings


def assemble_events(
    payloads: Iterable[dict[str, Any] | str], tools: Sequence[Tool] | None = TOOLS, **options: Any
) -> tuple[list[CallResult], tuple[Finding, ...]]:
    """Feed decoded payloads through ``feed_event`` and close."""
    asm = Assembler(tools, **options)
    results: list[CallResult] = []
    for payload in payloads:
        results += asm.feed_event(payload)
    results += asm.close()
    return results, asm.findings


def assemble_every_way(
    data: bytes, tools: Sequence[Tool] | None = TOOLS, **options: Any
) -> tuple[list[CallResult], tuple[Finding, ...]]:
    """Assemble ``data`` split every way; assert the outcome never depends on the split.

    A synthesised id is compared as "synthesised": a response without an id gets random ones,
    different on every assembly (see ``CallBook._synthetic_id``)."""
    first = None
    for pieces in splits(data):
        outcome = assemble(pieces, tools, **options)
        if first is None:
            first = outcome
        else:
            assert _masked(outcome) == _masked(first), (
                f"split at {[len(p) for p in pieces][:3]} changed the outcome"
            )
    assert first is not None
    return first


def _masked(
    outcome: tuple[list[CallResult], tuple[Finding, ...]],
) -> tuple[list[CallResult], tuple[Finding, ...]]:
    results, findings = outcome
    return [replace(r, id="<synthesised>") if r.synthetic_id else r for r in results], findings


def quirks(findings: Iterable[Finding]) -> set[str]:
    """The quirk ids among ``findings``."""
    return {finding.quirk for finding in findings}

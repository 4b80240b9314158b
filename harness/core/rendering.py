"""Rendering a StreamSpec into the ``openai-chat`` dialect: chunk payloads, then SSE bytes.

``render(spec)`` returns the bytes and, for each event, the stream offset just past its blank
line, so the oracle can say from which byte a call may be released (C4). Literal specs are
encoded as given (events) or passed through (bytes).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import cycle
from typing import Any

from .spec import CallPlan, StreamSpec

__all__ = ["Event", "Rendered", "render", "render_events"]

ENVELOPE = {
    "id": "chatcmpl-callstream",
    "object": "chat.completion.chunk",
    "created": 1700000000,
    "model": "callstream-model",
}
USAGE = {"prompt_tokens": 21, "completion_tokens": 34, "total_tokens": 55}
NEWLINES = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}


@dataclass(frozen=True, slots=True)
class Event:
    """One SSE event to write: a payload (dict or raw text) and its SSE event type."""

    data: Any
    event: str | None = None
    finishes: tuple[int, ...] = ()
    """The choices whose finish reason this event carries."""


@dataclass(frozen=True, slots=True)
class Rendered:
    """A spec on the wire."""

    data: bytes
    ends: tuple[int, ...]
    """For each event, the number of bytes that must arrive for it to be dispatched: up to its
    blank line's first character."""
    events: tuple[Event, ...]

    def finish_offset(self, choice: int) -> int | None:
        """Where the event carrying ``choice``'s finish reason ends, if there is one."""
        for event, end in zip(self.events, self.ends, strict=False):
            if choice in event.finishes:
                return end
        return None


def render(spec: StreamSpec) -> Rendered:
    """The spec as SSE bytes, with the end offset of every event."""
    if spec.literal_sse is not None:
        return Rendered(spec.literal_sse, (), ())
    events = render_events(spec)
    return _encode(spec, events)


def render_events(spec: StreamSpec) -> list[Event]:
    """The spec as a list of events (chunk payloads, ``[DONE]``, an error)."""
    if spec.literal_events is not None:
        return [_literal(item) for item in spec.literal_events]
    return list(_plan_events(spec))


def _literal(item: Any) -> Event:
    if isinstance(item, dict) and set(item) <= {"event", "data"} and "data" in item:
        return Event(item["data"], item.get("event"))
    return Event(item)


# -- the plan -------------------------------------------------------------------------------


def _plan_events(spec: StreamSpec) -> Iterator[Event]:
    noise, ending = spec.noise, spec.ending
    usage_every = dict(USAGE) if noise.usage_every else None

    def chunk(choice: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        if noise.role_every:
            delta = {"role": "assistant", **delta}
        payload: dict[str, Any] = {
            **ENVELOPE,
            "choices": [{"index": choice, "delta": delta, "finish_reason": finish}],
        }
        if usage_every is not None:
            payload["usage"] = usage_every
        elif noise.usage:
            payload["usage"] = None
        return payload

    if noise.empty_first:
        yield Event(
            {
                "id": "",
                "object": "",
                "created": 0,
                "model": "",
                "choices": [],
                "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}],
            }
        )
    for choice in range(spec.choices):
        if noise.role:
            yield Event(chunk(choice, {"role": "assistant", "content": None}))
        if noise.content is not None:
            yield Event(chunk(choice, {"content": noise.content}))

    steps = _schedule(spec)
    last_step = {
        choice: max((n for n, (c, _) in enumerate(steps) if c == choice), default=-1)
        for choice in range(spec.choices)
    }
    finish = ending.finish if ending.error is None else None
    for n, (choice, delta) in enumerate(steps):
        if ending.finish_with_last and finish is not None and n == last_step[choice]:
            yield Event(chunk(choice, delta, finish), finishes=(choice,))
        else:
            yield Event(chunk(choice, delta))

    if ending.error is not None:
        yield _error(ending.error)
        return
    if finish is not None:
        for choice in range(spec.choices):
            if not (ending.finish_with_last and last_step[choice] >= 0):
                yield Event(chunk(choice, {}, finish), finishes=(choice,))
    for extra in ending.after_finish:
        if extra == "usage_chunk":
            payload = chunk(0, {"role": "assistant", "content": ""})
            payload["usage"] = dict(USAGE)
            yield Event(payload)
        elif extra == "duplicate_finish":
            yield Event(chunk(0, {}, finish or "stop"))
        elif extra == "late_delta":
            yield Event(chunk(0, {"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}))
    if noise.usage:
        yield Event({**ENVELOPE, "choices": [], "usage": dict(USAGE)})
    if ending.done:
        yield Event("[DONE]")


def _schedule(spec: StreamSpec) -> list[tuple[int, dict[str, Any]]]:
    """The deltas in wire order, each with its choice."""
    per_choice: dict[int, list[list[dict[str, Any]]]] = {}
    positions: dict[int, int] = {}
    for call in spec.calls:
        position = positions.get(call.choice, 0)
        positions[call.choice] = position + 1
        deltas: list[dict[str, Any]]
        if call.legacy:
            deltas = [{"function_call": entry} for entry in _legacy_deltas(call)]
        else:
            whole = spec.schedule in ("whole", "together")
            deltas = [{"tool_calls": [entry]} for entry in _tool_deltas(call, position, whole)]
        per_choice.setdefault(call.choice, []).append(deltas)

    steps: list[tuple[int, dict[str, Any]]] = []
    if spec.schedule == "together":
        for choice, calls in sorted(per_choice.items()):
            entries = [
                entry for deltas in calls for delta in deltas[:1] for entry in delta["tool_calls"]
            ]
            steps.append((choice, {"tool_calls": entries}))
            for deltas in calls:
                steps.extend((choice, delta) for delta in deltas[1:])
    elif spec.schedule == "interleaved":
        queues = [
            (choice, list(deltas))
            for choice, calls in sorted(per_choice.items())
            for deltas in calls
        ]
        while any(queue for _, queue in queues):
            for choice, queue in queues:
                if queue:
                    steps.append((choice, queue.pop(0)))
    else:
        for choice, calls in sorted(per_choice.items()):
            for deltas in calls:
                steps.extend((choice, delta) for delta in deltas)
    return steps


def _tool_deltas(call: CallPlan, position: int, whole: bool) -> list[dict[str, Any]]:
    """The tool-call entries that carry one call, in order."""
    index = position if call.index is None else call.index
    if call.arguments_as_value:
        pieces: list[Any] = [json.loads(call.arguments)]
    elif whole:
        pieces = [call.arguments]
    elif call.snapshots:
        so_far = ""
        pieces = []
        for fragment in call.fragments:
            so_far += fragment
            pieces.append(so_far)
    else:
        pieces = list(call.fragments)

    # A custom call carries its name and input in ``custom`` (openai/openai-python#2530).
    body, text = ("custom", "input") if call.kind == "custom" else ("function", "arguments")
    header: dict[str, Any] = {"type": call.kind, body: {}}
    if call.header_arguments or whole or call.arguments_as_value:
        header[body][text] = pieces.pop(0) if pieces else ""
    else:
        header[body][text] = ""
    entries = [header] + [{body: {text: piece}} for piece in pieces]
    if call.name_policy == "late" and len(entries) == 1:
        entries.append({body: {}})

    for number, entry in enumerate(entries):
        if not call.omit_index:
            entry["index"] = index
        call_id = _id_for(call, number)
        if call_id is not _ABSENT:
            entry["id"] = call_id
        if number > 0 and call.type_every:
            entry["type"] = call.kind
        if call.name is not None and (
            (number == 0 and call.name_policy in ("once", "every"))
            or (number > 0 and call.name_policy == "every")
            or (number == 1 and call.name_policy == "late")
        ):
            entry[body]["name"] = call.name
        if number == 0 and call.extra_content is not None:
            entry["extra_content"] = dict(call.extra_content)
    # Put keys in the order real servers use: index, id, type, function (or custom).
    return [{key: entry[key] for key in _KEY_ORDER if key in entry} for entry in entries]


_KEY_ORDER = ("index", "id", "type", "function", "custom", "extra_content")
_ABSENT: Any = object()


def _id_for(call: CallPlan, number: int) -> Any:
    policy = call.id_policy
    if policy == "omit" or call.id is None:
        return _ABSENT
    if policy == "empty":
        return "" if number == 0 else _ABSENT
    if policy == "numeric":
        return int.from_bytes(call.id.encode()[:4], "big") if number == 0 else _ABSENT
    if policy == "every":
        return call.id
    if policy == "changing":
        return call.id if number == 0 else f"{call.id}-{number}"
    return call.id if number == 0 else _ABSENT


def _legacy_deltas(call: CallPlan) -> list[dict[str, Any]]:
    first: dict[str, Any] = {"arguments": ""}
    if call.name is not None:
        first = {"name": call.name, "arguments": ""}
    return [first] + [{"arguments": fragment} for fragment in call.fragments]


def _error(shape: str) -> Event:
    message = "The server had an error while processing your request."
    if shape == "nested":
        return Event({"error": {"message": message, "type": "server_error", "code": None}})
    if shape == "flat":
        return Event(
            {"object": "error", "message": message, "type": "InternalServerError", "code": 500}
        )
    if shape == "openrouter":
        return Event(
            {
                **ENVELOPE,
                "provider": "openai",
                "error": {"code": 502, "message": "Provider disconnected"},
                "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
            }
        )
    return Event({"error": {"message": message, "type": "server_error"}}, event="error")


# -- the bytes ------------------------------------------------------------------------------


def _encode(spec: StreamSpec, events: list[Event]) -> Rendered:
    transport = spec.transport
    # Mixed endings never put a lone CR right before a LF: the two would read as one CRLF.
    newlines = (
        cycle(["\n", "\r\n", "\r", "\r\n"])
        if transport.newline == "mixed"
        else cycle([NEWLINES[transport.newline]])
    )
    prefix = "data: " if transport.space else "data:"
    out = bytearray("\ufeff".encode() if transport.bom else b"")
    ends: list[int] = []
    for event in events:
        for _ in range(spec.noise.keepalive):
            out += f": keep-alive{next(newlines)}{next(newlines)}".encode()
        text = event.data if isinstance(event.data, str) else _json(event.data, transport.multiline)
        lines = []
        name = event.event or ("message" if transport.event_lines else None)
        if name is not None:
            lines.append(f"event: {name}")
        lines += [prefix + line for line in text.split("\n")]
        for line in lines:
            out += (line + next(newlines)).encode()
        # The event is dispatched by the first character of its blank line (a CRLF's CR).
        out += next(newlines).encode()
        ends.append(len(out) - 1 if out.endswith(b"\r\n") else len(out))
    if spec.ending.cut and events:
        # Drop the blank line that would dispatch the last event (quirk T9).
        while out and out[-1] in b"\r\n":
            del out[-1]
        ends[-1] = len(out) + 1
    return Rendered(bytes(out), tuple(ends), tuple(events))


def _json(payload: Any, multiline: bool) -> str:
    if multiline:
        return json.dumps(payload, indent=1, ensure_ascii=False)
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)

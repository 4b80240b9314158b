"""The ``anthropic-messages`` dialect's events: a planned StreamSpec as the Messages stream
(research/wire_formats.md §4.1, the prism capture of §4.2).

A plan is sent as ``message_start``, a ``ping`` (``noise.role``), a text block (``noise.content``),
one ``tool_use`` block per call, then ``message_delta`` with the stop reason and usage, then
``message_stop``. Each tool_use block is ``content_block_start`` (id, name, ``input: {}``), an
``input_json_delta`` with ``partial_json: ""`` (as the API sends first), one per fragment, then
``content_block_stop``, the call's per-call boundary (C5).

What of the plan the dialect reads, and how:

- ``index`` is the block index (a gap is quirk C14); ``omit_index`` sends none on the block's
  events (C1); ``id_policy: omit`` sends a tool_use without id (C7); ``name_policy: omit`` one
  without name;
- ``header_arguments`` puts the whole input in ``content_block_start`` *and* streams it (A6);
  ``arguments_as_value`` puts it there only, streaming nothing;
- ``schedule``: ``sequential`` blocks one after another, ``interleaved`` blocks open together
  with their fragments round-robin, ``whole`` each input in one fragment;
- ``ending.finish`` is the stop reason, OpenAI's names read as Anthropic's (``tool_calls`` →
  ``tool_use``, or ``end_turn`` without calls; ``stop`` → ``end_turn``; ``length`` →
  ``max_tokens``; ``content_filter`` → ``refusal``), any other string sent as is; ``None`` sends
  no ``message_delta``; ``done`` is ``message_stop``; ``error`` sends an ``overloaded_error``
  event where the last call's ``content_block_stop`` would be, and nothing after (aibridge's
  ``stream_error`` capture).

``oddity`` (:data:`ODDITIES`) adds an event of an unknown type after ``message_start``, a delta
of an unknown type in the first block, a delta for a block never started before the last
block's stop, a tool_use block after ``message_stop``, an ``event: ping`` over the first input
fragment, a ``[DONE]`` line at the end, leaves the last tool_use block without its
``content_block_stop``, sends the first tool_use block's name as ``""``, or the error event's
payload without its ``type``.

Everything else of the plan is openai-chat's and has no meaning here: the expectation refuses it
(:class:`~callstream.errors.PlanError`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from ...spec import CallPlan, Oddity, StreamSpec
from ...wire import Event

__all__ = [
    "ERROR",
    "FAILING_DATA",
    "MESSAGE",
    "ODDITIES",
    "STRING_DATA",
    "UNKNOWN_DELTA",
    "UNKNOWN_EVENT",
    "USAGE",
    "block_indices",
    "odd_events",
    "plan_events",
    "start_input",
    "stop_reason",
    "stray_index",
]

MESSAGE: Mapping[str, Any] = {
    "id": "msg_callstream",
    "type": "message",
    "role": "assistant",
    "model": "callstream-model",
}
"""The message every plan is rendered into."""
USAGE: Mapping[str, int] = {"input_tokens": 21, "output_tokens": 34}
"""The usage a plan reports: input tokens at ``message_start``, output at ``message_delta``."""
ERROR: Mapping[str, Any] = {
    "type": "error",
    "error": {"type": "overloaded_error", "message": "Overloaded"},
}
"""The error event of a plan whose ending has an error (research/wire_formats.md §4.1)."""
_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "content_filter": "refusal"}


def stop_reason(spec: StreamSpec) -> str | None:
    """The stop reason the plan's ``ending.finish`` is sent as."""
    finish = spec.ending.finish
    if finish is None:
        return None
    if finish == "tool_calls":
        return "tool_use" if spec.calls else "end_turn"
    return _STOP_REASONS.get(finish, finish)


def block_indices(spec: StreamSpec) -> list[int]:
    """The block index each call is sent at: its own ``index``, else the next after the
    blocks before it (where the reference puts a block that came without one)."""
    indices: list[int] = []
    highest = 0 if spec.noise.content is not None else -1
    for position, plan in enumerate(spec.calls):
        if plan.index is not None and not plan.omit_index:
            index = plan.index
        elif plan.omit_index:
            index = highest + 1
        else:
            index = position + (1 if spec.noise.content is not None else 0)
        indices.append(index)
        highest = max(highest, index)
    return indices


def start_input(plan: CallPlan) -> dict[str, Any]:
    """The ``input`` of a call's ``content_block_start``."""
    if plan.header_arguments or plan.arguments_as_value:
        try:
            value = json.loads(plan.arguments)
        except ValueError:
            return {}  # the expectation refuses such a plan
        return value if isinstance(value, dict) else {}
    return {}


def plan_events(spec: StreamSpec) -> Iterator[Event]:
    """The events a planned ``spec`` is sent as (see the module's docstring), with its oddity
    (:func:`odd_events`)."""
    events = list(_plain_events(spec))
    return iter(odd_events(spec, events) if spec.oddity is not None else events)


ODDITIES: tuple[Oddity, ...] = (
    "unknown_event",
    "unknown_delta",
    "stray_delta",
    "after_stop",
    "event_mismatch",
    "done_line",
    "error_text",
    "no_block_stop",
    "empty_name",
    "untyped_error",
    "string_data",
    "null_message",
    "string_error",
    "text_data",
    "null_fields",
    "server_tool",
)
"""The oddities (``StreamSpec.oddity``) an anthropic-messages plan may show, in the order the
generators draw them (the first is what a drawn one shrinks to)."""
UNKNOWN_EVENT: Mapping[str, Any] = {"type": "message_annotation", "annotation": "callstream"}
"""The event of a type Anthropic does not document that ``unknown_event`` sends."""
UNKNOWN_DELTA: Mapping[str, Any] = {"type": "annotation_delta", "annotation": "callstream"}
"""The delta of a type Anthropic does not document that ``unknown_delta`` sends."""
STRING_DATA = '"Overloaded"'
"""The data ``string_data`` sends under ``event: content_block_delta``: an upstream error a proxy
passed on as a JSON string, which is JSON but no Anthropic event (an event is an object)."""
NULL_DELTA: Mapping[str, Any] = {"type": "input_json_delta", "partial_json": None}
"""The delta ``null_fields`` sends in the first call's block: a null fragment, which is no
fragment (A4)."""
FIRST_BLOCK_DELTAS: Mapping[str, Mapping[str, Any]] = {
    "unknown_delta": UNKNOWN_DELTA,
    "null_fields": NULL_DELTA,
}
"""The delta each of these oddities sends right after the first call's ``content_block_start``."""
SERVER_TOOL_ID = "srvtoolu_callstream"
"""The id of the ``server_tool_use`` block ``server_tool`` sends."""
SERVER_TOOL_INPUT = ('{"query": "weather', ' in Paris"}')
"""The ``partial_json`` fragments of that block: a web search's input, run by Anthropic."""
FAILING_DATA: Mapping[str, tuple[str, str]] = {
    "string_data": (STRING_DATA, "content_block_delta"),
    "text_data": ("keep-alive", "ping"),
}
"""The data and ``event:`` name each oddity that fails the stream with its data sends, just
before the last block's stop: a JSON string, and text that is no JSON under ``event: ping`` (a
proxy's keep-alive as data): neither is an event, and neither is an error (T4)."""


def odd_events(spec: StreamSpec, events: list[Event]) -> list[Event]:
    """``events`` with the spec's oddity; the expectation refuses one they cannot show."""
    oddity = spec.oddity
    starts = [at for at, event in enumerate(events) if _tool_start(event)]
    if oddity == "unknown_event":
        return [events[0], _event(dict(UNKNOWN_EVENT)), *events[1:]]
    odd = FIRST_BLOCK_DELTAS.get(oddity or "")
    if odd is not None and starts:
        at = starts[0]
        delta = _indexed("content_block_delta", events[at].data.get("index"), delta=odd)
        return [*events[: at + 1], _event(delta), *events[at + 1 :]]
    if oddity == "server_tool":
        # After the calls, before the stop reason: a server tool's use, streamed as a call's
        # input is, and its result, a block of a type no client call has.
        at = next((at for at, event in enumerate(events) if event.finishes), len(events))
        return [*events[:at], *map(_event, server_tool_blocks(stray_index(spec))), *events[at:]]
    last = len(spec.calls) - 1
    stop = next((at for at, event in enumerate(events) if last in event.boundaries), None)
    if oddity == "stray_delta" and stop is not None:
        at = stop
        stray = _delta(stray_index(spec), {"type": "input_json_delta", "partial_json": "}"})
        return [*events[:at], _event(stray), *events[at:]]
    if oddity is not None and oddity in FAILING_DATA and stop is not None:
        return [*events[:stop], Event(*FAILING_DATA[oddity]), *events[stop:]]
    if oddity == "no_block_stop" and stop is not None:
        return [*events[:stop], *events[stop + 1 :]]
    if oddity == "empty_name" and starts:
        at = starts[0]
        start = events[at].data
        nameless = {**start, "content_block": {**start["content_block"], "name": ""}}
        return [*events[:at], replace(events[at], data=nameless), *events[at + 1 :]]
    if oddity == "after_stop":
        index = stray_index(spec)
        name = spec.tools[0].name if spec.tools else "get_weather"
        block = {"type": "tool_use", "id": "toolu_after_stop", "name": name, "input": {}}
        late = [
            _start(index, block),
            _delta(index, {"type": "input_json_delta", "partial_json": "{}"}),
            _stop(index),
        ]
        return [*events, *map(_event, late)]
    if oddity == "event_mismatch":
        at = next((at for at, event in enumerate(events) if _carries_text(event)), 0)
        return [*events[:at], replace(events[at], event="ping"), *events[at + 1 :]]
    if oddity == "done_line":
        return [*events, Event("[DONE]")]
    if oddity == "null_message":
        return [replace(events[0], data={**events[0].data, "message": None}), *events[1:]]
    if oddity == "string_error":
        # A gateway's error event: the error as text where Anthropic sends an object.
        text = {"type": "error", "error": ERROR["error"]["message"]}
        return [Event(text, "error") if event.event == "error" else event for event in events]
    if oddity in ("error_text", "untyped_error"):
        # The error event's data as text, or as the error object without the payload's type.
        data = "Overloaded" if oddity == "error_text" else {"error": dict(ERROR["error"])}
        return [Event(data, "error") if event.event == "error" else event for event in events]
    return events


def server_tool_blocks(index: int) -> list[dict[str, Any]]:
    """The events of a web search Anthropic runs itself, from block ``index`` on: its
    ``server_tool_use`` block, streamed, and its ``web_search_tool_result`` block."""
    use = {"type": "server_tool_use", "id": SERVER_TOOL_ID, "name": "web_search", "input": {}}
    result = {"type": "web_search_tool_result", "tool_use_id": SERVER_TOOL_ID, "content": []}
    pieces = [{"type": "input_json_delta", "partial_json": piece} for piece in SERVER_TOOL_INPUT]
    return [
        _start(index, use),
        *(_delta(index, piece) for piece in pieces),
        _stop(index),
        _start(index + 1, result),
        _stop(index + 1),
    ]


def stray_index(spec: StreamSpec) -> int:
    """A block index no block of the plan is sent at: past the highest."""
    return max([0 if spec.noise.content is not None else -1, *block_indices(spec)]) + 1


def _tool_start(event: Event) -> bool:
    data = event.data
    return (
        isinstance(data, dict)
        and data.get("type") == "content_block_start"
        and data["content_block"].get("type") == "tool_use"
    )


def _carries_text(event: Event) -> bool:
    data = event.data
    return (
        isinstance(data, dict)
        and data.get("type") == "content_block_delta"
        and bool(data["delta"].get("partial_json"))
    )


def _plain_events(spec: StreamSpec) -> Iterator[Event]:
    """The events of the plan, without its oddity."""
    ending = spec.ending
    message = {
        **MESSAGE,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": USAGE["input_tokens"], "output_tokens": 1},
    }
    yield _event({"type": "message_start", "message": message})
    if spec.noise.role:
        yield _event({"type": "ping"})
    if spec.noise.content is not None:
        yield _event(_start(0, {"type": "text", "text": ""}))
        yield _event(_delta(0, {"type": "text_delta", "text": spec.noise.content}))
        yield _event(_stop(0))
    indices = block_indices(spec)
    blocks = [
        _block_events(plan, number, indices[number], spec.schedule == "whole")
        for number, plan in enumerate(spec.calls)
    ]
    cut_last = ending.error is not None and blocks
    if spec.schedule == "interleaved":
        yield from (start for start, _, _ in blocks)
        queues = [list(deltas) for _, deltas, _ in blocks]
        while any(queues):
            for queue in queues:
                if queue:
                    yield queue.pop(0)
        stops = [stop for _, _, stop in blocks]
        yield from stops[:-1] if cut_last else stops
    else:
        for number, (start, deltas, stop) in enumerate(blocks):
            yield start
            yield from deltas
            if not (cut_last and number == len(blocks) - 1):
                yield stop
    if ending.error is not None:
        yield Event(dict(ERROR), "error")
        return
    reason = stop_reason(spec)
    if reason is not None:
        delta = {"stop_reason": reason, "stop_sequence": None}
        usage = {"output_tokens": USAGE["output_tokens"]}
        yield Event(
            {"type": "message_delta", "delta": delta, "usage": usage},
            "message_delta",
            finishes=(0,),
        )
    if ending.done:
        yield _event({"type": "message_stop"})


def _block_events(
    plan: CallPlan, number: int, index: int, whole: bool
) -> tuple[Event, list[Event], Event]:
    """A call's tool_use block: its start, its deltas and its stop (the call's boundary)."""
    block: dict[str, Any] = {"type": "tool_use"}
    if plan.id is not None and plan.id_policy != "omit":
        block["id"] = plan.id
    if plan.name is not None and plan.name_policy != "omit":
        block["name"] = plan.name
    if not plan.bare_start:
        block["input"] = start_input(plan)
    where = None if plan.omit_index else index
    if plan.arguments_as_value:
        pieces: list[str] = []
    elif whole:
        pieces = ["", plan.arguments] if plan.arguments else [""]
    else:
        pieces = ["", *plan.fragments]
    deltas = [
        _event(_delta(where, {"type": "input_json_delta", "partial_json": piece}))
        for piece in pieces
    ]
    stop = Event(_stop(where), "content_block_stop", boundaries=(number,))
    return _event(_start(where, block)), deltas, stop


def _start(index: int | None, block: dict[str, Any]) -> dict[str, Any]:
    return _indexed("content_block_start", index, content_block=block)


def _delta(index: int | None, delta: dict[str, Any]) -> dict[str, Any]:
    return _indexed("content_block_delta", index, delta=delta)


def _stop(index: int | None) -> dict[str, Any]:
    return _indexed("content_block_stop", index)


def _indexed(kind: str, index: int | None, **fields: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {"type": kind}
    if index is not None:
        payload["index"] = index
    return {**payload, **fields}


def _event(payload: dict[str, Any]) -> Event:
    """A payload sent with the ``event:`` line its type names, as the API sends every event."""
    return Event(payload, payload["type"])

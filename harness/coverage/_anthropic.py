"""The ``anthropic-messages`` features: what a Messages stream does, read from its events
(research/wire_formats.md §4, quirks T6–T8, C1, C7, C14, C24, A1–A6)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..core.spec import StreamSpec
from ._calls import ABSENT, CallTrace, Delta, argument_features, call_features
from ._sse import DONE, WireEvent
from ._table import (
    ARGUMENT_FEATURES,
    CALL_FEATURES,
    NAMED_EVENT_FEATURES,
    TRANSPORT_FEATURES,
    Feature,
    feature,
    table_of,
)

__all__ = ["FEATURES", "classify"]

_STOPS = (
    "tool_use",
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "refusal",
    "pause_turn",
    "model_context_window_exceeded",
)
_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
        "error",
    }
)
_ONCE = frozenset(
    {"id.repeated", "id.changed", "id.late", "name.repeated", "name.late", "name.changed"}
    | {"index.reused"}
)
"""Call features a tool_use block cannot show: its id and name come once, in its start, and
its index is its block's."""
_DELTAS = frozenset(
    {"text_delta", "input_json_delta", "thinking_delta", "signature_delta", "citations_delta"}
)

FEATURES: tuple[Feature, ...] = table_of(
    "anthropic-messages",
    (
        *TRANSPORT_FEATURES,
        *NAMED_EVENT_FEATURES,
        *(known for known in CALL_FEATURES if known.id not in _ONCE),
        *ARGUMENT_FEATURES,
        feature("anthropic.no-message-start", "no `message_start`", "A3"),
        feature("anthropic.ping", "`ping` events", "A4"),
        feature("anthropic.text-block", "a text block before the calls", "A5"),
        feature("anthropic.input-in-start", "a tool_use input in `content_block_start`", "A6"),
        feature("anthropic.input-only-in-start", "an input in the start alone, no deltas", "A6"),
        feature(
            "anthropic.empty-partial-json", 'an `input_json_delta` with `partial_json: ""`', "A4"
        ),
        feature(
            "anthropic.null-partial-json", "an `input_json_delta` with `partial_json: null`", "A4"
        ),
        feature(
            "anthropic.server-tool",
            "a `server_tool_use` block (run by Anthropic) and its result block: no client call",
            "E1",
            "V3",
        ),
        feature(
            "anthropic.unstopped-block", "a tool_use block that never gets its stop", "C5", "A2"
        ),
        feature("anthropic.empty-name", 'a tool_use block whose name is `""`', "A4", "V4"),
        feature("anthropic.unknown-block-delta", "a delta for a block not open", "A3"),
        feature("anthropic.unknown-event", "an event type Anthropic does not document", "A4"),
        feature("anthropic.message-not-object", "`message_start` whose `message` is null", "A4"),
        feature("error.not-object", "an error event whose `error` is text", "T4", "V6"),
        feature(
            "anthropic.non-object-data",
            "JSON data that is not an object, outside `event: error`",
            "T4",
            "V6",
        ),
        feature("anthropic.unknown-delta", "a delta type Anthropic does not document", "A4"),
        *(feature(f"stop.{reason}", f"`stop_reason: {reason}`", "C1", "C3") for reason in _STOPS),
        feature("stop.other", "a stop reason outside Anthropic's set", "C3"),
        feature("stop.none", "no `message_delta` with a stop reason", "C2", "C3"),
        feature("end.message-stop", "`message_stop`", "C1"),
        feature("end.no-message-stop", "no `message_stop`: the stream just ends", "C2", "C24"),
        feature("end.after-message-stop", "events after `message_stop`", "C1"),
        feature("error.event", "an `error` event", "T4", "A2"),
        feature("error.untyped", "an `event: error` whose payload has no `type`", "T4"),
        feature("end.bare-eof", "EOF with no stop reason, no `message_stop` and no error", "C2"),
        feature("done.present", "a `[DONE]` line, which Anthropic never sends", "T4"),
    ),
)
"""Every feature an anthropic-messages stream may show."""


def classify(events: Sequence[WireEvent], spec: StreamSpec) -> set[str]:
    """The anthropic-messages features of a stream's events (transport ones aside)."""
    features: set[str] = set()
    calls: list[CallTrace] = []
    order: list[int] = []
    starts: dict[int, str] = {}
    """The start input's JSON text of each call, where it had one."""
    open_blocks: dict[Any, int | None] = {}
    """Open blocks by index: the call number of a tool_use block, None for another block."""
    indices: list[Any] = []
    started = stopped = errored = stop_reason = False
    last: Any = ABSENT
    for event in events:
        payload = event.payload
        if payload == DONE:
            features.add("done.present")
            continue
        if event.dispatched and event.name == "error" and not isinstance(payload, dict):
            features.add("error.event")  # data that is not an object is the provider's error
            errored = True
        elif event.dispatched and payload is not None and not isinstance(payload, dict):
            features.add("anthropic.non-object-data")
        if not isinstance(payload, dict) or not event.dispatched:
            continue
        kind = payload.get("type")
        if kind is None and event.name == "error":
            features.add("error.untyped")
            kind = "error"  # its event: line names it (T4)
        features.update(event.name_features(kind))
        if stopped:
            features.add("end.after-message-stop")
        if kind not in _EVENTS:
            features.add("anthropic.unknown-event")
        index = payload.get("index", ABSENT)
        if kind == "message_start":
            started = True
            if not isinstance(payload.get("message"), dict):
                features.add("anthropic.message-not-object")
        elif kind == "ping":
            features.add("anthropic.ping")
        elif kind == "error" or event.name == "error":
            features.add("error.event")
            if "error" in payload and not isinstance(payload["error"], dict):
                features.add("error.not-object")
            errored = True
        elif kind == "message_stop":
            stopped = True
        elif kind == "message_delta":
            reason = (payload.get("delta") or {}).get("stop_reason")
            if reason is not None:
                stop_reason = True
                features.add(f"stop.{reason}" if reason in _STOPS else "stop.other")
        elif kind == "content_block_start":
            block = payload.get("content_block") or {}
            key = index if index is not ABSENT else ABSENT
            indices.append(index)
            if index is ABSENT:
                features.add("index.missing")
            if block.get("type") != "tool_use":
                if block.get("type") == "text":
                    features.add("anthropic.text-block")
                elif block.get("type") == "server_tool_use":
                    features.add("anthropic.server-tool")
                open_blocks[key] = None
                last = key
                continue
            number = len(calls)
            calls.append(CallTrace())
            open_blocks[key] = number
            last = key
            calls[number].deltas.append(
                Delta(block.get("id", ABSENT), block.get("name", ABSENT), index)
            )
            if block.get("name") == "":
                features.add("anthropic.empty-name")
            value = block.get("input")
            if isinstance(value, dict) and value:
                features.add("anthropic.input-in-start")
                starts[number] = json.dumps(value, ensure_ascii=False)
        elif kind == "content_block_delta":
            key = index if index is not ABSENT else last
            delta = payload.get("delta") or {}
            if delta.get("type") not in _DELTAS:
                features.add("anthropic.unknown-delta")
            if key not in open_blocks:
                features.add("anthropic.unknown-block-delta")
                continue
            owner = open_blocks[key]
            if owner is None or delta.get("type") != "input_json_delta":
                continue
            piece = delta.get("partial_json")
            text = piece if isinstance(piece, str) else None
            if text == "":
                features.add("anthropic.empty-partial-json")
            elif piece is None and "partial_json" in delta:
                features.add("anthropic.null-partial-json")
            calls[owner].deltas.append(Delta(index=index, arguments=text))
            if text:
                order.append(owner)
        elif kind == "content_block_stop":
            key = index if index is not ABSENT else last
            if open_blocks.pop(key, ABSENT) is ABSENT:
                features.add("anthropic.unknown-block-delta")
    if any(number is not None for number in open_blocks.values()):
        features.add("anthropic.unstopped-block")
    if not started:
        features.add("anthropic.no-message-start")
    if not stop_reason:
        features.add("stop.none")
    features.add("end.message-stop" if stopped else "end.no-message-stop")
    if not (stop_reason or stopped or errored):
        features.add("end.bare-eof")
    numbered = [index for index in indices if isinstance(index, int)]
    if numbered and sorted(numbered) != list(range(len(numbered))):
        features.add("index.gap")
    features |= call_features(calls, order, spec.tools)
    for number, call in enumerate(calls):
        fragments = call.fragments
        if number in starts and not any(fragments):
            features.add("anthropic.input-only-in-start")
            fragments = [starts[number]]
        features |= argument_features(fragments)
    return features

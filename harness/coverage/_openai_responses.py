"""The ``openai-responses`` features: what a Responses stream does, read from its events
(research/wire_formats.md §3, quirks R1–R12)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
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

_TERMINALS = ("response.completed", "response.incomplete", "response.failed", "response.done")
_CALL_ITEMS = ("function_call", "custom_tool_call")

FEATURES: tuple[Feature, ...] = table_of(
    "openai-responses",
    (
        *TRANSPORT_FEATURES,
        *NAMED_EVENT_FEATURES,
        *CALL_FEATURES,
        *ARGUMENT_FEATURES,
        feature("responses.no-created", "no `response.created` first", "R12"),
        feature("responses.message-item", "a message item besides the calls", "A5"),
        feature("responses.custom-call", "a custom tool call item", "A2"),
        feature("responses.arguments-in-added", "arguments in `output_item.added` already", "R2"),
        feature("responses.item-mismatch", "an `item_id` and `output_index` that disagree", "R8"),
        feature("responses.item-without-id", "a call item without an id", "R8"),
        feature("responses.item-id-empty", 'a call item whose id is `""`: no id', "A4", "R8"),
        feature("responses.created-null", "a `response.created` whose response is null", "A4"),
        feature(
            "responses.event-without-item-id",
            "an event without `item_id` for a call item that has an id",
            "R8",
        ),
        feature("responses.item-added-twice", "an item id added twice", "A5", "V6"),
        feature("responses.untyped-event", "an object without a `type`", "T3", "V6"),
        feature("responses.non-object-data", "JSON data that is not an object", "T4", "V6"),
        feature("responses.done-mismatch", "`.done` text unlike the deltas", "R1"),
        feature("responses.done-only", "a call's text in `.done` alone, no deltas", "R1"),
        feature(
            "responses.restatements-differ",
            "an `output_item.done` restating another text than the `.done`",
            "R1",
        ),
        feature("responses.done-without-name", "a `.done` without `name`", "R3"),
        feature("responses.no-done", "a call that never gets its `.done`", "C5", "R6"),
        feature("responses.item-incomplete", "a call item done `incomplete`", "R6"),
        feature(
            "responses.completed-over-open-call",
            "`response.completed` (or `done`) while a call item was never done",
            "C1",
            "C5",
        ),
        feature("responses.sequence-gap", "a `sequence_number` gap, repeat or decrease", "R4"),
        feature("responses.usage", "usage in the terminal response", "A5"),
        feature("terminal.completed", "`response.completed`", "C1"),
        feature(
            "terminal.incomplete-tokens", "`response.incomplete` on the token limit", "C3", "R6"
        ),
        feature("terminal.incomplete-filter", "`response.incomplete` on the content filter", "C3"),
        feature("terminal.done", "`response.done` as the terminal", "R5"),
        feature("terminal.failed", "`response.failed`", "C3", "T4"),
        feature("terminal.failed-alone", "`response.failed` with no `error` event before", "C3"),
        feature("terminal.none", "no terminal event", "C2", "R5"),
        feature("terminal.duplicate", "a second terminal event", "C1"),
        feature("after.late-delta", "an arguments delta after the terminal", "C1"),
        feature("error.nested", "an `error` event with a nested `error`", "T4", "R7"),
        feature("error.flat", "an `error` event with flat fields", "T4", "R7"),
        feature("error.alone", "an `error` event with no `response.failed` after it", "T4", "R7"),
        feature("done.present", "a `[DONE]` line after the events", "T4", "R5"),
        feature("end.bare-eof", "EOF with no terminal and no error", "C2", "R5"),
    ),
)
"""Every feature an openai-responses stream may show."""


def classify(events: Sequence[WireEvent], spec: StreamSpec) -> set[str]:
    """The openai-responses features of a stream's events (transport ones aside)."""
    features: set[str] = set()
    calls: list[CallTrace] = []
    order: list[int] = []
    by_item: dict[Any, int] = {}
    by_index: dict[Any, int] = {}
    item_index: dict[Any, Any] = {}
    texts: dict[int, list[str]] = {}
    done_calls: set[int] = set()
    restated: dict[int, str] = {}
    """Each call's text as its ``.done`` restated it."""
    items_done: set[int] = set()
    terminals = 0
    errors = 0
    failed_after_error = False
    sequence: list[int] = []
    first = True
    for event in events:
        payload = event.payload
        if payload == DONE:
            features.add("done.present")
            continue
        if not isinstance(payload, dict) or not event.dispatched:
            if event.dispatched and payload is not None:
                features.add("responses.non-object-data")
            continue
        kind = payload.get("type")
        if not isinstance(kind, str) and event.name == "error":
            kind = "error"  # its event: line names it (T4)
        if not isinstance(kind, str):
            features.add("responses.untyped-event")
        features.update(event.name_features(kind))
        if first and kind != "response.created":
            features.add("responses.no-created")
        if kind == "response.created" and payload.get("response") is None:
            features.add("responses.created-null")
        first = False
        if isinstance(payload.get("sequence_number"), int):
            sequence.append(payload["sequence_number"])
        index = payload.get("output_index", ABSENT)
        if kind in _TERMINALS:
            terminals += 1
            if terminals == 2:
                features.add("terminal.duplicate")
            if errors:
                failed_after_error = True
            if kind in ("response.completed", "response.done") and terminals == 1:
                if len(items_done) < len(calls):
                    features.add("responses.completed-over-open-call")
            _terminal(payload, features)
            continue
        if kind == "error":
            errors += 1
            features.add("error.nested" if isinstance(payload.get("error"), dict) else "error.flat")
            continue
        if kind in ("response.output_item.added", "response.output_item.done"):
            item = payload.get("item") or {}
            if item.get("type") == "message":
                features.add("responses.message-item")
            if item.get("type") not in _CALL_ITEMS:
                item_index[item.get("id")] = index
                continue
            if item.get("type") == "custom_tool_call":
                features.add("responses.custom-call")
            delta = Delta(item.get("call_id", ABSENT), item.get("name", ABSENT), index)
            if kind == "response.output_item.added":
                if index in by_index:
                    features.add("index.reused")
                if not item.get("id"):
                    features.add("responses.item-without-id")
                    if item.get("id") == "":
                        features.add("responses.item-id-empty")
                elif item.get("id") in by_item:
                    features.add("responses.item-added-twice")
                number = len(calls)
                calls.append(CallTrace([delta]))
                by_item[item.get("id")] = number
                by_index[index] = number
                item_index[item.get("id")] = index
                text = item.get("arguments", item.get("input"))
                if isinstance(text, str) and text:
                    features.add("responses.arguments-in-added")
                continue
            number = by_item.get(item.get("id"), by_index.get(index, -1))
            if number < 0:
                continue
            calls[number].deltas.append(delta)
            items_done.add(number)
            text = item.get("arguments", item.get("input"))
            if number in restated and isinstance(text, str) and text != restated[number]:
                features.add("responses.restatements-differ")
            if item.get("status") == "incomplete":
                features.add("responses.item-incomplete")
            continue
        if not isinstance(kind, str) or not kind.endswith((".delta", ".done")):
            continue
        if not kind.startswith(("response.function_call", "response.custom_tool_call")):
            continue
        item_id = payload.get("item_id")
        if item_id is None and index in {at for key, at in item_index.items() if key}:
            features.add("responses.event-without-item-id")
        if item_id in item_index and index is not ABSENT and item_index[item_id] != index:
            features.add("responses.item-mismatch")
        number = by_item.get(item_id, by_index.get(index, -1))
        if number < 0:
            continue
        if terminals:
            features.add("after.late-delta")
        if kind.endswith(".delta"):
            piece = payload.get("delta")
            if isinstance(piece, str):
                calls[number].deltas.append(Delta(index=index, arguments=piece))
                texts.setdefault(number, []).append(piece)
                if piece:
                    order.append(number)
            continue
        done_calls.add(number)
        if "name" not in payload and kind.startswith("response.function_call"):
            features.add("responses.done-without-name")
        final = payload.get("arguments", payload.get("input"))
        if isinstance(final, str):
            restated[number] = final
        streamed = "".join(texts.get(number, ()))
        if isinstance(final, str) and number not in texts and final:
            features.add("responses.done-only")
        elif isinstance(final, str) and final != streamed:
            features.add("responses.done-mismatch")
    if any(number not in done_calls for number in range(len(calls))):
        features.add("responses.no-done")
    if errors and not failed_after_error:
        features.add("error.alone")
    if "terminal.failed" in features and not errors:
        features.add("terminal.failed-alone")
    if not terminals:
        features.add("terminal.none")
        if not errors:
            features.add("end.bare-eof")
    if any(b != a + 1 for a, b in pairwise(sequence)):
        features.add("responses.sequence-gap")
    indices = sorted({index for index in item_index.values() if isinstance(index, int)})
    if indices and indices != list(range(len(indices))):
        features.add("index.gap")
    features |= call_features(calls, order, spec.tools)
    for number in range(len(calls)):
        features |= argument_features(texts.get(number, []))
    return features


def _terminal(payload: dict[str, Any], features: set[str]) -> None:
    kind = payload["type"]
    response = payload.get("response") or {}
    if response.get("usage"):
        features.add("responses.usage")
    if kind == "response.completed":
        features.add("terminal.completed")
    elif kind == "response.done":
        features.add("terminal.done")
    elif kind == "response.failed":
        features.add("terminal.failed")
    else:
        reason = (response.get("incomplete_details") or {}).get("reason")
        features.add(
            "terminal.incomplete-filter"
            if reason == "content_filter"
            else "terminal.incomplete-tokens"
        )

"""The ``openai-chat`` features: what a ``chat.completion.chunk`` stream does, read from its
events (research/wire_formats.md §2, quirks C1–C34)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.spec import StreamSpec
from ._calls import ABSENT, CallTrace, Delta, argument_features, call_features
from ._sse import DONE, WireEvent
from ._table import ARGUMENT_FEATURES, CALL_FEATURES, TRANSPORT_FEATURES, Feature, feature, table_of

__all__ = ["FEATURES", "classify"]

_MARKUP = ("<tool_call>", "[TOOL_CALLS]", "<|tool_call|>")
_FINISHES = ("tool_calls", "stop", "length", "function_call", "content_filter", "error")

FEATURES: tuple[Feature, ...] = table_of(
    "openai-chat",
    (
        *TRANSPORT_FEATURES,
        feature("sse.event-lines", "`event:` lines, which Chat Completions never sends", "T3"),
        *CALL_FEATURES,
        *ARGUMENT_FEATURES,
        feature("chat.role-absent", "no delta with `role`", "A4"),
        feature("chat.role-repeated", "`role` on more than one delta of a choice", "A3", "C29"),
        feature("chat.content", "text content in a delta", "A2"),
        feature("chat.content-empty", '`content: ""` in a delta', "A4"),
        feature("chat.content-null", "`content: null` in a delta", "A4"),
        feature("chat.content-markup", "tool-call markup in the text content", "C31"),
        feature("chat.text-and-tool", "text and a tool call in one delta", "A2", "C19"),
        feature("chat.calls-in-one-delta", "two tool calls or more in one delta", "C8"),
        feature("chat.null-call-field", "a tool call field sent as null", "A4"),
        feature("limits.event-size", "an event past the stream's `max_event_size`", "V5", "T5"),
        feature("chat.type-repeated", "`type: function` on more than one delta of a call", "C4"),
        feature("chat.header-arguments", "arguments in the delta that opens the call", "C9"),
        feature("chat.arguments-as-value", "arguments sent as a JSON value, not a string", "C32"),
        feature("chat.snapshots", "each fragment repeats the text so far (snapshots)", "C10"),
        feature("chat.extra-content", "provider data (`extra_content`) on a call", "C28"),
        feature("chat.legacy-function-call", "the legacy `delta.function_call`", "C27"),
        feature("chat.custom-call", "a custom tool call (`type: custom`)", "A2"),
        feature(
            "chat.index-below-next",
            "a new call at an unused index below the next one: indices that go down",
            "A5",
            "C14",
        ),
        feature("chat.choices", "more than one choice", "A7"),
        feature("chat.delta-missing", "a choice without `delta`", "C22"),
        feature("chat.usage-chunk", "a usage chunk with `choices: []`", "C23"),
        feature("chat.usage-every", "usage on chunks that carry choices", "C23"),
        feature("chat.empty-first", "a first chunk with `choices: []`", "C21"),
        feature(
            "chat.metadata-changes",
            "a chunk's `id` or `created` unlike the first chunk's with choices",
            "A5",
            "C30",
        ),
        feature("chat.choice-not-object", "an entry of `choices` that is not an object", "A7"),
        feature(
            "chat.index-past-256",
            "a tool-call index above 256 (258 calls in a choice, up to max_calls)",
            "A5",
            "V5",
        ),
        feature(
            "chat.kind-changes",
            "a call's delta in the other kind's object (`function` for a custom call)",
            "A3",
            "V2",
        ),
        *(
            feature(f"finish.{reason}", f"`finish_reason: {reason}`", "C1", "C3")
            for reason in _FINISHES
        ),
        feature("finish.other", "a finish reason outside OpenAI's set", "C3", "C33"),
        feature("finish.none", "a choice that never finishes", "C2", "C25"),
        feature(
            "finish.with-delta", "the finish reason in the chunk of the last tool delta", "C19"
        ),
        feature("after.usage-chunk", "a chunk of the choice after its finish, no finish", "C20"),
        feature("after.duplicate-finish", "a second finish reason for a choice", "C20"),
        feature("after.late-delta", "a tool delta after the choice's finish", "C20"),
        feature("error.nested", 'an in-band `{"error": {...}}`', "T4", "C26"),
        feature("error.flat", 'an in-band `{"object": "error"}`', "T4", "C26"),
        feature("error.finish", "an error with `finish_reason: error` (OpenRouter)", "C26", "C33"),
        feature("error.event", "an `event: error`", "T4", "C26"),
        feature(
            "error.untyped",
            "an `event: error` whose object is neither nested nor `object: error`",
            "T4",
        ),
        feature("done.present", "`data: [DONE]`", "T4"),
        feature("done.absent", "no `[DONE]`: the stream just ends", "C2", "C24"),
        feature("done.without-finish", "`[DONE]` while a choice has not finished", "C2", "C3"),
        feature("done.not-last", "events after `[DONE]`", "T4"),
        feature("end.bare-eof", "EOF with no finish, no `[DONE]` and no error", "C2", "C25"),
    ),
)
"""Every feature an openai-chat stream may show."""


@dataclass
class _Choice:
    open: dict[Any, int] = field(default_factory=dict)
    """Open calls by wire index (``legacy`` for the function_call)."""
    calls: list[int] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)
    roles: int = 0
    finished: int = 0
    types: dict[int, int] = field(default_factory=dict)
    """How many deltas of each call carried ``type``."""
    kinds: dict[int, str] = field(default_factory=dict)
    """The object (``function`` or ``custom``) each call's first delta carried."""


def classify(events: Sequence[WireEvent], spec: StreamSpec) -> set[str]:
    """The openai-chat features of a stream's events (transport ones aside)."""
    features: set[str] = set()
    calls: list[CallTrace] = []
    order: list[int] = []
    choices: dict[int, _Choice] = {}
    done = errored = False
    metadata: tuple[Any, Any] | None = None
    if any(len(event.data) > spec.limits.max_event_size for event in events):
        features.add("limits.event-size")
    for number, event in enumerate(events):
        if event.name is not None:
            features.add("error.event" if event.name == "error" else "sse.event-lines")
        if event.name == "error" and isinstance(event.payload, dict):
            if not (event.payload.get("error") or event.payload.get("object") == "error"):
                features.add("error.untyped")
        if not event.dispatched:
            continue
        payload = event.payload
        if done:
            features.add("done.not-last")
        if payload == DONE:
            done = True
            if not choices or any(not c.finished for c in choices.values()):
                features.add("done.without-finish")
            continue
        if not isinstance(payload, dict):
            continue
        if "error" in payload or payload.get("object") == "error":
            errored = True
            if payload.get("object") == "error":
                features.add("error.flat")
            elif any(
                isinstance(c, dict) and c.get("finish_reason") == "error"
                for c in payload.get("choices") or ()
            ):
                features.add("error.finish")
            elif event.name != "error":
                features.add("error.nested")
        entries = payload.get("choices")
        if entries == [] and number == 0:
            features.add("chat.empty-first")
        if payload.get("usage"):
            features.add("chat.usage-every" if entries else "chat.usage-chunk")
        if entries and isinstance(entries, list):
            seen = (payload.get("id", ABSENT), payload.get("created", ABSENT))
            if metadata is not None and seen != metadata:
                features.add("chat.metadata-changes")
            metadata = metadata or seen
        for entry in entries or ():
            if isinstance(entry, dict):
                _choice(entry, choices, calls, order, features)
            else:
                features.add("chat.choice-not-object")
    features |= call_features(calls, order, spec.tools)
    for call in calls:
        features |= argument_features(call.fragments)
    for state in choices.values():
        if state.roles == 0:
            features.add("chat.role-absent")
        if not state.finished:
            features.add("finish.none")
        distinct = sorted(set(state.indices))
        if distinct and distinct != list(range(len(distinct))):
            features.add("index.gap")
        first = list(dict.fromkeys(state.indices))
        if any(index < position for position, index in enumerate(first)):
            features.add("chat.index-below-next")
        if any(type(index) is int and index > 256 for index in first):
            features.add("chat.index-past-256")
    if not choices:
        features.add("chat.role-absent")
    if len(choices) > 1:
        features.add("chat.choices")
    features.add("done.present" if done else "done.absent")
    if not done and not errored and not any(state.finished for state in choices.values()):
        features.add("end.bare-eof")
    return features


def _choice(
    entry: dict[str, Any],
    choices: dict[int, _Choice],
    calls: list[CallTrace],
    order: list[int],
    features: set[str],
) -> None:
    """One entry of a chunk's ``choices``."""
    index = entry.get("index", 0)
    state = choices.setdefault(index if isinstance(index, int) else 0, _Choice())
    finish = entry.get("finish_reason")
    delta = entry.get("delta", ABSENT)
    if delta is ABSENT:
        features.add("chat.delta-missing")
        delta = {}
    if not isinstance(delta, dict):
        delta = {}
    if state.finished:
        tooling = delta.get("tool_calls") or delta.get("function_call")
        if tooling:
            features.add("after.late-delta")
        elif finish is not None:
            features.add("after.duplicate-finish")
        else:
            features.add("after.usage-chunk")
    if delta.get("role") is not None:
        state.roles += 1
        if state.roles == 2:
            features.add("chat.role-repeated")
    content = delta.get("content", ABSENT)
    if content is None:
        features.add("chat.content-null")
    elif content == "":
        features.add("chat.content-empty")
    elif isinstance(content, str):
        features.add("chat.content")
        if any(mark in content for mark in _MARKUP):
            features.add("chat.content-markup")
    tool_calls = delta.get("tool_calls")
    entries = tool_calls if isinstance(tool_calls, list) else []
    if len(entries) > 1:
        features.add("chat.calls-in-one-delta")
    if entries and isinstance(content, str) and content:
        features.add("chat.text-and-tool")
    for item in entries:
        if isinstance(item, dict):
            _tool_call(item, state, calls, order, features)
    legacy = delta.get("function_call")
    if isinstance(legacy, dict):
        features.add("chat.legacy-function-call")
        _route(state, "legacy", _delta(legacy, ABSENT, ABSENT, features), calls, order, features)
    if finish is not None:
        if entries or legacy:
            features.add("finish.with-delta")
        if not state.finished:
            name = f"finish.{finish}" if finish in _FINISHES else "finish.other"
            features.add(name)
        state.finished += 1


def _tool_call(
    item: dict[str, Any],
    state: _Choice,
    calls: list[CallTrace],
    order: list[int],
    features: set[str],
) -> None:
    body_key = "custom" if "custom" in item else "function"
    if body_key == "custom":
        features.add("chat.custom-call")
    body = item.get(body_key)
    if not isinstance(body, dict):
        body = {}
    if any(value is None for value in (*item.values(), *body.values())):
        features.add("chat.null-call-field")
    if "extra_content" in item:
        features.add("chat.extra-content")
    delta = _delta(body, item.get("id", ABSENT), item.get("index", ABSENT), features)
    number = _route(state, delta.index, delta, calls, order, features)
    if state.kinds.setdefault(number, body_key) != body_key:
        features.add("chat.kind-changes")
    if "type" in item:
        state.types[number] = state.types.get(number, 0) + 1
        if state.types[number] == 2:
            features.add("chat.type-repeated")


def _delta(body: dict[str, Any], call_id: Any, index: Any, features: set[str]) -> Delta:
    text = body.get("arguments", body.get("input"))
    if text is not None and not isinstance(text, str):
        features.add("chat.arguments-as-value")
        text = None
    return Delta(call_id, body.get("name", ABSENT), index, text)


def _route(
    state: _Choice,
    key: Any,
    delta: Delta,
    calls: list[CallTrace],
    order: list[int],
    features: set[str],
) -> int:
    """The number of the call ``delta`` speaks of, opening one where it starts a call."""
    named = delta.name not in (ABSENT, None, "")
    has_id = delta.id not in (ABSENT, None, "")
    number: int | None = None
    if key is ABSENT:
        by_id = [n for n in state.calls if has_id and calls[n].first("id") == delta.id]
        if by_id:
            number = by_id[-1]
        elif state.calls and not (has_id or named):
            number = state.calls[-1]
    elif key in state.open:
        number = state.open[key]
        previous = calls[number].first("id")
        if has_id and named and previous not in (ABSENT, None, "") and previous != delta.id:
            features.add("index.reused")
            number = None
    if number is None:
        number = len(calls)
        calls.append(CallTrace())
        state.calls.append(number)
        if key is not ABSENT:
            state.open[key] = number
            if isinstance(key, int):
                state.indices.append(key)
        if delta.arguments and (has_id or named):
            features.add("chat.header-arguments")
    call = calls[number]
    if delta.arguments:
        previous_text = "".join(call.fragments)
        if previous_text and delta.arguments.startswith(previous_text):
            features.add("chat.snapshots")
        order.append(number)
    call.deltas.append(delta)
    return number

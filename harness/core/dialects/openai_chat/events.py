"""The ``openai-chat`` dialect's events: a planned StreamSpec as ``chat.completion.chunk``
payloads, the finish reasons, an in-band error, ``[DONE]`` (research/wire_formats.md §2).

The chunk envelope is built here and only here (:func:`chat_chunk`, :func:`delta_choice`):
the renderer, the emulated routes and the benchmark's streams all use it, each with its own
envelope values. A plan's ``oddity`` (:data:`ODDITIES`) is sent by :func:`odd_events`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from ...spec import CallPlan, Oddity, Schedule, StreamSpec
from ...wire import Event

__all__ = [
    "ENVELOPE",
    "ERROR_MESSAGE",
    "ERROR_TEXT",
    "ODDITIES",
    "USAGE",
    "carries_call",
    "changes_kind",
    "changes_name",
    "chat_chunk",
    "delta_choice",
    "delta_count",
    "odd_events",
    "plan_events",
]

ENVELOPE: Mapping[str, Any] = {
    "id": "chatcmpl-callstream",
    "object": "chat.completion.chunk",
    "created": 1700000000,
    "model": "callstream-model",
}
"""The envelope of every chunk a plan is rendered into."""
USAGE: Mapping[str, int] = {"prompt_tokens": 21, "completion_tokens": 34, "total_tokens": 55}
"""The usage a plan's usage chunk reports."""
_NO_USAGE: Any = object()


def chat_chunk(
    choices: list[dict[str, Any]],
    *,
    envelope: Mapping[str, Any] = ENVELOPE,
    usage: Any = _NO_USAGE,
) -> dict[str, Any]:
    """One ``chat.completion.chunk``: ``envelope`` (id, object, created, model and any vendor
    fields, in order), ``choices``, then ``usage`` when one is given (``None`` included)."""
    payload = {**envelope, "choices": choices}
    if usage is not _NO_USAGE:
        payload["usage"] = usage
    return payload


def delta_choice(
    index: int, delta: dict[str, Any], finish: str | None = None, *, logprobs: bool = False
) -> dict[str, Any]:
    """One entry of a chunk's ``choices``: ``delta`` for choice ``index`` with its
    ``finish_reason``, and ``logprobs: null`` before it when ``logprobs``."""
    choice: dict[str, Any] = {"index": index, "delta": delta}
    if logprobs:
        choice["logprobs"] = None
    choice["finish_reason"] = finish
    return choice


def plan_events(spec: StreamSpec) -> Iterator[Event]:
    """The events a planned ``spec`` is sent as: a role delta, text, each call's deltas on its
    schedule, the finish reasons (or an in-band error), what comes after, a usage chunk and
    ``[DONE]``, as the spec says; then its oddity (:func:`odd_events`)."""
    events = list(_plain_events(spec))
    return iter(odd_events(spec, events) if spec.oddity is not None else events)


ODDITIES: tuple[Oddity, ...] = (
    "after_done",
    "delta_missing",
    "text_with_call",
    "null_fields",
    "error_text",
    "created_late",
    "choice_not_object",
    "kind_changes",
    "name_changes",
    "untyped_error",
)
"""The oddities (``StreamSpec.oddity``) an openai-chat plan may show, in the order the
generators draw them (the first is what a drawn one shrinks to)."""
ERROR_MESSAGE = "The server had an error while processing your request."
"""The message of every error an error ending sends (OpenAI's wording)."""
_TEXT_WITH_CALL = "Let me check."
"""The text ``text_with_call`` sends beside the first tool call."""
ERROR_TEXT = (
    "upstream connect error or disconnect/reset before headers. reset reason: connection "
    "failure, transport failure reason: delayed connect error: 111"
)
"""The data of the ``event: error`` that ``error_text`` sends: an Envoy proxy's error page, as
it reads in full (ygalblum/quadlet-demo#8), longer than a message quotes it (so an assembler
that cuts it for its detail cuts it here)."""


def odd_events(spec: StreamSpec, events: list[Event]) -> list[Event]:
    """``events`` with the spec's oddity; the expectation refuses one they cannot show."""
    oddity = spec.oddity
    if oddity == "after_done":
        return [*events, Event(chat_chunk([delta_choice(0, {}, "tool_calls")]))]
    if oddity == "delta_missing":
        for at, event in enumerate(events):
            entries = event.data.get("choices") if isinstance(event.data, dict) else None
            # Not after a finish or an error: it would be read after the choice or stream ended.
            if entries and not event.finishes and "error" not in event.data:
                annotation = chat_chunk([{"index": entries[0]["index"], "finish_reason": None}])
                return [*events[: at + 1], Event(annotation), *events[at + 1 :]]
        return events
    if oddity == "text_with_call":
        for at, event in enumerate(events):
            if _tool_entries(event):
                payload = event.data
                first = payload["choices"][0]
                delta = {"content": _TEXT_WITH_CALL, **first["delta"]}
                choices = [{**first, "delta": delta}, *payload["choices"][1:]]
                odd = Event({**payload, "choices": choices}, event.event, event.finishes)
                return [*events[:at], odd, *events[at + 1 :]]
        return events
    if oddity == "error_text":
        return [Event(ERROR_TEXT, "error") if event.event == "error" else event for event in events]
    if oddity == "untyped_error":
        # The error object alone, neither nested under "error" nor marked "object": "error".
        bare = {"message": ERROR_MESSAGE, "code": 500}
        return [Event(bare, "error") if event.event == "error" else event for event in events]
    if oddity == "created_late":
        for at, event in enumerate(events):
            if isinstance(event.data, dict) and event.data.get("choices"):
                late = {key: value for key, value in event.data.items() if key != "created"}
                return [*events[:at], replace(event, data=late), *events[at + 1 :]]
        return events
    if oddity == "choice_not_object":
        # In place of the error ending's event: its choice encoded twice, a string.
        double: Any = json.dumps(delta_choice(0, {}, "tool_calls"))
        return [*events[:-1], Event(chat_chunk([double]))]
    if oddity == "kind_changes":
        number = changes_kind(spec)
        if number is not None:
            _other_kind(spec, number, events)
        return events
    if oddity == "name_changes" and (changed := changes_name(spec)) is not None:
        item = _last_entry(spec, changed[0], events)
        if item is not None:
            item["function"] = {"name": changed[1], **item["function"]}
        return events
    if oddity == "null_fields":
        for event in events:
            for entry in _tool_entries(event):
                entry.setdefault("id", None)
                body = entry.get("custom") or entry.get("function")
                if isinstance(body, dict):
                    body.setdefault("name", None)
    return events


def _plain_calls(spec: StreamSpec) -> list[int]:
    """The calls (by number in the plan) whose later deltas carry nothing but their text: an
    index of their own (no other call of the choice at it), two deltas or more, and nothing
    recorded after the first delta that a change there would hide (an id or a name repeated or
    late, a repeated type): where ``kind_changes`` and ``name_changes`` may change the last."""
    positions: dict[int, int] = {}
    wires: dict[tuple[int, int], list[int]] = {}
    plain = []
    for number, call in enumerate(spec.calls):
        position = positions.get(call.choice, 0)
        positions[call.choice] = position + 1
        wires.setdefault((call.choice, _wire(call, position)), []).append(number)
        if (
            not (call.legacy or call.omit_index or call.late_index or call.type_every)
            and call.id_policy in ("once", "omit", "empty", "numeric")
            and call.name_policy in ("once", "omit")
            and call.extra_content is None
            and delta_count(call, spec.schedule) > 1
        ):
            plain.append(number)
    return [
        number
        for number in plain
        if all(len(held) == 1 or number not in held for held in wires.values())
    ]


def changes_kind(spec: StreamSpec) -> int | None:
    """The call whose last delta ``kind_changes`` sends in the other kind's object: the first
    custom call of :func:`_plain_calls`, else the first function call; None when none fits."""
    plain = _plain_calls(spec)
    custom = [number for number in plain if spec.calls[number].kind == "custom"]
    return next(iter(custom or plain), None)


def changes_name(spec: StreamSpec) -> tuple[int, str] | None:
    """The call whose last delta ``name_changes`` sends with another name, and that name: the
    first named function call of :func:`_plain_calls`, renamed to the offered function tool
    that sorts first among the others (before its own name where one does, so that a reader
    that takes the smaller name for a repeat is caught); None when none fits."""
    functions = sorted(tool.name for tool in spec.tools if tool.kind == "function")
    for number in _plain_calls(spec):
        call = spec.calls[number]
        if call.kind == "function" and call.name is not None and call.name_policy == "once":
            others = [name for name in functions if name != call.name]
            return (number, others[0]) if others else None
    return None


def _wire(call: CallPlan, position: int) -> int:
    return position if call.index is None else call.index


def _last_entry(spec: StreamSpec, number: int, events: list[Event]) -> dict[str, Any] | None:
    """The tool-call entry of call ``number``'s last delta (a call of :func:`_plain_calls`),
    read no further than its choice's finish (a late delta after it is no delta of the call)."""
    call = spec.calls[number]
    wire = _wire(call, sum(1 for other in spec.calls[:number] if other.choice == call.choice))
    last = None
    for event in events:
        entries = event.data.get("choices") if isinstance(event.data, dict) else None
        for entry in entries or ():
            if entry.get("index") != call.choice:
                continue
            for item in (entry.get("delta") or {}).get("tool_calls") or ():
                if item.get("index") == wire:
                    last = item
        if call.choice in event.finishes:
            break
    return last


def _other_kind(spec: StreamSpec, number: int, events: list[Event]) -> None:
    """Send call ``number``'s last delta in the other kind's object (``custom.input`` for a
    function call, ``function.arguments`` for a custom one), in place."""
    call = spec.calls[number]
    body, text = ("custom", "input") if call.kind == "custom" else ("function", "arguments")
    other, other_text = ("function", "arguments") if body == "custom" else ("custom", "input")
    item = _last_entry(spec, number, events)
    if item is not None and body in item:
        item[other] = {other_text: item.pop(body).get(text, "")}


def _tool_entries(event: Event) -> list[dict[str, Any]]:
    """The tool-call entries of an event's first choice."""
    entries = event.data.get("choices") if isinstance(event.data, dict) else None
    if not entries:
        return []
    calls = entries[0].get("delta", {}).get("tool_calls")
    return calls if isinstance(calls, list) else []


def _plain_events(spec: StreamSpec) -> Iterator[Event]:
    """The events of the plan, without its oddity."""
    noise, ending = spec.noise, spec.ending
    usage_every = dict(USAGE) if noise.usage_every else None

    def chunk(choice: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        if noise.role_every:
            delta = {"role": "assistant", **delta}
        choices = [delta_choice(choice, delta, finish)]
        if usage_every is not None:
            return chat_chunk(choices, usage=usage_every)
        if noise.usage:
            return chat_chunk(choices, usage=None)
        return chat_chunk(choices)

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
        yield Event(chat_chunk([], usage=dict(USAGE)))
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


def delta_count(call: CallPlan, schedule: Schedule) -> int:
    """How many deltas carry ``call`` as the stream is rendered under ``schedule`` (what
    :func:`_tool_deltas` and :func:`_legacy_deltas` make of it, counted without making them):
    the generators and the oracle count them alike."""
    if schedule in ("whole", "together") or call.arguments_as_value:
        count = 1
    elif call.legacy:
        count = 1 + len(call.fragments)
    else:
        # The header delta is sent even when no fragment rides in it.
        count = max(len(call.fragments), 1) if call.header_arguments else len(call.fragments) + 1
    if call.name_policy == "late" and count == 1:
        count = 2
    return max(count, 1)


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
        if not call.omit_index and not (call.late_index and number == 0):
            entry["index"] = index
        call_id = _id_for(call, number)
        if call_id is not _ABSENT:
            entry["id"] = call_id
        if number > 0 and call.type_every:
            entry["type"] = "" if call.blank_type else call.kind
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
        # A new id on each delta (LM Studio), sorting after the first and before it in turn.
        if number == 0:
            return call.id
        return f"{call.id}-{number}" if number % 2 else f"{number}-{call.id}"
    return call.id if number == 0 else _ABSENT


def _legacy_deltas(call: CallPlan) -> list[dict[str, Any]]:
    first: dict[str, Any] = {"arguments": ""}
    if call.name is not None:
        first = {"name": call.name, "arguments": ""}
    return [first] + [{"arguments": fragment} for fragment in call.fragments]


def _error(shape: str) -> Event:
    message = ERROR_MESSAGE
    if shape == "nested":
        return Event({"error": {"message": message, "type": "server_error", "code": None}})
    if shape == "flat":
        return Event(
            {"object": "error", "message": message, "type": "InternalServerError", "code": 500}
        )
    if shape == "openrouter":
        # OpenRouter's error chunk: its provider and error between the envelope and choices.
        payload = {
            **ENVELOPE,
            "provider": "openai",
            "error": {"code": 502, "message": "Provider disconnected"},
        }
        return Event(chat_chunk([delta_choice(0, {"content": ""}, "error")], envelope=payload))
    return Event({"error": {"message": message, "type": "server_error"}}, event="error")


def carries_call(data: Any) -> bool:
    """Whether a chunk's payload carries a tool-call delta (or a legacy ``function_call``)."""
    if not isinstance(data, dict):
        return False
    return any(
        choice.get("delta", {}).get("tool_calls") or choice.get("delta", {}).get("function_call")
        for choice in data.get("choices") or []
    )

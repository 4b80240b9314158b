"""The ``openai-responses`` dialect's events: a planned StreamSpec as ``response.*`` events
(research/wire_formats.md §3), each with its ``event:`` name and a ``sequence_number`` from 0.

How the plan's knobs read in this dialect (anything else is a :class:`PlanError`):

- each call is an output item: ``item.id`` ``fc_<n>`` (``ctc_<n>`` for a custom call), its
  ``call_id`` the plan's ``id`` (absent for ``id_policy: omit``, ``""`` for ``empty``; for
  ``changing``, another in ``output_item.done``: :func:`reissued_call_id`), its name (absent for
  ``name_policy: omit``); ``index`` sets its ``output_index``, which is otherwise its place among
  the output items;
- ``snapshots``: each delta repeats the text so far, as a gateway that turns a Chat Completions
  stream of cumulative snapshots into Responses events does; ``.done`` restates the true text
  (quirk R1);
- ``header_arguments`` puts the whole arguments in ``output_item.added`` too, deltas following
  (quirk R2); ``schedule`` is ``sequential``, ``interleaved`` (all items added, their deltas
  round-robin, then each done: parallel calls) or ``whole`` (one delta per call);
- ``noise.content`` is a message item before the calls; ``noise.usage`` puts usage in the
  terminal response; ``noise.keepalive`` adds comment lines;
- ``ending.finish``: ``tool_calls``/``stop``/``completed`` end with ``response.completed``;
  ``length`` and ``content_filter`` leave the last call without its ``.done`` and done
  ``incomplete``, then ``response.incomplete``; ``done`` ends with ``response.done`` (R5);
  None sends no terminal event. ``ending.error`` (``nested``, ``flat``: an ``error`` event then
  ``response.failed``; ``event``: the flat ``error`` alone, without ``type`` where its
  ``event: error`` line is sent, T4; ``failed``: ``response.failed`` alone) comes after the
  last call's deltas.
  ``after_finish`` sends ``duplicate_finish`` (a second terminal) or ``late_delta``; ``cut``
  stops inside the last event. ``ending.done`` is not used: ``[DONE]`` is no Responses event.
- ``oddity`` (:data:`ODDITIES`): no ``response.created`` or one whose response is null, a
  ``sequence_number`` gap, the first call item added under another ``event:`` name, a
  ``[DONE]`` line at the end, the first call item without an id (its events without
  ``item_id``) or with one that its deltas and ``.done`` leave out, the first call item added
  again or a Chat Completions chunk after the last call's ``output_item.added``, or the last call
  item without its ``.done`` and ``output_item.done``, closed by the terminal event alone.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from ....errors import PlanError
from ...spec import CallPlan, Oddity, StreamSpec
from ...wire import Event

__all__ = [
    "CHAT_CHUNK",
    "FAILING",
    "MISNAMED",
    "ODDITIES",
    "OTHERWISE",
    "RESPONSE",
    "STRING_DATA",
    "USAGE",
    "call_item_id",
    "failure_at",
    "odd_events",
    "output_indices",
    "plan_events",
    "reissued_call_id",
    "sequence_gap_at",
    "terminal_kind",
]

RESPONSE: dict[str, Any] = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1764633600,
    "model": "gpt-5-mini",
}
"""The response object's identity in every event that carries it (the fields the API always
sends with it: the AI SDK refuses a ``response.created`` without ``created_at`` and ``model``)."""
USAGE: dict[str, int] = {"input_tokens": 21, "output_tokens": 34, "total_tokens": 55}
"""The usage the terminal response reports when the plan asks for it."""

_TERMINALS = {
    "tool_calls": "response.completed",
    "stop": "response.completed",
    "completed": "response.completed",
    "length": "response.incomplete",
    "content_filter": "response.incomplete",
    "done": "response.done",
}
_INCOMPLETE_REASON = {"length": "max_output_tokens", "content_filter": "content_filter"}


def terminal_kind(spec: StreamSpec) -> str | None:
    """The terminal event the plan sends (``error`` for an error ending), None for none."""
    ending = spec.ending
    if ending.error is not None:
        return "error" if ending.error == "event" else "response.failed"
    if ending.finish is None:
        return None
    try:
        return _TERMINALS[ending.finish]
    except KeyError:
        known = ", ".join(_TERMINALS)
        raise PlanError(
            f"openai-responses ends with {known} or none, not {ending.finish!r}"
        ) from None


def call_item_id(plan: CallPlan, number: int) -> str:
    """The ``item.id`` of the plan's call number ``number``."""
    return f"{'ctc' if plan.kind == 'custom' else 'fc'}_{number}"


def reissued_call_id(call_id: str) -> str:
    """The ``call_id`` a call of ``id_policy: changing`` carries in its ``output_item.done``:
    another than its ``output_item.added`` gave (the same upper-cased), one that sorts before
    it, so that a reader comparing the two by their order rather than by equality is caught."""
    return call_id.upper()


def output_indices(spec: StreamSpec) -> list[int]:
    """Each call's ``output_index``: its own ``index``, else its place among the items."""
    first = 1 if spec.noise.content is not None else 0
    return [
        first + number if plan.index is None else plan.index
        for number, plan in enumerate(spec.calls)
    ]


def check_plan(spec: StreamSpec) -> None:
    """Refuse what the dialect cannot send (see the module's docstring)."""
    noise, ending = spec.noise, spec.ending
    if spec.choices != 1:
        raise PlanError("a Responses stream has one output list: choices must be 1")
    if spec.schedule == "together":
        raise PlanError("openai-responses sends each call as its own item: no together schedule")
    if noise.role_every or noise.usage_every or noise.empty_first:
        raise PlanError("role_every, usage_every and empty_first are openai-chat noise")
    if ending.finish_with_last or set(ending.after_finish) - {"duplicate_finish", "late_delta"}:
        raise PlanError("after_finish is duplicate_finish or late_delta; no finish_with_last")
    if ending.error == "openrouter":
        raise PlanError("the openrouter error chunk is openai-chat's")
    if ending.error is not None and ending.finish not in ("tool_calls", None):
        raise PlanError("an error ending sends no finish")
    for plan in spec.calls:
        if plan.omit_index or plan.late_index or plan.legacy or plan.arguments_as_value:
            raise PlanError("omit_index, late_index, legacy, arguments_as_value are openai-chat's")
        if plan.type_every or plan.blank_type or plan.bare_start or plan.extra_content is not None:
            raise PlanError("type_every and extra_content are openai-chat's")
        if plan.id_policy not in ("once", "omit", "empty", "changing"):
            raise PlanError("a call_id is sent once, omitted, empty or changed at its done")
        if plan.name_policy not in ("once", "omit"):
            raise PlanError("a name travels in the item: name_policy is once or omit")
    terminal_kind(spec)


def plan_events(spec: StreamSpec) -> Iterator[Event]:
    """The events a planned ``spec`` is sent as, with its oddity, numbered from 0 (past a
    gap, for ``sequence_gap``; the number before again, for ``sequence_repeat``)."""
    check_plan(spec)
    events = list(_events(spec))
    if spec.oddity is not None:
        events = odd_events(spec, events)
    odd = spec.oddity in ("sequence_gap", "sequence_repeat")
    gap = sequence_gap_at(spec, events) if odd else None
    step = -1 if spec.oddity == "sequence_repeat" else 1
    number = 0
    for at, event in enumerate(events):
        if isinstance(event.data, dict) and "sequence_number" in event.data:
            number += step * (at == gap)
            event.data["sequence_number"] = number
            number += 1
        yield event


ODDITIES: tuple[Oddity, ...] = (
    "event_mismatch",
    "done_line",
    "no_created",
    "sequence_gap",
    "sequence_repeat",
    "late_name",
    "text_data",
    "no_item_id",
    "added_twice",
    "untyped_event",
    "no_event_item_id",
    "null_created",
    "no_item_done",
    "restated_otherwise",
    "string_data",
    "empty_item_id",
)
"""The oddities (``StreamSpec.oddity``) an openai-responses plan may show, in the order the
generators draw them (the first is what a drawn one shrinks to)."""
MISNAMED = "response.in_progress"
"""The ``event:`` name ``event_mismatch`` gives an event of another type."""
CHAT_CHUNK: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1764633600,
    "model": "gpt-5-mini",
    "choices": [{"index": 0, "delta": {"content": "Paris"}, "finish_reason": None}],
}
"""The Chat Completions chunk (no ``type``) ``untyped_event`` sends, as a gateway that mixes the
two APIs would."""
STRING_DATA = '"upstream connect error or disconnect/reset before headers"'
"""The data ``string_data`` sends: a proxy's error line (Envoy's) as a JSON string, which is JSON
but no Responses event (an event is an object with a ``type``)."""
OTHERWISE = " x"
"""What ``restated_otherwise`` appends to the text of the first call's ``output_item.done``:
another text, and no JSON reader takes it for the same value."""


def odd_events(spec: StreamSpec, events: list[Event]) -> list[Event]:
    """``events`` with the spec's oddity (``sequence_gap`` is in the numbering); the expectation
    refuses one they cannot show."""
    if spec.oddity == "no_created":
        return events[1:]
    if spec.oddity == "null_created":
        return [replace(events[0], data={**events[0].data, "response": None}), *events[1:]]
    if spec.oddity == "event_mismatch":
        at = next((at for at, event in enumerate(events) if _adds_call(event)), 0)
        return [*events[:at], replace(events[at], event=MISNAMED), *events[at + 1 :]]
    if spec.oddity == "done_line":
        return [*events, Event("[DONE]")]
    if spec.oddity == "late_name":
        # The first call item added without its name: its .done or output_item.done names it.
        adds = next((n for n, event in enumerate(events) if _adds_call(event)), None)
        if adds is None:
            return events
        data = events[adds].data
        item = {key: value for key, value in data["item"].items() if key != "name"}
        nameless = replace(events[adds], data={**data, "item": item})
        return [*events[:adds], nameless, *events[adds + 1 :]]
    if spec.oddity == "no_item_id" and spec.calls:
        return [_without_item_id(event, call_item_id(spec.calls[0], 0)) for event in events]
    if spec.oddity == "empty_item_id" and spec.calls:
        first = call_item_id(spec.calls[0], 0)
        return [_without_item_id(event, first, instead="") for event in events]
    if spec.oddity == "no_event_item_id" and spec.calls:
        first = call_item_id(spec.calls[0], 0)
        return [_without_item_id(event, first, items=False) for event in events]
    if spec.oddity == "no_item_done" and spec.calls:
        last = call_item_id(spec.calls[-1], len(spec.calls) - 1)
        return [event for event in events if not _closes(event, last)]
    if spec.oddity == "restated_otherwise" and spec.calls:
        plan = spec.calls[0]
        item_id, field = call_item_id(plan, 0), _text_field(plan)
        return [_restated_otherwise(event, item_id, field) for event in events]
    failing = failure_at(spec, events)
    if failing is not None and spec.oddity == "string_data":
        return [*events[:failing], Event(STRING_DATA), *events[failing:]]
    if failing is not None and spec.oddity == "text_data":
        # A proxy's keep-alive as data: no JSON, and no error (T4).
        return [*events[:failing], Event("keep-alive"), *events[failing:]]
    if failing is not None and spec.oddity == "added_twice":
        first = call_item_id(spec.calls[0], 0)
        added = next(event for event in events if _adds_call(event, first))
        again = Event(copy.deepcopy(added.data), added.event)
        return [*events[:failing], again, *events[failing:]]
    if failing is not None and spec.oddity == "untyped_event":
        return [*events[:failing], Event(copy.deepcopy(CHAT_CHUNK)), *events[failing:]]
    return events


FAILING: tuple[Oddity, ...] = ("added_twice", "untyped_event", "string_data", "text_data")
"""The oddities that fail the stream at the event they send (:func:`failure_at`)."""


def failure_at(spec: StreamSpec, events: Sequence[Event]) -> int | None:
    """Where the oddities of :data:`FAILING` send the event that fails the stream: after the last
    call's ``output_item.added``, as ``sequence_gap`` skips a number (every call is on the wire,
    the last one open)."""
    if spec.oddity not in FAILING:
        return None
    return sequence_gap_at(spec, events)


def _without_item_id(
    event: Event, item_id: str, *, items: bool = True, instead: str | None = None
) -> Event:
    """``event`` without the item id ``item_id`` (``item.id``, unless not ``items``, or
    ``item_id``), where it has it; with ``instead``, that id in its place (``""``)."""
    data = event.data
    if not isinstance(data, dict):
        return event
    item = data.get("item")
    if items and isinstance(item, dict) and item.get("id") == item_id:
        bare = {key: value for key, value in item.items() if key != "id"}
        if instead is not None:
            bare["id"] = instead
        return replace(event, data={**data, "item": bare})
    if data.get("item_id") == item_id:
        kept = {k: v for k, v in data.items() if k != "item_id"}
        if instead is not None:
            kept["item_id"] = instead
        return replace(event, data=kept)
    return event


def _text_field(plan: CallPlan) -> str:
    """The field a call item's text travels in: ``input`` for a custom call, else ``arguments``."""
    return "input" if plan.kind == "custom" else "arguments"


def _restated_otherwise(event: Event, item_id: str, field: str) -> Event:
    """``event``, where it is the ``output_item.done`` of the item ``item_id``, restating
    another text in ``field`` (:data:`OTHERWISE` appended)."""
    data = event.data
    if not (isinstance(data, dict) and data.get("type") == "response.output_item.done"):
        return event
    item = data["item"]
    if item.get("id") != item_id:
        return event
    return replace(event, data={**data, "item": {**item, field: item[field] + OTHERWISE}})


def _closes(event: Event, item_id: str) -> bool:
    """Whether ``event`` is the ``.done`` or the ``output_item.done`` of the item ``item_id``."""
    kind = event.data.get("type")
    if kind == "response.output_item.done":
        return bool(event.data["item"].get("id") == item_id)
    return kind in _TEXT_DONE and event.data.get("item_id") == item_id


_TEXT_DONE = ("response.function_call_arguments.done", "response.custom_tool_call_input.done")


def _adds_call(event: Event, item_id: str | None = None) -> bool:
    """Whether ``event`` is the ``output_item.added`` of a call item (of ``item_id``, if given)."""
    if event.data.get("type") != "response.output_item.added":
        return False
    item = event.data["item"]
    if item_id is not None and item.get("id") != item_id:
        return False
    return item.get("type") in ("function_call", "custom_tool_call")


def sequence_gap_at(spec: StreamSpec, events: Sequence[Event]) -> int | None:
    """Where ``sequence_gap`` skips a number: the event after the last call's
    ``output_item.added``, so that every call is on the wire and the last one open."""
    if not spec.calls:
        return None
    last = len(spec.calls) - 1
    item_id = call_item_id(spec.calls[last], last)
    added = next(
        at
        for at, event in enumerate(events)
        if isinstance(event.data, dict)
        and event.data.get("type") == "response.output_item.added"
        and event.data["item"].get("id") == item_id
    )
    return added + 1


def _event(
    kind: str, boundaries: tuple[int, ...] = (), finishes: tuple[int, ...] = (), **fields: Any
) -> Event:
    return Event(
        {"type": kind, "sequence_number": 0, **fields},
        kind,
        finishes=finishes,
        boundaries=boundaries,
    )


def _response(status: str, output: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {**RESPONSE, "status": status, "output": output, **more}


class _Call:
    """One planned call as the items and events that carry it."""

    def __init__(self, spec: StreamSpec, plan: CallPlan, number: int, index: int) -> None:
        self.plan, self.number, self.index = plan, number, index
        self.item_id = call_item_id(plan, number)
        self.field = _text_field(plan)
        self.prefix = (
            "response.custom_tool_call_input"
            if plan.kind == "custom"
            else "response.function_call_arguments"
        )
        if spec.schedule == "whole":
            self.pieces = [plan.arguments] if plan.arguments else []
        elif plan.snapshots:
            self.pieces = list(itertools.accumulate(plan.fragments))
        else:
            self.pieces = list(plan.fragments)

    def item(self, status: str, text: str) -> dict[str, Any]:
        plan = self.plan
        item: dict[str, Any] = {
            "id": self.item_id,
            "type": "custom_tool_call" if plan.kind == "custom" else "function_call",
            "status": status,
        }
        if plan.id is not None and plan.id_policy != "omit":
            item["call_id"] = "" if plan.id_policy == "empty" else plan.id
        if plan.name is not None and plan.name_policy != "omit":
            item["name"] = plan.name
        item[self.field] = text
        return item

    def added(self) -> Event:
        text = self.plan.arguments if self.plan.header_arguments else ""
        return _event(
            "response.output_item.added",
            output_index=self.index,
            item=self.item("in_progress", text),
        )

    def deltas(self) -> list[Event]:
        return [
            _event(
                f"{self.prefix}.delta", item_id=self.item_id, output_index=self.index, delta=piece
            )
            for piece in self.pieces
        ]

    def done(self) -> list[Event]:
        """The ``.done`` and the item done ``completed``: the call's boundary."""
        fields: dict[str, Any] = {self.field: self.plan.arguments}
        if self.plan.kind != "custom" and self.plan.name and self.plan.name_policy != "omit":
            fields["name"] = self.plan.name
        item = self.item("completed", self.plan.arguments)
        if self.plan.id_policy == "changing" and self.plan.id is not None:
            item["call_id"] = reissued_call_id(self.plan.id)
        return [
            _event(f"{self.prefix}.done", item_id=self.item_id, output_index=self.index, **fields),
            _event(
                "response.output_item.done",
                (self.number,),
                output_index=self.index,
                item=item,
            ),
        ]

    def cut_off(self) -> Event:
        """The item done ``incomplete``, its text as far as it came (no ``.done``)."""
        return _event(
            "response.output_item.done",
            output_index=self.index,
            item=self.item("incomplete", self.plan.arguments),
        )


def _events(spec: StreamSpec) -> Iterator[Event]:
    ending, noise = spec.ending, spec.noise
    terminal = terminal_kind(spec)
    yield _event("response.created", response=_response("in_progress", []))
    output: list[dict[str, Any]] = []
    if noise.content is not None:
        message = {
            "id": "msg_0",
            "type": "message",
            "status": "in_progress",
            "role": "assistant",
            "content": [],
        }
        # As the API sends a message: its content part opened empty, the text's deltas, the
        # text restated, the part closed, then the item (openai-node's accumulator throws
        # on a text delta whose content part was never added).
        text: dict[str, Any] = {"item_id": "msg_0", "output_index": 0, "content_index": 0}
        empty = {"type": "output_text", "text": "", "annotations": []}
        part = {**empty, "text": noise.content}
        yield _event("response.output_item.added", output_index=0, item=message)
        yield _event("response.content_part.added", **text, part=empty)
        yield _event("response.output_text.delta", **text, delta=noise.content)
        yield _event("response.output_text.done", **text, text=noise.content)
        yield _event("response.content_part.done", **text, part=part)
        done = {**message, "status": "completed", "content": [part]}
        output.append(done)
        yield _event("response.output_item.done", output_index=0, item=done)
    calls = [
        _Call(spec, plan, n, index)
        for n, (plan, index) in enumerate(zip(spec.calls, output_indices(spec), strict=True))
    ]
    # The last call is the one a token limit or an error cuts off.
    cut_last = terminal in ("response.incomplete", "response.failed", "error")
    finished = calls[:-1] if cut_last else calls
    if spec.schedule == "interleaved":
        yield from (call.added() for call in calls)
        queues = [call.deltas() for call in calls]
        while any(queues):
            for queue in queues:
                if queue:
                    yield queue.pop(0)
        for call in finished:
            yield from call.done()
    else:
        for call in calls:
            yield call.added()
            yield from call.deltas()
            if call in finished:
                yield from call.done()
    output += [call.item("completed", call.plan.arguments) for call in finished]
    if cut_last and calls and terminal == "response.incomplete":
        yield calls[-1].cut_off()
        output.append(calls[-1].item("incomplete", calls[-1].plan.arguments))
    usage = {"usage": dict(USAGE)} if noise.usage else {}
    if terminal in ("response.failed", "error"):
        # The error alone, where its event: line names it, comes without a type, as a gateway
        # sends it: the event: line alone says it is an error (T4).
        untyped = ending.error == "event" and not spec.transport.unnamed
        if ending.error != "failed":  # response.failed alone carries its error in the response
            yield _error(ending.error == "nested", typed=not untyped)
        if terminal == "response.failed":
            error = {"code": "server_error", "message": _MESSAGE}
            yield _event(terminal, finishes=(0,), response=_response("failed", output, error=error))
        return
    if terminal is None:
        return
    if terminal == "response.incomplete":
        details = {"reason": _INCOMPLETE_REASON[ending.finish or "length"]}
        response = _response("incomplete", output, incomplete_details=details, **usage)
    else:
        response = _response("completed", output, **usage)
    yield _event(terminal, finishes=(0,), response=response)
    for extra in ending.after_finish:
        if extra == "duplicate_finish":
            yield _event(terminal, response=response)
        elif calls:
            last = calls[-1]
            yield _event(
                f"{last.prefix}.delta", item_id=last.item_id, output_index=last.index, delta="}"
            )


_MESSAGE = "The server had an error while processing your request."


def _error(nested: bool, typed: bool = True) -> Event:
    """The ``error`` event: nested or flat; flat without its ``type`` unless ``typed``."""
    if nested:
        error = {"type": "server_error", "code": "server_error", "message": _MESSAGE, "param": None}
        return _event("error", error=error)
    event = _event("error", code="server_error", message=_MESSAGE, param=None)
    if not typed:
        del event.data["type"]
    return event

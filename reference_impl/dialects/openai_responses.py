"""The OpenAI Responses dialect (``response.*`` events), strict and lenient
(research/wire_formats.md §3, §7 R1–R12, §8 P-D; docs/rules.md D40–D59).

Routing (A5, A6). A call is an output item: ``response.output_item.added`` opens it with its
``item.id`` (the ``item_id`` of every later event), its ``output_index``, its ``call_id`` (the
identity a tool result carries, and the result's ``id``) and its name. Later events are routed
by ``item_id``; the ``output_index`` must agree (quirk R8). An event whose ``item_id`` names no
item but whose ``output_index`` does is routed by the index in the lenient profile; strict
rejects the call. An event that names no item at all fails the stream: its text belongs to a
call no one can tell. Items that are not calls (messages, reasoning, built-in tools) hold their
``output_index`` and are otherwise ignored.

Text (A2, D41–D43). ``response.function_call_arguments.delta`` (``custom_tool_call_input.delta``
for a custom call) is appended verbatim. ``.done`` and ``output_item.done`` restate the whole
text; they are compared with the deltas, never appended. When they differ from the deltas
(quirk R1) strict rejects the call and lenient takes the restatement; when the two
restatements differ from each other, both profiles reject the call (the server contradicts
itself). Arguments already in ``output_item.added`` (quirk R2) are the call's text when no delta
follows; a first delta starts the text again from ``""`` (lenient); strict rejects the call.

Completion (C1–C5, D44–D50). A call's ``output_item.done`` with ``item.status == "completed"``
is its per-call boundary: it is completed there and then, and nothing that follows revokes it.
An item done ``incomplete`` waits for the response's end, as does an item done without a
status. The response's end settles the rest: ``response.completed`` completes them (an item the
server called incomplete is then a contradiction, rejected); ``response.incomplete`` rejects
them ``truncated`` (``max_output_tokens``), ``filtered`` (``content_filter``) or
``provider_finish``; ``response.failed`` and an ``error`` event, flat or nested (R7), reject them
``stream_error``; end of file without a terminal event rejects them ``interrupted``
(``unfinished`` after a ``[DONE]``). ``response.done`` (R5) is read as the status it carries by
the lenient profile and settles nothing as complete under the strict one.

Order. ``sequence_number`` must go up by one (R4): lenient records a gap, duplicate or
decrease, strict fails the stream. A stream that does not open with ``response.created`` is
recorded (R12). Events after the terminal event and a ``[DONE]`` are recorded (R5) and ignored.
"""

from __future__ import annotations

from typing import Any

from .._calls import CallBook, CallSlot, StreamFailure
from .._model import Reason
from ._payloads import DECODER, clip, describe_error, not_json, too_deep

__all__ = ["OpenAIResponses"]

_CALL_ITEMS = {"function_call": "function", "custom_tool_call": "custom"}
_TEXT_FIELD = {"function": "arguments", "custom": "input"}
_DELTAS = {
    "response.function_call_arguments.delta": "function",
    "response.custom_tool_call_input.delta": "custom",
}
_DONES = {
    "response.function_call_arguments.done": "function",
    "response.custom_tool_call_input.done": "custom",
}
_INCOMPLETE = {"max_output_tokens": Reason.TRUNCATED, "content_filter": Reason.FILTERED}


class _Item:
    """One output item: its place on the wire and, for a call, its slot and text state."""

    __slots__ = ("deltas", "done_status", "item_id", "kind", "output_index", "slot", "stated")

    def __init__(self, item_id: str | None, output_index: int, kind: str | None) -> None:
        self.item_id = item_id
        self.output_index = output_index
        self.kind = kind  # "function", "custom", or None for an item that is not a call
        self.slot: CallSlot | None = None
        self.deltas = 0
        self.stated: str | None = None  # the first whole restatement of the text
        self.done_status: str | None = None  # the status output_item.done gave the item


class OpenAIResponses:
    """Parses ``response.*`` events into call updates."""

    def __init__(self, book: CallBook) -> None:
        self._book = book
        self._by_id: dict[str, _Item] = {}
        self._by_index: dict[int, _Item] = {}
        self._calls: list[_Item] = []
        self._events = 0
        self._sequence: int | None = None
        self._terminal: str | None = None
        self._sentinel = False
        self.usage: Any = None

    # -- events -------------------------------------------------------------------------------

    def receive(self, event: str, data: str) -> None:
        """One dispatched SSE event."""
        self._events += 1
        if not data:
            self._book.deviation("T6", f"event {self._events} has empty data (ignored)", None)
            return
        if data[:1] != "{" and data.strip() == "[DONE]":
            self._book.deviation("R5", "[DONE] in a Responses stream (ignored)", None)
            self._sentinel = True
            return
        try:
            payload = DECODER.decode(data)
        except RecursionError:
            raise too_deep(self._events) from None
        except ValueError as exc:
            if event == "error":  # the provider's error, in words (T4), as the other dialects
                raise StreamFailure(Reason.STREAM_ERROR, f"provider error: {clip(data)}") from None
            raise not_json(data, self._events, self._book, exc) from None
        self._payload(event, payload)

    def receive_payload(self, event: str, payload: Any) -> None:
        """One already-decoded payload (``"[DONE]"`` may be passed as a string)."""
        if isinstance(payload, str):
            self.receive(event, payload)
            return
        self._events += 1
        self._payload(event, payload)

    def end(self) -> None:
        """End of file: calls still open were interrupted (C2, C3); those complete at their own
        boundary stay complete (C5)."""
        if self._terminal is not None:
            return
        reason = Reason.UNFINISHED if self._sentinel else Reason.INTERRUPTED
        self._settle(reason, "the stream ended before a terminal response event")

    # -- one event ----------------------------------------------------------------------------

    def _payload(self, event: str, payload: Any) -> None:
        if not isinstance(payload, dict):
            if event == "error":
                raise StreamFailure(Reason.STREAM_ERROR, f"provider error: {clip(payload)}")
            raise StreamFailure(
                Reason.PROTOCOL_ERROR,
                f"event {self._events}: an event must be a JSON object, not {clip(payload)}",
            )
        kind = payload.get("type")
        if not isinstance(kind, str) and event == "error":
            kind = "error"
        if not isinstance(kind, str):
            what = "a chat completion chunk" if "choices" in payload else "an object"
            raise StreamFailure(
                Reason.PROTOCOL_ERROR,
                f"event {self._events}: {what} without a type is not a Responses event",
            )
        if event not in ("message", kind):
            self._book.deviation("T8", f"event: {event} carries a {kind} payload", None)
        self._order(kind, payload.get("sequence_number"))
        if self._terminal is not None:
            self._book.deviation("R5", f"{kind} after {self._terminal} (ignored)", None)
            return
        if kind == "error":
            self._error(payload)
        elif kind == "response.output_item.added":
            self._added(payload)
        elif kind in _DELTAS:
            self._delta(payload, _DELTAS[kind])
        elif kind in _DONES:
            self._done(payload, _DONES[kind])
        elif kind == "response.output_item.done":
            self._item_done(payload)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self._end(kind, payload.get("response"))
        elif kind == "response.done":
            self._book.deviation("R5", "response.done instead of response.completed", None)
            self._response_done(payload.get("response"))
        elif kind == "response.created":
            response = payload.get("response")
            if isinstance(response, dict) and isinstance(response.get("id"), str):
                self._book.response_id = response["id"] or None

    def _order(self, kind: str, number: Any) -> None:
        """The first event is ``response.created`` (R12); numbers go up by one (R4)."""
        if self._events == 1 and kind != "response.created":
            self._book.deviation("R12", f"the stream opened with {kind}", None)
        if type(number) is not int:
            return
        previous, self._sequence = self._sequence, number
        expected = 0 if previous is None else previous + 1
        if number == expected:
            return
        detail = f"sequence_number {number} where {expected} was next"
        self._book.deviation("R4", detail, None)
        if self._book.strict:
            raise StreamFailure(Reason.PROTOCOL_ERROR, f"R4: {detail} (strict profile)")

    # -- items --------------------------------------------------------------------------------

    def _added(self, payload: dict[str, Any]) -> None:
        item = payload.get("item")
        index = payload.get("output_index")
        if not isinstance(item, dict) or type(index) is not int:
            raise StreamFailure(
                Reason.PROTOCOL_ERROR,
                f"event {self._events}: output_item.added without an item and an output_index",
            )
        item_id = item.get("id") if isinstance(item.get("id"), str) and item.get("id") else None
        if item_id is not None and item_id in self._by_id:
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: item {item_id!r} added twice"
            )
        kind = _CALL_ITEMS.get(item.get("type"))  # type: ignore[arg-type]
        entry = _Item(item_id, index, kind)
        taken = self._by_index.get(index)
        self._by_index[index] = entry
        if item_id is not None:
            self._by_id[item_id] = entry
        if kind is None:
            return
        slot = entry.slot = self._book.open(0)
        slot.kind = kind  # type: ignore[assignment]
        slot.wire_index = index
        self._calls.append(entry)
        call_id = item.get("call_id")
        if isinstance(call_id, str) and call_id:
            self._book.set_id(slot, call_id)
        name = item.get("name")
        if isinstance(name, str) and name:
            slot.name = name
        if taken is not None:
            self._book.deviation("R8", f"output_index {index} already holds an item", slot)
        if item_id is None:
            self._book.deviation("R8", "a call item without an id: routed by output_index", slot)
        text = item.get(_TEXT_FIELD[kind])
        if isinstance(text, str) and text:
            self._book.append(slot, text)
            self._book.deviation("R2", f"output_item.added carries {len(text)} characters", slot)

    def _route(self, payload: dict[str, Any], what: str) -> _Item:
        """The item an event belongs to: by ``item_id``, the ``output_index`` agreeing (R8)."""
        item_id = payload.get("item_id")
        index = payload.get("output_index")
        entry = self._by_id.get(item_id) if isinstance(item_id, str) else None
        if entry is not None:
            if type(index) is int and index != entry.output_index:
                self._deviation(
                    entry,
                    "R8",
                    f"{what} for {item_id!r} at output_index {index}, "
                    f"the item is at {entry.output_index}",
                )
            return entry
        entry = self._by_index.get(index) if type(index) is int else None
        if entry is None:
            raise StreamFailure(
                Reason.PROTOCOL_ERROR,
                f"event {self._events}: {what} for no known item "
                f"(item_id {clip(item_id)}, output_index {clip(index)})",
            )
        if entry.item_id is not None or item_id is not None:
            self._deviation(
                entry, "R8", f"{what} names item {clip(item_id)}: routed by output_index {index}"
            )
        return entry

    def _call(self, entry: _Item, kind: str, what: str) -> CallSlot | None:
        """The slot of a call item that ``what`` may act on; a kind mismatch rejects it."""
        slot = entry.slot
        if slot is None or entry.kind is None:
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: {what} for an item that is no call"
            )
        if entry.kind != kind:
            self._book.reject(
                slot, Reason.PROTOCOL_ERROR, f"a {kind} event for a {entry.kind} call"
            )
        return None if slot.final else slot

    def _delta(self, payload: dict[str, Any], kind: str) -> None:
        entry = self._route(payload, "delta")
        slot = self._call(entry, kind, "delta")
        fragment = payload.get("delta")
        if slot is None or fragment is None:
            return
        if not isinstance(fragment, str):
            self._book.reject(slot, Reason.PROTOCOL_ERROR, "a delta that is not a string")
            return
        if entry.stated is not None:
            self._deviation(entry, "R1", "a delta after the text was restated whole (ignored)")
            return
        if entry.deltas == 0 and slot.received_arguments:
            slot.clear()  # R2: the deltas restart what output_item.added carried
            slot.size = 0
        entry.deltas += 1
        self._book.append(slot, fragment)

    def _done(self, payload: dict[str, Any], kind: str) -> None:
        entry = self._route(payload, "done")
        slot = self._call(entry, kind, "done")
        if slot is None:
            return
        self._name(slot, payload.get("name"))
        self._state(entry, payload.get(_TEXT_FIELD[kind]), "the .done event")

    def _item_done(self, payload: dict[str, Any]) -> None:
        item = payload.get("item")
        if not isinstance(item, dict):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: output_item.done without an item"
            )
        probe = {"item_id": item.get("id"), "output_index": payload.get("output_index")}
        entry = self._route(probe, "output_item.done")
        if entry.kind is None:
            return
        slot = self._call(entry, _CALL_ITEMS.get(str(item.get("type")), entry.kind), "item")
        if slot is None:
            return
        call_id = item.get("call_id")
        if isinstance(call_id, str) and call_id:
            if slot.id is None:
                self._book.set_id(slot, call_id)
            elif call_id != slot.id:
                self._book.reject(
                    slot, Reason.PROTOCOL_ERROR, f"call_id changed from {slot.id!r} to {call_id!r}"
                )
                return
        self._name(slot, item.get("name"))
        self._state(entry, item.get(_TEXT_FIELD[entry.kind]), "output_item.done")
        status = item.get("status")
        entry.done_status = status if isinstance(status, str) else None
        if status == "completed":
            self._book.complete(slot)  # the call's own boundary (C5)

    def _name(self, slot: CallSlot, name: Any) -> None:
        """A restated name is set if none came, checked if one did (A3)."""
        if not isinstance(name, str) or not name or slot.final:
            return
        if slot.name is None:
            slot.name = name
        elif name != slot.name:
            self._book.reject(
                slot, Reason.PROTOCOL_ERROR, f"name changed from {slot.name!r} to {name!r}"
            )

    def _state(self, entry: _Item, text: Any, where: str) -> None:
        """A whole restatement of the call's text: compared, never appended (R1)."""
        slot = entry.slot
        if slot is None or slot.final or not isinstance(text, str):
            return
        if entry.stated is not None:
            if text != entry.stated:
                self._book.reject(
                    slot,
                    Reason.PROTOCOL_ERROR,
                    f"{where} restates the text differently from the .done event",
                )
            return
        entry.stated = text
        if not slot.received_arguments:
            self._book.append(slot, text)
            return
        if text == slot.text:
            return
        self._deviation(entry, "R1", f"{where} restates {len(text)} characters the deltas did not")
        if not slot.final:
            slot.clear()
            slot.size = 0
            self._book.append(slot, text)

    def _deviation(self, entry: _Item, quirk: str, detail: str) -> None:
        self._book.deviation(quirk, detail, entry.slot)

    # -- endings ------------------------------------------------------------------------------

    def _end(self, kind: str, response: Any) -> None:
        self._terminal = kind
        response = response if isinstance(response, dict) else {}
        if response.get("usage"):
            self.usage = response["usage"]
        if kind == "response.completed":
            for entry in self._calls:
                if entry.slot is None or entry.slot.final:
                    continue
                if entry.done_status == "incomplete":
                    self._book.reject(
                        entry.slot,
                        Reason.PROTOCOL_ERROR,
                        "response.completed over a call item done incomplete",
                    )
                else:
                    self._book.complete(entry.slot)
        elif kind == "response.incomplete":
            details = response.get("incomplete_details")
            why = details.get("reason") if isinstance(details, dict) else None
            reason = _INCOMPLETE.get(why, Reason.PROVIDER_FINISH)  # type: ignore[arg-type]
            self._settle(reason, f"response.incomplete ({why})")
        else:
            self._settle(Reason.STREAM_ERROR, describe_error(response.get("error")))

    def _response_done(self, response: Any) -> None:
        if self._book.strict:
            self._terminal = "response.done"
            self._settle(Reason.PROTOCOL_ERROR, "R5: response.done is no terminal (strict)")
            return
        status = response.get("status") if isinstance(response, dict) else None
        terminal = {"incomplete": "response.incomplete", "failed": "response.failed"}
        self._end(terminal.get(status, "response.completed"), response)  # type: ignore[arg-type]

    def _error(self, payload: dict[str, Any]) -> None:
        error = payload.get("error")
        if isinstance(error, dict):
            self._book.deviation("R7", "an error event with a nested error object", None)
        else:
            error = payload
        raise StreamFailure(Reason.STREAM_ERROR, describe_error(error))

    def _settle(self, reason: Reason, detail: str) -> None:
        self._book.settle((entry.slot for entry in self._calls if entry.slot), reason, detail)

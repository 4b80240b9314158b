"""The Anthropic Messages dialect (``message_start`` … ``message_stop``), strict and lenient.

Events (research/wire_formats.md §4, profile P-C of §8). The payload's ``type`` decides what an
event is; the SSE ``event:`` name is checked against it: none at all is quirk T7, another name
T8, and in both the payload's ``type`` is trusted. ``ping`` is ignored anywhere; an unknown event
or delta type is ignored and recorded (A4). ``error`` (an ``event: error`` or a payload of type
``error``) fails the stream as ``stream_error``, its detail naming ``error.type`` (the class a
client retries on: ``overloaded_error``, ``api_error`` and ``rate_limit_error`` are retryable)
and keeping ``error.message``; the HTTP status, 200, says nothing (anthropic-sdk-python#1258).

Blocks. A block is named by its ``index``. ``tool_use`` blocks are the client's calls, one call
each, in order of first appearance. ``server_tool_use`` blocks (web search, code execution) are
run by Anthropic's servers: their ``input_json_delta`` fragments are routed to them and
swallowed, never reported as calls a client would execute. Text, thinking and other blocks carry
no call. A delta or stop for an index with no open block, a second start at a used index, or a
delta type that does not belong to its block's type is a broken stream (A3): it fails. The
lenient profile routes a delta or stop without ``index`` to the single open block (C1) and gives
a start without one the next index; a start whose index is not the next one is recorded (C14).
The strict profile rejects the calls those touch.

Input. The call's text is the concatenation of its ``partial_json`` fragments (``""`` changes
nothing). When no fragment arrived, the ``input`` object of ``content_block_start`` is the input
(``{}`` for a parameterless tool, as the SDK keeps it). A non-empty ``input`` in the start that
is then streamed as well is counted once: the streamed text replaces it (A6).

Per-call boundary (rule C5). ``content_block_stop`` of a ``tool_use`` block ends its input: if
the text is a complete JSON value the call is completed at once (parsed, validated, released
ready or rejected); if it is not (fine-grained streaming, a token limit inside a value: A1) the
call is held and the message's ending decides its reason: ``max_tokens`` or
``model_context_window_exceeded`` → ``truncated``, ``refusal`` → ``filtered``, ``pause_turn`` or
an unknown stop reason → ``provider_finish``, a completing stop reason (``tool_use``,
``end_turn``, ``stop_sequence``) → ``malformed_json`` with the raw text kept. A call completed at
its boundary is never revoked by a later ending.

Ending. The first non-null ``message_delta.stop_reason`` ends the message: completing reasons
also complete a block never stopped, the others reject it as above. ``message_delta.usage`` is
cumulative and replaces, field by field, what ``message_start`` reported (A5). ``message_stop``
ends the stream: calls still open without a stop reason are ``unfinished``; events after it are
ignored. End of file without ``message_stop`` leaves unsettled calls ``interrupted``, and after a
stop reason is recorded (C24).
"""

from __future__ import annotations

import json
from typing import Any

from .._calls import CallBook, CallSlot, StreamFailure
from .._model import Reason
from .._validate import ArgumentsError, parse_arguments
from ._payloads import DECODER, clip, not_json, too_deep

__all__ = ["AnthropicMessages"]

_COMPLETING = frozenset({"tool_use", "end_turn", "stop_sequence"})
_ENDINGS = {
    "max_tokens": (Reason.TRUNCATED, "stop_reason max_tokens: the token limit cut the input off"),
    "model_context_window_exceeded": (
        Reason.TRUNCATED,
        "stop_reason model_context_window_exceeded: the context window cut the input off",
    ),
    "refusal": (Reason.FILTERED, "stop_reason refusal: the model refused mid-call"),
    "pause_turn": (Reason.PROVIDER_FINISH, "stop_reason pause_turn: the turn was paused"),
}
_RETRYABLE = frozenset({"overloaded_error", "api_error", "rate_limit_error"})
_CALL_BLOCKS = frozenset({"tool_use", "server_tool_use"})
_DELTAS = {
    "input_json_delta": _CALL_BLOCKS,
    "text_delta": frozenset({"text"}),
    "citations_delta": frozenset({"text"}),
    "thinking_delta": frozenset({"thinking"}),
    "signature_delta": frozenset({"thinking"}),
}
"""Each known delta type and the block types it belongs to (A3)."""
_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
    }
)


class _Block:
    """One content block: its type, whether it is open, and its call if it carries one."""

    __slots__ = ("held", "index", "kind", "open", "slot", "start_input", "streamed")

    def __init__(self, index: int, kind: str, slot: CallSlot | None, start_input: Any) -> None:
        self.index = index
        self.kind = kind
        self.slot = slot
        self.start_input = start_input
        self.open = True
        self.held = False  # stopped with input that is not complete JSON: the ending decides
        self.streamed = False  # a non-empty partial_json arrived


class AnthropicMessages:
    """Parses Anthropic Messages stream events into call updates."""

    def __init__(self, book: CallBook) -> None:
        self._book = book
        self._blocks: dict[int, _Block] = {}
        self._calls: list[_Block] = []
        self._events = 0
        self._started = False
        self._stop_reason: str | None = None
        self._stopped = False
        self.usage: Any = None

    # -- events -------------------------------------------------------------------------------

    def receive(self, event: str, data: str) -> None:
        """One dispatched SSE event."""
        self._events += 1
        if self._stopped:
            return
        if not data:
            self._book.deviation("T6", f"event {self._events} has empty data (ignored)", None)
            return
        try:
            payload = DECODER.decode(data)
        except RecursionError:
            raise too_deep(self._events) from None
        except ValueError as exc:
            if event == "error":
                raise StreamFailure(Reason.STREAM_ERROR, f"provider error: {clip(data)}") from None
            raise not_json(data, self._events, self._book, exc) from None
        self._dispatch(event, payload)

    def receive_payload(self, event: str, payload: Any) -> None:
        """One already-decoded payload; text (``"[DONE]"``, empty data, what is no JSON) is
        read as the event's data, as :meth:`receive` reads it."""
        if isinstance(payload, str):
            self.receive(event, payload)
            return
        self._events += 1
        if self._stopped:
            return
        self._dispatch(event, payload)

    def end(self) -> None:
        """End of file: calls not yet settled were interrupted (C2, C3)."""
        if self._stopped:
            return
        if self._stop_reason is not None:
            self._book.deviation("C24", "the stream ended without message_stop", None)
            return
        self._settle(Reason.INTERRUPTED, "the stream ended before the message had a stop_reason")

    # -- routing ------------------------------------------------------------------------------

    def _dispatch(self, event: str, payload: Any) -> None:
        if not isinstance(payload, dict):
            if event == "error":
                raise StreamFailure(Reason.STREAM_ERROR, f"provider error: {clip(payload)}")
            raise StreamFailure(
                Reason.PROTOCOL_ERROR,
                f"event {self._events}: an event must be a JSON object, not {clip(payload)}",
            )
        kind = payload.get("type")
        if event == "error" or kind == "error":
            self._error(payload)
        if not isinstance(kind, str):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: the payload has no type"
            )
        if event == "message":
            self._book.deviation("T7", "events without an event: line (routed by type)", None)
        elif event != kind:
            self._book.deviation("T8", f"event: {event} carries a {kind} payload", None)
        if kind not in _EVENTS:
            self._book.deviation("A4", f"unknown event type {kind!r} (ignored)", None)
            return
        getattr(self, "_" + kind)(payload)

    def _message_start(self, payload: dict[str, Any]) -> None:
        if self._started:
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: a second message_start"
            )
        self._started = True
        message = payload.get("message")
        if isinstance(message, dict):
            if isinstance(message.get("id"), str) and message["id"]:
                self._book.response_id = message["id"]
            if isinstance(message.get("usage"), dict):
                self.usage = dict(message["usage"])

    def _ping(self, payload: dict[str, Any]) -> None:
        return

    def _content_block_start(self, payload: dict[str, Any]) -> None:
        block = payload.get("content_block")
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: content_block_start without a block"
            )
        quirks: list[tuple[str, str]] = []
        index = payload.get("index")
        expected = max(self._blocks, default=-1) + 1
        if index is None:
            index = expected
            quirks.append(("C1", "content_block_start without an index"))
        elif not _is_index(index):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: block index {clip(index)}"
            )
        elif index in self._blocks:
            self._book.findings.record("A3", f"a second content_block_start at index {index}")
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: index {index} started twice"
            )
        elif index != expected:
            quirks.append(("C14", f"block index {index} where {expected} was next"))
        kind = block["type"]
        slot = None
        start_input = block.get("input")
        if kind == "tool_use":
            slot = self._book.open(0)
            slot.wire_index = index
            call_id = block.get("id")
            if isinstance(call_id, str) and call_id:
                self._book.set_id(slot, call_id)
            name = block.get("name")
            if isinstance(name, str) and name:
                slot.name = name
            if start_input is not None and not isinstance(start_input, dict):
                self._book.reject(slot, Reason.PROTOCOL_ERROR, "tool_use input is not an object")
        elif kind not in _CALL_BLOCKS and kind not in ("text", "thinking", "redacted_thinking"):
            if not kind.endswith("_tool_result"):
                self._book.deviation("A4", f"unknown block type {kind!r} (no call)", None)
        entry = _Block(index, kind, slot, start_input)
        self._blocks[index] = entry
        if slot is not None:
            self._calls.append(entry)
        for quirk, detail in quirks:
            self._book.deviation(quirk, detail, slot)

    def _content_block_delta(self, payload: dict[str, Any]) -> None:
        block = self._block_for(payload, "content_block_delta")
        delta = payload.get("delta")
        if not isinstance(delta, dict):
            raise StreamFailure(Reason.PROTOCOL_ERROR, f"event {self._events}: delta is missing")
        kind = delta.get("type")
        owners = _DELTAS.get(kind) if isinstance(kind, str) else None
        if owners is None:
            self._book.deviation("A4", f"unknown delta type {kind!r} (ignored)", None)
            return
        if block.kind not in owners:
            self._book.findings.record("A3", f"a {kind} for a {block.kind} block")
            raise StreamFailure(
                Reason.PROTOCOL_ERROR,
                f"event {self._events}: a {kind} for the {block.kind} block {block.index}",
            )
        if kind != "input_json_delta" or block.slot is None:
            return
        fragment = delta.get("partial_json")
        if not isinstance(fragment, str):
            if fragment is not None:
                self._book.reject(block.slot, Reason.PROTOCOL_ERROR, "partial_json not a string")
            return
        if fragment:
            block.streamed = True
            self._book.append(block.slot, fragment)

    def _content_block_stop(self, payload: dict[str, Any]) -> None:
        block = self._block_for(payload, "content_block_stop")
        block.open = False
        if block.slot is not None:
            self._boundary(block)

    def _message_delta(self, payload: dict[str, Any]) -> None:
        usage = payload.get("usage")
        if isinstance(usage, dict):
            self.usage = {**(self.usage or {}), **usage}
        delta = payload.get("delta")
        reason = delta.get("stop_reason") if isinstance(delta, dict) else None
        if reason is None or self._stop_reason is not None:
            return
        if not isinstance(reason, str):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: stop_reason {clip(reason)}"
            )
        self._stop_reason = reason
        if reason in _COMPLETING:
            for block in self._calls:
                if block.open:
                    self._boundary(block)
                if block.held and block.slot is not None:
                    self._book.complete(block.slot)
            return
        rejection, detail = _ENDINGS.get(
            reason, (Reason.PROVIDER_FINISH, f"stop_reason {reason!r}")
        )
        self._settle(rejection, detail)

    def _message_stop(self, payload: dict[str, Any]) -> None:
        self._stopped = True
        if self._stop_reason is None:
            self._settle(Reason.UNFINISHED, "message_stop arrived before any stop_reason")

    # -- calls --------------------------------------------------------------------------------

    def _block_for(self, payload: dict[str, Any], what: str) -> _Block:
        index = payload.get("index")
        if index is None:
            open_blocks = [block for block in self._blocks.values() if block.open]
            if len(open_blocks) != 1:
                detail = f"{what} without an index while {len(open_blocks)} blocks are open"
                self._book.findings.record("A3", detail)
                raise StreamFailure(Reason.PROTOCOL_ERROR, f"event {self._events}: {detail}")
            block = open_blocks[0]
            self._book.deviation("C1", f"{what} without an index", block.slot)
            return block
        found = self._blocks.get(index) if _is_index(index) else None
        if found is None or not found.open:
            state = "no" if found is None else "a stopped"
            detail = f"{what} for index {clip(index)}, which has {state} block"
            self._book.findings.record("A3", detail)
            raise StreamFailure(Reason.PROTOCOL_ERROR, f"event {self._events}: {detail}")
        return found

    def _boundary(self, block: _Block) -> None:
        """The block's input is final: complete the call now if its text is complete JSON,
        else hold it for the message's ending (C5, A1)."""
        slot = block.slot
        assert slot is not None
        block.open = False
        start = block.start_input
        if isinstance(start, dict) and start:
            self._book.deviation("A6", "tool_use input sent whole in content_block_start", slot)
        if slot.final:
            return
        if not block.streamed:
            self._book.append(slot, _input_text(start))
            self._book.complete(slot)
            return
        try:
            parse_arguments(slot.text)
        except ArgumentsError:
            block.held = True
            return
        self._book.complete(slot)

    def _settle(self, reason: Reason, detail: str) -> None:
        for block in self._calls:
            block.open = False
            if block.slot is not None:
                self._book.reject(block.slot, reason, detail)

    def _error(self, payload: dict[str, Any]) -> None:
        error = payload.get("error", payload)
        if not isinstance(error, dict):
            raise StreamFailure(Reason.STREAM_ERROR, f"provider error: {clip(error)}")
        kind = error.get("type")
        message = error.get("message") or "no message"
        retry = "retryable" if kind in _RETRYABLE else "not retryable"
        raise StreamFailure(
            Reason.STREAM_ERROR, f"provider error: {message}, type {kind!r} ({retry})"
        )


def _input_text(start: Any) -> str:
    """The text of a start's input when nothing was streamed: ``{}`` when it sent none."""
    if not isinstance(start, dict):
        return "{}"
    return json.dumps(start, ensure_ascii=False)


def _is_index(value: Any) -> bool:
    return type(value) is int and value >= 0

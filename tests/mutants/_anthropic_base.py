"""A small assembler of Anthropic Messages streams that keeps the implementation contract: the
baseline every ``anthropic_*`` mutant breaks.

It reuses :class:`~tests.mutants._base.BaseAssembler`'s transport (bytes, lines, fields, events)
and call state (identity, verbatim append, completion, schema), and reads the events as
research/wire_formats.md §4 describes them, one hook each. ``on_event`` parses the data and
routes by the payload's ``type`` (an ``event:`` line of another name changes nothing);
``on_error`` fails the stream. ``on_block_start`` opens a call for each ``tool_use`` block
(``server_tool_use`` and other blocks carry none) at the block's index; ``block_for`` finds the
block a delta or stop names (the single open one when no index is sent); ``on_input`` appends a
``partial_json`` fragment; ``on_block_stop`` is the call's boundary (``boundary``): an input
that is complete JSON completes the call at once, one that is not waits for the stop reason
(``on_stop_reason``), which completes (``tool_use``, ``end_turn``, ``stop_sequence``) or rejects
it (``max_tokens`` → truncated, ``refusal`` → filtered, others → provider_finish).
``message_stop`` leaves what is still open unfinished, end of file interrupted. Its results
equal the reference's lenient ones on the anthropic-messages corpus, findings aside.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from callstream.reference import Reason

from ._base import BaseAssembler, Call, StreamFailure

__all__ = ["CALLSTREAM", "AnthropicAssembler", "Block", "factory"]

CALLSTREAM: dict[str, Any] = {"profile": "lenient", "dialect": "anthropic-messages"}
"""What every Anthropic mutant declares: the lenient profile, the anthropic-messages dialect."""

_COMPLETING = frozenset({"tool_use", "end_turn", "stop_sequence"})
_REJECTING = {
    "max_tokens": Reason.TRUNCATED,
    "model_context_window_exceeded": Reason.TRUNCATED,
    "refusal": Reason.FILTERED,
}
_DELTAS = {
    "input_json_delta": ("tool_use", "server_tool_use"),
    "text_delta": ("text",),
    "citations_delta": ("text",),
    "thinking_delta": ("thinking",),
    "signature_delta": ("thinking",),
}


@dataclass(eq=False)
class Block:
    """One content block: its type, its call (tool_use only), and where its input stands."""

    index: int
    kind: str
    call: Call | None
    start_input: Any
    open: bool = True
    streamed: bool = False
    """A non-empty ``partial_json`` arrived."""
    held: bool = False
    """Stopped with input that is not complete JSON: the stop reason decides."""


class AnthropicAssembler(BaseAssembler):
    """Assembles the tool_use calls of one Messages stream, correctly (see the docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.blocks: dict[int, Block] = {}
        self.stop_reason: str | None = None
        self.stopped = False

    # -- events -----------------------------------------------------------------------------

    def on_event(self, event: str, data: str) -> None:
        """Parse the data and route it by its ``type``."""
        if self.ended or not data:
            return
        try:
            payload = json.loads(data)
        except (ValueError, RecursionError):
            if event == "error":
                self.on_error(data)
                return
            raise StreamFailure(Reason.PROTOCOL_ERROR) from None
        kind = payload.get("type") if isinstance(payload, dict) else None
        if event == "error" or kind == "error":
            self.on_error(payload)
            return
        if not isinstance(kind, str):
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        self.on_typed(kind, payload)

    def on_typed(self, kind: str, payload: dict[str, Any]) -> None:
        """One event, by its type; unknown types are ignored."""
        if kind == "content_block_start":
            self.on_block_start(payload)
        elif kind == "content_block_delta":
            self.on_block_delta(payload)
        elif kind == "content_block_stop":
            self.on_block_stop(payload)
        elif kind == "message_delta":
            delta = payload.get("delta") or {}
            if isinstance(delta, dict) and delta.get("stop_reason") and self.stop_reason is None:
                self.on_stop_reason(delta["stop_reason"])
        elif kind == "message_stop":
            self.stopped = True
            self.end(Reason.UNFINISHED)
        elif kind == "message_start" and getattr(self, "_started_message", False):
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        elif kind == "message_start":
            self._started_message = True

    def on_block_start(self, payload: dict[str, Any]) -> None:
        """A block opens at its index (the next one when it has none)."""
        index = payload.get("index")
        if index is None:
            index = max(self.blocks, default=-1) + 1
        if type(index) is not int or index in self.blocks:
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        block = payload.get("content_block") or {}
        kind = block.get("type", "")
        call = None
        if kind == "tool_use":
            call = self.open(0)
            call.wire = index
            self.set_identity(call, "id", block.get("id") or None)
            self.set_identity(call, "name", block.get("name") or None)
        self.blocks[index] = Block(index, kind, call, block.get("input"))

    def block_for(self, payload: dict[str, Any]) -> Block:
        """The open block a delta or stop names; the single open block when it names none."""
        index = payload.get("index")
        if index is None:
            open_blocks = [block for block in self.blocks.values() if block.open]
            if len(open_blocks) != 1:
                raise StreamFailure(Reason.PROTOCOL_ERROR)
            return open_blocks[0]
        block = self.blocks.get(index) if type(index) is int else None
        if block is None or not block.open:
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        return block

    def on_block_delta(self, payload: dict[str, Any]) -> None:
        """A delta of its block's type; ``input_json_delta`` feeds a tool_use block's call."""
        block = self.block_for(payload)
        delta = payload.get("delta") or {}
        owners = _DELTAS.get(delta.get("type"))
        if owners is None:
            return
        if block.kind not in owners:
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        if delta["type"] == "input_json_delta" and block.call is not None:
            self.on_input(block, delta.get("partial_json"))

    def on_input(self, block: Block, fragment: Any) -> None:
        """Append a ``partial_json`` fragment verbatim; ``""`` changes nothing."""
        if isinstance(fragment, str) and fragment:
            block.streamed = True
            self.append_arguments(block.call, fragment)  # type: ignore[arg-type]

    def on_block_stop(self, payload: dict[str, Any]) -> None:
        """The block is over; a tool_use block's call reaches its boundary."""
        block = self.block_for(payload)
        block.open = False
        if block.call is not None:
            self.boundary(block)

    def boundary(self, block: Block) -> None:
        """The input is final: complete JSON completes the call now, else it is held. With no
        fragment, the start's input (``{}``) is the input."""
        call = block.call
        assert call is not None
        block.open = False
        if not block.streamed:
            start = block.start_input if isinstance(block.start_input, dict) else {}
            self.append_arguments(call, json.dumps(start, ensure_ascii=False))
        try:
            json.loads(call.text)
        except ValueError:
            block.held = True
            return
        self.complete(call)

    def on_stop_reason(self, reason: Any) -> None:
        """The message's stop reason settles every call not yet final."""
        self.stop_reason = str(reason)
        for block in self.blocks.values():
            if block.call is None:
                continue
            if reason in _COMPLETING:
                if block.open:
                    self.boundary(block)
                self.complete(block.call)
            else:
                self.reject(block.call, _REJECTING.get(reason, Reason.PROVIDER_FINISH))

    def on_eof(self) -> None:
        """The connection closed: what was not settled was interrupted."""
        if not self.stopped:
            self.end(Reason.INTERRUPTED)

    def release(self) -> list[dict[str, Any]]:
        """Results carry the block index as their wire index when it differs."""
        released = super().release()
        for result in released:
            call = next(c for c in self.calls if c.index == result["index"])
            if call.wire is not None and call.wire != result["index"]:
                result["wire_index"] = call.wire
        return released


factory = AnthropicAssembler

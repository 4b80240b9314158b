"""A small Responses assembler that keeps the implementation contract: the baseline every
``responses_*`` mutant breaks.

It is :class:`~tests.mutants._base.BaseAssembler` (the SSE layer, completion and validation)
reading OpenAI Responses events instead of chat chunks (research/wire_formats.md §3;
docs/rules.md D40–D52). ``on_event`` decodes an event and hands it, by its ``type``, to
``on_added`` (an output item: a function or custom tool call opens a call, keyed by ``item.id``,
with its ``call_id`` as id), ``on_delta`` (a fragment, appended to the call ``route_item`` finds:
by ``item_id``, else by ``output_index``), ``on_text_done`` and ``on_item_done`` (the whole text
restated, compared by ``restate``, which lets the restatement win), and ``on_terminal``
(``response.completed`` completes the calls still open, ``response.incomplete`` and
``response.failed`` reject them). A call's ``output_item.done`` with status ``completed`` is its
per-call boundary: ``on_item_done`` completes it there. End of file rejects what is still open.
Custom tool calls are read as function calls would be; their input is checked as text (a regex
format must match it whole).
"""

from __future__ import annotations

import json
import re
from typing import Any

from callstream.reference import Reason

from ._base import BaseAssembler, Call, StreamFailure

__all__ = ["CALLSTREAM", "ResponsesAssembler", "factory"]

CALLSTREAM: dict[str, Any] = {"profile": "lenient", "dialect": "openai-responses"}
"""What every Responses assembler in this package declares."""

_CALL_ITEMS = {"function_call": "arguments", "custom_tool_call": "input"}
_INCOMPLETE = {"max_output_tokens": Reason.TRUNCATED, "content_filter": Reason.FILTERED}


class ResponsesAssembler(BaseAssembler):
    """Assembles the tool calls of one Responses stream, correctly."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.added: set[str] = set()
        """The item ids added so far."""

    def on_event(self, event: str, data: str) -> None:
        """One event, by its ``type``; ``[DONE]`` is ignored, an error fails the stream."""
        if self.ended or not data:
            return
        if data.strip() == "[DONE]":
            self.saw_done = True
            return
        try:
            payload = json.loads(data)
        except (ValueError, RecursionError):
            raise StreamFailure(Reason.PROTOCOL_ERROR) from None
        kind = payload.get("type") if isinstance(payload, dict) else None
        if kind == "error" or event == "error":
            raise StreamFailure(Reason.STREAM_ERROR)
        if not isinstance(kind, str):
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        if kind == "response.output_item.added":
            self.on_added(payload)
        elif kind.endswith(("function_call_arguments.delta", "custom_tool_call_input.delta")):
            self.on_delta(payload)
        elif kind.endswith(("function_call_arguments.done", "custom_tool_call_input.done")):
            self.on_text_done(payload)
        elif kind == "response.output_item.done":
            self.on_item_done(payload)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self.on_terminal(kind, payload.get("response") or {})
        elif kind == "response.done":
            status = (payload.get("response") or {}).get("status")
            terminal = {"incomplete": "response.incomplete", "failed": "response.failed"}
            self.on_terminal(
                terminal.get(str(status), "response.completed"), payload.get("response") or {}
            )

    def on_added(self, payload: dict[str, Any]) -> None:
        """A new output item; a call item opens a call at the next position."""
        item = payload.get("item") or {}
        if item.get("id") in self.added:
            raise StreamFailure(Reason.PROTOCOL_ERROR)  # the same item added twice (A5)
        if item.get("id"):
            self.added.add(item["id"])
        field = _CALL_ITEMS.get(str(item.get("type")))
        if field is None:
            self.item_index(payload, None)
            return
        call = self.open(0)
        call.wire = payload.get("output_index")
        call.custom = field == "input"  # type: ignore[attr-defined]
        call.item_id = item.get("id")  # type: ignore[attr-defined]
        call.restated = None  # type: ignore[attr-defined]
        call.deltas = 0  # type: ignore[attr-defined]
        call.status = None  # type: ignore[attr-defined]
        self.set_identity(call, "id", item.get("call_id") or None)
        self.set_identity(call, "name", item.get("name") or None)
        self.item_index(payload, call)
        text = item.get(field)
        if isinstance(text, str) and text:
            call.fragments.append(text)

    def item_index(self, payload: dict[str, Any], call: Call | None) -> None:
        """Remember the item by its id and output_index."""
        item = payload.get("item") or {}
        if item.get("id"):
            self.by_id[(0, item["id"])] = call  # type: ignore[assignment]
        self.positions[(0, payload.get("output_index", -1))] = call  # type: ignore[assignment]

    def route_item(self, payload: dict[str, Any]) -> Call:
        """The call an event names: by ``item_id``, else by ``output_index``."""
        key = (0, payload.get("item_id"))
        call = (
            self.by_id.get(key)
            if key in self.by_id
            else self.positions.get((0, payload.get("output_index", -1)))
        )
        if call is None:
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        return call

    def on_delta(self, payload: dict[str, Any]) -> None:
        """A fragment; the first one starts again what ``output_item.added`` carried."""
        call = self.route_item(payload)
        if call.restated is not None:  # type: ignore[attr-defined]
            return
        if call.deltas == 0:  # type: ignore[attr-defined]
            call.fragments.clear()
        call.deltas += 1  # type: ignore[attr-defined]
        self.append_arguments(call, payload.get("delta"))

    def on_text_done(self, payload: dict[str, Any]) -> None:
        """The whole text, restated by ``.done``."""
        call = self.route_item(payload)
        text = payload.get("input" if call.custom else "arguments")  # type: ignore[attr-defined]
        self.restate(call, text)

    def restate(self, call: Call, text: Any) -> None:
        """A whole restatement wins over the deltas; two that disagree reject the call."""
        if not isinstance(text, str) or call.final:
            return
        if call.restated is not None and text != call.restated:  # type: ignore[attr-defined]
            self.reject(call, Reason.PROTOCOL_ERROR)
            return
        call.restated = text  # type: ignore[attr-defined]
        call.fragments[:] = [text] if text else []

    def on_item_done(self, payload: dict[str, Any]) -> None:
        """The item is done: its restated text, its call_id if late; ``completed`` completes it."""
        item = payload.get("item") or {}
        field = _CALL_ITEMS.get(str(item.get("type")))
        if field is None:
            return
        call = self.route_item(
            {"item_id": item.get("id"), "output_index": payload.get("output_index")}
        )
        if call.id is None and item.get("call_id"):
            call.id = item["call_id"]
        self.restate(call, item.get(field))
        call.status = item.get("status")  # type: ignore[attr-defined]
        if call.status == "completed":  # type: ignore[attr-defined]
            self.complete(call)

    def on_terminal(self, kind: str, response: dict[str, Any]) -> None:
        """The response ended: it settles every call not complete at its own boundary."""
        for call in self.calls:
            if kind == "response.completed":
                if call.status == "incomplete":  # type: ignore[attr-defined]
                    self.reject(call, Reason.PROTOCOL_ERROR)
                self.complete(call)
            elif kind == "response.incomplete":
                why = (response.get("incomplete_details") or {}).get("reason")
                self.reject(call, _INCOMPLETE.get(str(why), Reason.PROVIDER_FINISH))
            else:
                self.reject(call, Reason.STREAM_ERROR)
        self.ended = True

    def on_eof(self) -> None:
        """End of file: what is still open was interrupted (unfinished after a ``[DONE]``)."""
        self.end(Reason.UNFINISHED if getattr(self, "saw_done", False) else Reason.INTERRUPTED)

    def complete(self, call: Call) -> None:
        """A function call as the base completes it; a custom call's input is its value, a
        regex format matching it whole."""
        if not getattr(call, "custom", False):
            tool = None if self.tools is None or call.name is None else self.tools.get(call.name)
            if tool is not None and tool.kind == "custom":
                self.reject(call, Reason.UNKNOWN_TOOL)
            super().complete(call)
            return
        if call.final:
            return
        tool = None if self.tools is None or call.name is None else self.tools.get(call.name)
        if call.name is None:
            self.reject(call, Reason.MISSING_NAME)
        elif self.tools is not None and (tool is None or tool.kind != "custom"):
            self.reject(call, Reason.UNKNOWN_TOOL)
        elif not _matches(tool, call.text):
            self.reject(call, Reason.SCHEMA_VIOLATION)
        else:
            synthetic = call.id is None
            if synthetic:
                call.id = f"call{call.index:03d}"
            self._make_final(call, call.text, None, synthetic)


def _matches(tool: Any, text: str) -> bool:
    grammar = ((tool.format if tool is not None else None) or {}).get("grammar") or {}
    if grammar.get("syntax") == "regex":
        return re.fullmatch(grammar["definition"], text) is not None
    return True


factory = ResponsesAssembler

"""The OpenAI Chat Completions dialect (``chat.completion.chunk``), strict and lenient.

Routing (rules A5–A7 of REQUIREMENTS.md). A call is named by (choice index, tool-call index).
Each choice keeps a map from wire index to call, and an id map for providers that send no index.
Identity fields are set, never concatenated (A3); absent, null or empty fields change nothing
(A4). The lenient profile also follows the id-aware rules of research/wire_formats.md §8 P-B:
a new id *with* a name at an occupied index is a new call (quirk C2), a new id *without* a name
continues the call (quirk C3), a missing index is inferred only when that is unambiguous (quirk
C1), and wire indices are compacted to order of first appearance (quirk C14). Every such
deviation is recorded; the strict profile rejects the calls it touches where the quirk table
says so. Two distinct calls of a choice that share an id are recorded (quirk C34) and, under the
strict profile, both rejected ``duplicate_id``. Each result keeps its wire index beside the
compacted position.

Kinds. A tool-call entry is a *custom* call (``{"type": "custom", "custom": {"name", "input"}}``,
openai/openai-python#2530, openai/openai-openapi#576) when its ``type`` says so, or, with no
``type``, when only its ``custom`` object carries a name or input; otherwise it is a function
call. A stray ``custom: {}`` on a function delta therefore changes nothing
(earendil-works/pi#8504). ``custom.input`` fragments are appended verbatim like arguments. A
call whose deltas change kind cannot be trusted and is rejected ``protocol_error``.

Completion (rules C1–C3). Within a chunk, deltas are applied before the finish reason (quirk
C19). The first
non-null finish reason of a choice decides its calls, per the table in REQUIREMENTS.md:
``tool_calls``/``stop``/``function_call`` complete them; ``length`` truncates; ``content_filter``
filters; anything else is a provider finish (``error`` a stream error). ``[DONE]`` ends the
stream, rejecting unfinished calls as ``unfinished``; end of file without it rejects them as
``interrupted``. An error payload (nested ``{"error": …}``, flat ``"object": "error"``) or an
``event: error`` fails every call not yet final.
"""

from __future__ import annotations

import json
from typing import Any

from .._calls import CallBook, CallSlot, StreamFailure
from .._model import Reason
from ._payloads import DECODER, clip, describe_error, not_json, too_deep

__all__ = ["OpenAIChat"]

_COMPLETING = frozenset({"tool_calls", "stop", "function_call"})
_MARKUP = ("<tool_call>", "[TOOL_CALLS]", "<|tool_call")


class _Call:
    """The dialect's view of one call: the slot plus what was seen on the wire."""

    __slots__ = ("deltas", "kind", "saw_type", "slot", "wire")

    def __init__(self, slot: CallSlot) -> None:
        self.slot = slot
        self.deltas = 0
        self.saw_type = False
        self.wire: int | None = None  # the tool-call index the provider uses for it
        self.kind: str | None = None  # "function" or "custom", once a delta has said which

    def place(self, wire: int) -> None:
        """The call is at tool-call index ``wire`` on the wire."""
        self.wire = wire
        self.slot.wire_index = wire


class _Choice:
    __slots__ = ("by_id", "by_wire", "calls", "content_tail", "finish", "legacy", "number", "role")

    def __init__(self, number: int) -> None:
        self.number = number
        self.calls: list[_Call] = []
        self.by_wire: dict[int, _Call] = {}
        self.by_id: dict[str, _Call] = {}
        self.legacy: _Call | None = None
        self.finish: str | None = None
        self.role = False
        self.content_tail = ""


class OpenAIChat:
    """Parses ``chat.completion.chunk`` events into call updates."""

    def __init__(self, book: CallBook) -> None:
        self._book = book
        self._choices: dict[int, _Choice] = {}
        self._done = False  # [DONE] was seen: the stream is over
        self._chunk_id: Any = None
        self._created: Any = None
        self._events = 0
        self.usage: Any = None

    # -- events -------------------------------------------------------------------------------

    def receive(self, event: str, data: str) -> None:
        """One dispatched SSE event."""
        self._events += 1
        if self._done:
            self._book.deviation("C20", f"event {self._events} after [DONE] (ignored)", None)
            return
        if not data:
            self._book.deviation("T6", f"event {self._events} has empty data (ignored)", None)
            return
        if data[:1] != "{" and data.strip() == "[DONE]":
            self._sentinel()
            return
        try:
            payload = DECODER.decode(data)
        except RecursionError:
            raise too_deep(self._events) from None
        except ValueError as exc:
            if event == "error":
                self._stream_error(data)
                return
            raise not_json(data, self._events, self._book, exc) from None
        if event == "error":
            self._stream_error(payload)
            return
        self._payload(payload)

    def receive_payload(self, event: str, payload: Any) -> None:
        """One already-decoded payload (``"[DONE]"`` may be passed as a string)."""
        if isinstance(payload, str):
            self.receive(event, payload)
            return
        self._events += 1
        if self._done:
            self._book.deviation("C20", f"event {self._events} after [DONE] (ignored)", None)
            return
        if event == "error":
            self._stream_error(payload)
            return
        self._payload(payload)

    def end(self) -> None:
        """End of file: calls of unfinished choices were interrupted (rules C2, C3)."""
        if self._done:
            return
        unfinished = [choice for choice in self._choices.values() if choice.finish is None]
        for choice in unfinished:
            self._settle(
                choice, Reason.INTERRUPTED, "the stream ended before the choice had a finish_reason"
            )
        if self._choices and not unfinished:
            self._book.deviation("C24", "the stream ended without [DONE]", None)

    # -- chunk level --------------------------------------------------------------------------

    def _payload(self, payload: Any) -> None:
        if not isinstance(payload, dict):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR,
                f"event {self._events}: a chunk must be a JSON object, not {clip(payload)}",
            )
        if payload.get("error") or payload.get("object") == "error":
            self._stream_error(payload)
            return
        choices = payload.get("choices")
        usage = payload.get("usage")
        if usage is None:
            extra = payload.get("x_groq")
            usage = extra.get("usage") if isinstance(extra, dict) else None
        if usage is not None:
            if choices or not usage:
                self._book.deviation("C23", "usage outside a final chunk with empty choices", None)
            if usage:
                self.usage = usage
        if not choices:
            if usage is None:
                self._book.deviation("C21", "a chunk with empty choices and no usage", None)
            return
        if not isinstance(choices, list):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: choices is not a list"
            )
        self._envelope(payload)
        for raw in choices:
            self._choice(raw)

    def _envelope(self, payload: dict[str, Any]) -> None:
        chunk_id = payload.get("id")
        created = payload.get("created")
        if self._chunk_id is None and self._created is None:
            self._chunk_id, self._created = chunk_id, created
            if isinstance(chunk_id, str) and chunk_id:
                self._book.response_id = chunk_id
            if not chunk_id or payload.get("object") != "chat.completion.chunk":
                self._book.deviation("C21", "blank chunk id or object", None)
        elif chunk_id != self._chunk_id or created != self._created:
            self._book.deviation("C30", "chunk id or created changed between chunks", None)

    def _choice(self, raw: Any) -> None:
        if type(raw) is not dict and not isinstance(raw, dict):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: a choice is not an object"
            )
        number = raw.get("index", 0)
        if type(number) is not int or number < 0:
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: choice index {number!r} is not valid"
            )
        choice = self._choices.get(number)
        if choice is None:
            if len(self._choices) >= self._book.limits.max_choices:
                raise StreamFailure(
                    Reason.TOO_LARGE,
                    f"more than {self._book.limits.max_choices} choices in one stream",
                )
            choice = self._choices[number] = _Choice(number)
        delta = raw.get("delta")
        if delta is None:
            delta = {}
            if "delta" not in raw:
                self._book.deviation("C22", "a choice without a delta", None, number)
        elif not isinstance(delta, dict):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: delta is not an object"
            )
        finish = raw.get("finish_reason") or None  # "" is sent by some servers for "not yet"
        if choice.finish is not None:
            self._after_finish(choice, delta, finish)
            return
        role = delta.get("role")
        if role is not None:
            if choice.role or not role:
                self._book.deviation("C29", "role repeated or empty", None, number)
            choice.role = True
        content = delta.get("content")
        if content and isinstance(content, str):
            self._scan_content(choice, content)
        tool_calls = delta.get("tool_calls")
        if tool_calls:
            if not isinstance(tool_calls, list):
                raise StreamFailure(
                    Reason.PROTOCOL_ERROR, f"event {self._events}: tool_calls is not a list"
                )
            for entry in tool_calls:
                self._tool_call(choice, entry)
        function_call = delta.get("function_call")
        if function_call:
            self._legacy(choice, function_call)
        if finish is not None:
            self._finish(choice, finish)

    def _after_finish(self, choice: _Choice, delta: dict[str, Any], finish: Any) -> None:
        if delta.get("tool_calls") or delta.get("function_call") or delta.get("content"):
            what = "content or tool-call deltas"
        elif finish is not None:
            what = "a second finish_reason"
        else:
            what = "a chunk"
        self._book.deviation("C20", f"{what} after finish_reason (ignored)", None, choice.number)

    def _scan_content(self, choice: _Choice, content: str) -> None:
        window = choice.content_tail + content
        if any(mark in window for mark in _MARKUP):
            self._book.deviation(
                "C31", "tool-call markup inside message content", None, choice.number
            )
        choice.content_tail = window[-16:]

    # -- calls --------------------------------------------------------------------------------

    def _tool_call(self, choice: _Choice, entry: Any) -> None:
        if type(entry) is dict and len(entry) == 2:
            # Fast path for the delta that makes up nearly every chunk of a call: an index the
            # choice already knows and an argument fragment, nothing else.
            index = entry.get("index")
            function = entry.get("function")
            if type(index) is int and type(function) is dict and len(function) == 1:
                call = choice.by_wire.get(index)
                fragment = function.get("arguments")
                if call is not None and type(fragment) is str and call.kind == "function":
                    call.deltas += 1
                    self._book.append(call.slot, fragment)
                    return
        if not isinstance(entry, dict):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: a tool call is not an object"
            )
        kind, body = self._body(entry)
        call_id = self._call_id(entry.get("id"), choice)
        name = body.get("name") or None
        if name is not None and not isinstance(name, str):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: {kind}.name is not a string"
            )
        call, quirks = self._route(choice, entry.get("index"), call_id, name)
        if call is None:
            return
        if entry.get("type") is not None:
            if call.saw_type:
                quirks.append(("C4", "id or type repeated after the call's first delta"))
            call.saw_type = True
        if kind is not None and not self._set_kind(call, kind):
            return
        fragment = body.get("input") if kind == "custom" else body.get("arguments")
        self._apply(call, call_id, name, fragment)
        for quirk, detail in quirks:
            self._book.deviation(quirk, detail, call.slot)
        extra = entry.get("extra_content")
        if extra is not None:
            call.slot.extras = {"extra_content": extra}
            self._book.deviation("C28", "extra_content on a tool call (kept)", call.slot)

    def _body(self, entry: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
        """The entry's kind (None when it does not say) and the object that carries its name and
        text: ``function`` or ``custom``."""
        kind = entry.get("type")
        function, custom = entry.get("function"), entry.get("custom")
        if kind is None:
            says = isinstance(custom, dict) and any(
                isinstance(custom.get(key), str) for key in ("name", "input")
            )
            kind = "custom" if says and not function else ("function" if function else None)
        elif kind != "custom":
            kind = "function"  # "function", or a vendor value read as the default kind
        key = "custom" if kind == "custom" else "function"
        body = entry.get(key)
        if body is None:
            return kind, {}
        if not isinstance(body, dict):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: tool_calls[].{key} is not an object"
            )
        return kind, body

    def _set_kind(self, call: _Call, kind: str) -> bool:
        """Fix the call's kind at its first word on it; False (call rejected) if it changes."""
        if call.kind is None:
            call.kind = kind
            call.slot.kind = "custom" if kind == "custom" else "function"
            return True
        if call.kind == kind:
            return True
        self._book.reject(
            call.slot,
            Reason.PROTOCOL_ERROR,
            f"a {kind} delta for a {call.kind} call: the call changed kind",
        )
        return False

    def _legacy(self, choice: _Choice, function_call: Any) -> None:
        if not isinstance(function_call, dict):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: function_call is not an object"
            )
        if choice.legacy is None:
            choice.legacy = self._open(choice)
            self._book.deviation("C27", "legacy delta.function_call", choice.legacy.slot)
        name = function_call.get("name") or None
        if name is not None and not isinstance(name, str):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: function_call.name is not a string"
            )
        self._apply(choice.legacy, None, name, function_call.get("arguments"))

    def _call_id(self, raw: Any, choice: _Choice) -> str | None:
        if raw is None or raw == "":
            return None
        if isinstance(raw, str):
            return raw
        if isinstance(raw, int) and not isinstance(raw, bool) and not self._book.strict:
            self._book.deviation("C7", "numeric call id (stringified)", None, choice.number)
            return str(raw)
        self._book.deviation(
            "C7", f"call id {clip(raw)} is not a string (ignored)", None, choice.number
        )
        return None

    def _route(
        self, choice: _Choice, index: Any, call_id: str | None, name: str | None
    ) -> tuple[_Call | None, list[tuple[str, str]]]:
        """The call a tool-call entry belongs to, and the quirks seen in finding it. The quirks
        are applied once the entry's identity is set, so a rejection still names the call."""
        quirks: list[tuple[str, str]] = []
        if isinstance(index, bool) or not isinstance(index, int):
            if isinstance(index, str) and index.isascii() and index.isdigit():
                index = int(index)
                quirks.append(("C1", "tool-call index sent as a string"))
            elif index is None:
                return self._route_without_index(choice, call_id, name)
            else:
                raise StreamFailure(
                    Reason.PROTOCOL_ERROR,
                    f"event {self._events}: tool-call index {clip(index)} is not valid",
                )
        call = choice.by_wire.get(index)
        if call is None:
            expected = len(choice.by_wire)
            unplaced = [c for c in choice.calls if c.wire is None and c is not choice.legacy]
            if call_id is None and name is None and len(unplaced) == 1:
                # A bare fragment naming an index, after the call's header came without one:
                # the single call that has no index yet is the only one it can continue.
                call = unplaced[0]
                quirks.append(("C1", "tool-call index missing on the call's first delta"))
            else:
                call = self._open(choice)
            call.place(index)
            choice.by_wire[index] = call
            if index != expected:
                quirks.append(("C14", f"tool-call index {index} where {expected} was next"))
            return call, quirks
        slot = call.slot
        if call_id is not None and slot.id is not None and call_id != slot.id:
            if name is not None:
                call = self._open(choice)
                call.place(index)
                choice.by_wire[index] = call
                quirks.append(("C2", f"index {index} reused by a new call {call_id!r}"))
            else:
                quirks.append(("C3", f"id changed from {slot.id!r} to {call_id!r} without a name"))
        return call, quirks

    def _route_without_index(
        self, choice: _Choice, call_id: str | None, name: str | None
    ) -> tuple[_Call | None, list[tuple[str, str]]]:
        call = choice.by_id.get(call_id) if call_id is not None else None
        if call is None:
            if call_id is not None or name is not None or not choice.calls:
                call = self._open(choice)
            elif len(choice.calls) == 1:
                call = choice.calls[0]
            else:
                detail = (
                    "tool-call index missing and several calls open: "
                    "cannot tell where a fragment goes"
                )
                self._book.findings.record("C1", detail, choice.number)
                self._book.settle((c.slot for c in choice.calls), Reason.PROTOCOL_ERROR, detail)
                return None, []
        return call, [("C1", "tool-call index missing")]

    def _open(self, choice: _Choice) -> _Call:
        call = _Call(self._book.open(choice.number))
        choice.calls.append(call)
        return call

    def _apply(self, call: _Call, call_id: str | None, name: str | None, arguments: Any) -> None:
        slot = call.slot
        first = call.deltas == 0
        call.deltas += 1
        owner = call
        if call_id is not None:
            if slot.id is None:
                self._book.set_id(slot, call_id)
                owner = self._choices[slot.choice].by_id.setdefault(call_id, call)
            elif call_id == slot.id and not first:
                self._book.deviation("C4", "id or type repeated after the call's first delta", slot)
        if name is not None:
            if slot.name is None:
                slot.name = name
                if not first:
                    self._book.deviation(
                        "C6", "the name arrived after the call's first delta", slot
                    )
            elif name == slot.name:
                self._book.deviation("C5", "function name repeated", slot)
            else:
                self._book.reject(
                    slot,
                    Reason.PROTOCOL_ERROR,
                    f"function name changed from {slot.name!r} to {name!r}",
                )
        if owner is not call:
            # Once the name is set, so a rejection still says which tool was called.
            self._book.shared_id(owner.slot, slot)
        if arguments is None or arguments == "":
            return
        if isinstance(arguments, str):
            self._book.append(slot, arguments)
            return
        if call.kind == "custom":
            self._book.reject(slot, Reason.PROTOCOL_ERROR, "custom.input is not a string")
            return
        try:
            text = json.dumps(arguments, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise StreamFailure(
                Reason.PROTOCOL_ERROR, f"event {self._events}: arguments are not JSON ({exc})"
            ) from None
        self._book.append(slot, text)  # kept even when the strict profile rejects the call
        self._book.deviation("C32", "arguments sent as a JSON value, not a string", slot)

    # -- endings ------------------------------------------------------------------------------

    def _finish(self, choice: _Choice, finish: Any) -> None:
        if not isinstance(finish, str):
            raise StreamFailure(
                Reason.PROTOCOL_ERROR,
                f"event {self._events}: finish_reason {clip(finish)} is not a string",
            )
        choice.finish = finish
        if finish in _COMPLETING:
            if finish == "stop" and choice.calls:
                self._book.deviation(
                    "C16", "finish_reason stop with tool calls", None, choice.number
                )
            for call in choice.calls:
                self._book.complete(call.slot)
            return
        if finish == "length":
            reason, detail = (
                Reason.TRUNCATED,
                "finish_reason length: the token limit cut the call off",
            )
        elif finish == "content_filter":
            reason, detail = Reason.FILTERED, "finish_reason content_filter"
        else:
            self._book.deviation("C33", f"finish_reason {finish!r}", None, choice.number)
            reason = Reason.STREAM_ERROR if finish == "error" else Reason.PROVIDER_FINISH
            detail = f"finish_reason {finish!r}"
        self._settle(choice, reason, detail)

    def _sentinel(self) -> None:
        self._done = True
        for choice in self._choices.values():
            if choice.finish is None:
                self._settle(
                    choice,
                    Reason.UNFINISHED,
                    "[DONE] arrived before the choice had a finish_reason",
                )

    def _stream_error(self, payload: Any) -> None:
        error = payload.get("error", payload) if isinstance(payload, dict) else payload
        raise StreamFailure(Reason.STREAM_ERROR, describe_error(error))

    def _settle(self, choice: _Choice, reason: Reason, detail: str) -> None:
        self._book.settle((call.slot for call in choice.calls), reason, detail)

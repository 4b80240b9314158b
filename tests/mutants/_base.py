"""A small assembler that keeps the implementation contract: the baseline every mutant breaks.

Each mutant in this package subclasses :class:`BaseAssembler` and overrides one hook to reproduce
one public bug, so the base must be right by default and easy to read. It is neither fast nor the
reference (``reference_impl`` is); on ordinary streams it gives the reference's lenient results.
It reads OpenAI Chat Completions streams (``chat.completion.chunk``, the legacy
``delta.function_call`` included).

Theory of operation. ``feed()`` turns bytes into text (``decode_chunk``: incremental UTF-8),
drops a leading BOM (``strip_bom``), cuts out complete lines (``split_lines``: CRLF, LF or a lone
CR, where a CR ending one piece and a LF starting the next are one line ending) and reads them
as WHATWG fields (``on_line``); a blank line dispatches the event (``on_event``). ``[DONE]`` goes
to ``on_done``, an error payload or ``event: error`` to ``on_error``, a chunk to ``on_chunk``,
which hands each choice to ``on_choice`` and each tool-call delta to ``on_tool_delta``. A delta
finds its call with ``route`` (by choice and ``tool_index``, by id when there is no index), sets
the call's id and name with ``set_identity`` (never concatenated) and appends its argument
fragment verbatim with ``append_arguments``. A finish reason (``on_finish``) completes the
choice's calls or rejects them; ``complete`` parses the text once (``parse_arguments``) and
checks it against the tool's schema (``matches_schema``). ``close()`` calls ``on_eof``; ``end``
rejects whatever is still open. A call becomes final once, and each ``feed()``/``close()``
returns the results made final by it, in (choice, index) order.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from jsonschema import Draft202012Validator

from callstream.reference import Limits, Reason, Tool

__all__ = ["CALLSTREAM", "BaseAssembler", "Call", "StreamFailure", "factory"]

CALLSTREAM: dict[str, Any] = {"profile": "lenient", "dialect": "openai-chat"}
"""What every assembler in this package declares: the lenient profile, everything exposed (a
mutant does not know it is broken)."""

_LINE_END = re.compile(r"\r\n|\r|\n")
_SURROGATE = re.compile("[\ud800-\udfff]")
_LEGACY = -1
"""The position of a choice's legacy ``delta.function_call`` (a tool-call index is never < 0)."""
_COMPLETING = frozenset({"tool_calls", "stop", "function_call"})
_REJECTING = {
    "length": Reason.TRUNCATED,
    "content_filter": Reason.FILTERED,
    "error": Reason.STREAM_ERROR,
}
"""What a finish reason that does not complete its calls makes of them (others: provider_finish)."""


class StreamFailure(Exception):
    """The stream can no longer be trusted: every call not yet final is rejected with ``reason``."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(str(reason))
        self.reason = reason


@dataclass(eq=False)
class Call:
    """One call being assembled: where it sits, who it is, and its argument text so far."""

    choice: int
    index: int
    """Position within its choice, in order of first appearance."""
    id: str | None = None
    name: str | None = None
    wire: int | None = None
    """The tool-call index the provider uses for it, once one was seen."""
    fragments: list[str] = field(default_factory=list)
    size: int = 0
    """UTF-8 bytes buffered."""
    final: bool = False

    @property
    def text(self) -> str:
        """The argument text so far: the fragments joined, with the halves of a surrogate pair
        that came escaped in separate fragments put back together (as a UTF-16 reader would)."""
        text = "".join(self.fragments)
        if _SURROGATE.search(text):
            text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        return text


class BaseAssembler:
    """Assembles the tool calls of one streamed response, correctly; see the module docstring."""

    def __init__(
        self, *, tools: Sequence[Tool] | None = None, limits: Limits | None = None
    ) -> None:
        self.tools = None if tools is None else {tool.name: tool for tool in tools}
        self.validators = {
            tool.name: Draft202012Validator(tool.parameters)
            for tool in tools or ()
            if tool.parameters is not None
        }
        self.limits = limits if limits is not None else Limits()
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.started = False
        """Some text has been decoded (so a BOM can only come first)."""
        self.after_cr = False
        """The last piece of text ended with CR: a LF starting the next one completes a CRLF."""
        self.pending_line = ""
        self.event_type = ""
        self.data_lines: list[str] = []
        self.data_size = 0
        self.calls: list[Call] = []
        self.positions: dict[tuple[int, int], Call] = {}
        """(choice, tool-call index) → the call there now."""
        self.by_id: dict[tuple[int, str], Call] = {}
        self.finish_reasons: dict[int, str] = {}
        self.ended = False
        """``[DONE]``, an error or a failure ended the stream: later events are ignored."""
        self.outbox: list[dict[str, Any]] = []

    # -- the contract -------------------------------------------------------------------------

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Feed bytes of the response body; returns the results they made final."""
        try:
            text = self.decode_chunk(data)
            if text and not self.started:
                self.started = True
                text = self.strip_bom(text)
            for line in self.split_lines(text):
                self.on_line(line)
            if len(self.pending_line) > self.limits.max_line_length:
                raise StreamFailure(Reason.TOO_LARGE)
        except StreamFailure as failure:
            self.end(failure.reason)
        return self.release()

    def close(self) -> list[dict[str, Any]]:
        """The connection ended: an unfinished event is discarded and open calls are settled."""
        self.on_eof()
        return self.release()

    # -- transport hooks (T1–T4) --------------------------------------------------------------

    def decode_chunk(self, data: bytes) -> str:
        """Bytes to text; an incomplete UTF-8 sequence waits for the next piece (T1)."""
        return self.decoder.decode(data)

    def strip_bom(self, text: str) -> str:
        """The stream's first text, without the one BOM that may lead it (T3)."""
        return text.removeprefix("\ufeff")

    def split_lines(self, text: str) -> list[str]:
        """The lines ``text`` completes; the unfinished rest waits in ``pending_line`` (T1, T2).

        A CR that ends a piece ends its line at once and sets ``after_cr``, so a LF that starts
        the next piece is the second half of a CRLF, not one more line ending.
        """
        if not text:
            return []
        if self.after_cr and text[0] == "\n":
            text = text[1:]
        self.after_cr = text.endswith("\r")
        lines = _LINE_END.split(self.pending_line + text)
        self.pending_line = lines.pop()
        return lines

    def on_line(self, line: str) -> None:
        """One line: blank dispatches the event; otherwise a field, split at the first colon, one
        leading space of the value dropped. Comments (``: ping``) and unknown fields are ignored."""
        if not line:
            self.dispatch()
            return
        if len(line) > self.limits.max_line_length:
            raise StreamFailure(Reason.TOO_LARGE)
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self.data_size += len(value) + (1 if self.data_lines else 0)
            if self.data_size > self.limits.max_event_size:
                raise StreamFailure(Reason.TOO_LARGE)
            self.data_lines.append(value)
        elif name == "event":
            self.event_type = value

    def dispatch(self) -> None:
        """A blank line: hand the event over if it has data (lines joined with LF), then reset."""
        lines, event = self.data_lines, self.event_type or "message"
        self.data_lines, self.data_size, self.event_type = [], 0, ""
        if lines:
            self.on_event(event, "\n".join(lines))

    def on_event(self, event: str, data: str) -> None:
        """One event: ``[DONE]``, an error (payload or ``event: error``), or a chunk (T3, T4)."""
        if self.ended or not data:  # an empty ``data:`` carries nothing, and is not JSON
            return
        if data.strip() == "[DONE]":
            self.on_done()
            return
        try:
            payload = json.loads(data)
        except (ValueError, RecursionError):
            if event != "error":
                raise StreamFailure(Reason.PROTOCOL_ERROR) from None
            payload = data
        if event == "error" or (
            isinstance(payload, dict) and (payload.get("error") or payload.get("object") == "error")
        ):
            self.on_error(payload)
        else:
            self.on_chunk(_object(payload))

    # -- dialect hooks (A1–A7, C1–C3) ---------------------------------------------------------

    def on_chunk(self, payload: dict[str, Any]) -> None:
        """A ``chat.completion.chunk``: each of its choices, of which there may be none (Azure's
        first chunk, the usage chunk)."""
        for raw in _array(payload.get("choices")):
            self.on_choice(_object(raw))

    def on_choice(self, raw: dict[str, Any]) -> None:
        """One choice of a chunk: its tool-call deltas (and a legacy ``function_call``, read as
        a call without id or index), then its finish reason. Whatever comes for a choice after its
        finish reason is ignored."""
        number = raw.get("index", 0)
        if type(number) is not int or number < 0:
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        if number in self.finish_reasons:
            return
        delta = _object(raw.get("delta"))
        for entry in _array(delta.get("tool_calls")):
            self.on_tool_delta(number, _object(entry))
        legacy = delta.get("function_call")
        if legacy:
            self.on_tool_delta(number, {"index": _LEGACY, "function": _object(legacy)})
        finish = raw.get("finish_reason")
        if finish:
            if not isinstance(finish, str):
                raise StreamFailure(Reason.PROTOCOL_ERROR)
            self.on_finish(number, finish)

    def on_tool_delta(self, choice: int, entry: dict[str, Any]) -> None:
        """One ``tool_calls[]`` entry: find its call, set its identity, append its fragment."""
        function = _object(entry.get("function"))
        call_id = _call_id(entry.get("id"))
        name = function.get("name") or None
        call = self.route(choice, self.tool_index(entry), call_id, name)
        if call is None:
            return
        if call_id is not None and call.id is None:
            self.by_id.setdefault((choice, call_id), call)
        self.set_identity(call, "id", call_id)
        self.set_identity(call, "name", name)
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)  # sent as a JSON value (C32)
        self.append_arguments(call, arguments)

    def tool_index(self, entry: dict[str, Any]) -> int | None:
        """The entry's ``index``; None when the provider sends none (Gemini's OpenAI endpoint).
        An index sent as a string of digits is read as the number."""
        index = entry.get("index")
        if index is None or type(index) is int:
            return index
        if isinstance(index, str) and index.isascii() and index.isdigit():
            return int(index)
        raise StreamFailure(Reason.PROTOCOL_ERROR)

    def route(
        self, choice: int, index: int | None, call_id: str | None, name: str | None
    ) -> Call | None:
        """The call a delta belongs to (A5): the one at (choice, index), or the one with its id
        when there is no index. A new id *with* a name at an index in use starts a new call there
        (Ollama puts every call at index 0); a new id alone continues the call (LM Studio). A bare
        fragment at a new index continues the one call whose header came without an index."""
        if index is None:
            return self._route_without_index(choice, call_id, name)
        call = self.positions.get((choice, index))
        if call is None:
            unplaced = [other for other in self.calls_of(choice) if other.wire is None]
            bare = call_id is None and name is None
            call = unplaced[0] if bare and len(unplaced) == 1 else self.open(choice)
        elif call_id is not None and name is not None and call.id not in (None, call_id):
            call = self.open(choice)
        call.wire = index
        self.positions[choice, index] = call
        return call

    def _route_without_index(
        self, choice: int, call_id: str | None, name: str | None
    ) -> Call | None:
        if call_id is not None and (choice, call_id) in self.by_id:
            return self.by_id[choice, call_id]
        calls = self.calls_of(choice)
        if call_id is not None or name is not None or not calls:
            return self.open(choice)
        if len(calls) == 1:
            return calls[0]
        for call in calls:  # a bare fragment, several calls: nobody can tell whose it is
            self.reject(call, Reason.PROTOCOL_ERROR)
        return None

    def set_identity(self, call: Call, field: Literal["id", "name"], value: str | None) -> None:
        """Give the call its id or name (A3, A4): the first value stays, a repeat changes nothing
        and an absent value erases nothing. A different name for the same call leaves no way to
        tell which tool was meant: the call is rejected."""
        if value is None:
            return
        current = getattr(call, field)
        if current is None:
            setattr(call, field, value)
        elif field == "name" and value != current:
            self.reject(call, Reason.PROTOCOL_ERROR)

    def append_arguments(self, call: Call, fragment: str | None) -> None:
        """Append a fragment verbatim (A2); empty ones are no-ops (A4). Past the size limit the
        call keeps what fits and is rejected (V5)."""
        if call.final or not fragment:
            return
        encoded = fragment.encode("utf-8", "surrogatepass")
        room = self.limits.max_argument_bytes - call.size
        if len(encoded) > room:
            call.fragments.append(encoded[:room].decode("utf-8", "ignore"))
            self.reject(call, Reason.TOO_LARGE)
            return
        call.fragments.append(fragment)
        call.size += len(encoded)

    def on_finish(self, choice: int, finish_reason: str) -> None:
        """The choice's finish reason decides its calls (C1, C3): ``tool_calls``, ``stop`` and
        ``function_call`` complete them; any other value rejects them."""
        self.finish_reasons[choice] = finish_reason
        for call in self.calls_of(choice):
            if finish_reason in _COMPLETING:
                self.complete(call)
            else:
                self.reject(call, _REJECTING.get(finish_reason, Reason.PROVIDER_FINISH))

    def on_error(self, payload: Any) -> None:
        """An error payload or ``event: error``: the stream failed (C3, T4)."""
        raise StreamFailure(Reason.STREAM_ERROR)

    def on_done(self) -> None:
        """``data: [DONE]``: calls whose choice never finished are unfinished (C2)."""
        self.end(Reason.UNFINISHED)

    def on_eof(self) -> None:
        """The connection closed: calls still open were interrupted (C2, C3)."""
        self.end(Reason.INTERRUPTED)

    def end(self, reason: Reason) -> None:
        """The stream is over: every call not yet final is rejected with ``reason``."""
        self.ended = True
        for call in self.calls:
            self.reject(call, reason)

    # -- calls (V1–V5) ------------------------------------------------------------------------

    def open(self, choice: int) -> Call:
        """A new call at the next position of ``choice``; too many calls fail the stream (V5)."""
        if len(self.calls) >= self.limits.max_calls:
            raise StreamFailure(Reason.TOO_LARGE)
        call = Call(choice, len(self.calls_of(choice)))
        self.calls.append(call)
        return call

    def calls_of(self, choice: int) -> list[Call]:
        """The calls of ``choice``, in order of first appearance."""
        return [call for call in self.calls if call.choice == choice]

    def complete(self, call: Call) -> None:
        """The call is over: check name, tool, JSON and schema (V1–V4) and make it final. A call
        without an id gets a synthesised one, as the lenient profile allows."""
        if call.final:
            return
        if call.name is None:
            self.reject(call, Reason.MISSING_NAME)
            return
        tool = None if self.tools is None else self.tools.get(call.name)
        if self.tools is not None and tool is None:
            self.reject(call, Reason.UNKNOWN_TOOL)
            return
        synthetic = call.id is None
        if synthetic:
            call.id = f"call{call.choice:02d}{call.index:03d}"
        value = self.parse_arguments(call, tool)
        if value is None:
            self.reject(call, Reason.MALFORMED_JSON)
        elif not self.matches_schema(call.name, value):
            self.reject(call, Reason.SCHEMA_VIOLATION)
        else:
            self._make_final(call, value, None, synthetic)

    def parse_arguments(self, call: Call, tool: Tool | None) -> dict[str, Any] | None:
        """The complete text parsed once (V1), or None when it is not a JSON object. A
        parameterless tool whose arguments never came is called with ``{}``."""
        if not call.text:
            return {} if tool is not None and tool.takes_no_parameters else None
        try:
            value = json.loads(call.text, parse_constant=_not_json)
        except (ValueError, RecursionError):
            return None
        return value if isinstance(value, dict) else None

    def matches_schema(self, name: str, value: dict[str, Any]) -> bool:
        """True when ``value`` is valid against the tool's JSON Schema (V2)."""
        validator = self.validators.get(name)
        return validator is None or validator.is_valid(value)

    def reject(self, call: Call, reason: Reason) -> None:
        """Make the call final as rejected with ``reason``, unless it already is final."""
        if not call.final:
            self._make_final(call, None, reason)

    def release(self) -> list[dict[str, Any]]:
        """The results made final since the last release, in (choice, index) order (E4)."""
        released = sorted(self.outbox, key=lambda result: (result["choice"], result["index"]))
        self.outbox.clear()
        return released

    def _make_final(
        self, call: Call, value: Any, reason: Reason | None, synthetic: bool = False
    ) -> None:
        call.final = True
        result: dict[str, Any] = {
            "choice": call.choice,
            "index": call.index,
            "id": call.id,
            "name": call.name,
            "arguments_text": call.text,
            "arguments": value,
            "status": "ready" if reason is None else "rejected",
            "reason": None if reason is None else str(reason),
        }
        if synthetic:
            result["synthetic_id"] = True
        self.outbox.append(result)


factory = BaseAssembler


def _object(value: Any) -> dict[str, Any]:
    """``value`` as a JSON object; absent is empty, anything else breaks the dialect."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise StreamFailure(Reason.PROTOCOL_ERROR)
    return value


def _array(value: Any) -> list[Any]:
    """``value`` as a JSON array; absent or empty is empty, anything else breaks the dialect."""
    if not value:
        return []
    if not isinstance(value, list):
        raise StreamFailure(Reason.PROTOCOL_ERROR)
    return value


def _call_id(value: Any) -> str | None:
    """A call id as a string; a number is stringified (Poolside), anything else is no id."""
    if type(value) is int:
        return str(value)
    return value if isinstance(value, str) and value else None


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")

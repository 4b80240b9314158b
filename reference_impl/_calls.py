"""Dialect-neutral call state: buffers, limits, completion and validation.

A dialect decides *which* call a piece of the stream belongs to and *when* a call is over; this
module decides what a call becomes. It knows nothing of any provider's wire format.

Theory of operation. A :class:`CallSlot` is opened per call in order of first appearance within
its choice. Argument fragments are appended to a list and joined once, when the call completes
(A1, A2): no re-parsing per fragment, linear in the stream. A slot becomes final exactly once,
either completed (identity, JSON and schema checked: V1–V4) or rejected with a reason; from then
on it ignores further input, and a rejected slot drops its buffer past the size limit so memory
stays bounded (V5). Final results go to an outbox the assembler drains after each ``feed()``.

A slot is of one kind: a *function* call, whose text is JSON arguments checked against the
tool's schema, or a *custom* call, whose text is free input checked against the tool's format
(``_custom``) and never parsed. A call of one kind naming a tool of the other names no offered
tool (V3).
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ._custom import InputFormat, input_format
from ._model import CallKind, CallResult, Limits, Reason, Status, Tool
from ._quirks import FindingLog
from ._validate import (
    ArgumentsError,
    closing_brackets,
    parse_arguments,
    remembered_problem,
    repeated_unit,
    validator_for,
)

__all__ = ["CallBook", "CallSlot", "StreamFailure"]


class StreamFailure(Exception):
    """Raised inside the assembler when the whole stream can no longer be trusted; every call
    not yet final is rejected with ``reason``. Never escapes the Assembler."""

    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class CallSlot:
    """One call being assembled."""

    __slots__ = (
        "_fragments",
        "_packed",
        "choice",
        "extras",
        "final",
        "id",
        "index",
        "kind",
        "name",
        "size",
        "snapshot",
        "synthetic_id",
        "wire_index",
    )

    def __init__(self, choice: int, index: int) -> None:
        self.choice = choice
        self.index = index
        self.wire_index: int | None = None  # the provider's tool-call index, if it sent one
        self.kind: CallKind = "function"
        self.id: str | None = None
        self.synthetic_id = False  # the id was made up (lenient, V4): said on every result
        self.name: str | None = None
        self._fragments: list[str] = []
        self._packed = 0  # leading entries of _fragments that are already joined batches
        self.size = 0  # UTF-8 bytes buffered
        self.snapshot = False  # a snapshot was read, C10 recorded (opt-in)
        self.final = False
        self.extras: Mapping[str, Any] | None = None

    def add(self, fragment: str) -> None:
        """Buffer a fragment. Every ``_PACK`` small fragments are joined into one string (never
        the whole buffer again), so a call made of a million tokens holds a few thousand
        strings, not a million, and the work stays linear."""
        fragments = self._fragments
        fragments.append(fragment)
        if len(fragments) - self._packed >= _PACK:
            fragments[self._packed :] = [_join(fragments[self._packed :])]
            self._packed += 1

    def clear(self) -> None:
        """Forget the text (a cumulative snapshot replaces it)."""
        self._fragments.clear()
        self._packed = 0

    @property
    def text(self) -> str:
        """The argument text so far."""
        if len(self._fragments) > 1:
            self._fragments[:] = [_join(self._fragments)]
            self._packed = 1
        return self._fragments[0] if self._fragments else ""

    @property
    def received_arguments(self) -> bool:
        """True once any non-empty fragment arrived."""
        return bool(self._fragments)


class CallBook:
    """Every call of one stream, and what each becomes."""

    def __init__(
        self,
        tools: Sequence[Tool] | None,
        limits: Limits,
        findings: FindingLog,
        *,
        strict: bool,
        snapshots: bool = False,
        repair_json: bool = False,
    ) -> None:
        self._tools = None if tools is None else {tool.name: tool for tool in tools}
        self._validators = (
            None
            if tools is None
            else {
                tool.name: validator_for(tool.name, tool.parameters)
                for tool in tools
                if tool.kind == "function"
            }
        )
        self._formats: dict[str, InputFormat] = {
            tool.name: input_format(tool.name, tool.format)
            for tool in tools or ()
            if tool.kind == "custom"
        }
        self.response_id: str | None = None
        """The response's id, when the dialect saw one: synthesised ids are derived from it."""
        self.limits = limits
        self.findings = findings
        self.strict = strict
        self.snapshots = snapshots
        self.repair_json = repair_json
        self._slots: list[CallSlot] = []
        self._per_choice: dict[int, int] = {}
        self._ids: set[str] = set()
        self.outbox: list[CallResult] = []

    # -- opening and filling ------------------------------------------------------------------

    def open(self, choice: int) -> CallSlot:
        """A new call, at the next position of ``choice``."""
        if len(self._slots) >= self.limits.max_calls:
            raise StreamFailure(
                Reason.TOO_LARGE, f"more than {self.limits.max_calls} calls in one stream"
            )
        index = self._per_choice.get(choice, 0)
        self._per_choice[choice] = index + 1
        slot = CallSlot(choice, index)
        self._slots.append(slot)
        return slot

    def set_id(self, slot: CallSlot, call_id: str) -> None:
        """Give ``slot`` its id (a dialect has already decided this is no conflict)."""
        slot.id = call_id
        self._ids.add(call_id)

    def append(self, slot: CallSlot, fragment: str) -> None:
        """Append an argument fragment verbatim (A2); past the size limit, reject (V5)."""
        if slot.final or not fragment:
            return
        if self.snapshots and slot.received_arguments:
            # On a route that opts in, every fragment after the first is a snapshot: one that
            # extends the text so far replaces it, one that does not rejects the call (C10).
            current = slot.text
            if not fragment.startswith(current):
                self.reject(
                    slot,
                    Reason.MALFORMED_JSON,
                    "cumulative snapshot does not extend the previous one",
                )
                return
            if not slot.snapshot:
                slot.snapshot = True
                self.findings.met(
                    "snapshots",
                    "arguments sent as cumulative snapshots",
                    slot.choice,
                    slot.index,
                )
            slot.clear()
            slot.size = 0
        size = _utf8_len(fragment)
        room = self.limits.max_argument_bytes - slot.size
        if size > room:
            # Keep what fits, cut at a character boundary, and stop buffering.
            slot.add(fragment.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore"))
            slot.size = self.limits.max_argument_bytes
            self.reject(
                slot, Reason.TOO_LARGE, f"arguments passed {self.limits.max_argument_bytes} bytes"
            )
            return
        slot.add(fragment)
        slot.size += size

    # -- becoming final -----------------------------------------------------------------------

    def reject(self, slot: CallSlot, reason: Reason, detail: str) -> None:
        """Make ``slot`` final as rejected (no-op if it already is final)."""
        if slot.final:
            return
        slot.final = True
        self.outbox.append(self._result(slot, Status.REJECTED, None, reason, detail))

    def complete(self, slot: CallSlot) -> None:
        """The dialect says the call is over: check it and make it final (V1–V4)."""
        if slot.final:
            return
        if slot.name is None:
            self.reject(slot, Reason.MISSING_NAME, "the call never received a name")
            return
        tool = None if self._tools is None else self._tools.get(slot.name)
        if self._tools is not None and tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            self.reject(
                slot, Reason.UNKNOWN_TOOL, f"{slot.name!r} is not an exposed tool ({known})"
            )
            return
        if tool is not None and tool.kind != slot.kind:
            detail = f"{slot.name!r} is a {tool.kind} tool, but this is a {slot.kind} call"
            self.reject(slot, Reason.UNKNOWN_TOOL, detail)
            return
        if slot.id is None:
            if self.strict:
                self.reject(slot, Reason.MISSING_ID, "the call never received an id")
                return
            self.set_id(slot, self._synthetic_id(slot))
            slot.synthetic_id = True
            self.findings.met(
                "synthetic_id", "call id missing: one was synthesised", slot.choice, slot.index
            )
        if slot.kind == "custom":
            self._complete_custom(slot)
            return
        value = self._parse(slot, tool)
        if value is _REJECTED:
            return
        if self._validators is not None:
            validator = self._validators.get(slot.name)
            if validator is not None:
                problem = remembered_problem(validator, slot.text, value)
                if problem is not None:
                    self.reject(slot, problem.reason, problem.detail)
                    return
        slot.final = True
        self.outbox.append(self._result(slot, Status.READY, value, None, None))

    def _complete_custom(self, slot: CallSlot) -> None:
        """A custom call's input is its value, verbatim; its tool's format decides (V2)."""
        text = slot.text
        found = self._formats.get(slot.name or "")
        check = None if found is None else found.check(text)
        if check is not None and check.problem is not None:
            self.reject(slot, Reason.SCHEMA_VIOLATION, check.problem)
            return
        slot.final = True
        result = self._result(slot, Status.READY, text, None, None)
        if check is not None and check.not_validated is not None:
            result = replace(result, not_validated=check.not_validated)
        self.outbox.append(result)

    def _parse(self, slot: CallSlot, tool: Tool | None) -> Any:
        if not slot.received_arguments:
            if tool is not None and tool.takes_no_parameters:
                self.findings.met(
                    "empty_parameterless",
                    "no arguments for a parameterless tool: completed as {}",
                    slot.choice,
                    slot.index,
                )
                return {}
            self.reject(slot, Reason.MALFORMED_JSON, "no arguments arrived")
            return _REJECTED
        text = slot.text
        try:
            value = parse_arguments(text)
        except ArgumentsError as exc:
            value = self._recover(slot, text)
            if value is _REJECTED:
                self.reject(slot, Reason.MALFORMED_JSON, f"arguments are not JSON: {exc}")
                return _REJECTED
        if not isinstance(value, dict):
            self.reject(
                slot,
                Reason.MALFORMED_JSON,
                f"arguments are a JSON {_json_type(value)}, not an object",
            )
            return _REJECTED
        return value

    def _recover(self, slot: CallSlot, text: str) -> Any:
        """Recognise the repairable damage of C11 and C12; repair it only when asked to."""
        repeated = repeated_unit(text)
        if repeated is not None:
            value, times = repeated
            self.findings.met(
                "repeated_arguments",
                f"arguments are one JSON value repeated {times} times",
                slot.choice,
                slot.index,
            )
            return value if self.repair_json else _REJECTED
        if not self.repair_json:
            return _REJECTED
        closers = closing_brackets(text)
        if closers is None:
            return _REJECTED
        try:
            value = parse_arguments(text + closers)
        except ArgumentsError:
            return _REJECTED
        self.findings.met(
            "repaired_brackets",
            f"arguments repaired by appending {closers!r}",
            slot.choice,
            slot.index,
        )
        return value

    def settle(
        self, slots: Iterator[CallSlot] | Sequence[CallSlot], reason: Reason, detail: str
    ) -> None:
        """Reject every slot among ``slots`` that is not final yet."""
        for slot in slots:
            self.reject(slot, reason, detail)

    def fail(self, reason: Reason, detail: str) -> None:
        """The stream cannot be trusted any more: reject every call not yet final."""
        self.settle(self._slots, reason, detail)

    def deviation(
        self, quirk: str, detail: str, slot: CallSlot | None, choice: int | None = None
    ) -> None:
        """Record a quirk; under the strict profile, reject the call if the table says so."""
        where_choice = slot.choice if slot is not None else choice
        self.findings.record(quirk, detail, where_choice, None if slot is None else slot.index)
        row = self.findings.quirk(quirk)
        if self.strict and row.strict == "reject" and slot is not None:
            self.reject(slot, row.reason, f"{quirk}: {detail} (rejected by the strict profile)")

    def shared_id(self, first: CallSlot, second: CallSlot) -> None:
        """``second`` carries the id of ``first``, a distinct call of the same choice (quirk
        C34). A tool result names its call by id alone, so under the strict profile neither call
        can be answered unambiguously: both are rejected. The lenient profile keeps both; their
        idempotency keys still differ, by position."""
        detail = (
            f"id {second.id!r} already names call {first.index} "
            f"(wire index {first.wire_index}): two distinct calls share it"
        )
        self.findings.record("C34", detail, second.choice, second.index)
        if self.strict:
            for slot in (first, second):
                self.reject(slot, Reason.DUPLICATE_ID, f"C34: {detail}")

    # -- reading ------------------------------------------------------------------------------

    def open_slots(self) -> list[CallSlot]:
        """Calls not final yet, in order of first appearance."""
        return [slot for slot in self._slots if not slot.final]

    def drain(self) -> list[CallResult]:
        """Results made final since the last drain, in (choice, index) order (E4)."""
        if not self.outbox:
            return []
        out = sorted(self.outbox, key=lambda result: (result.choice, result.index))
        self.outbox.clear()
        return out

    def _result(
        self,
        slot: CallSlot,
        status: Status,
        value: Any,
        reason: Reason | None,
        detail: str | None,
    ) -> CallResult:
        return CallResult(
            choice=slot.choice,
            index=slot.index,
            id=slot.id,
            name=slot.name,
            arguments_text=slot.text,
            arguments=value,
            status=status,
            reason=reason,
            detail=detail,
            synthetic_id=slot.synthetic_id,
            extras=slot.extras,
            kind=slot.kind,
            wire_index=slot.wire_index,
        )

    def _synthetic_id(self, slot: CallSlot) -> str:
        """Nine alphanumerics (Mistral accepts them back), unique beyond this stream (V4, E3).

        With a response id, the id is derived from it, the call's position, name and text: the
        same response assembled again (however its bytes were split) gets the same ids, and
        another response gets others. Without one, the id is random, since nothing else tells
        two responses apart. Either way it never equals an id the stream used.
        """
        origin = self.response_id or secrets.token_hex(16)
        parts = (origin, str(slot.choice), str(slot.index), slot.name or "", slot.text)
        material = "\0".join(parts)
        candidate, attempt = _base62(material), 0
        while candidate in self._ids:
            attempt += 1
            candidate = _base62(f"{material}\0{attempt}")
        return candidate


_REJECTED: Any = object()
_PACK = 256
_SURROGATE = re.compile("[\ud800-\udfff]")


def _join(fragments: list[str]) -> str:
    text = "".join(fragments)
    if not text.isascii() and _SURROGATE.search(text):
        # Halves of a surrogate pair sent as escapes in separate chunks arrive as two lone
        # surrogates; put each pair back together, as a UTF-16 reader would.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


def _base62(material: str, length: int = 9) -> str:
    number = int.from_bytes(
        hashlib.sha256(material.encode("utf-8", "surrogatepass")).digest()[:8], "big"
    )
    digits = []
    for _ in range(length):
        number, digit = divmod(number, 62)
        digits.append(_ALPHANUMERIC[digit])
    return "".join(digits)


_ALPHANUMERIC = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"


def canonical_json(value: Any) -> str:
    """A stable serialisation of a JSON value, for keys and comparisons."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

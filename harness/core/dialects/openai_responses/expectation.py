"""What a planned ``openai-responses`` stream must become: the expectation derived from the plan
and the events it is sent as, never from the reference assembler (docs/rules.md D40–D59).

A call whose ``output_item.done`` (status ``completed``) is dispatched is complete at that
boundary (C5), released from its end, whatever follows. Every other call is decided by how the
response ends: ``response.completed`` completes it; ``response.incomplete`` rejects it
``truncated`` (``max_output_tokens``) or ``filtered``; ``response.failed`` or an ``error`` event,
``stream_error``; no terminal event, ``interrupted``; ``response.done`` (quirk R5) completes it
under the lenient profile, and the strict one rejects it ``protocol_error``. So is a call whose
``.done`` and ``output_item.done`` never come (the oddity ``no_item_done``, D47). The strict profile
rejects a call its quirks touch where the quirk table says so (R1, R2, R8). Deltas sent as
cumulative snapshots differ from the text ``.done`` restates: recorded (R1), the restatement is
the call's text leniently (D41). A call whose ``output_item.done`` carries another ``call_id``
than its ``output_item.added`` is rejected ``protocol_error`` there, in both profiles (A3, E2:
the call's identity changed). A completed call is judged by
:class:`~callstream.core.completion.Completer`, as in every dialect.
"""

from __future__ import annotations

import itertools
from typing import Any

from callstream.reference import QUIRKS, Limits

from ....errors import PlanError
from ....rules import OPENAI_RESPONSES_QUIRKS, QuirkId, quirk_code
from ...completion import Completer, Deviation
from ...spec import CallPlan, Expected, ExpectedCall, StreamSpec
from ...wire import Rendered
from .events import (
    FAILING,
    ODDITIES,
    check_plan,
    failure_at,
    output_indices,
    sequence_gap_at,
    terminal_kind,
)

__all__ = ["expect_openai_responses"]

_QUIRK = {quirk_code(quirk): quirk for quirk in OPENAI_RESPONSES_QUIRKS}
_NO_ITEM_ID = ("no_item_id", "no_event_item_id", "empty_item_id")
"""The oddities that send the first call without an item id where its events route by one: none
in the item or the events, none in the events, or ``""`` (no id either, A4): routed by
``output_index``, R8 recorded (D40)."""
"""openai-responses' quirk ids by code: ``_QUIRK["R1"]`` is ``openai-responses/R1``."""
_DEVIATIONS: dict[Deviation, QuirkId] = {
    "synthetic_id": _QUIRK["R9"],
    "empty_parameterless": _QUIRK["R10"],
    "repeated_arguments": _QUIRK["R11"],
}
_ENDED = {
    "response.incomplete": None,  # by the incomplete reason
    "response.failed": "stream_error",
    "error": "stream_error",
    None: "interrupted",
}


def expect_openai_responses(spec: StreamSpec, rendered: Rendered, profile: str) -> Expected:
    """The expectation for the planned ``spec``, sent as ``rendered``, under ``profile``."""
    check_plan(spec)
    if len(spec.calls) > spec.limits.max_calls:
        raise PlanError("a plan past max_calls fails the whole stream")
    strict = profile == "strict"
    findings: set[QuirkId] = set()
    tools = {tool.name: tool for tool in spec.tools}
    completer = Completer(tools, strict=strict, met=lambda met: findings.add(_DEVIATIONS[met]))
    terminal = terminal_kind(spec)
    events = rendered.events
    cut = spec.ending.cut and bool(events)
    if cut and events[-1].finishes:
        terminal = None  # the terminal event itself was cut off
    if cut:
        findings.add(_QUIRK["T9"])
    if spec.transport.empty_data:
        findings.add(_QUIRK["T6"])
    if spec.transport.invalid_utf8:
        findings.add(_QUIRK["T11"])
    if spec.ending.error == "nested":
        findings.add(_QUIRK["R7"])
    if terminal == "response.done":
        findings.add(_QUIRK["R5"])
    # A late delta is sent for a call only: with none, a second terminal alone comes after.
    after = set(spec.ending.after_finish) & (
        {"duplicate_finish", "late_delta"} if spec.calls else {"duplicate_finish"}
    )
    if after and terminal is not None and not cut:
        findings.add(_QUIRK["R5"])
    _check_oddity(spec, terminal)
    _check_snapshots(spec, terminal)
    gap = None
    if spec.oddity in ("sequence_gap", "sequence_repeat"):
        findings.add(_QUIRK["R4"])
        gap = sequence_gap_at(spec, events)
    if spec.oddity == "no_created":
        findings.add(_QUIRK["R12"])
    if spec.oddity == "done_line":
        findings.add(_QUIRK["R5"])  # [DONE] is no Responses event: recorded and ignored (D49)
    if spec.oddity == "event_mismatch" and not spec.transport.unnamed:
        findings.add(_QUIRK["T8"])
    if spec.oddity in _NO_ITEM_ID:
        findings.add(_QUIRK["R8"])  # routed by output_index (D40)
    # An item added twice, or an event that is no Responses event, fails the stream (A5, T3, T4).
    failure = failure_at(spec, events)
    calls = []
    indices = output_indices(spec)
    for number, plan in enumerate(spec.calls):
        rejected = _quirks(plan, number, indices, spec.noise.content is not None, findings)
        if number == 0 and spec.oddity in _NO_ITEM_ID:
            rejected = rejected or "R8"
        stops = failure if failure is not None else gap if strict else None
        read = stops is None or _bounded_before(rendered, number, stops)
        if _restated_otherwise(spec, plan) and read and not (strict and rejected is not None):
            # Its ``.done`` is read while the call is open (the strict profile refuses it at an
            # earlier quirk), and restates another text than the deltas carried (D41).
            findings.add(_QUIRK["R1"])
            rejected = rejected or "R1"
        base: dict[str, Any] = {
            "index": number,
            "name": plan.name,
            "arguments_text": plan.arguments,
        }
        if plan.id is not None and plan.id_policy in ("once", "changing"):
            base["id"] = plan.id  # a changed call_id comes too late to be the call's
        if indices[number] != number:
            base["wire_index"] = indices[number]
        if failure is not None and not _bounded_before(rendered, number, failure):
            base.pop("arguments_text")
            calls.append(ExpectedCall("rejected", "protocol_error", **base))
            continue
        if strict and gap is not None and not _bounded_before(rendered, number, gap):
            # Strict fails the stream at the gap: what no boundary completed before it (D51).
            base.pop("arguments_text")
            calls.append(ExpectedCall("rejected", "protocol_error", **base))
            continue
        restated = number == 0 and spec.oddity == "restated_otherwise"
        recorded = len(findings)  # findings only grow: a longer set is something recorded
        call = _call(spec, plan, number, base, rendered, terminal, cut, strict, rejected, completer)
        if restated:
            # Its output_item.done restates another text than its .done: refused there, in both
            # profiles (D42). Only a call that would be ready, with nothing recorded at its
            # completion, shows nothing but that.
            if call.status != "ready" or len(findings) != recorded:
                raise PlanError("restated_otherwise needs a first call that would be ready")
            base.pop("arguments_text")
            call = ExpectedCall("rejected", "protocol_error", **base)
        calls.append(call)
    return Expected(tuple(calls), frozenset(findings))


def _bounded_before(rendered: Rendered, number: int, at: int | None) -> bool:
    """Whether call ``number``'s boundary is among the events before event ``at``."""
    return any(number in event.boundaries for event in rendered.events[:at])


def _check_oddity(spec: StreamSpec, terminal: str | None) -> None:
    """Refuse an oddity the dialect does not send, or one the stream cannot show."""
    oddity, ending = spec.oddity, spec.ending
    if oddity is None:
        return
    if oddity not in ODDITIES:
        raise PlanError(f"openai-responses sends no oddity {oddity!r}")
    plain_end = terminal in ("response.completed", "response.incomplete") and not ending.cut
    if oddity == "done_line" and not plain_end:
        raise PlanError("done_line needs a response.completed or response.incomplete that arrives")
    if oddity == "no_created" and spec.transport.empty_data:
        raise PlanError("no_created after an empty event: the stream opens with neither")
    if oddity == "late_name" and (
        not spec.calls
        or (len(spec.calls) == 1 and terminal in ("response.failed", "error"))
        or spec.limits != Limits()
        or spec.calls[0].index is not None
        or spec.calls[0].header_arguments
        or spec.calls[0].id_policy != "once"
    ):
        # The name comes with the item's .done and output_item.done: a call an error cuts off
        # before them, or that a limit or the strict profile rejects first, never receives it.
        raise PlanError("late_name needs a first call item, free of quirks, that is done")
    if oddity in ("sequence_gap", "sequence_repeat") and not (
        spec.calls
        and not ending.cut
        and terminal != "response.done"
        and ending.error != "nested"
        and not ending.after_finish
        and spec.limits == Limits()
        and all(
            plan.index is None and not plan.header_arguments and plan.id_policy == "once"
            for plan in spec.calls
        )
    ):
        # The strict profile stops reading at the gap: what would be recorded after it is not.
        raise PlanError("sequence_gap needs calls free of quirks and a plain ending")
    if oddity in FAILING and not (
        spec.calls
        and not ending.cut
        and terminal != "response.done"
        and ending.error != "nested"
        and not ending.after_finish
    ):
        # The stream fails at the event: what would be recorded after it is not.
        raise PlanError(f"{oddity} needs calls and a plain ending")
    if oddity == "restated_otherwise" and not (
        spec.calls
        and terminal in ("response.completed", "response.done")
        and not ending.cut
        and spec.limits == Limits()
        and not spec.calls[0].snapshots
        and not spec.calls[0].header_arguments
        and spec.calls[0].id_policy == "once"
        and spec.calls[0].name is not None
    ):
        # Both restatements must arrive while the call is open, and nothing else be wrong
        # with it: no quirk the strict profile rejects it for, an id and a name of its own.
        raise PlanError("restated_otherwise needs a plain first call and an ending that closes it")
    if oddity == "no_event_item_id" and not (spec.calls and spec.calls[0].arguments):
        # Only its deltas and .done go without item_id: it needs one (arguments), that arrives.
        raise PlanError("no_event_item_id needs a first call that sends a delta")
    if oddity == "no_event_item_id" and ending.cut:
        raise PlanError("no_event_item_id and a cut stream: the only such delta may be cut")
    if oddity == "no_item_done" and not (
        spec.calls
        and terminal in ("response.completed", "response.done", None)
        and not ending.cut
        and not spec.calls[-1].snapshots
    ):
        # Where the ending cuts the last call off, it has no .done to leave out; snapshots
        # need the .done that restates their text; a cut could fall inside its last delta.
        raise PlanError("no_item_done needs a last call that an arriving ending would close")
    if oddity in _NO_ITEM_ID:
        indices = output_indices(spec)
        taken = [*([0] if spec.noise.content is not None else []), *indices[1:]]
        if not spec.calls or indices[0] in taken:
            # Routed by output_index, the item must be the only one at its index.
            raise PlanError(f"{oddity} needs a first call alone at its output_index")


def _check_snapshots(spec: StreamSpec, terminal: str | None) -> None:
    """Refuse cumulative snapshots where a call's ``.done`` might not restate its text: only an
    ending that finishes every call, under no size limit (the snapshots are longer than the
    text), without arguments in ``output_item.added`` (R2)."""
    if not any(plan.snapshots for plan in spec.calls):
        return
    if terminal not in ("response.completed", "response.done") or spec.limits != Limits():
        raise PlanError("snapshots need an ending that finishes every call, and no limits")
    if any(plan.header_arguments for plan in spec.calls):
        raise PlanError("snapshots and arguments in output_item.added are not drawn together")


def _restated_otherwise(spec: StreamSpec, plan: CallPlan) -> bool:
    """Whether the call's deltas, sent as cumulative snapshots, carry another text than the
    one ``.done`` restates (R1)."""
    if not plan.snapshots or spec.schedule == "whole":
        return False
    return "".join(itertools.accumulate(plan.fragments)) != plan.arguments


def _quirks(
    plan: CallPlan, number: int, indices: list[int], message: bool, findings: set[QuirkId]
) -> str | None:
    """Record the call's quirks; the one the strict profile rejects it for, if any. A message
    item before the calls holds output_index 0."""
    rejected = None
    if indices[number] in [*([0] if message else []), *indices[:number]]:
        findings.add(_QUIRK["R8"])
        rejected = "R8"
    if plan.header_arguments and plan.arguments:
        findings.add(_QUIRK["R2"])
        rejected = rejected or "R2"
    return rejected


def _call(
    spec: StreamSpec,
    plan: CallPlan,
    number: int,
    base: dict[str, Any],
    rendered: Rendered,
    terminal: str | None,
    cut: bool,
    strict: bool,
    rejected: str | None,
    completer: Completer,
) -> ExpectedCall:
    if rejected is not None and strict and QUIRKS[_QUIRK[rejected]].strict == "reject":
        base.pop("arguments_text")
        return ExpectedCall("rejected", "protocol_error", **base)
    if len(plan.arguments.encode("utf-8", "surrogatepass")) > spec.limits.max_argument_bytes:
        base["arguments_text"] = None
        return ExpectedCall("rejected", "too_large", **base)
    boundary = rendered.boundary_offset(number)
    if cut and boundary is not None and rendered.events[-1].boundaries == (number,):
        boundary = None  # its boundary was the event cut off
    if boundary is not None and plan.id_policy == "changing" and plan.id is not None:
        base.pop("arguments_text")
        return ExpectedCall("rejected", "protocol_error", **base)
    if boundary is None:
        if terminal == "response.incomplete":
            reason = "filtered" if spec.ending.finish == "content_filter" else "truncated"
            return ExpectedCall("rejected", reason, **base)
        if terminal == "response.done" and strict:
            return ExpectedCall("rejected", "protocol_error", **base)
        if terminal in _ENDED:
            return ExpectedCall("rejected", _ENDED[terminal], **base)
    release = boundary if boundary is not None else rendered.finish_offset(0)
    named = plan.name_policy != "omit"
    return completer.complete(plan, base, named=named, text=plan.arguments, release=release)

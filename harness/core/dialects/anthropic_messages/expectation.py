"""What a planned ``anthropic-messages`` stream must become: the expectation derived from the
plan alone, never from the reference assembler.

The rules (REQUIREMENTS.md, research/wire_formats.md §8 P-C, docs/rules.md D20–D39):

- a call's input is the concatenation of its streamed fragments; when none is non-empty, the
  ``input`` object its ``content_block_start`` carried (``{}`` for a parameterless tool, D22);
  a start input that is streamed as well is counted once (A6, D23);
- its ``content_block_stop`` is its boundary (C5): if the input is complete JSON the call is
  completed there (:class:`~callstream.core.completion.Completer`) and may be released from that
  byte on, whatever ending follows (D25); if it is not, the ending names the reason (D24):
  ``max_tokens`` truncated, ``refusal`` filtered, ``pause_turn`` or an unknown reason
  provider_finish, a completing reason malformed_json, an error stream_error, ``message_stop``
  without a stop reason unfinished, end of file interrupted (D26);
- a block index not the next one is C14, a block sent without index C1 (both rejected by the
  strict profile), a tool_use without id C7 (missing_id strictly, a synthesised id leniently);
- a stop reason with no ``message_stop`` after it is C24; a last event cut short is T9;
- a tool_use block whose name is ``""`` (the oddity ``empty_name``) has no name (A4): it is
  rejected ``missing_name`` once complete (V4), as a block sent without one;
- a ``partial_json`` that is null (``null_fields``) is no fragment (A4), and a server tool's
  blocks (``server_tool``: ``server_tool_use`` and its result) are no call: neither changes
  what the calls become, nor records anything.
"""

from __future__ import annotations

import json
from typing import Any

from ....errors import PlanError
from ....rules import ANTHROPIC_MESSAGES_QUIRKS, QuirkId, quirk_code
from ...completion import Completer, Deviation, strictly_json
from ...spec import CallPlan, Expected, ExpectedCall, StreamSpec
from ...wire import Rendered
from .events import (
    FAILING_DATA,
    ODDITIES,
    block_indices,
    start_input,
    stop_reason,
    stray_index,
)

__all__ = ["expect_anthropic_messages"]

_QUIRK = {quirk_code(quirk): quirk for quirk in ANTHROPIC_MESSAGES_QUIRKS}
_DEVIATIONS: dict[Deviation, QuirkId] = {"synthetic_id": _QUIRK["C7"]}
_COMPLETING = {"tool_use", "end_turn", "stop_sequence"}
_ENDINGS = {
    "max_tokens": "truncated",
    "model_context_window_exceeded": "truncated",
    "refusal": "filtered",
}


def expect_anthropic_messages(spec: StreamSpec, rendered: Rendered, profile: str) -> Expected:
    """The expectation for the planned ``spec``, sent as ``rendered``, under ``profile``."""
    _check_plan(spec, rendered)
    strict = profile == "strict"
    findings: set[QuirkId] = set()

    def met(deviation: Deviation) -> None:
        if deviation in _DEVIATIONS:
            findings.add(_DEVIATIONS[deviation])

    completer = Completer({tool.name: tool for tool in spec.tools}, strict=strict, met=met)
    ending = spec.ending
    arrived = rendered.events[:-1] if ending.cut else rendered.events
    failure = "stream_error" if ending.error is not None else None
    if spec.oddity == "stray_delta":
        # A delta for a block never started fails the stream there (A3): nothing after it is
        # read, and what no boundary completed before it is rejected.
        findings.add(_QUIRK["A3"])
        failure = "protocol_error"
        stray = stray_index(spec)
        arrived = arrived[: next(at for at, event in enumerate(arrived) if _delta_at(event, stray))]
    if spec.oddity is not None and spec.oddity in FAILING_DATA:
        # Data that is no JSON object is no event (nor an error but under event: error): it
        # fails the stream there (T4, V6).
        failure = "protocol_error"
        data = FAILING_DATA[spec.oddity][0]
        arrived = arrived[: next(at for at, event in enumerate(arrived) if event.data == data)]
    if spec.oddity in ("unknown_event", "unknown_delta"):
        findings.add(_QUIRK["A4"])  # ignored, its name recorded
    if spec.oddity == "event_mismatch" and not spec.transport.unnamed:
        findings.add(_QUIRK["T8"])  # the payload's type decides (D31)
    if ending.cut:
        findings.add(_QUIRK["T9"])
    if spec.transport.empty_data:
        findings.add(_QUIRK["T6"])
    if spec.transport.invalid_utf8:
        findings.add(_QUIRK["T11"])
    if spec.transport.unnamed:
        findings.add(_QUIRK["T7"])  # every event arrives as a ``message``
    reason = None if failure is not None else stop_reason(spec)
    reason_arrives = reason is not None and any(event.finishes for event in arrived)
    stop_arrives = failure is None and ending.done and not ending.cut
    if reason_arrives and not stop_arrives:
        findings.add(_QUIRK["C24"])
    indices = block_indices(spec)
    highest = 0 if spec.noise.content is not None else -1
    calls = []
    for number, plan in enumerate(spec.calls):
        index = indices[number]
        quirk = None
        if plan.omit_index:
            findings.add(_QUIRK["C1"])
            quirk = "C1"
        elif index != highest + 1:
            findings.add(_QUIRK["C14"])
            quirk = "C14"
        highest = max(highest, index)
        boundary = any(number in event.boundaries for event in arrived)
        settles = boundary or (reason_arrives and reason in _COMPLETING)
        if start_input(plan) and settles:
            findings.add(_QUIRK["A6"])
        base: dict[str, Any] = {"index": number, "name": plan.name, "arguments_text": None}
        if plan.id is not None and plan.id_policy != "omit":
            base["id"] = plan.id
        if index != number:
            base["wire_index"] = index
        # A name sent as "" is no name (A4): the call never receives one (V4).
        named = plan.name_policy != "omit" and not (number == 0 and spec.oddity == "empty_name")
        if not named:
            base["name"] = None
        if quirk is not None and strict:
            calls.append(ExpectedCall("rejected", "protocol_error", **base))
            continue
        text = _text(plan) if settles else _streamed(plan)
        if not plan.arguments_as_value:
            base["arguments_text"] = text
        if len(text.encode("utf-8", "surrogatepass")) > spec.limits.max_argument_bytes:
            base["arguments_text"] = None
            calls.append(ExpectedCall("rejected", "too_large", **base))
            continue
        # A block that streamed nothing completes at its stop with its start's input, whatever
        # that holds (D22); streamed text only when it is strictly JSON (D24).
        complete = not _streamed(plan) or _complete_json(text)
        release = rendered.boundary_offset(number) if boundary else None
        if boundary and complete:
            calls.append(_completed(completer, plan, base, named, text, release))
            continue
        if failure is not None:
            calls.append(ExpectedCall("rejected", failure, **base))
        elif not reason_arrives:
            ended = "unfinished" if stop_arrives else "interrupted"
            calls.append(ExpectedCall("rejected", ended, **base))
        elif reason in _COMPLETING:
            offset = rendered.finish_offset(0)
            calls.append(_completed(completer, plan, base, named, text, offset))
        else:
            ending_reason = _ENDINGS.get(str(reason), "provider_finish")
            calls.append(ExpectedCall("rejected", ending_reason, **base))
    return Expected(tuple(calls), frozenset(findings))


def _completed(
    completer: Completer,
    plan: CallPlan,
    base: dict[str, Any],
    named: bool,
    text: str,
    release: int | None,
) -> ExpectedCall:
    return completer.complete(plan, base, named=named, text=text, release=release)


def _streamed(plan: CallPlan) -> str:
    """The input text streamed for the call, so far as fragments carry it."""
    return "" if plan.arguments_as_value else "".join(plan.fragments)


def _text(plan: CallPlan) -> str:
    """The input text the call is assembled from once its input is final: its streamed
    fragments, else its start's input as JSON text (D22)."""
    return _streamed(plan) or json.dumps(start_input(plan), ensure_ascii=False)


def _complete_json(text: str) -> bool:
    """Whether an input is complete JSON at its stop (D24): strictly, so ``{"a":NaN}`` is not."""
    return strictly_json(text)


def _delta_at(event: Any, index: int) -> bool:
    """Whether ``event`` is a delta for the block at ``index``."""
    data = event.data
    return (
        isinstance(data, dict)
        and data.get("type") == "content_block_delta"
        and data.get("index") == index
    )


def _check_oddity(spec: StreamSpec) -> None:
    """Refuse an oddity the dialect does not send, or one the stream cannot show."""
    oddity, ending = spec.oddity, spec.ending
    if oddity is None:
        return
    if oddity not in ODDITIES:
        raise PlanError(f"anthropic-messages sends no oddity {oddity!r}")
    ends_plainly = ending.error is None and not ending.cut
    if oddity in ("after_stop", "done_line") and not (ends_plainly and ending.done):
        raise PlanError(f"{oddity} needs a message_stop that arrives")
    if oddity in ("stray_delta", "unknown_delta", *FAILING_DATA) and not spec.calls:
        raise PlanError(f"{oddity} needs a tool_use block")
    if oddity in ("error_text", "untyped_error") and (
        ending.error is None or spec.transport.unnamed
    ):
        # Unnamed, text or an untyped object is no error event: only ``event: error`` says that
        # it is one (T4).
        raise PlanError(f"{oddity} needs an error ending sent as event: error")
    if oddity == "string_error" and ending.error is None:
        raise PlanError("string_error needs an error ending")
    if oddity == "no_block_stop" and not (spec.calls and ending.error is None):
        # An error ending already sends the error where the last block's stop would be.
        raise PlanError("no_block_stop needs a tool_use block and no error ending")
    if oddity == "empty_name" and not (
        spec.calls and spec.calls[0].name and spec.calls[0].name_policy != "omit"
    ):
        raise PlanError("empty_name needs a first tool_use block sent with its name")
    if oddity == "null_fields" and not (spec.calls and not spec.calls[0].omit_index):
        raise PlanError("null_fields needs a first tool_use block sent with its index")
    if oddity == "server_tool" and ending.error is not None:
        # Nothing after the error is read: the server tool's blocks would never be.
        raise PlanError("server_tool needs an ending that is no error")
    if oddity in ("stray_delta", *FAILING_DATA) and not ends_plainly:
        raise PlanError(f"{oddity} needs the last block's stop, and an ending that arrives")


def _check_plan(spec: StreamSpec, rendered: Rendered) -> None:
    """Refuse what the dialect cannot send or the oracle cannot predict."""
    _check_oddity(spec)
    noise, ending = spec.noise, spec.ending
    if spec.choices != 1:
        raise PlanError("an Anthropic message has one choice")
    if spec.schedule == "together":
        raise PlanError("Anthropic sends each tool_use in its own block: no 'together' schedule")
    if noise.role_every or noise.usage or noise.usage_every or noise.empty_first:
        raise PlanError("noise.role_every, usage, usage_every and empty_first are openai-chat's")
    if ending.finish_with_last or ending.after_finish:
        raise PlanError("ending.finish_with_last and after_finish are openai-chat's")
    if ending.error == "failed":
        raise PlanError("response.failed alone is openai-responses' error ending")
    if len(spec.calls) > spec.limits.max_calls:
        raise PlanError("a plan past max_calls fails the whole stream")
    for plan in spec.calls:
        if (
            plan.kind != "function"
            or plan.snapshots
            or plan.legacy
            or plan.type_every
            or plan.blank_type
        ):
            raise PlanError("custom, snapshot, legacy and type_every calls are openai-chat's")
        if plan.extra_content is not None or plan.late_index:
            raise PlanError("extra_content and late_index are openai-chat's")
        if plan.bare_start and (plan.header_arguments or not _streamed(plan)):
            # With nothing streamed, the input of a start without one is not decided (D22).
            raise PlanError("a start without an input field needs its input streamed")
        if plan.id_policy not in ("once", "omit") or plan.name_policy not in ("once", "omit"):
            raise PlanError("a tool_use block carries its id and name once, or not at all")
        if plan.header_arguments or plan.arguments_as_value:
            try:
                value = json.loads(plan.arguments)
            except ValueError:
                raise PlanError("an input in content_block_start must be JSON") from None
            if not isinstance(value, dict):
                raise PlanError("an input in content_block_start must be an object")
    indices = block_indices(spec)
    taken = [0] if noise.content is not None else []
    if len(set(indices + taken)) != len(indices) + len(taken):
        raise PlanError("two blocks at one index")
    omitted = sum(plan.omit_index for plan in spec.calls)
    if omitted and spec.schedule == "interleaved" and len(spec.calls) > 1:
        raise PlanError("blocks without an index cannot be interleaved: routing is ambiguous")
    if ending.cut:
        last = rendered.events[-1] if rendered.events else None
        kind = last.data.get("type") if last is not None and isinstance(last.data, dict) else None
        if kind not in ("message_stop", "message_delta"):
            raise PlanError("ending.cut must cut message_stop or message_delta")

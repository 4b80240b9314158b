"""What a planned ``openai-chat`` stream must become: the expectation derived from the plan
alone, never from the reference assembler.

The oracle knows the true calls (their exact text), how they were sent and how the stream
ends, and applies REQUIREMENTS.md (the table "How a stream ends decides what its calls
become", V1–V5) and the profiles of research/wire_formats.md §8 as tabulated in
``callstream.reference.QUIRKS`` (which quirks the strict profile rejects, which both profiles
record). Two distinct calls of a choice that share an id (quirk C34) are recorded in both
profiles and rejected ``duplicate_id`` under the strict one. A completed call is judged by
:class:`~callstream.core.completion.Completer`, as in every dialect.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

from callstream.reference import QUIRKS, Limits

from ....errors import PlanError
from ....rules import OPENAI_CHAT_QUIRKS, QuirkId, quirk_code
from ...completion import Completer, Deviation
from ...spec import CallPlan, Expected, ExpectedCall, StreamSpec
from ...wire import Rendered, data_size
from ..base import plain_route
from .events import ODDITIES, carries_call, changes_kind, changes_name, delta_count

__all__ = ["expect_openai_chat"]

_COMPLETING = {"tool_calls", "stop", "function_call"}
_MARKUP = ("<tool_call>", "[TOOL_CALLS]", "<|tool_call")
_QUIRK = {quirk_code(quirk): quirk for quirk in OPENAI_CHAT_QUIRKS}
"""openai-chat's quirk ids by code: ``_QUIRK["C3"]`` is ``openai-chat/C3``."""
_DEVIATIONS: dict[Deviation, QuirkId] = {
    "synthetic_id": _QUIRK["C7"],
    "empty_parameterless": _QUIRK["C13"],
    "repeated_arguments": _QUIRK["C11"],
}
"""The quirk each deviation met in completing a call is, in this dialect."""


def expect_openai_chat(
    spec: StreamSpec, rendered: Rendered, profile: str, opt_ins: frozenset[str] = frozenset()
) -> Expected:
    """The expectation for the planned ``spec``, sent as ``rendered``, under ``profile``, on a
    route with ``opt_ins``: none, or ``snapshots`` (D76), under the lenient profile (D75)."""
    plain_route("openai-chat", opt_ins - {"snapshots"})
    if opt_ins and profile != "lenient":
        raise PlanError("a route that opts in runs under the lenient profile only (D75)")
    return _Derivation(spec, rendered, profile == "strict", "snapshots" in opt_ins).run()


class _Derivation:
    def __init__(self, spec: StreamSpec, rendered: Rendered, strict: bool, snapshots: bool) -> None:
        self.spec = spec
        self.rendered = rendered
        self.strict = strict
        self.snapshots = snapshots
        """On a route that opts in to reading every fragment after a call's first as a
        cumulative snapshot (quirk C10, D76)."""
        self.findings: set[QuirkId] = set()
        self.kind_changed = changes_kind(spec) if spec.oddity == "kind_changes" else None
        self.name_changed = changes_name(spec) if spec.oddity == "name_changes" else None
        tools = {tool.name: tool for tool in spec.tools}
        self.completer = Completer(
            tools, strict=strict, met=lambda met: self.findings.add(_DEVIATIONS[met])
        )
        self._positions: dict[int, int] = {}
        """Each call's position within its choice, by the plan's identity (the first, where
        one plan object comes twice)."""
        counts: dict[int, int] = {}
        for plan in spec.calls:
            self._positions.setdefault(id(plan), counts.get(plan.choice, 0))
            counts[plan.choice] = counts.get(plan.choice, 0) + 1
        self._ambiguity: dict[int, bool] = {}

    def run(self) -> Expected:
        spec = self.spec
        self._stream_findings()
        self._check_plan()
        if self.snapshots:
            self._check_snapshots_route()
        unread = self._past_event_size()
        if unread is not None:
            return unread
        positions: dict[int, int] = {}
        wire_seen: dict[int, dict[int, str | None]] = {}
        calls = []
        sharing = self._shared_ids()
        for number, plan in enumerate(spec.calls):
            position = positions.get(plan.choice, 0)
            positions[plan.choice] = position + 1
            seen = wire_seen.setdefault(plan.choice, {})
            strict_quirk = self._wire_quirks(plan, position, seen)
            if number in sharing and self.strict:
                # The first holder of the id keeps a rejection its own first delta already
                # earned; the others are rejected the moment the id comes back.
                strict_quirk = (strict_quirk if sharing[number] else None) or "C34"
            calls.append(self._call(plan, position, strict_quirk))
        return Expected(tuple(calls), frozenset(self.findings))

    def _shared_ids(self) -> dict[int, bool]:
        """The calls (by number in the plan) that share their id with another call of their
        choice (quirk C34): True for the first holder of the id, False for the others."""
        owners: dict[tuple[int, str], int] = {}
        sharing: dict[int, bool] = {}
        calls = self.spec.calls
        for number, plan in enumerate(calls):
            call_id = self._id(plan)
            if call_id is None:
                continue
            first = owners.setdefault((plan.choice, call_id), number)
            if first == number:
                continue
            if plan.omit_index or calls[first].omit_index or plan.late_index:
                raise PlanError("calls that share an id need wire indices: else they are one")
            if self._wire_of(calls[first]) == self._wire_of(plan):
                raise PlanError("calls that share an id at one wire index are one call")
            if self.spec.limits.max_argument_bytes != Limits().max_argument_bytes:
                # Which comes first, the size limit or the id's return, depends on the cuts.
                raise PlanError("calls that share an id under a size limit: write literal events")
            if not (self._strict_quirk_free(calls[first]) and self._strict_quirk_free(plan)):
                raise PlanError(
                    "calls that share an id must be otherwise free of quirks the strict "
                    "profile rejects: write the stream as literal events"
                )
            self.findings.add(_QUIRK["C34"])
            sharing[first] = True
            sharing[number] = False
        return sharing

    def _wire_of(self, plan: CallPlan) -> int:
        """The wire index of a call that names one, or its position within its choice."""
        if plan.index is not None:
            return plan.index
        return self._positions[id(plan)]

    def _strict_quirk_free(self, plan: CallPlan) -> bool:
        """False when the plan alone carries a quirk the strict profile rejects."""
        return not (
            plan.id_policy == "changing"
            or plan.name_policy == "late"
            or plan.arguments_as_value
            or plan.legacy
        )

    def _check_plan(self) -> None:
        spec, ending = self.spec, self.spec.ending
        if ending.cut:
            last = self.rendered.events[-1] if self.rendered.events else None
            if spec.choices != 1 or last is None or carries_call(last.data):
                raise PlanError(
                    "ending.cut must cut an event after the calls' deltas, with one choice"
                )
        if ending.error == "failed":
            raise PlanError("response.failed alone is openai-responses' error ending")
        if ending.after_finish and ending.finish is None:
            raise PlanError("ending.after_finish needs a finish reason")
        if any(p.blank_type and not (p.type_every and p.kind == "function") for p in spec.calls):
            # A blank type on a custom call could be read as the default kind, function (D90).
            raise PlanError("blank_type is a function call's repeated type (type_every)")
        if any(plan.bare_start for plan in spec.calls):
            raise PlanError("bare_start is anthropic-messages' (a start without input)")
        if any(self._splits_without_index(plan) for plan in spec.calls):
            # Without an index a delta is routed by its id: one that names the tool but carries
            # no id (or another) opens a call of its own (C1).
            raise PlanError("a later delta of a call without index names a call of its own")
        self._check_late_index()
        self._check_oddity()
        if len(spec.calls) > spec.limits.max_calls or spec.choices > spec.limits.max_choices:
            raise PlanError("a plan past max_calls or max_choices fails the whole stream")
        if spec.schedule == "interleaved":
            for choice in range(spec.choices):
                wires = [
                    self._wire(p, n)
                    for n, p in enumerate(c for c in spec.calls if c.choice == choice)
                ]
                if len(wires) != len(set(wires)):
                    raise PlanError("an index reused by several calls cannot be interleaved")

    def _past_event_size(self) -> Expected | None:
        """With an event past ``max_event_size``, the stream fails there, ``too_large`` (V5):
        predicted where that event is the first to carry a call, so no call has begun and none
        is released, and only what came before it is recorded. None when every event fits."""
        spec, noise = self.spec, self.spec.noise
        limit = spec.limits.max_event_size
        if limit == Limits().max_event_size:
            return None
        events = self.rendered.events
        over = next(
            (at for at, event in enumerate(events) if data_size(event, spec.transport) > limit),
            None,
        )
        if over is None:
            return None
        if not carries_call(events[over].data) or any(
            carries_call(event.data) for event in events[:over]
        ):
            raise PlanError("an event past max_event_size must be the first that carries a call")
        if (
            noise.role_every
            or noise.usage_every
            or spec.ending.cut
            or spec.ending.after_finish
            or spec.oddity is not None
        ):
            # What these record may come at or after that event (a late delta after a finish
            # may be the first event that carries a call, the finish before it recorded).
            raise PlanError("an event past max_event_size with findings at or after it")
        before = {
            _QUIRK["C21"]: noise.empty_first,
            _QUIRK["C31"]: noise.content is not None
            and any(mark in noise.content for mark in _MARKUP),
            _QUIRK["T6"]: spec.transport.empty_data,
            _QUIRK["T11"]: spec.transport.invalid_utf8,  # the comment before the first event
        }
        return Expected((), frozenset(quirk for quirk, seen in before.items() if seen))

    def _check_late_index(self) -> None:
        """Refuse a call whose first delta goes without an index where the later ones cannot
        tell it (C1; oc-a-header-without-index-then-indexed-fragments: fragments naming index 0
        continue the one call): the first call of its choice, its header opening it (an id sent
        once), a later delta following it (sequential calls) with no id or name to open another,
        and no call of its choice without any index."""
        spec = self.spec
        for number, plan in enumerate(spec.calls):
            if not plan.late_index:
                continue
            if spec.schedule != "sequential" or plan.legacy or plan.omit_index:
                raise PlanError("late_index needs sequential calls, each with an index")
            if delta_count(plan, self.spec.schedule) < 2:
                raise PlanError("late_index needs a delta after the call's first")
            if plan.id is None or plan.id_policy != "once" or plan.index is not None:
                raise PlanError("late_index needs an id sent once, at the call's position")
            if plan.name_policy in ("every", "late"):
                raise PlanError("late_index needs a name sent once, or not at all")
            if any(
                other.choice == plan.choice and (other.omit_index or other.legacy)
                for other in spec.calls
            ):
                raise PlanError("late_index beside calls without any index")
            if any(other.choice == plan.choice for other in spec.calls[:number]):
                # C1 continues "the single open call": with an earlier call of the choice open,
                # a fragment naming an index no call holds is not decided.
                raise PlanError("late_index is the first call of its choice's")

    def _check_oddity(self) -> None:
        """Refuse an oddity the dialect does not send, or one this stream cannot show."""
        oddity, ending, events = self.spec.oddity, self.spec.ending, self.rendered.events
        if oddity is None:
            return
        if oddity not in ODDITIES:
            raise PlanError(f"openai-chat sends no oddity {oddity!r}")
        if oddity == "after_done" and not (ending.done and not ending.cut and ending.error is None):
            raise PlanError("after_done needs a [DONE] that arrives, with no error")
        if oddity == "delta_missing" and not any(
            isinstance(entry, dict) and "delta" not in entry
            for event in events
            if isinstance(event.data, dict)
            for entry in event.data.get("choices") or ()
        ):
            raise PlanError("delta_missing needs a chunk with choices before the end")
        if oddity == "delta_missing" and ending.cut:
            raise PlanError("delta_missing and a cut stream: the annotation may be what is cut")
        if oddity in ("error_text", "untyped_error") and (
            ending.error != "event" or self.spec.transport.unnamed
        ):
            # Unnamed, text or a bare object is no error event: only ``event: error`` says that
            # it is one (T4).
            raise PlanError(f"{oddity} needs an error ending sent as event: error")
        if oddity == "choice_not_object" and (ending.error is None or ending.cut):
            raise PlanError("choice_not_object takes the place of an error ending's event")
        if oddity == "kind_changes" and (
            self.kind_changed is None
            or self.spec.limits.max_argument_bytes != Limits().max_argument_bytes
        ):
            # Under a size limit, which comes first, the limit or the change, depends on the text.
            raise PlanError("kind_changes needs a call of two deltas or more, with no size limit")
        if oddity == "name_changes" and (
            self.name_changed is None
            or self.spec.limits.max_argument_bytes != Limits().max_argument_bytes
        ):
            raise PlanError("name_changes needs a named call of two deltas or more, two tools")
        if oddity in ("text_with_call", "null_fields") and all(
            plan.legacy for plan in self.spec.calls
        ):
            raise PlanError(f"{oddity} needs a tool call")

    def _splits_without_index(self, plan: CallPlan) -> bool:
        """Whether a call sent without index carries, on a later delta, a name without its id,
        or another id: read as a new call, not as the call the plan means."""
        if not plan.omit_index or delta_count(plan, self.spec.schedule) < 2:
            return False
        named_later = plan.name is not None and plan.name_policy in ("every", "late")
        return plan.id_policy == "changing" or (named_later and plan.id_policy != "every")

    def _check_snapshots_route(self) -> None:
        """Refuse, on a route that reads snapshots, what would reject a call at another moment
        than the fragment that stops extending its text: a limit on sizes (each snapshot counts
        anew), a cut stream (the cut may fall in that fragment), a routing ambiguity, an
        oddity; and arguments sent as a JSON value (their text is the implementation's)."""
        spec = self.spec
        sizes = replace(spec.limits, max_calls=Limits().max_calls, max_choices=Limits().max_choices)
        if spec.oddity is not None or spec.ending.cut or sizes != Limits():
            raise PlanError("a snapshots route is predicted without oddities, cuts and size limits")
        if any(plan.arguments_as_value for plan in spec.calls):
            raise PlanError("a snapshots route is predicted without arguments sent as a value")
        if any(self._ambiguous(choice) for choice in range(spec.choices)):
            raise PlanError("a snapshots route is predicted without an ambiguous bare fragment")

    def _wire(self, plan: CallPlan, position: int) -> int:
        return position if plan.index is None else plan.index

    def _ambiguous(self, choice: int) -> bool:
        """Lenient: does an index-less fragment come while several calls of the choice are open?
        Worked out once per choice (every call of the choice asks)."""
        if choice not in self._ambiguity:
            self._ambiguity[choice] = self._ambiguous_choice(choice)
        return self._ambiguity[choice]

    def _ambiguous_choice(self, choice: int) -> bool:
        calls = [plan for plan in self.spec.calls if plan.choice == choice]
        for position, plan in enumerate(calls):
            bare = (
                plan.omit_index
                and plan.id_policy not in ("every", "changing")
                and plan.name_policy != "every"
                and delta_count(plan, self.spec.schedule) > 1
            )
            if bare and (position >= 1 or (self.spec.schedule == "interleaved" and len(calls) > 1)):
                return True
        return False

    # -- quirks of the stream as a whole ----------------------------------------------------

    def _stream_findings(self) -> None:
        spec, noise, ending = self.spec, self.spec.noise, self.spec.ending
        if noise.role_every and self._role_repeated():
            self.findings.add(_QUIRK["C29"])
        if noise.usage_every and self._usage_beside_choices():
            self.findings.add(_QUIRK["C23"])
        if noise.empty_first:
            self.findings.add(_QUIRK["C21"])
        if noise.content is not None and any(mark in noise.content for mark in _MARKUP):
            self.findings.add(_QUIRK["C31"])
        if ending.after_finish and ending.error is None and ending.finish is not None:
            self.findings.add(_QUIRK["C20"])
            if "usage_chunk" in ending.after_finish:
                self.findings.add(_QUIRK["C23"])
        if ending.error is None:
            last = self.rendered.events[-1] if self.rendered.events else None
            finish_arrives = ending.finish is not None and not (
                ending.cut and last is not None and last.finishes
            )
            if finish_arrives and ending.finish == "stop" and spec.calls:
                self.findings.add(_QUIRK["C16"])
            if finish_arrives and ending.finish not in _COMPLETING | {"length", "content_filter"}:
                self.findings.add(_QUIRK["C33"])
            done_arrives = ending.done and not ending.cut
            if finish_arrives and not done_arrives:
                self.findings.add(_QUIRK["C24"])
        if ending.cut:
            self.findings.add(_QUIRK["T9"])
        if spec.oddity == "after_done":
            self.findings.add(_QUIRK["C20"])  # [DONE] is final: what follows is ignored
        if spec.oddity == "delta_missing":
            self.findings.add(_QUIRK["C22"])  # read as an empty delta
        if spec.oddity == "created_late" and self._chunks_read() > 1:
            self.findings.add(_QUIRK["C30"])  # absent on the first chunk, present on the next
        if spec.transport.empty_data:
            self.findings.add(_QUIRK["T6"])
        if spec.transport.invalid_utf8:
            self.findings.add(_QUIRK["T11"])

    def _role_repeated(self) -> bool:
        """Whether a choice has ``role`` on two deltas that are read (quirk C29): a stream
        without calls may send it once, and nothing after ``[DONE]`` or cut off is read."""
        events = self.rendered.events[:-1] if self.spec.ending.cut else self.rendered.events
        seen: dict[Any, int] = {}
        for event in events:
            if event.data == "[DONE]":
                break
            if not isinstance(event.data, dict):
                continue
            for entry in event.data.get("choices") or ():
                if isinstance(entry, dict) and "role" in (entry.get("delta") or {}):
                    seen[entry.get("index")] = seen.get(entry.get("index"), 0) + 1
        return any(count > 1 for count in seen.values())

    def _chunks_read(self) -> int:
        """How many chunks with choices are read: before ``[DONE]``, an error, or the cut."""
        events = self.rendered.events[:-1] if self.spec.ending.cut else self.rendered.events
        read = 0
        for event in events:
            data = event.data
            if data == "[DONE]" or event.event == "error":
                break
            if isinstance(data, dict) and (data.get("error") or data.get("object") == "error"):
                break
            if isinstance(data, dict) and data.get("choices"):
                read += 1
        return read

    def _usage_beside_choices(self) -> bool:
        """Whether a chunk that arrives carries usage beside its choices (quirk C23): with no
        call, no role and no text, an error may come before any chunk with choices."""
        events = self.rendered.events[:-1] if self.spec.ending.cut else self.rendered.events
        return any(
            isinstance(event.data, dict) and event.data.get("choices") and event.data.get("usage")
            for event in events
        )

    # -- quirks of one call's routing -------------------------------------------------------

    def _wire_quirks(
        self, plan: CallPlan, position: int, seen: dict[int, str | None]
    ) -> str | None:
        """Record a call's routing quirks; return the one the strict profile rejects it for."""
        rejected: str | None = None
        if plan.legacy:
            self.findings.add(_QUIRK["C27"])
            return None
        if plan.omit_index:
            self.findings.add(_QUIRK["C1"])
            rejected = rejected or "C1"
        else:
            if plan.late_index:
                self.findings.add(_QUIRK["C1"])
                rejected = rejected or "C1"
            wire = position if plan.index is None else plan.index
            if wire in seen:
                named = plan.name is not None and plan.name_policy in ("once", "every")
                if None in (seen[wire], self._id(plan)) or not named:
                    # Without a new id and its name on its first delta, a delta at a used
                    # index continues the call there (C2).
                    raise PlanError("a new call at a used index needs an id and a name at once")
                self.findings.add(_QUIRK["C2"])
                rejected = rejected or "C2"
            elif wire != len(seen):
                self.findings.add(_QUIRK["C14"])
                rejected = rejected or "C14"
            seen[wire] = self._id(plan)
        several = delta_count(plan, self.spec.schedule) > 1
        if plan.id_policy == "every" and several and plan.id is not None:
            self.findings.add(_QUIRK["C4"])
        if plan.type_every and several:
            self.findings.add(_QUIRK["C4"])
        if plan.id_policy == "changing" and plan.id is not None and several:
            self.findings.add(_QUIRK["C3"])
            rejected = rejected or "C3"
        if plan.name_policy == "every" and several and plan.name is not None:
            self.findings.add(_QUIRK["C5"])
        if plan.name_policy == "late" and plan.name is not None:
            self.findings.add(_QUIRK["C6"])
            rejected = rejected or "C6"
        if plan.arguments_as_value:
            self.findings.add(_QUIRK["C32"])
            rejected = rejected or "C32"
        if plan.id_policy == "numeric" and plan.id is not None:
            self.findings.add(_QUIRK["C7"])
        if plan.extra_content is not None:
            self.findings.add(_QUIRK["C28"])
        if rejected is None or not self.strict or QUIRKS[_QUIRK[rejected]].strict != "reject":
            return None
        return rejected

    # -- one call ---------------------------------------------------------------------------

    def _call(self, plan: CallPlan, position: int, strict_quirk: str | None) -> ExpectedCall:
        expected = self._outcome(plan, position, strict_quirk)
        if plan.id_policy == "changing" and delta_count(plan, self.spec.schedule) > 1:
            # D15: a call whose id changes on every delta may come back as any one of its ids.
            return replace(expected, id=None)
        return expected

    def _outcome(self, plan: CallPlan, position: int, strict_quirk: str | None) -> ExpectedCall:
        spec = self.spec
        text = self._text(plan)
        base: dict[str, Any] = {
            "choice": plan.choice,
            "index": position,
            "name": plan.name,
            "arguments_text": text,
        }
        call_id = self._id(plan)
        if call_id is not None:
            base["id"] = call_id
        if not (plan.omit_index or plan.legacy) and self._wire_of(plan) != position:
            base["wire_index"] = self._wire_of(plan)

        if strict_quirk is not None:
            base.pop("arguments_text")  # rejected mid-stream: only part of the text arrived
            return ExpectedCall("rejected", QUIRKS[_QUIRK[strict_quirk]].reason.value, **base)
        if self.name_changed is not None and plan is spec.calls[self.name_changed[0]]:
            # D12: rejected, or taken as the last name; never run under the first. The scenario
            # is impl-defined: the outcome given is the one a reader that takes the last has.
            plan = replace(plan, name=self.name_changed[1])
            base["name"] = plan.name
        if self.kind_changed is not None and plan is spec.calls[self.kind_changed]:
            # Its last delta says the other kind: no profile can tell what the text is (D90).
            base.pop("arguments_text")
            return ExpectedCall("rejected", "protocol_error", **base)
        if not self.strict and self._ambiguous(plan.choice):
            base.pop("arguments_text")
            return ExpectedCall("rejected", "protocol_error", **base)
        if self.snapshots:
            read = _snapshots(self._pieces(plan))
            if read.extended:
                self.findings.add(_QUIRK["C10"])
            if read.refused:
                # Rejected at the fragment that does not extend the text: whatever follows.
                base.pop("arguments_text")
                return ExpectedCall("rejected", "malformed_json", **base)
            text = base["arguments_text"] = read.text
        true_text = plan.arguments if text is None else text
        if len(true_text.encode("utf-8", "surrogatepass")) > spec.limits.max_argument_bytes:
            base["arguments_text"] = None  # cut at the limit: not compared
            return ExpectedCall("rejected", "too_large", **base)

        ending = spec.ending
        if ending.error is not None and spec.oddity == "choice_not_object":
            # The chunk in the error's place fails the stream: no choice is a string (A7, V6).
            return ExpectedCall("rejected", "protocol_error", **base)
        if ending.error is not None:
            return ExpectedCall("rejected", "stream_error", **base)
        finish = ending.finish
        last = self.rendered.events[-1] if self.rendered.events else None
        if ending.cut and last is not None and plan.choice in last.finishes:
            finish = None  # the finish event itself was cut off
        if finish is None:
            reason = "unfinished" if ending.done and not ending.cut else "interrupted"
            return ExpectedCall("rejected", reason, **base)
        if finish == "length":
            return ExpectedCall("rejected", "truncated", **base)
        if finish == "content_filter":
            return ExpectedCall("rejected", "filtered", **base)
        if finish not in _COMPLETING:
            reason = "stream_error" if finish == "error" else "provider_finish"
            return ExpectedCall("rejected", reason, **base)
        return self.completer.complete(
            plan,
            base,
            named=plan.name_policy != "omit",
            text=plan.arguments if plan.arguments_as_value else base["arguments_text"],
            release=self.rendered.finish_offset(plan.choice),
        )

    def _pieces(self, plan: CallPlan) -> list[str]:
        """The argument text each of the call's deltas carries, as ``events`` sends them."""
        if self.spec.schedule in ("whole", "together") and not plan.legacy:
            return [plan.arguments]
        if plan.snapshots and not plan.legacy:
            return list(itertools.accumulate(plan.fragments))
        return list(plan.fragments)

    def _text(self, plan: CallPlan) -> str | None:
        if plan.arguments_as_value:
            return None  # the implementation serialises the value its own way
        if plan.snapshots:
            so_far, out = "", []
            for fragment in plan.fragments:
                so_far += fragment
                out.append(so_far)
            return "".join(out)
        return "".join(plan.fragments)

    def _id(self, plan: CallPlan) -> str | None:
        if plan.id is None or plan.legacy or plan.id_policy in ("omit", "empty"):
            return None
        if plan.id_policy == "numeric":
            return None if self.strict else str(int.from_bytes(plan.id.encode()[:4], "big"))
        return plan.id


@dataclass(frozen=True, slots=True)
class _Reading:
    text: str
    """The text a snapshots route holds: the last snapshot, or the first fragment alone."""
    extended: bool
    """A later fragment extended the text: a snapshot was read (C10 recorded)."""
    refused: bool
    """A later fragment did not extend the text: the call is rejected ``malformed_json``."""


def _snapshots(pieces: list[str]) -> _Reading:
    """A call's fragments read on a route that opts in to snapshots (quirk C10, D76): the first
    non-empty one is the text; each later non-empty one must start with the text so far, and
    replaces it; one that does not is refused. Empty fragments change nothing (A4)."""
    text: str | None = None
    extended = False
    for piece in pieces:
        if not piece:
            continue
        if text is None:
            text = piece
        elif piece.startswith(text):
            text, extended = piece, True
        else:
            return _Reading(text, extended, refused=True)
    return _Reading(text or "", extended, refused=False)

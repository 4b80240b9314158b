"""Checks: small named functions comparing an Observation with an Expectation.

Each check reads some of what an implementation exposes (its ``observes``: see
``callstream.core.declaration.OBSERVABLES``) and returns the problems it found, each a sentence a
person can act on, filed under the rule it proves: a call released ready that must be rejected
``truncated`` breaks C3, one whose text differs breaks A2, whatever else the scenario cites.
Where a problem could prove one of several rules, it is filed under those the scenario cites,
or else under the first. ``CHECKS`` lists them in the order a report shows them; the scenario's
expectation kind decides which apply:

- ``must``: every check.
- ``must-not``: the stream must not yield a ready call (JSONTestSuite's ``n_``): only the
  safety checks and ``nothing_ready``.
- ``impl-defined``: any outcome is acceptable except an unsafe one: only the safety checks.

A check that applies but reads something the implementation does not expose is *not
observable* for the case: reported as such, never as passed.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

from callstream.reference.validate import parse_int

from ..rules import RuleId, rule_ids
from .judgement import (
    Check,
    Failure,
    Judgement,
    Problem,
    call_name,
    expected_for,
    field_shown,
    json_shown,
    pairs,
    shown,
)
from .observation import Observation, Observed
from .spec import Expected, ExpectedCall

__all__ = ["CHECKS", "REASON_RULES", "STATUSES", "handed_back_as_ready", "run_checks"]

STATUSES = ("ready", "rejected")
"""The statuses of the contract."""

REASON_RULES: dict[str, tuple[str, ...]] = {
    "truncated": ("C3",),
    "filtered": ("C3",),
    "provider_finish": ("C3",),
    "stream_error": ("C3", "T4"),
    "unfinished": ("C2",),
    "interrupted": ("C2", "C3"),
    "cancelled": ("C6",),
    "malformed_json": ("V1",),
    "schema_violation": ("V2",),
    "unknown_tool": ("V3",),
    "missing_id": ("V4",),
    "missing_name": ("V4",),
    "duplicate_id": ("V4", "A3"),
    "too_large": ("V5",),
    "protocol_error": ("R", "A3", "A5", "T3", "T4", "V4"),
}
"""The rules a call breaks when it is released ready although it must be rejected for a reason:
the rule that demands the rejection."""


_TRANSPORT = ("T1", "T2", "T3", "T4")
"""A result that comes out wrong from a stream differing only in its transport (a split, a line
ending, a field spelling) proves the transport rule the scenario is about."""
_ROUTING = ("A5", "A6", "A7", *_TRANSPORT)
"""A call missing, merged or invented breaks routing, unless the transport broke it."""


def _no_crash(expected: Expected, seen: Observation, exposed: Collection[str]) -> list[Problem]:
    if seen.error is None or seen.timed_out:  # a hang is no_hang's
        return []
    last = seen.error.strip().splitlines()[-1]
    return [Problem(f"the implementation raised {last}", ("V6",))]


def _no_hang(expected: Expected, seen: Observation, exposed: Collection[str]) -> list[Problem]:
    if not seen.timed_out:
        return []
    return [Problem("the implementation did not finish within the per-case timeout", ("V5",))]


def _contract(expected: Expected, seen: Observation, exposed: Collection[str]) -> list[Problem]:
    """Every result speaks the contract: a known status, a reason exactly when rejected."""
    problems = []
    for result in seen.results:
        call = call_name(result.key)
        statuses = " or ".join(STATUSES)
        if result.status is None:
            problems.append(Problem(f"{call} has no status (a result is {statuses})", ("V6",)))
        elif result.status not in STATUSES:
            close = difflib.get_close_matches(str(result.status), STATUSES, n=1)
            problems.append(
                Problem(
                    f"{call} has status {shown(result.status)}, which is not in the contract "
                    f"(a result is {statuses})"
                    + (f"; did you mean {close[0]!r}?" if close else ""),
                    ("V6",),
                )
            )
        elif result.status == "rejected" and "reason" in exposed and not result.reason:
            problems.append(Problem(f"{call} is rejected without a reason", ("V6",)))
    return problems


def _released_once(
    expected: Expected, seen: Observation, exposed: Collection[str]
) -> list[Problem]:
    counts: dict[tuple[Any, Any], int] = {}
    for result in seen.results:
        counts[result.key] = counts.get(result.key, 0) + 1
    return [
        Problem(f"{call_name(key)} was released {n} times", ("E3", "A6"))
        for key, n in counts.items()
        if n > 1
    ]


def _calls_released(
    expected: Expected, seen: Observation, exposed: Collection[str]
) -> list[Problem]:
    if seen.error is not None or seen.timed_out:
        return []
    # Without statuses a call that must be rejected may rightly never be handed back.
    want = {
        (call.choice, call.index)
        for call in expected.calls
        if call.status == "ready" or "status" in exposed
    }
    every = {(call.choice, call.index) for call in expected.calls}
    got = {result.key for result in seen.results}
    problems = [
        Problem(f"{call_name(key)} was never released", (*_ROUTING, "C2"))
        for key in sorted(want - got)
    ]
    problems += [
        Problem(f"an unexpected {call_name(key)} was released", _ROUTING)
        for key in sorted(got - every, key=str)
    ]
    return problems


def _safe(expected: Expected, seen: Observation, exposed: Collection[str]) -> list[Problem]:
    """A call released ready must be one that is truly ready, with its true arguments."""
    problems = []
    for result in seen.results:
        if result.status != "ready":
            continue
        call = expected_for(expected, result)
        where = call_name(result.key)
        if call is None:
            problems.append(Problem(f"{where} was released ready but it does not exist", _ROUTING))
        elif call.status != "ready":
            problems.append(
                Problem(
                    f"{where} was released ready but it must be rejected"
                    + (f" {call.reason}" if call.reason else ""),
                    _reason_rules(call.reason),
                )
            )
        elif call.name is not None and result.name != call.name:
            named = "with no name" if result.name is None else f"as {shown(result.name)}"
            problems.append(
                Problem(
                    f"{where} was released ready {named}, but it calls {shown(call.name)}",
                    ("A3", "A4", "A5", *_TRANSPORT),
                )
            )
        elif call.check_arguments and "arguments" in exposed and result.arguments != call.arguments:
            problems.append(
                Problem(
                    f"{where} was released ready with {field_shown('arguments', result.arguments)} "
                    f"instead of {json_shown(call.arguments)}",
                    ("A2", "A5", "A6", *_TRANSPORT),
                )
            )
        elif (
            call.check_arguments
            and "arguments" not in exposed
            and "arguments_text" in exposed
            and not _runs_as(call, result.arguments_text)
        ):
            problems.append(
                Problem(
                    f"{where} was released ready with "
                    f"{field_shown('arguments_text', result.arguments_text)}, which does not run "
                    f"as {json_shown(call.arguments)}",
                    ("A2", "A5", "A6", *_TRANSPORT),
                )
            )
    return problems


def _runs_as(call: ExpectedCall, text: Any) -> bool:
    """True when a caller that runs ``text`` the usual way (``json.loads`` for a function call,
    the text itself for a custom call) runs the call's true arguments. Judges a library that
    hands back the text without parsing it: a ready call is unsafe if its text runs wrong."""
    if not isinstance(text, str):
        return False
    if text == call.arguments_text:
        return True
    if isinstance(call.arguments, str) and call.arguments == call.arguments_text:
        return False  # a custom call runs its text as it is
    if text == "":
        return bool(call.arguments == {})  # the rules complete a parameterless call so
    try:
        value = json.loads(text, parse_int=parse_int)
    except (ValueError, RecursionError):
        return False
    return bool(value == call.arguments)


def _nothing_ready(
    expected: Expected, seen: Observation, exposed: Collection[str]
) -> list[Problem]:
    problems = []
    for result in seen.results:
        if result.status != "ready":
            continue
        call = expected_for(expected, result)
        rules = _reason_rules(call.reason) if call is not None else ("C3", "V1")
        problems.append(
            Problem(
                f"{call_name(result.key)} was released ready; "
                "this stream must not yield a runnable call",
                rules,
            )
        )
    return problems


def _status(expected: Expected, seen: Observation, exposed: Collection[str]) -> list[Problem]:
    """A call that must be ready was rejected (a ready call that must be rejected is
    ``safe_release``'s: the same problem is not reported twice)."""
    problems = []
    for call, result in pairs(expected, seen):
        if call.status == "ready" and result.status == "rejected":
            problems.append(
                Problem(
                    f"{call_name(result.key)} is rejected"
                    + (f" {result.reason}" if result.reason else "")
                    + ", expected ready",
                    ("C1", "A1", "A2", *_TRANSPORT),
                )
            )
    return problems


def _reason(expected: Expected, seen: Observation, exposed: Collection[str]) -> list[Problem]:
    return [
        Problem(
            f"{call_name(result.key)} was rejected "
            + ("with no reason" if result.reason is None else shown(result.reason))
            + f", expected {call.reason!r}",
            ("V6",),
        )
        for call, result in pairs(expected, seen)
        if call.status == result.status == "rejected"
        and call.reason is not None
        and result.reason != call.reason
    ]


def _text_exact(expected: Expected, seen: Observation, exposed: Collection[str]) -> list[Problem]:
    return [
        Problem(
            f"{call_name(result.key)} has {field_shown('arguments_text', result.arguments_text)}, "
            f"expected {shown(call.arguments_text)}",
            ("A2", *_TRANSPORT),
        )
        for call, result in pairs(expected, seen)
        if call.arguments_text is not None
        and result.arguments_text != call.arguments_text
        and not _empty_arguments_completed(call, result)
    ]


def _empty_arguments_completed(call: ExpectedCall, result: Observed) -> bool:
    """Empty arguments may read ``""`` or ``{}`` whichever is expected: a parameterless call
    whose arguments never arrived completes as ``{}`` (REQUIREMENTS.md, "How a stream ends
    decides what its calls become"; D3), and the concatenation of no fragments is ``""`` (A2's
    own words; D22)."""
    return {call.arguments_text, result.arguments_text} == {"", "{}"}


def _identity(expected: Expected, seen: Observation, exposed: Collection[str]) -> list[Problem]:
    problems = []
    synthetic: dict[Any, tuple[Any, Any]] = {}
    real = {call.id for call in expected.calls if call.id}
    for call, result in pairs(expected, seen):
        where = call_name(result.key)
        if call.name is not None and result.name != call.name:
            named = "has no name" if result.name is None else f"is named {shown(result.name)}"
            problems.append(
                Problem(
                    f"{where} {named}, expected {shown(call.name)}",
                    ("A4", *_TRANSPORT) if not result.name else ("A3", *_TRANSPORT),
                )
            )
        if "ids" not in exposed:
            continue
        problems += _flagged(call, result, where)
        if call.synthetic_id:
            # V4: the lenient profile *may* make one up; handing back none is no failure.
            if result.id is None or result.id == "":
                continue
            if not isinstance(result.id, str):
                problems.append(
                    Problem(f"{where} was given the id {shown(result.id)}, not a string", ("V4",))
                )
            elif result.id in synthetic:
                problems.append(
                    Problem(
                        f"{call_name(synthetic[result.id])} and {where} share id {result.id!r}",
                        ("V4",),
                    )
                )
            elif result.id in real:
                problems.append(
                    Problem(
                        f"{where} was given the made-up id {result.id!r}, "
                        "which another call of the stream really has",
                        ("V4",),
                    )
                )
            synthetic[result.id] = result.key
        elif call.id is not None and not _same_id(result.id, call.id):
            problems.append(
                Problem(
                    f"{where} has {field_shown('id', result.id)}, expected {shown(call.id)}",
                    ("A4", "E2", *_TRANSPORT) if not result.id else ("A3", "E2", *_TRANSPORT),
                )
            )
    return problems


def _flagged(call: ExpectedCall, result: Observed, where: str) -> list[Problem]:
    """A result that says whether its id was made up (``synthetic_id``, D91) says it truly: a
    made-up id handed back is flagged, an id the provider sent is not. A result that does not
    say (absent or null) is not judged, nor is a made-up id handed back as none (D9)."""
    if result.synthetic_id is None:
        return []
    if call.synthetic_id and not result.synthetic_id and isinstance(result.id, str) and result.id:
        return [
            Problem(
                f"{where} was given the made-up id {result.id!r} with synthetic_id "
                f"{shown(result.synthetic_id)}: the provider sent no id",
                ("V4",),
            )
        ]
    if not call.synthetic_id and call.id is not None and result.synthetic_id:
        return [
            Problem(
                f"{where} flags its id as made up (synthetic_id {shown(result.synthetic_id)}), "
                f"but the provider sent it: {shown(call.id)}",
                ("V4", "E2"),
            )
        ]
    return []


def _same_id(seen: Any, expected: str) -> bool:
    """The original id: as expected, or the number the wire sent, handed back as it came (E2
    asks for "the original call ids"; a numeric id's decimal string is the lenient reading)."""
    if seen == expected:
        return True
    return type(seen) is int and str(seen) == expected


def _no_premature_release(
    expected: Expected, seen: Observation, exposed: Collection[str]
) -> list[Problem]:
    problems = []
    for release in seen.releases:
        call = expected_for(expected, release.result)
        if (
            call is not None
            and release.result.status == "ready"
            and call.release_offset is not None
            and release.offset < call.release_offset
        ):
            problems.append(
                Problem(
                    f"{call_name(release.result.key)} was released after byte "
                    f"{release.offset}, before its completion signal ended at byte "
                    f"{call.release_offset}",
                    ("C4",),
                )
            )
    return problems


def _release_order(
    expected: Expected, seen: Observation, exposed: Collection[str]
) -> list[Problem]:
    problems = []
    batches: dict[int, list[Observed]] = {}
    for release in seen.releases:
        batches.setdefault(release.chunk, []).append(release.result)
    for chunk, batch in batches.items():
        keys = [result.key for result in batch]
        try:
            ordered = keys == sorted(keys)
        except TypeError:
            ordered = False
        if not ordered:
            problems.append(
                Problem(
                    f"results released together by chunk {chunk} are not in index order: "
                    + ", ".join(map(call_name, keys)),
                    ("E4",),
                )
            )
    return problems


def _findings(expected: Expected, seen: Observation, exposed: Collection[str]) -> list[Problem]:
    if seen.error is not None:
        return []
    if seen.findings_unreadable is not None:
        return [Problem(f"findings cannot be read: {seen.findings_unreadable}", ("R",))]
    if seen.findings is None:
        return []
    problems = []
    if missing := expected.findings - seen.findings:
        problems.append(Problem(f"findings not recorded: {', '.join(sorted(missing))}", ("R",)))
    if extra := seen.findings - expected.findings:
        problems.append(
            Problem(
                f"findings recorded that the stream does not have: {', '.join(sorted(extra))}",
                ("R",),
            )
        )
    return problems


_REJECTIONS = tuple(dict.fromkeys(rule for rules in REASON_RULES.values() for rule in rules))
"""Every rule a call released ready against its expected rejection can break."""

CHECKS = (
    Check("no_crash", rule_ids("V6"), _no_crash, safety=True),
    Check("no_hang", rule_ids("V5"), _no_hang, safety=True),
    Check("contract", rule_ids("V6"), _contract, safety=True),
    Check(
        "safe_release",
        rule_ids(*dict.fromkeys(("A2", "A3", "A4", *_ROUTING, *_REJECTIONS))),
        _safe,
        safety=True,
    ),
    Check("released_once", rule_ids("E3", "A6"), _released_once, safety=True),
    Check("nothing_ready", rule_ids(*_REJECTIONS, "C3", "V1"), _nothing_ready),
    Check("calls_released", rule_ids(*_ROUTING, "C2"), _calls_released),
    Check("status", rule_ids("C1", "A1", "A2", *_TRANSPORT), _status, observes=("status",)),
    Check("reason", rule_ids("V6"), _reason, observes=("status", "reason")),
    Check("text_exact", rule_ids("A2", *_TRANSPORT), _text_exact, observes=("arguments_text",)),
    Check("identity", rule_ids("A3", "A4", "V4", "E2", *_TRANSPORT), _identity),
    Check("no_premature_release", rule_ids("C4"), _no_premature_release, observes=("incremental",)),
    Check("release_order", rule_ids("E4"), _release_order),
    Check("findings", rule_ids("R"), _findings, observes=("findings",)),
)


def run_checks(
    expected: Expected,
    seen: Observation,
    kind: str,
    exposed: Collection[str],
    cited: Sequence[RuleId] = (),
) -> Judgement:
    """Judge ``seen`` by every check that applies to an expectation of ``kind`` and that can
    observe what it reads in ``exposed``; each failure filed under the rules it proves,
    narrowed to those of ``cited`` (the scenario's rules) where it could prove several."""
    seen = handed_back_as_ready(seen, exposed)
    failures: list[Failure] = []
    not_observable: list[str] = []
    for check in CHECKS:
        if not check.applies_to(kind):
            continue
        if not _observable(check, seen, exposed):
            not_observable.append(check.name)
            continue
        failures += [
            Failure(check.name, _narrow(problem.rules, cited), problem.message)
            for problem in check.function(expected, seen, exposed)
        ]
    return Judgement(tuple(failures), tuple(not_observable))


def handed_back_as_ready(seen: Observation, exposed: Collection[str]) -> Observation:
    """``seen`` as the contract reads it: where an implementation does not expose ``status``,
    a result it hands back without one is ready (its caller would run it, docs/contract.md)."""
    if "status" in exposed or all(r.result.status is not None for r in seen.releases):
        return seen
    releases = tuple(
        replace(r, result=replace(r.result, status="ready")) if r.result.status is None else r
        for r in seen.releases
    )
    return replace(seen, releases=releases)


def _observable(check: Check, seen: Observation, exposed: Collection[str]) -> bool:
    if not all(name in exposed for name in check.observes):
        return False
    # Findings are observable only from an implementation that keeps a list of them.
    return check.name != "findings" or (
        seen.findings is not None or seen.findings_unreadable is not None
    )


def _narrow(rules: tuple[str, ...], cited: Sequence[RuleId]) -> tuple[RuleId, ...]:
    """The rules of ``rules`` the scenario cites, or else the first: the one the problem
    proves by itself."""
    chosen = tuple(rule for rule in rules if rule in cited)
    return rule_ids(*(chosen or rules[:1]))


def _reason_rules(reason: str | None) -> tuple[str, ...]:
    return REASON_RULES.get(reason or "", ("V6",))

"""Checks: small named functions comparing an Observation with an Expectation.

Each check is tied to the rules of REQUIREMENTS.md it certifies and returns the problems it
found, each a sentence a person can act on. ``CHECKS`` lists them in the order a report shows
them; the scenario's expectation kind decides which apply:

- ``must``: every check.
- ``must-not``: the stream must not yield a ready call (JSONTestSuite's ``n_``): only the
  safety checks and ``nothing_ready``.
- ``impl-defined``: any outcome is acceptable except an unsafe one: only the safety checks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .observe import Observation, Observed
from .spec import Expected, ExpectedCall

__all__ = ["CHECKS", "Check", "Failure", "run_checks"]


@dataclass(frozen=True, slots=True)
class Failure:
    """A check that failed, with what it saw."""

    check: str
    rules: tuple[str, ...]
    message: str


CheckFunction = Callable[[Expected, Observation], list[str]]


@dataclass(frozen=True, slots=True)
class Check:
    """A named check and the rules it certifies."""

    name: str
    rules: tuple[str, ...]
    function: CheckFunction
    safety: bool = False
    """Applies to every expectation kind: a failure here means an unsafe outcome."""


def _no_crash(expected: Expected, seen: Observation) -> list[str]:
    if seen.error is None or seen.timed_out:  # a hang is no_hang's
        return []
    last = seen.error.strip().splitlines()[-1]
    return [f"the implementation raised {last}"]


def _no_hang(expected: Expected, seen: Observation) -> list[str]:
    return (
        ["the implementation did not finish within the per-case timeout"] if seen.timed_out else []
    )


def _released_once(expected: Expected, seen: Observation) -> list[str]:
    counts: dict[tuple[Any, Any], int] = {}
    for result in seen.results:
        counts[result.key] = counts.get(result.key, 0) + 1
    return [f"call {_where(key)} was released {n} times" for key, n in counts.items() if n > 1]


def _calls_released(expected: Expected, seen: Observation) -> list[str]:
    if seen.error is not None or seen.timed_out:
        return []
    want = {(call.choice, call.index) for call in expected.calls}
    got = {result.key for result in seen.results}
    problems = [f"call {_where(key)} was never released" for key in sorted(want - got)]
    problems += [
        f"an unexpected call {_where(key)} was released" for key in sorted(got - want, key=str)
    ]
    return problems


def _safe(expected: Expected, seen: Observation) -> list[str]:
    """A call released as ready must be one that is truly ready, with its true arguments."""
    problems = []
    for result in seen.results:
        if result.status != "ready":
            continue
        call = _expected_for(expected, result)
        if call is None or call.status != "ready":
            reason = "it does not exist" if call is None else f"it must be rejected {call.reason}"
            problems.append(f"call {_where(result.key)} was released ready but {reason}")
        elif call.name is not None and result.name != call.name:
            problems.append(
                f"call {_where(result.key)} was released ready as {_show(result.name)}, "
                f"but it calls {_show(call.name)}"
            )
        elif call.check_arguments and result.arguments != call.arguments:
            problems.append(
                f"call {_where(result.key)} was released ready with arguments "
                f"{_show(result.arguments)} instead of {_show(call.arguments)}"
            )
    return problems


def _nothing_ready(expected: Expected, seen: Observation) -> list[str]:
    return [
        f"call {_where(result.key)} was released ready; this stream must not yield a runnable call"
        for result in seen.results
        if result.status == "ready"
    ]


def _status(expected: Expected, seen: Observation) -> list[str]:
    problems = []
    for call, result in _pairs(expected, seen):
        if result.status != call.status:
            want = call.status if call.reason is None else f"{call.status} ({call.reason})"
            problems.append(f"call {_where(result.key)} is {result.status}, expected {want}")
    return problems


def _reason(expected: Expected, seen: Observation) -> list[str]:
    return [
        f"call {_where(result.key)} was rejected {result.reason!r}, expected {call.reason!r}"
        for call, result in _pairs(expected, seen)
        if call.status == result.status == "rejected" and result.reason != call.reason
    ]


def _text_exact(expected: Expected, seen: Observation) -> list[str]:
    return [
        f"call {_where(result.key)} has arguments_text {_show(result.arguments_text)}, "
        f"expected {_show(call.arguments_text)}"
        for call, result in _pairs(expected, seen)
        if call.arguments_text is not None and result.arguments_text != call.arguments_text
    ]


def _identity(expected: Expected, seen: Observation) -> list[str]:
    problems = []
    synthetic: dict[Any, tuple[Any, Any]] = {}
    for call, result in _pairs(expected, seen):
        if call.name is not None and result.name != call.name:
            problems.append(
                f"call {_where(result.key)} is named {_show(result.name)}, "
                f"expected {_show(call.name)}"
            )
        if call.synthetic_id:
            if call.status == "ready" and (not isinstance(result.id, str) or not result.id):
                problems.append(
                    f"call {_where(result.key)} needs a made-up id, got {_show(result.id)}"
                )
            elif result.id in synthetic:
                problems.append(
                    f"calls {_where(synthetic[result.id])} and {_where(result.key)} "
                    f"share id {result.id!r}"
                )
            synthetic[result.id] = result.key
        elif call.id is not None and result.id != call.id:
            problems.append(
                f"call {_where(result.key)} has id {_show(result.id)}, expected {_show(call.id)}"
            )
    return problems


def _no_premature_release(expected: Expected, seen: Observation) -> list[str]:
    problems = []
    for release in seen.releases:
        call = _expected_for(expected, release.result)
        if (
            call is not None
            and release.result.status == "ready"
            and call.release_offset is not None
            and release.offset < call.release_offset
        ):
            problems.append(
                f"call {_where(release.result.key)} was released after byte {release.offset}, "
                f"before its completion signal ended at byte {call.release_offset}"
            )
    return problems


def _release_order(expected: Expected, seen: Observation) -> list[str]:
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
                f"results released together by chunk {chunk} are not in index order: {keys}"
            )
    return problems


def _findings(expected: Expected, seen: Observation) -> list[str]:
    if seen.findings is None or seen.error is not None:
        return []
    problems = []
    if missing := expected.findings - seen.findings:
        problems.append(f"findings not recorded: {', '.join(sorted(missing))}")
    if extra := seen.findings - expected.findings:
        problems.append(
            f"findings recorded that the stream does not have: {', '.join(sorted(extra))}"
        )
    return problems


CHECKS = (
    Check("no_crash", ("V6",), _no_crash, safety=True),
    Check("no_hang", ("V5",), _no_hang, safety=True),
    Check("safe_release", ("C3", "C4", "V1"), _safe, safety=True),
    Check("released_once", ("A6", "E3"), _released_once, safety=True),
    Check("nothing_ready", ("C3", "V1"), _nothing_ready),
    Check("calls_released", ("A5", "A6", "A7", "C2"), _calls_released),
    Check("status", ("C1", "C2", "C3"), _status),
    Check("reason", ("V6",), _reason),
    Check("text_exact", ("A2",), _text_exact),
    Check("identity", ("A3", "A4", "V4"), _identity),
    Check("no_premature_release", ("C4",), _no_premature_release),
    Check("release_order", ("E4",), _release_order),
    Check("findings", ("R",), _findings),
)


def run_checks(expected: Expected, seen: Observation, kind: str) -> list[Failure]:
    """Every failure of the checks that apply to an expectation of ``kind``."""
    failures = []
    for check in CHECKS:
        if kind == "must-not":
            applies = check.safety or check.name == "nothing_ready"
        elif kind == "impl-defined":
            applies = check.safety
        else:
            applies = check.name != "nothing_ready"
        if applies:
            failures += [
                Failure(check.name, check.rules, message)
                for message in check.function(expected, seen)
            ]
    return failures


def _pairs(expected: Expected, seen: Observation) -> list[tuple[ExpectedCall, Observed]]:
    pairs = []
    for result in seen.results:
        call = _expected_for(expected, result)
        if call is not None:
            pairs.append((call, result))
    return pairs


def _expected_for(expected: Expected, result: Observed) -> ExpectedCall | None:
    for call in expected.calls:
        if (call.choice, call.index) == result.key:
            return call
    return None


def _where(key: tuple[Any, Any]) -> str:
    return f"{key[1]} of choice {key[0]}"


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"

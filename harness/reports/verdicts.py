"""What every format shows of a report: each scenario's verdict over its cases, the failing
scenarios once each (:class:`FailingScenario`) with their first problem and rerun command, and
the words and symbols for outcomes."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from ..core.case import OUTCOMES, Outcome
from ..rules import RULES, RuleId, failure_pointer
from .markup import visible
from .model import Report, RuleTally, count_outcomes

__all__ = [
    "LABEL",
    "SYMBOL",
    "FailingScenario",
    "Verdict",
    "case_counts",
    "check_names",
    "failing_cases",
    "failing_scenarios",
    "first_problem",
    "headline_of",
    "of_corpus",
    "one_line",
    "plural",
    "problems_of",
    "report_name",
    "rerun_command",
    "row_state",
    "rule_title",
    "scenario_verdicts",
    "standing_of",
    "totals",
    "verdict_of",
]


SYMBOL = {
    "passed": "✓",
    "failed": "✗",
    "errored": "!",
    "not_observable": "?",
    "unsupported": "∅",
    "not_applicable": "–",
    "hole": "⚠",
}


LABEL = {
    "passed": "passed",
    "failed": "failed",
    "errored": "errored",
    "not_observable": "not observable",
    "unsupported": "unsupported",
    "not_applicable": "not applicable",
}


class Verdict(NamedTuple):
    title: str
    rules: tuple[str, ...]
    outcome: Outcome
    cases: dict[str, int]


def scenario_verdicts(results: Iterable[Mapping[str, Any]]) -> dict[str, Verdict]:
    """Each scenario's verdict over its cases, in the order the scenarios first appear."""
    found: dict[str, tuple[str, list[str], dict[str, int]]] = {}
    for result in results:
        scenario = result["scenario"]
        if scenario not in found:
            found[scenario] = (result["title"], [], dict.fromkeys(OUTCOMES, 0))
        _, rules, cases = found[scenario]
        rules += [rule for rule in result["rules"] if rule not in rules]
        cases[result["outcome"]] += 1
    return {
        scenario: Verdict(title, tuple(rules), verdict_of(cases), cases)
        for scenario, (title, rules, cases) in found.items()
    }


def verdict_of(cases: Mapping[str, int]) -> Outcome:
    outcome: Outcome
    for outcome in ("failed", "errored", "passed", "unsupported"):
        if cases[outcome]:
            return outcome
    return "not_applicable"


def of_corpus(report: Report) -> bool:
    """True for a run of the scenario corpus; False for a route's certification."""
    return "route" not in report.header


def report_name(report: Report) -> str:
    implementation: dict[str, Any] = report.header["implementation"]
    return str(implementation["name"])


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def totals(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{counts[outcome]} {LABEL[outcome]}" for outcome in OUTCOMES)


def standing_of(report: Report) -> tuple[str, Outcome]:
    """The run in a few words (``412/412 passed``, ``3 failed``) and the outcome that sets its
    tone: failed, errored, passed, or unsupported / not_applicable when nothing ran."""
    counts = count_outcomes(report.results)
    ran = counts["passed"] + counts["failed"] + counts["errored"]
    bad = [f"{counts[o]} {LABEL[o]}" for o in ("failed", "errored") if counts[o]]
    if bad:
        standing = ", ".join(bad), verdict_of(counts)
    elif ran:
        standing = f"{counts['passed']}/{ran} passed", "passed"
    else:
        standing = "nothing ran", verdict_of(counts)
    return standing


def headline_of(report: Report) -> str:
    """The standing with its symbol: ``✓ 412/412 passed``, ``✗ 3 failed``."""
    words, tone = standing_of(report)
    unfinished = "" if report.footer else " (the run did not finish)"
    return f"{SYMBOL[tone]} {words}{unfinished}"


def problems_of(result: Mapping[str, Any]) -> list[str]:
    """Each failed check as ``check (A2, C4; callstream explain A2): message``."""
    return [
        f"{failure['check']} ({failure_pointer(failure['rules'])}): {failure['message']}"
        for failure in result["failures"]
    ]


def failing_cases(
    results: Iterable[Mapping[str, Any]],
) -> dict[str, list[tuple[int, Mapping[str, Any]]]]:
    """The failed and errored cases of each scenario, with their line numbers, in file order."""
    failing: dict[str, list[tuple[int, Mapping[str, Any]]]] = {}
    for line, result in enumerate(results, 2):
        if result["outcome"] in ("failed", "errored"):
            failing.setdefault(result["scenario"], []).append((line, result))
    return failing


class FailingScenario(NamedTuple):
    """A scenario some of whose cases failed or errored, as every format lists it: once,
    however many of its cases went wrong."""

    scenario: str
    outcome: Outcome
    """``failed`` when any of its cases failed, else ``errored``."""
    cases: tuple[tuple[int, Mapping[str, Any]], ...]
    """Its bad cases, each with its line number in ``report.jsonl``, in file order."""

    @property
    def first(self) -> Mapping[str, Any]:
        """Its first bad case."""
        return self.cases[0][1]

    def splittings(self) -> str:
        """Where it went wrong, profile by profile: ``lenient: whole, bytes, pairs, random-1
        and 4 more``."""
        by_profile: dict[str, list[str]] = {}
        for _, result in self.cases:
            by_profile.setdefault(result["profile"], []).append(result["splitting"])
        shown = []
        for profile, splittings in by_profile.items():
            more = len(splittings) - _SPLITTINGS_NAMED
            named = ", ".join(splittings[:_SPLITTINGS_NAMED])
            shown.append(f"{profile}: {named}" + (f" and {more} more" if more > 0 else ""))
        return "; ".join(shown)

    def line(self) -> str:
        """The scenario in one line: ``FAILED oc-id [lenient: whole, bytes] check: message``,
        the message of its first bad case."""
        return (
            f"{self.outcome.upper()} {self.scenario} [{self.splittings()}] "
            f"{first_problem(self.first)}"
        )


_SPLITTINGS_NAMED = 4
"""Splittings of one profile named in a failing scenario's line; the rest are counted."""


def failing_scenarios(results: Iterable[Mapping[str, Any]]) -> list[FailingScenario]:
    """The scenarios with failed or errored cases among ``results`` (report lines, in file
    order), in the order they first appear."""
    return [
        FailingScenario(
            scenario,
            "failed" if any(r["outcome"] == "failed" for _, r in cases) else "errored",
            tuple(cases),
        )
        for scenario, cases in failing_cases(results).items()
    ]


def first_problem(result: Mapping[str, Any]) -> str:
    """What went wrong in a case, in one line: its first failed check, the rules it is filed
    under and its message (``check (A3; callstream explain A3): message (and 2 more)``), or the
    last line of why it errored."""
    failures = result["failures"]
    if failures:
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        first = failures[0]
        pointer = failure_pointer(first["rules"])
        return one_line(f"{first['check']} ({pointer}): {first['message']}{more}")
    detail = (result["detail"] or "").strip()
    return one_line(detail.splitlines()[-1]) if detail else "no detail"


def rerun_command(rerun: Sequence[str], scenario: str) -> str:
    """The shell command that runs ``scenario`` again: the run's ``rerun`` words (its command
    line without any selection) and ``-k``, each quoted for a POSIX shell. A ``callstream``
    command selects the id exactly (``-k =ID``: some ids hold others); pytest's ``-k`` has no
    such form and gets the id itself."""
    exact = "=" if rerun[:1] == ["callstream"] else ""
    return shlex.join([*rerun, "-k", f"{exact}{scenario}"])


def one_line(text: str) -> str:
    return " ".join(visible(text).split("\n"))


def case_counts(verdict: Verdict) -> str:
    """``3 failed of 8 cases``, ``1 failed, 1 errored of 4 cases``."""
    bad = [f"{verdict.cases[o]} {LABEL[o]}" for o in ("failed", "errored") if verdict.cases[o]]
    return f"{', '.join(bad)} of {plural(sum(verdict.cases.values()), 'case')}"


def check_names(results: Iterable[Mapping[str, Any]]) -> str:
    """The checks that failed, each once, or ``errored``."""
    names = dict.fromkeys(f["check"] for result in results for f in result["failures"])
    return ", ".join(names) or LABEL["errored"]


def rule_title(rule: str) -> str:
    return RULES.get(RuleId(rule), "not a rule of REQUIREMENTS.md")


def row_state(tally: RuleTally) -> str:
    """How a rule stands: ``hole``, or the worst state of the scenarios judged on it."""
    if tally["hole"]:
        return "hole"
    for state in ("failed", "errored", "passed", "not_observable", "unsupported"):
        if tally[state]:
            return state
    return "not_applicable"

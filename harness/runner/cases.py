"""The cases of a run: each scenario under the declared profile, cut by each of its splittings,
in corpus order; the scenarios ``-k`` selects; and a verdict the parent decides without running
a case."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.case import CaseResult, Outcome, splittings_of
from ..core.declaration import Applicability, Declaration
from ..core.judgement import Failure
from ..core.spec import Scenario, Splitting
from ..errors import UsageError

__all__ = ["Case", "expand", "select_scenarios", "verdict"]


@dataclass(frozen=True, slots=True)
class Case:
    """One scenario under one profile, cut by one splitting: the unit that passes or fails."""

    number: int
    """Its place in the run; results are written in this order."""
    scenario: Scenario
    profile: str
    splitting: Splitting
    skipped: tuple[Applicability, str] | None = None
    """Why the implementation cannot run it (outcome and reason); None when it is to be run."""

    @property
    def name(self) -> str:
        """``scenario-id[profile-splitting]``, as the pytest plugin names its items."""
        return f"{self.scenario.id}[{self.profile}-{self.splitting.label}]"


def expand(scenarios: Sequence[Scenario], declaration: Declaration) -> list[Case]:
    """Every case of ``scenarios`` under the declared profile, in order, each marked with why
    it cannot run, if it cannot."""
    cases: list[Case] = []
    for scenario in scenarios:
        skipped = declaration.skips(scenario)
        cases += [
            Case(len(cases) + n, scenario, declaration.profile, splitting, skipped)
            for n, splitting in enumerate(splittings_of(scenario))
        ]
    return cases


def select_scenarios(scenarios: Sequence[Scenario], expression: str) -> list[Scenario]:
    """The scenarios ``-k expression`` selects: comma-separated terms, each matching a scenario
    whose id contains it, that carries it as a tag, or that cites it as a rule; a term written
    ``=ID`` matches that id exactly (what rerun commands use: some ids hold others)."""
    terms = [term.strip() for term in expression.split(",")]
    if not all(terms):
        raise UsageError(
            f"-k {expression!r} has an empty term; give comma-separated ids, tags or rules"
        )
    chosen = [
        scenario
        for scenario in scenarios
        if any(
            scenario.id == term[1:]
            if term.startswith("=")
            else term in scenario.id or term in scenario.tags or term in scenario.rules
            for term in terms
        )
    ]
    if not chosen:
        raise UsageError(f"-k {expression!r} selects no scenario (it matches ids, tags and rules)")
    return chosen


def verdict(
    case: Case,
    outcome: Outcome,
    *failures: Failure,
    detail: str | None = None,
    elapsed: float = 0.0,
) -> CaseResult:
    """A verdict on ``case`` that no run of it gave: the parent's (the case was skipped, or its
    worker hung or died), or a worker's when the harness could not judge the case."""
    return CaseResult.of(
        case.scenario,
        case.profile,
        case.splitting,
        outcome,
        failures=failures,
        detail=detail,
        elapsed=elapsed,
    )

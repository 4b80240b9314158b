"""The cases of a run: each scenario under the declared profile, cut by each of its splittings,
in corpus order; the scenarios ``-k`` selects; and a verdict the parent decides without running
a case."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.case import CaseResult, Outcome, splittings_of
from ..core.declaration import Applicability, Declaration
from ..core.judgement import Failure
from ..core.rendering import render
from ..core.spec import Scenario, Splitting
from ..errors import PlanError, UsageError

__all__ = ["Case", "costliest_first", "expand", "select_scenarios", "verdict"]


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


def costliest_first(cases: Sequence[Case]) -> list[Case]:
    """``cases`` in the order to hand them to workers: the costliest first, ties in case order.

    Longest processing time first: the big cases start while every worker is busy and the run
    ends on small ones, so no worker idles at the end while another finishes a big case. A
    case's cost is estimated from its stream's length ``n``: ``pairs`` runs a stream of ``n``
    bytes ``n - 1`` times, ``bytes`` makes ``n`` calls, any other splitting a few. A stream
    that does not render costs nothing here (its case errors at once in its worker).
    """
    lengths: dict[int, int] = {}

    def cost(case: Case) -> int:
        scenario = case.scenario
        if id(scenario) not in lengths:
            try:
                lengths[id(scenario)] = len(render(scenario.spec).data)
            except (PlanError, UsageError):
                lengths[id(scenario)] = 0
        size = lengths[id(scenario)]
        kind = case.splitting.kind
        return size * size if kind == "pairs" else size * _CALL_COST if kind == "bytes" else size

    return sorted(cases, key=lambda case: -cost(case))


_CALL_COST = 30
"""What one ``feed()`` of one byte costs, in bytes of a stream fed whole (reference: ~3 µs
against ~0.1 µs a byte)."""


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

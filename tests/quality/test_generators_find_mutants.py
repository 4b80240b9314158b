"""The generators' own quality bar: every mutant in ``tests/mutants/`` is found from generated
streams alone (no YAML scenario), within a bounded, derandomised budget, and shrinks to a small
stream: at most two calls and ten argument fragments. A mutant the fuzzer cannot find is a gap
in the generators, to be closed there.

Each search is the one ``callstream fuzz --impl py:tests.mutants.<name>:factory --profile ci
--max-examples 3000`` runs, so these tests and the command agree; the saved regression then
reproduces the bug on the mutant and passes on the reference.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from callstream.connect.connectables import load_implementation
from callstream.core.case import run_case
from callstream.corpus.scenario import load_scenarios
from callstream.fuzz import fuzz
from callstream.implementations import reference
from tests.mutants import MUTANTS

BUDGET = 3000
"""Examples the ci profile may run to find each mutant (the issue's bound)."""
MAX_CALLS = 2
MAX_FRAGMENTS = 10
SHRINK_TIME = 15.0
"""Seconds of Hypothesis shrinking per find: the big steps come first, and the last pass that
drops calls and tools (``callstream.fuzz.minimise``) does not count against it."""


CORPUS_ONLY = {
    "responses_ignores_done": "its bug shows only when a call's text comes in .done alone, "
    "which a plan cannot send (its fragments must concatenate to its arguments)",
    "responses_keeps_added_arguments": "its bug shows only when no .done restates the text, "
    "which a plan always sends",
}
"""Mutants only the corpus's literal streams catch, and why the generators cannot."""


GAPS: dict[str, str] = {}
"""Mutants the generators do not yet find and shrink within the bar, and why: gaps to close in
the generators, each killed by the corpus meanwhile (tests/test_corpus.py)."""


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(reason=GAPS[name])) if name in GAPS else name
        for name in sorted(set(MUTANTS) - set(CORPUS_ONLY))
    ],
)
def test_the_generators_find_and_shrink_the_mutant(name: str, tmp_path: Path) -> None:
    """``callstream fuzz`` under the ci profile finds what the mutant gets wrong, on a rule its
    bug breaks, shrinks it small, and saves a scenario that replays the failure."""
    mutant = MUTANTS[name]
    result = fuzz(
        load_implementation(mutant.connectable),
        profile="ci",
        max_examples=BUDGET,
        shrink_time=SHRINK_TIME,
        save_regressions=tmp_path,
        out=tmp_path / "report",
    )
    assert result.found is not None, f"{name}: nothing found in {result.examples} examples"
    assert result.found_after is not None
    assert result.found_after <= BUDGET
    assert result.scenario is not None
    assert result.regression is not None
    calls = result.scenario.spec.calls
    fragments = sum(len(plan.fragments) for plan in calls)
    assert len(calls) <= MAX_CALLS, result.found.repro
    assert fragments <= MAX_FRAGMENTS, result.found.repro
    (saved,) = load_scenarios([result.regression]).scenarios
    (splitting,) = saved.splittings
    replayed = run_case(saved, "lenient", splitting, mutant.factory)
    assert replayed.outcome == "failed", replayed
    told = partial(reference, dialect=saved.spec.dialect)
    assert run_case(saved, "lenient", splitting, told).outcome == "passed"

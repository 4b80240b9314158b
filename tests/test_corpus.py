"""The corpus proves itself: the reference passes every scenario of every dialect folder, each
read in its own dialect, and every mutant assembler (each a real public bug) fails at least one
scenario of the dialect it reads on a rule its bug breaks.

The two-way ``pairs`` splitting is left out here to keep the test run short; ``callstream
run`` (the README's main job) runs it in full.
"""

from __future__ import annotations

from functools import cache, partial

import pytest

from callstream.core.case import run_case, splittings_of
from callstream.core.spec import Scenario, Splitting
from callstream.corpus.scenario import default_corpus, load_scenarios
from callstream.implementations import reference_for
from tests.mutants import MUTANTS


@cache
def corpus() -> tuple[Scenario, ...]:
    loaded = load_scenarios(default_corpus())
    assert not loaded.errors, "\n".join(map(str, loaded.errors))
    return tuple(loaded.scenarios)


def quick_splittings(scenario: Scenario) -> list[Splitting]:
    return [s for s in splittings_of(scenario) if s.kind != "pairs"]


def test_the_corpus_is_large_and_loads_cleanly() -> None:
    """At least 150 scenarios load with no error."""
    assert len(corpus()) >= 150


@pytest.mark.parametrize("scenario", corpus(), ids=lambda s: s.id)
def test_the_reference_passes_every_scenario(scenario: Scenario) -> None:
    """The reference meets every expectation, under each profile the scenario runs in and
    every splitting but ``pairs``, told which dialect each stream is in, on a route with the
    opt-ins the scenario is written for."""
    for profile in scenario.profiles:
        route = reference_for(profile, scenario.opt_ins)
        factory = partial(route, dialect=scenario.spec.dialect)
        for splitting in quick_splittings(scenario):
            result = run_case(scenario, profile, splitting, factory)
            assert result.outcome == "passed", (profile, splitting.label, result.failures)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_every_mutant_is_caught_on_a_rule_its_bug_breaks(name: str) -> None:
    """Some scenario of the mutant's dialect fails it, and the failure concerns one of the
    rules the bug breaks (cited by the scenario or certified by the failing check)."""
    mutant = MUTANTS[name]
    broken = set(mutant.breaks)
    dialect = mutant.declaration.get("dialect", "openai-chat")
    for scenario in corpus():
        if (
            "lenient" not in scenario.profiles
            or scenario.spec.dialect != dialect
            or scenario.opt_ins  # the mutants read plain routes
        ):
            continue
        for splitting in quick_splittings(scenario):
            result = run_case(scenario, "lenient", splitting, mutant.factory)
            if result.outcome != "failed":
                continue
            rules = set(scenario.rules) | {rule for f in result.failures for rule in f.rules}
            if rules & broken:
                return
    pytest.fail(f"no scenario catches {name} ({mutant.bug}) on {sorted(broken)}")

"""A route that opts in to snapshots (quirk openai-chat/C10, D76), predicted and fuzzed: the
oracle reads an openai-chat plan fragment by fragment as such a route must, agrees with every
expectation the corpus writes out for one, and ``callstream fuzz`` draws streams for it, which
the reference passes and a reader that guesses at deltas fails."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, settings

from callstream import strategies
from callstream.cli import main
from callstream.connect.connectables import load_implementation
from callstream.core.oracle import expect
from callstream.core.rendering import render
from callstream.corpus.scenario import load_scenarios
from callstream.errors import PlanError, UsageError
from callstream.fuzz import fuzz
from callstream.implementations import ReferenceFactory
from callstream.reference import Assembler, Limits

ROUTE = frozenset({"snapshots"})
CORPUS = Path(__file__).resolve().parents[1] / "scenarios" / "openai-chat" / "route-opt-ins.yaml"
FIND = settings(
    database=None,
    derandomize=True,
    deadline=None,
    max_examples=2000,
    phases=(Phase.generate,),
    suppress_health_check=list(HealthCheck),
)


def _snapshot_scenarios() -> list[Any]:
    scenarios = load_scenarios([CORPUS]).scenarios
    return [s for s in scenarios if s.opt_ins == ROUTE and not s.spec.literal]


def test_the_oracle_agrees_with_every_snapshots_expectation_the_corpus_writes_out() -> None:
    """Each planned snapshots scenario of the corpus, its written expectation set aside: the
    oracle derives the same outcome for every call (status, reason, and the text where one is
    written) and the same findings; it refuses only the plans under a size limit, where the
    limit and the refusal race (D76)."""
    scenarios = _snapshot_scenarios()
    assert len(scenarios) >= 5
    refused = []
    for scenario in scenarios:
        spec = replace(scenario.spec, expected=None)
        written = scenario.spec.expected["lenient"]
        try:
            derived = expect(spec, render(spec), "lenient", ROUTE)
        except PlanError:
            refused.append(scenario.id)
            assert spec.limits != Limits(), scenario.id
            continue
        assert derived.findings == written.findings, scenario.id
        assert len(derived.calls) == len(written.calls), scenario.id
        for mine, theirs in zip(derived.calls, written.calls, strict=True):
            assert (mine.status, mine.reason) == (theirs.status, theirs.reason), scenario.id
            if theirs.arguments_text is not None:
                assert mine.arguments_text == theirs.arguments_text, scenario.id
    assert len(refused) < len(scenarios)


def test_a_snapshots_route_is_predicted_under_the_lenient_profile_alone() -> None:
    """A route that opts in runs under the lenient profile only (D75); repair_json, whose
    repaired text only the implementation decides, is not predicted at all (D76)."""
    (scenario, *_) = _snapshot_scenarios()
    spec = replace(scenario.spec, expected=None)
    with pytest.raises(PlanError, match="lenient profile only"):
        expect(spec, render(spec), "strict", ROUTE)
    with pytest.raises(PlanError, match="repair_json"):
        expect(spec, render(spec), "lenient", frozenset({"repair_json"}))


def test_the_generators_draw_both_readings_for_a_snapshots_route() -> None:
    """Streams drawn for the route hold calls sent as snapshots (ready with the last, C10
    recorded) and calls sent as ordinary deltas (refused ``malformed_json``)."""
    drawn = strategies.scenarios(opt_ins=ROUTE)

    def derived(scenario: Any) -> Any:
        return expect(scenario.spec, render(scenario.spec), "lenient", ROUTE)

    read = find(drawn, lambda s: "openai-chat/C10" in derived(s).findings, settings=FIND)
    assert any(plan.snapshots for plan in read.spec.calls)
    assert (read.opt_ins, read.profiles) == (ROUTE, ("lenient",))
    refused = find(
        drawn,
        lambda s: (
            any(call.reason == "malformed_json" for call in derived(s).calls)
            and not any(plan.snapshots for plan in s.spec.calls)
        ),
        settings=FIND,
    )
    assert any(len([f for f in plan.fragments if f]) > 1 for plan in refused.spec.calls)


def test_fuzzing_a_snapshots_route_passes_the_reference(tmp_path: Path) -> None:
    """``callstream fuzz`` on the reference's snapshots route draws openai-chat streams for
    that route alone, and finds nothing."""
    result = fuzz(
        load_implementation("py:callstream.implementations:reference_snapshots"),
        profile="ci",
        max_examples=300,
        seed=0,
        coverage=True,
        save_regressions=tmp_path / "regressions",
        out=tmp_path / "report",
    )
    assert (result.exit_code, result.found, result.examples) == (0, None, 300)
    assert result.features is not None
    assert dict(result.features.streams) == {"openai-chat": 300}
    assert result.features.counts["openai-chat"]["chat.snapshots"] > 0


class _GuessesAtDeltas(ReferenceFactory):
    """The reference on a snapshots route, but a fragment that does not extend the text so far
    is appended to it, as a delta: the guess D76 rules out (the reference's own old bug)."""

    def __call__(self, **kwargs: Any) -> Assembler:
        assembler = super().__call__(**kwargs)
        book = assembler._book
        append = book.append

        def guessing(slot: Any, fragment: str) -> None:
            if fragment and slot.received_arguments and not fragment.startswith(slot.text):
                book.snapshots = False
                try:
                    append(slot, fragment)
                finally:
                    book.snapshots = True
                return
            append(slot, fragment)

        book.append = guessing  # type: ignore[method-assign]
        return assembler


guesses_at_deltas = _GuessesAtDeltas("lenient", ROUTE)


def test_fuzzing_a_snapshots_route_finds_a_reader_that_guesses_at_deltas(tmp_path: Path) -> None:
    """The fuzzer finds the route that reads an ordinary delta as the text's next part, and
    saves the find as a scenario for the route (its opt-ins written), which ``callstream run``
    replays: the mutant fails it, the reference's snapshots route passes it."""
    mutant = f"py:{__name__}:guesses_at_deltas"
    result = fuzz(
        load_implementation(mutant),
        profile="ci",
        max_examples=300,
        seed=0,
        shrink_time=5,
        save_regressions=tmp_path / "regressions",
        out=tmp_path / "report",
    )
    assert result.exit_code == 1
    assert result.regression is not None
    (saved,) = load_scenarios([result.regression]).scenarios
    assert (saved.opt_ins, saved.profiles) == (ROUTE, ("lenient",))
    replay = ["run", str(result.regression), "--jobs", "1"]
    assert main([*replay, "--impl", mutant, "--out", str(tmp_path / "mutant")]) == 1
    reference = "py:callstream.implementations:reference_snapshots"
    assert main([*replay, "--impl", reference, "--out", str(tmp_path / "reference")]) == 0


def test_a_route_with_opt_ins_the_oracle_does_not_predict_is_a_usage_error() -> None:
    """repair_json is not drawn for: fuzzing such a route says so, rather than skipping every
    example (D74, D76)."""
    with pytest.raises(UsageError, match="snapshots alone"):
        fuzz(load_implementation("py:callstream.implementations:reference_repair_json"))

"""``callstream fuzz``: finds a real bug from generated streams alone, shrinks it, keeps it as a
YAML scenario that ``callstream run`` reproduces, and finds nothing in the reference."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import callstream.reference
from callstream import strategies
from callstream.cli import main
from callstream.connect.connectables import load_implementation
from callstream.core.case import CaseResult, run_case
from callstream.core.rendering import render
from callstream.core.spec import CallPlan, Scenario, Splitting, StreamSpec
from callstream.corpus.regressions import write_regression
from callstream.corpus.scenario import load_scenarios
from callstream.fuzz import FuzzResult, database_for, describe, fuzz, minimise, settings_for
from callstream.fuzz._searching import _BUDGET_BATCH, EXAMPLES_PER_TEST_CASE, _Search, _search
from callstream.reference import Limits, Tool
from callstream.reports import load_report

MUTANT = "py:tests.mutants.releases_when_text_parses:factory"


def test_fuzz_finds_shrinks_and_saves_a_mutant(tmp_path: Path) -> None:
    """Against the mutant that releases a call as soon as its text parses (vercel/ai#13137),
    the ci profile finds the bug (C4; C3 when the shrunk stream ends cut short; T4 when it ends
    broken), the shrunk stream has one call, and the saved YAML fails the mutant under
    ``callstream run`` while the reference passes it."""
    result = fuzz(
        load_implementation(MUTANT),
        profile="ci",
        max_examples=300,
        save_regressions=tmp_path / "regressions",
        out=tmp_path / "report",
    )
    assert result.exit_code == 1
    assert result.found is not None
    assert result.regression is not None
    # Released early, a call shows before its finish (C4) or, when the stream then ends cut
    # short, as a truncated call run (C3), or, when it ends broken (a choice that is no object,
    # an in-band error), as a call run that the stream's failure rejects (T4): each the rule
    # its check proves.
    found = {rule for failure in result.found.failures for rule in failure.rules}
    assert {"C3", "C4", "T4"} & found
    (scenario,) = load_scenarios([result.regression]).scenarios
    assert len(scenario.spec.calls) == 1
    assert load_report(result.report).results[0]["outcome"] == "failed"  # type: ignore[arg-type]
    replay = ["run", str(result.regression), "--jobs", "1"]
    assert main([*replay, "--impl", MUTANT, "--out", str(tmp_path / "mutant")]) == 1
    assert main([*replay, "--out", str(tmp_path / "reference")]) == 0


def test_fuzz_finds_nothing_in_the_reference(tmp_path: Path) -> None:
    """A bounded fuzz of the reference passes and saves nothing."""
    result = fuzz(
        load_implementation("py:callstream.implementations:reference"),
        profile="ci",
        max_examples=40,
        save_regressions=tmp_path / "regressions",
        out=tmp_path / "report",
    )
    assert (result.exit_code, result.found, result.examples >= 40) == (0, None, True)
    assert not (tmp_path / "regressions").exists()


def test_a_seeded_budget_draws_exactly_its_examples_the_same_way_every_time(
    tmp_path: Path,
) -> None:
    """A budget larger than one Hypothesis run (``_BUDGET_BATCH``) is spent in several, each
    from a seed of its own: exactly the budget is drawn, and the same seed draws the same
    streams again (the same wire features, counted stream by stream)."""
    budget = _BUDGET_BATCH * 2 + 17
    tallies = []
    for attempt in ("first", "second"):
        result = fuzz(
            load_implementation("py:callstream.implementations:reference"),
            profile="ci",
            max_examples=budget,
            seed=7,
            coverage=True,
            save_regressions=tmp_path / attempt / "regressions",
            out=tmp_path / attempt / "report",
        )
        assert (result.exit_code, result.examples) == (0, budget)
        assert result.features is not None
        tallies.append(result.features)
    assert tallies[0] == tallies[1]
    assert sum(tallies[0].streams.values()) == budget


def test_a_search_draws_each_example_afresh() -> None:
    """Hypothesis's mutator tries each test case again with a span copied over another of the
    same label, and four examples to a test case (``EXAMPLES_PER_TEST_CASE``) hold four spans
    of every label: left to it, seven examples in ten were copies. Drawn in a span it leaves
    alone, they are distinct, but for the plain stream Hypothesis tries first in each run (its
    simplest test case, a couple of times a run; an example the same as the one before it in
    its test case is not run again)."""
    implementation = load_implementation("py:callstream.implementations:reference")
    ran: list[tuple[str, Splitting]] = []

    def run(scenario: Scenario, profile: str, splitting: Splitting) -> CaseResult:
        ran.append((scenario.id, splitting))
        return CaseResult.of(scenario, profile, splitting, "passed")

    class Beacon:
        def example(self, number: int, choices: Sequence[object]) -> None:
            pass

    search = _Search("ci", 800, None, None, False, timeout=10.0, shrink_time=1.0)
    outcome = _search(
        implementation, search, run, Beacon(), lambda *_: None, lambda: False, lambda *_: None
    )  # type: ignore[arg-type]
    assert outcome.examples == len(ran) == 800
    assert EXAMPLES_PER_TEST_CASE > 1
    assert len(set(ran)) >= 0.93 * len(ran), len(set(ran))


def test_ci_profile_is_derandomised_and_keeps_no_database(tmp_path: Path) -> None:
    """The ci profile is set explicitly: derandomised, no database, whatever Hypothesis loaded;
    the randomised profiles keep the database they are given."""
    chosen = settings_for("ci", max_examples=10, database=None)
    assert (chosen.derandomize, chosen.database, chosen.max_examples) == (True, None, 10)
    database = database_for(str(tmp_path), profile="ci", writable=True)
    assert database is None
    for profile in ("dev", "nightly"):
        database = database_for(str(tmp_path), profile=profile, writable=True)
        chosen = settings_for(profile, max_examples=10, database=database)
        assert (chosen.derandomize, chosen.database) == (False, database)


def test_a_second_run_replays_the_first_runs_failure_from_the_database(tmp_path: Path) -> None:
    """What one run finds is kept in ``--db`` (a folder it creates), and the next run replays it
    before generating anything, as a failure already shrunk: found within the first two
    examples (the database may hold one failing example per distinct failure, smallest first),
    with neither search nor shrinking after it, where the first run searched and shrank."""
    runs = []
    for run in range(2):
        runs.append(
            fuzz(
                load_implementation(MUTANT),
                profile="dev",
                max_examples=300,
                shrink_time=10,
                database=str(tmp_path / "db"),
                save_regressions=tmp_path / "regressions",
                out=tmp_path / f"report-{run}",
            )
        )
        assert runs[-1].found is not None
        assert any((tmp_path / "db").iterdir())
    first, second = runs
    assert first.examples > 10
    assert second.found_after is not None
    assert second.found_after <= 2
    assert second.examples <= 3  # Hypothesis runs a failure once more to report it


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    """A duration under the bounded ci profile, and a bad duration, are usage errors."""
    assert main(["fuzz", "--profile", "ci", "--duration", "1m"]) == 2
    assert "bounded by --max-examples" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["fuzz", "--duration", "soon"])
    assert exit_info.value.code == 2


def test_a_route_that_opts_in_is_not_fuzzed(capsys: pytest.CaptureFixture[str]) -> None:
    """The fuzzer draws plain routes, which a route that opts in does not run (D74): fuzzing
    one is a usage error that says where its scenarios are, not a run of skipped examples."""
    impl = "py:callstream.implementations:reference_repair_json"
    assert main(["fuzz", "--impl", impl, "--max-examples", "5"]) == 2
    assert "declares the route opt-ins repair_json" in capsys.readouterr().err


def test_workers_split_the_budget_and_the_first_find_wins(tmp_path: Path) -> None:
    """With two worker processes, the budget is shared and a mutant's bug is still found,
    shrunk and saved once, as with one process."""
    result = fuzz(
        load_implementation(MUTANT),
        profile="ci",
        max_examples=600,
        workers=2,
        save_regressions=tmp_path / "regressions",
        out=tmp_path / "report",
    )
    assert result.exit_code == 1
    assert result.found_after is not None
    assert result.regression is not None
    assert [p.name for p in (tmp_path / "regressions").iterdir()] == [result.regression.name]
    replay = ["run", str(result.regression), "--jobs", "1", "--impl", MUTANT]
    assert main([*replay, "--out", str(tmp_path / "mutant")]) == 1


def test_workers_against_the_reference_run_the_whole_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``callstream fuzz --workers 2`` runs the budget across both processes, finds nothing in
    the reference, and shows its progress (examples, failures, distinct events) on stderr."""
    code = main(
        [
            "fuzz",
            "--profile",
            "ci",
            "--max-examples",
            "60",
            "--workers",
            "2",
            "--save-regressions",
            str(tmp_path / "regressions"),
            "--out",
            str(tmp_path / "report"),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0
    assert "nothing found" in out
    ran = int(out.split(" examples")[0])
    assert ran >= 60
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"callstream fuzz: {ran}/60 examples")
    assert "0 failures" in last
    assert "distinct events" in last


def test_a_duration_ends_the_search(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A time budget stops the search between examples (not after a whole batch), under the
    nightly profile's randomised seeds, again and again on one shared database: a stop never
    reads as flaky data generation when the database replays an example, and Hypothesis prints
    no "reproduce with @seed" line for a search that was merely stopped."""
    for run in range(8):
        result = fuzz(
            load_implementation("py:callstream.implementations:reference"),
            profile="nightly",
            duration=0.5,
            database=str(tmp_path / "db"),
            database_writable=True,
            save_regressions=tmp_path / "regressions",
            out=tmp_path / f"report-{run}",
        )
        assert result.exit_code == 0
        assert result.examples > 0
        assert result.elapsed < 60  # a batch of 500 examples would take far longer
    out, err = capsys.readouterr()
    assert "@seed" not in out + err


class _Sleeps:
    def feed(self, data: bytes) -> list[Any]:
        time.sleep(3600)
        return []

    def close(self) -> list[Any]:
        return []


def hangs_with_two_tools(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Never returns from ``feed()`` when the request offers two tools or more."""
    return _Sleeps() if len(tools) >= 2 else callstream.reference.Assembler(tools, limits=limits)


def test_a_hanging_implementation_fails_no_hang_and_is_shrunk(tmp_path: Path) -> None:
    """An example whose stream the implementation never finishes is stopped after the timeout,
    fails ``no_hang`` and is shrunk (each step costing the timeout, within the shrink time) to
    one call and the two tools that make it hang."""
    result = fuzz(
        load_implementation("py:tests.test_fuzz:hangs_with_two_tools"),
        profile="ci",
        max_examples=200,
        timeout=0.2,
        shrink_time=5,
        save_regressions=tmp_path / "regressions",
        out=tmp_path / "report",
    )
    assert result.found is not None
    assert [failure.check for failure in result.found.failures] == ["no_hang"]
    assert result.scenario is not None
    assert len(result.scenario.spec.tools) == 2
    assert len(result.scenario.spec.calls) == 1


def test_minimise_drops_the_calls_and_tools_a_failure_does_not_need() -> None:
    """Where Hypothesis stops at a local minimum, ``minimise`` drops whole calls and unused
    tools while the mutant still fails on the same check and the reference passes."""
    weather = Tool("get_weather", {"type": "object", "properties": {}})
    search = Tool("search", {"type": "object", "properties": {"a": {"type": "string"}}})
    unused = Tool("lookup", None)
    spec = StreamSpec(
        tools=(weather, search, unused),
        calls=(
            CallPlan("get_weather", "{}", ("{}",), id="call_0"),
            CallPlan("search", '{"a":0}', ('{"a"', ":0}"), id="call_1"),
        ),
    )
    scenario = strategies.scenario_for(spec, (Splitting("whole"),))
    mutant = load_implementation("py:tests.mutants.skips_schema_validation:factory")
    case = run_case(scenario, "lenient", Splitting("whole"), mutant.factory)
    assert case.failures[0].check == "safe_release"
    smaller, again = minimise(mutant, scenario, case)
    assert [plan.name for plan in smaller.spec.calls] == ["search"]
    assert [tool.name for tool in smaller.spec.tools] == ["search"]
    assert again.failures[0].check == "safe_release"


def test_minimise_keeps_only_the_offsets_the_smaller_stream_reaches(tmp_path: Path) -> None:
    """A stream cut at explicit offsets keeps, once ``minimise`` has dropped a call, only the
    offsets inside the shorter stream, so the find can be saved as a scenario file (which
    refuses an offset past the end of the stream) and loads back."""
    weather = Tool("get_weather", {"type": "object", "properties": {}})
    search = Tool("search", {"type": "object", "properties": {"a": {"type": "string"}}})
    spec = StreamSpec(
        tools=(weather, search),
        calls=(
            CallPlan("get_weather", "{}", ("{}",), id="call_0"),
            CallPlan("search", '{"a":0}', ('{"a"', ":0}"), id="call_1"),
        ),
    )
    length = len(render(spec).data)
    cut = Splitting("offsets", offsets=(7, length - 3))
    scenario = strategies.scenario_for(spec, (cut,))
    mutant = load_implementation("py:tests.mutants.skips_schema_validation:factory")
    case = run_case(scenario, "lenient", cut, mutant.factory)
    smaller, _ = minimise(mutant, scenario, case)
    assert [plan.name for plan in smaller.spec.calls] == ["search"]
    assert smaller.splittings == (Splitting("offsets", offsets=(7,)),)
    saved = write_regression(replace(smaller, id="fuzz-00000000"), tmp_path)
    assert load_scenarios([saved]).scenarios[0].splittings == smaller.splittings


def test_a_find_names_the_limits_its_stream_runs_under() -> None:
    """ "must be rejected too_large" of a two-byte call reads as nonsense unless the find says
    that its stream runs under ``max_argument_bytes=1``: the summary names every limit that is
    not at its default, and none when all are."""
    tool = Tool("get_weather", {"type": "object"})
    plan = CallPlan(name="get_weather", id="call_0", arguments="{}", fragments=("{}",))
    spec = StreamSpec(tools=(tool,), calls=(plan,), limits=Limits(max_argument_bytes=1))
    scenario = strategies.scenario_for(spec)
    case = run_case(scenario, "strict", Splitting("whole"), callstream.reference.Assembler)
    found = describe(FuzzResult(examples=1, elapsed=1.0, found=case, scenario=scenario))
    assert "  under limits max_argument_bytes=1 (the others at their defaults)" in found
    plain = strategies.scenario_for(replace(spec, limits=Limits()))
    assert "under limits" not in describe(FuzzResult(found=case, scenario=plain))

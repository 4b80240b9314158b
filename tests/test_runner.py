"""``callstream run``: cases in worker processes, broken implementations reported as results and
never as the harness's failure, verdicts in case order, early stop, declarations, exit codes."""

from __future__ import annotations

import dataclasses
import io
import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from callstream.cli import main
from callstream.connect.connectables import load_implementation
from callstream.core.case import CaseResult
from callstream.core.declaration import OBSERVABLES, Declaration
from callstream.core.judgement import Failure
from callstream.core.spec import CallPlan, Scenario, Splitting, StreamSpec
from callstream.errors import HarnessError, UsageError
from callstream.implementations import DEFAULT
from callstream.reference import Tool
from callstream.reports import rerun_command
from callstream.runner.cases import costliest_first, expand, select_scenarios
from callstream.runner.execution import run
from callstream.runner.progress import make_progress
from callstream.runner.summary import RunSummary, format_summary, rerun_words
from tests.fauxmplementations import TRIGGER

CORPUS = str(Path(__file__).parent / "fauxmplementations" / "corpus.yaml")
WEATHER = Tool(
    "get_weather",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
MISBEHAVE = Tool(TRIGGER, {"type": "object"})
WHOLE_AND_BYTES = (Splitting("whole"), Splitting("bytes"))
FAUX = "py:tests.fauxmplementations."


def scenario(
    id: str,
    tool: Tool = WEATHER,
    *,
    rules: tuple[str, ...] = ("A2",),
    tags: tuple[str, ...] = ("json",),
    profiles: tuple[str, ...] = ("lenient", "strict"),
    splittings: tuple[Splitting, ...] = WHOLE_AND_BYTES,
) -> Scenario:
    """A one-call scenario offering ``tool`` (``MISBEHAVE`` sets the fauxmplementations off)."""
    call = CallPlan(tool.name, '{"city": "Paris"}', ('{"city"', ': "Paris"}'), id="call_1")
    return Scenario(
        id,
        f"scenario {id}",
        rules,
        StreamSpec(tools=(tool,), calls=(call,)),
        tags=tags,
        profiles=profiles,
        splittings=splittings,
        source=f"inline:{id}",
    )


class Report:
    """Keeps the report lines in memory."""

    def __init__(self) -> None:
        self.header_fields: dict[str, Any] = {}
        self.results: list[CaseResult] = []
        self.footer_fields: dict[str, Any] | None = None

    def header(self, fields: Mapping[str, Any]) -> None:
        self.header_fields = dict(fields)

    def result(self, case: CaseResult) -> None:
        self.results.append(case)

    def footer(self, fields: Mapping[str, Any]) -> None:
        self.footer_fields = dict(fields)


def run_on(
    connectable: str, scenarios: Sequence[Scenario], **options: Any
) -> tuple[RunSummary, Report]:
    report = Report()
    options.setdefault("jobs", 2)
    options.setdefault("timeout", 5.0)
    summary = run(scenarios, load_implementation(connectable), report=report, **options)
    return summary, report


def outcomes(report: Report) -> list[tuple[str, str, str]]:
    return [(r.scenario, r.splitting, r.outcome) for r in report.results]


def test_the_reference_passes_and_the_report_says_what_ran() -> None:
    """Every case passes; the header names the implementation, its declaration and the
    counts."""
    summary, report = run_on(DEFAULT, [scenario("oc-a"), scenario("oc-b")])
    assert outcomes(report) == [
        ("oc-a", "whole", "passed"),
        ("oc-a", "bytes", "passed"),
        ("oc-b", "whole", "passed"),
        ("oc-b", "bytes", "passed"),
    ]
    assert report.header_fields == {
        "implementation": {
            "connectable": DEFAULT,
            "name": "callstream.implementations:reference",
            "declaration": {
                "profile": "lenient",
                "dialects": ["openai-chat", "anthropic-messages", "openai-responses"],
                "observables": list(OBSERVABLES),
            },
        },
        "argv": [],
        "scenarios": 2,
        "cases": 4,
        "filter": None,
    }
    assert report.footer_fields == {"exit_code": 0, "stopped_early": False}
    assert (summary.exit_code, summary.stopped_early, summary.counts["passed"]) == (0, False, 4)


def test_an_implementation_that_raises_fails_no_crash_and_the_run_goes_on() -> None:
    """The exception is the implementation's failure, with its repro; later cases still run."""
    scenarios = [scenario("oc-a"), scenario("oc-bad", MISBEHAVE), scenario("oc-c")]
    summary, report = run_on(FAUX + "raising:factory", scenarios)
    assert [outcome for _, _, outcome in outcomes(report)] == [
        "passed",
        "passed",
        "failed",
        "failed",
        "passed",
        "passed",
    ]
    failure = report.results[2].failures[0]
    assert failure.check == "no_crash"
    assert "RuntimeError: fauxmplementation: feed() blew up" in failure.message
    assert report.results[2].repro is not None
    assert summary.exit_code == 1


def test_a_hang_is_killed_at_the_timeout_and_later_cases_are_written_after_it() -> None:
    """A stream that never finishes fails no_hang once the timeout passes; the other worker
    finishes the later cases first, yet the report keeps case order."""
    scenarios = [
        scenario("oc-hang", MISBEHAVE, splittings=(Splitting("whole"),)),
        scenario("oc-a"),
        scenario("oc-b"),
    ]
    summary, report = run_on(FAUX + "hanging:factory", scenarios, timeout=2.0)
    assert outcomes(report) == [
        ("oc-hang", "whole", "failed"),
        ("oc-a", "whole", "passed"),
        ("oc-a", "bytes", "passed"),
        ("oc-b", "whole", "passed"),
        ("oc-b", "bytes", "passed"),
    ]
    hung = report.results[0]
    assert [(f.check, f.message) for f in hung.failures] == [
        ("no_hang", "the implementation did not finish a stream within the timeout (2 s)")
    ]
    assert hung.detail == "worker killed after 2 s without progress"
    assert 2.0 <= summary.elapsed < 30.0


@pytest.mark.parametrize(
    ("factory", "how"), [("exits", "exit code 7"), ("segfaults", "killed by SIGSEGV")]
)
def test_a_worker_that_dies_fails_its_case_and_is_replaced(factory: str, how: str) -> None:
    """A process that dies under a case fails it no_crash, naming how; a new worker runs on."""
    scenarios = [scenario("oc-die", MISBEHAVE), scenario("oc-a"), scenario("oc-b")]
    _, report = run_on(FAUX + "dying:" + factory, scenarios, jobs=1)
    assert [outcome for _, _, outcome in outcomes(report)] == ["failed"] * 2 + ["passed"] * 4
    assert report.results[0].failures[0].check == "no_crash"
    assert report.results[0].failures[0].message == (
        f"the implementation ended the worker process running this case ({how})"
    )
    assert report.results[0].detail == f"worker {how}"


def test_garbage_results_fail_the_checks_rather_than_the_harness() -> None:
    """Results that are not results are the implementation's failure, named as such (no_crash
    with what was wrong), never the harness's."""
    summary, report = run_on(FAUX + "garbage:factory", [scenario("oc-g", MISBEHAVE)])
    assert [outcome for _, _, outcome in outcomes(report)] == ["failed", "failed"]
    (failure,) = report.results[0].failures
    assert failure.check == "no_crash"
    assert "a result must be a mapping or an object with the contract's fields" in failure.message
    assert summary.counts["errored"] == 0


def test_the_report_does_not_depend_on_the_number_of_workers() -> None:
    """One worker or two, the same verdicts in the same order."""
    scenarios = [scenario(f"oc-{n}", MISBEHAVE if n % 2 else WEATHER) for n in range(5)]

    def lines(jobs: int) -> list[dict[str, Any]]:
        _, report = run_on(FAUX + "raising:factory", scenarios, jobs=jobs)
        return [result.to_dict() | {"elapsed": None} for result in report.results]

    assert lines(1) == lines(2)


@pytest.mark.parametrize("max_fail", [1, 2, 3])
def test_max_fail_stops_after_that_many_failed_cases_in_case_order(max_fail: int) -> None:
    """The report ends with the max_fail-th failure; the footer says the run stopped early."""
    scenarios = [scenario("oc-a"), scenario("oc-bad1", MISBEHAVE), scenario("oc-bad2", MISBEHAVE)]
    summary, report = run_on(FAUX + "raising:factory", scenarios, max_fail=max_fail)
    assert len(report.results) == 2 + max_fail
    assert [r.outcome for r in report.results].count("failed") == max_fail
    assert report.footer_fields == {"exit_code": 1, "stopped_early": True}
    assert (summary.cases, summary.stopped_early) == (6, True)


def test_max_fail_not_reached_is_not_an_early_stop() -> None:
    """A run whose failures number max_fail only at its very last case still finished."""
    scenarios = [scenario("oc-a"), scenario("oc-bad", MISBEHAVE, splittings=(Splitting("whole"),))]
    _, report = run_on(FAUX + "raising:factory", scenarios, max_fail=1)
    assert len(report.results) == 3
    assert report.footer_fields == {"exit_code": 1, "stopped_early": False}


def test_cases_for_another_profile_or_a_declared_non_feature_are_reported_never_run() -> None:
    """Another profile: "not applicable"; two choices where one is declared: "unsupported",
    each with the reason, even for a stream the implementation would fail on; the run exits 0.
    What the scenario cites never keeps it from running."""
    implementation = dataclasses.replace(
        load_implementation(FAUX + "raising:factory"),
        declaration=Declaration(observables=frozenset(OBSERVABLES) - {"choices"}),
    )
    two = scenario("oc-two-choices", MISBEHAVE, rules=("A7",))
    two = dataclasses.replace(two, spec=dataclasses.replace(two.spec, choices=2))
    scenarios = [
        scenario("oc-a", rules=("T1", "C4")),
        scenario("oc-strict-only", MISBEHAVE, profiles=("strict",)),
        two,
    ]
    report = Report()
    summary = run(scenarios, implementation, report=report, jobs=2)
    assert [outcome for _, _, outcome in outcomes(report)] == (
        ["passed"] * 2 + ["not_applicable"] * 2 + ["unsupported"] * 2
    )
    assert report.results[2].detail == (
        "the implementation follows the lenient profile; the scenario runs under strict"
    )
    assert report.results[4].detail == (
        "the implementation assembles a single choice; the stream has 2"
    )
    assert (summary.exit_code, summary.counts["unsupported"]) == (0, 2)


def test_select_matches_id_fragments_tags_and_rules() -> None:
    """-k terms are comma-separated; a scenario matching any of them is selected."""
    scenarios = [
        scenario("oc-j-escape", tags=("json",), rules=("A2",)),
        scenario("oc-s-crlf", tags=("sse",), rules=("T2",)),
        scenario("oc-a-index", tags=("delta",), rules=("A5",)),
    ]

    def ids(expression: str) -> list[str]:
        return [s.id for s in select_scenarios(scenarios, expression)]

    assert ids("escape") == ["oc-j-escape"]
    assert ids("sse") == ["oc-s-crlf"]
    assert ids("A5") == ["oc-a-index"]
    assert ids("T2, escape") == ["oc-j-escape", "oc-s-crlf"]
    with pytest.raises(UsageError, match="selects no scenario"):
        ids("nothing-like-this")
    with pytest.raises(UsageError, match="has an empty term"):
        ids("escape,,sse")


def test_an_exact_id_term_selects_that_scenario_only() -> None:
    """``-k =ID`` (what rerun commands print) does not also pick the ids that contain ID."""
    scenarios = [scenario("oc-e-event-error"), scenario("oc-e-event-error-plain-text")]
    chosen = select_scenarios(scenarios, "=oc-e-event-error")
    assert [s.id for s in chosen] == ["oc-e-event-error"]
    assert len(select_scenarios(scenarios, "oc-e-event-error")) == 2


def test_a_selection_is_recorded_in_the_header() -> None:
    """The filter and the number of scenarios it selected go in the header."""
    scenarios = [scenario("oc-a"), scenario("oc-b"), scenario("oc-c")]
    _, report = run_on(DEFAULT, scenarios, select="oc-b,oc-c", jobs=1)
    assert (report.header_fields["filter"], report.header_fields["scenarios"]) == (
        "oc-b,oc-c",
        2,
    )
    assert {result.scenario for result in report.results} == {"oc-b", "oc-c"}


def test_cases_expand_scenario_by_declared_profile_by_splitting() -> None:
    """Cases are numbered in corpus order and named as the pytest plugin names its items."""
    cases = expand([scenario("oc-a"), scenario("oc-b")], Declaration(profile="strict"))
    assert [(case.number, case.name) for case in cases] == [
        (0, "oc-a[strict-whole]"),
        (1, "oc-a[strict-bytes]"),
        (2, "oc-b[strict-whole]"),
        (3, "oc-b[strict-bytes]"),
    ]


def test_workers_are_handed_the_costliest_cases_first() -> None:
    """``pairs`` of the longest stream first (one stream per byte), then the rest by cost; equal
    costs keep case order. The report keeps case order whatever order the cases ran in."""
    long_call = CallPlan(
        "get_weather",
        '{"city": "Llanfairpwllgwyngyll"}',
        ('{"city": "L', 'lanfairpwllgwyngyll"}'),
        id="call_1",
    )
    splittings = (Splitting("whole"), Splitting("bytes"), Splitting("pairs"))
    short = scenario("oc-short", splittings=splittings)
    long = dataclasses.replace(
        scenario("oc-long", splittings=splittings),
        spec=StreamSpec(tools=(WEATHER,), calls=(long_call,)),
    )
    twin = scenario("oc-twin", splittings=splittings)
    cases = expand([short, long, twin], Declaration())
    assert [case.name for case in costliest_first(cases)] == [
        "oc-long[lenient-pairs]",
        "oc-short[lenient-pairs]",
        "oc-twin[lenient-pairs]",
        "oc-long[lenient-bytes]",
        "oc-short[lenient-bytes]",
        "oc-twin[lenient-bytes]",
        "oc-long[lenient-whole]",
        "oc-short[lenient-whole]",
        "oc-twin[lenient-whole]",
    ]
    _, report = run_on(DEFAULT, [short, long, twin])
    assert [(r.scenario, r.splitting) for r in report.results] == [
        (case.scenario.id, case.splitting.label) for case in cases
    ]
    assert {r.outcome for r in report.results} == {"passed"}


def test_on_a_terminal_progress_is_a_bar_that_ends_full() -> None:
    """On a TTY the progress is a rich bar counting cases and failures."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    run_on(
        FAUX + "raising:factory",
        [scenario("oc-a"), scenario("oc-bad", MISBEHAVE)],
        progress=make_progress(terminal),
    )
    shown = terminal.getvalue()
    assert "\x1b[" in shown
    assert "4/4" in shown
    assert "2 failed" in shown


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"jobs": 0}, "jobs must be at least 1"),
        ({"timeout": 0.0}, "timeout must be a positive number"),
        ({"timeout": float("inf")}, "timeout must be a positive number"),
        ({"max_fail": 0}, "max_fail must be at least 1"),
    ],
)
def test_impossible_run_settings_are_usage_errors(options: dict[str, Any], says: str) -> None:
    """Settings that cannot work are refused before anything runs."""
    with pytest.raises(UsageError, match=says):
        run_on(DEFAULT, [scenario("oc-a")], **options)


def test_a_worker_that_cannot_load_the_implementation_is_a_harness_error() -> None:
    """The harness's own failure is not blamed on the implementation."""
    with pytest.raises(HarnessError, match="a worker could not load") as raised:
        run_on(FAUX + "parent_only:factory", [scenario("oc-a")])
    assert raised.value.exit_code == 3


# -- the command line ---------------------------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["run", "--jobs", "2", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_run_writes_the_report_and_prints_a_summary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Exit 1 when a case failed; the summary names it and where the report is."""
    out = tmp_path / "report"
    code, stdout, stderr = cli(
        capsys, "--impl", FAUX + "raising:factory", "--out", str(out), CORPUS
    )
    assert code == 1
    assert stdout.splitlines() == [
        stdout.splitlines()[0],
        "FAILED oc-faux-trigger [lenient: whole] no_crash (V6; callstream explain V6): the "
        "implementation raised "
        "RuntimeError: fauxmplementation: feed() blew up",
        f"  callstream run --impl {FAUX}raising:factory {CORPUS} -k =oc-faux-trigger",
        f"report: {out}",
    ]
    assert stdout.startswith(
        "6 cases of 4 scenarios: 4 passed, 1 failed, 0 errored, 0 unsupported, 1 not applicable ("
    )
    assert "callstream: running 6 cases" in stderr
    lines = [json.loads(line) for line in (out / "report.jsonl").read_text().splitlines()]
    assert [line["type"] for line in lines] == ["header", *["result"] * 6, "footer"]
    assert lines[0]["argv"][:2] == ["callstream", "run"]
    assert lines[0]["rerun"] == ["callstream", "run", "--impl", FAUX + "raising:factory", CORPUS]
    assert lines[-1]["exit_code"] == 1
    assert {path.name for path in out.iterdir()} >= {"report.jsonl", "junit.xml", "summary.md"}


def test_cli_run_exits_0_when_every_claimed_case_passes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The reference passes the mini corpus; -k narrows it."""
    code, stdout, _ = cli(capsys, "--out", str(tmp_path / "r"), "-k", "paris,A5", CORPUS)
    assert code == 0
    assert stdout.startswith("4 cases of 2 scenarios: 4 passed, 0 failed")


def test_cli_run_stops_at_max_fail(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """--max-fail says how many cases were left unrun."""
    out = str(tmp_path / "r")
    impl = FAUX + "raising:factory"
    code, stdout, _ = cli(capsys, "--impl", impl, "--max-fail=1", "--out", out, CORPUS)
    assert code == 1
    assert "stopped after 1 failed case(s): 3 not run" in stdout


def test_cli_run_reports_scenario_errors_and_runs_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Exit 2; each loader error as path:line; no report folder."""
    broken = tmp_path / "broken.yaml"
    broken.write_text("scenarios:\n  - id: oc-broken\n    title: no rules\n    tools: []\n")
    code, stdout, stderr = cli(capsys, "--out", str(tmp_path / "r"), str(broken))
    assert code == 2
    assert stderr.startswith(f"{broken}:2: ")
    assert stderr.endswith("scenario error(s); nothing was run\n")
    assert stdout == ""
    assert not (tmp_path / "r").exists()


def test_cli_run_exit_codes_for_usage_and_harness_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A bad --impl is a usage error (2); workers that cannot load it, a harness error (3)."""
    code, _, stderr = cli(capsys, "--impl", "cmd:./assembler", CORPUS)
    assert code == 2
    assert "cannot start ./assembler: No such file or directory" in stderr
    code, _, stderr = cli(
        capsys, "--impl", FAUX + "parent_only:factory", "--out", str(tmp_path / "r"), CORPUS
    )
    assert code == 3
    assert "a worker could not load" in stderr


def test_the_rerun_command_runs_the_failing_scenario_again(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The command printed under a failing scenario, pasted into a shell, runs that scenario
    alone (with the run's scenario paths, --scenarios files and timeout) and fails it the same
    way."""
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        "scenarios:\n"
        "  - id: oc-extra-trigger\n"
        "    title: The trigger again, in a file of the user's\n"
        "    rules: [V6]\n"
        "    tools: [{name: misbehave, parameters: {type: object}}]\n"
        "    splittings: [whole, bytes]\n"
        "    calls:\n"
        "      - {name: misbehave, id: call_1, arguments: '{\"x\": 1}'}\n"
    )
    impl = FAUX + "raising:factory"
    first = ["--impl", impl, "--timeout", "7.5", "--scenarios", str(extra), CORPUS]
    _, stdout, _ = cli(capsys, *first, "--out", str(tmp_path / "a"))
    lines = stdout.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("FAILED oc-extra-trigger "))
    failed, rerun = lines[at : at + 2]
    assert failed.startswith(
        "FAILED oc-extra-trigger [lenient: whole, bytes] no_crash (V6; callstream explain V6): "
    )
    assert rerun == (
        f"  callstream run --impl {impl} --scenarios {extra} --timeout 7.5 {CORPUS} "
        "-k =oc-extra-trigger"
    )
    words = shlex.split(rerun)
    assert words[:2] == ["callstream", "run"]
    code, again, _ = cli(capsys, *words[2:], "--out", str(tmp_path / "b"))
    assert code == 1
    assert again.splitlines()[0].startswith("2 cases of 1 scenarios: 0 passed, 2 failed")
    assert again.splitlines()[1] == failed
    header = json.loads((tmp_path / "b" / "report.jsonl").read_text().splitlines()[0])
    assert header["filter"] == "=oc-extra-trigger"


def test_a_rerun_command_quotes_what_a_shell_would_split() -> None:
    """A connectable or a path with spaces or quotes survives the shell as one word."""
    words = rerun_words(
        "cmd:node 'my assembler.js' --strict",
        ["scenarios/it's here.yaml"],
        scenarios=["extra dir/more.yaml"],
        timeout=2.0,
    )
    command = rerun_command(words, "oc-x")
    assert shlex.split(command) == [
        "callstream",
        "run",
        "--impl",
        "cmd:node 'my assembler.js' --strict",
        "--scenarios",
        "extra dir/more.yaml",
        "--timeout",
        "2",
        "scenarios/it's here.yaml",
        "-k",
        "=oc-x",
    ]


def failed_case(
    scenario: str, splitting: str, message: str, profile: str = "lenient"
) -> CaseResult:
    """A failed verdict on one case of ``scenario``."""
    return CaseResult(
        scenario,
        f"scenario {scenario}",
        ("A3",),
        ("ids",),
        "must",
        profile,
        splitting,
        "failed",
        failures=(Failure("identity", ("A3",), message),),
        repro="1 chunk of 3 bytes:",
    )


def test_a_scenario_failing_in_many_cases_is_one_line_naming_its_splittings() -> None:
    """Eight failed cases of one scenario print one line, with four splittings named and the
    rest counted, the first case's message and the rerun command under it; passed cases and
    other scenarios' failures keep their own places."""
    splittings = ["whole", "bytes", "pairs", *(f"random-{n}" for n in range(1, 6))]
    results = (
        *(failed_case("oc-q-id-repeated", s, f"id 'call_abccall_abc' ({s})") for s in splittings),
        dataclasses.replace(failed_case("oc-ok", "whole", ""), outcome="passed", failures=()),
        failed_case("oc-other", "bytes", "id 'x'"),
        failed_case("oc-other", "pairs", "id 'y'", profile="strict"),
    )
    summary = RunSummary(results, 3, 11, False, 1.25)
    text = format_summary(summary, Path("reports/run"), ["callstream", "run", "--impl", "py:m:f"])
    assert text.splitlines()[1:] == [
        "FAILED oc-q-id-repeated [lenient: whole, bytes, pairs, random-1 and 4 more] identity "
        "(A3; callstream explain A3): id 'call_abccall_abc' (whole)",
        "  callstream run --impl py:m:f -k =oc-q-id-repeated",
        "FAILED oc-other [lenient: bytes; strict: pairs] identity (A3; callstream explain A3): "
        "id 'x'",
        "  callstream run --impl py:m:f -k =oc-other",
        "report: reports/run",
    ]


def test_past_the_limit_failing_scenarios_are_counted() -> None:
    """Only the first scenarios are listed; the summary says how many more failed."""
    results = tuple(failed_case(f"oc-s{n:02d}", "whole", "id 'x'") for n in range(23))
    text = format_summary(RunSummary(results, 23, 23, False, 1.0), Path("r"), limit=20)
    lines = text.splitlines()
    assert sum(line.startswith("FAILED ") for line in lines) == 20
    assert "… and 3 more failing scenarios" in lines

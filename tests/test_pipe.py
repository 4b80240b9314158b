"""``cmd:`` connectables: the pipe protocol, its schema, a program that crashes, hangs or prints
garbage reported on its own case while the run goes on, and the Node.js example passing the
corpus through ``callstream run``."""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from callstream.cli import main
from callstream.connect.connectables import load_implementation
from callstream.connect.pipe import (
    CommandFactory,
    pipe_schema,
    protocol_problem,
    with_protocol_validation,
)
from callstream.core.case import CaseResult
from callstream.core.checks import run_checks
from callstream.core.declaration import OBSERVABLES, Declaration
from callstream.core.observation import observe
from callstream.core.rendering import render
from callstream.core.spec import Expected, Scenario, Splitting
from callstream.corpus.scenario import default_corpus, load_scenarios
from callstream.errors import UsageError
from callstream.reference import Assembler, Limits, Tool
from callstream.runner.execution import run
from callstream.runner.summary import RunSummary
from tests.fauxmplementations import TRIGGER
from tests.helpers import WEATHER, args, chunk, header, sse

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "fauxmplementations" / "program.py"
CORPUS = ROOT / "tests" / "fauxmplementations" / "corpus.yaml"
NODE = f"cmd:node {shlex.quote(str(ROOT / 'examples' / 'node-assembler' / 'assembler.js'))}"
MISBEHAVE = Tool(TRIGGER, {"type": "object"})
STREAM = sse(
    chunk(header(0, "call_1", "get_weather", '{"city": ')),
    chunk(args(0, '"Paris"}')),
    chunk(finish="tool_calls"),
)


def faux(mode: str, *extra: str) -> list[str]:
    """The argv of the fauxmplementation program in ``mode``."""
    return [sys.executable, str(PROGRAM), mode, *extra]


def connectable(mode: str, *extra: str) -> str:
    """The ``cmd:`` connectable of the fauxmplementation program in ``mode``."""
    return "cmd:" + shlex.join(faux(mode, *extra))


class Report:
    """Keeps the report lines in memory."""

    def __init__(self) -> None:
        self.header_fields: dict[str, Any] = {}
        self.results: list[CaseResult] = []

    def header(self, fields: Mapping[str, Any]) -> None:
        self.header_fields = dict(fields)

    def result(self, case: CaseResult) -> None:
        self.results.append(case)

    def footer(self, fields: Mapping[str, Any]) -> None:
        pass


def run_corpus(spec: str, scenarios: list[Scenario], **options: Any) -> tuple[RunSummary, Report]:
    report = Report()
    options.setdefault("jobs", 1)
    options.setdefault("timeout", 5.0)
    summary = run(scenarios, load_implementation(spec), report=report, **options)
    return summary, report


IN_ORDER = 100
"""A ``max_fail`` no run here reaches: it makes workers take the cases in case order (D18), so a
test can tell which case a worker ran after a crash or a hang."""


def faux_corpus() -> list[Scenario]:
    return list(load_scenarios([CORPUS]).scenarios)


@pytest.fixture(scope="module")
def corpus() -> list[Scenario]:
    """The scenario corpus (loading it takes seconds: once per module)."""
    return list(load_scenarios(default_corpus()).scenarios)


def outcomes(report: Report) -> list[tuple[str, str, str]]:
    return [(r.scenario, r.splitting, r.outcome) for r in report.results]


# -- the Node.js example ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "cuts"),
    [
        ("lenient", (Splitting("whole"), Splitting("random", seed=1))),
        ("strict", (Splitting("random", seed=2),)),
    ],
)
def test_the_node_example_passes_the_corpus_through_callstream_run(
    profile: str, cuts: tuple[Splitting, ...], corpus: list[Scenario]
) -> None:
    """Every scenario, cut at seeded random places (and whole), passes over the pipe under the
    profile the program declares in its start answer."""
    spec = NODE + (" --strict" if profile == "strict" else "")
    scenarios = [  # the example reads openai-chat only
        dataclasses.replace(scenario, splittings=cuts)
        for scenario in corpus
        if scenario.spec.dialect == "openai-chat"
    ]
    summary, report = run_corpus(spec, scenarios, jobs=2)
    assert report.header_fields["implementation"] == {
        "connectable": spec,
        "name": "node-assembler 0.1.0 (javascript)",
        "declaration": {
            "profile": profile,
            "dialects": ["openai-chat"],
            "observables": list(OBSERVABLES),
        },
    }
    assert [r.scenario for r in summary.failures] == []
    # A few scenarios run only under the other profile, or on a route that opts in (D74).
    elsewhere = sum(
        1 for scenario in scenarios if profile not in scenario.profiles or scenario.opt_ins
    )
    assert summary.counts["not_applicable"] == elsewhere * len(cuts)
    assert summary.counts["passed"] == (len(scenarios) - elsewhere) * len(cuts)


def test_callstream_run_takes_a_cmd_connectable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``callstream run --impl cmd:"node …"`` runs every splitting and exits 0."""
    code = main(["run", "--jobs", "2", "--impl", NODE, "--out", str(tmp_path / "r"), str(CORPUS)])
    stdout = capsys.readouterr().out
    assert code == 0
    assert stdout.startswith(
        "6 cases of 4 scenarios: 5 passed, 0 failed, 0 errored, 0 unsupported, 1 not applicable"
    )
    first = json.loads((tmp_path / "r" / "report.jsonl").read_text().splitlines()[0])
    assert first["implementation"]["connectable"] == NODE


# -- the protocol -----------------------------------------------------------------------------


def test_a_stream_over_the_pipe_releases_what_the_program_released() -> None:
    """run, feed per chunk and close: the results come back per chunk, as in process."""
    implementation = load_implementation(connectable("well"))
    assert implementation.name == "faux-well 1.0 (python)"
    assert implementation.declaration == Declaration()
    chunks = [STREAM[:150], STREAM[150:]]
    over_pipe = observe(implementation.factory, [WEATHER], Limits(), chunks)
    in_process = observe(Assembler, [WEATHER], Limits(), chunks)
    assert over_pipe.error is None
    assert over_pipe.releases == in_process.releases
    assert over_pipe.results[0].arguments == {"city": "Paris"}


def test_one_program_serves_stream_after_stream() -> None:
    """The program is started once per process and reused, not started per stream."""
    factory = CommandFactory(faux("well"), Declaration())
    observe(factory, [WEATHER], Limits(), [STREAM])
    pid = factory.pid
    observe(factory, [WEATHER], Limits(), [STREAM])
    assert pid is not None
    assert factory.pid == pid
    factory.stop()
    assert factory.pid is None


_READY = {
    "choice": 0,
    "index": 0,
    "id": "call_1",
    "name": "get_weather",
    "arguments_text": "{}",
    "arguments": {},
    "status": "ready",
    "reason": None,
}
"""A ready result as a program sends it over the pipe."""


def test_the_schema_describes_every_message_both_ways() -> None:
    """Well-formed requests and answers pass; a broken one is named by its JSON path."""
    result = dict(_READY)
    assert pipe_schema()["$id"] == "urn:callstream:pipe:1"
    assert protocol_problem({"cmd": "feed", "seq": "opaque", "data": "ZGF0YQ=="}, "request") is None
    assert protocol_problem({"cmd": "stop"}, "request") is None
    assert protocol_problem({"seq": 3, "results": [result]}, "feed") is None
    # A program that does not expose the text (an SDK that keeps only its parse) sends null.
    unexposed = result | {"arguments_text": None}
    assert protocol_problem({"seq": 3, "results": [unexposed]}, "feed") is None
    assert protocol_problem({"seq": 3, "results": [], "findings": ["C7"]}, "close") is None
    assert protocol_problem({"seq": 3, "error": {"message": "boom"}}, "run") is None
    assert protocol_problem({"cmd": "fed", "seq": 1}, "request") == (
        "at $.cmd: 'fed' is not one of ['start', 'run', 'feed', 'close', 'stop']"
    )
    assert protocol_problem({"seq": 3, "results": [result | {"reason": "truncated"}]}, "feed") == (
        "at $.results[0].reason: None was expected"
    )
    assert protocol_problem({"seq": 3, "result": []}, "feed") == (
        "at $: 'results' is a required property"
    )


def test_a_result_may_say_whether_its_id_was_made_up_or_leave_it_unsaid() -> None:
    """``synthetic_id`` is optional: true, false or null pass the schema; nothing else does."""
    result = dict(_READY)
    for flag in (True, False, None):
        answer = {"seq": 3, "results": [result | {"synthetic_id": flag}]}
        assert protocol_problem(answer, "feed") is None
    answer = {"seq": 3, "results": [result | {"synthetic_id": "yes"}]}
    assert protocol_problem(answer, "feed") == (
        "at $.results[0].synthetic_id: 'yes' is not of type 'boolean', 'null'"
    )


def test_the_node_example_keeps_to_the_schema_in_every_message(corpus: list[Scenario]) -> None:
    """With validation on, every request callstream sends and every answer of the example
    passes the schema, through streams that release, reject and fail."""
    implementation = load_implementation(with_protocol_validation(NODE))
    assert implementation.connectable.startswith("cmd+validate:node ")
    for scenario in corpus[::8]:
        spec = scenario.spec
        seen = observe(implementation.factory, spec.tools, spec.limits, [render(spec).data])
        assert seen.error is None, seen.error


# -- a program that fails ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "gist", "details"),
    [
        (
            "crash",
            "ImplementationExited: the program exited with code 3 while answering feed",
            "stderr:\n  | Traceback (most recent call last):\n"
            "  | RuntimeError: faux: the program blew up\n",
        ),
        (
            "garbage",
            "ProtocolError: the program answered feed with a line that is not JSON (Expecting "
            "value: line 1 column 1 (char 0)): 'faux: this is not JSON'",
            "stderr: (nothing)\n",
        ),
    ],
)
def test_a_crash_or_garbage_fails_its_case_and_a_fresh_program_runs_the_next(
    mode: str, gist: str, details: str, tmp_path: Path
) -> None:
    """The case fails no_crash with the summary and the program's stderr; the program is
    restarted, so the cases after it pass in the same worker."""
    pids = tmp_path / "pids"
    # With max_fail, cases run in case order (not costliest first), so the crash is not last.
    spec = connectable(mode, "--pids", str(pids))
    summary, report = run_corpus(spec, faux_corpus(), max_fail=IN_ORDER)
    assert outcomes(report) == [
        ("oc-faux-paris", "whole", "passed"),
        ("oc-faux-paris", "bytes", "passed"),
        ("oc-faux-trigger", "whole", "failed"),
        ("oc-faux-rome", "whole", "passed"),
        ("oc-faux-rome", "random-1", "passed"),
        ("oc-faux-strict-only", "whole", "not_applicable"),
    ]
    failed = report.results[2]
    assert [(f.check, f.message) for f in failed.failures] == [
        ("no_crash", f"the implementation raised {gist}")
    ]
    assert failed.repro is not None
    assert f"{details}{gist}" in failed.repro
    assert summary.exit_code == 1
    # Parent and worker each started it to read its declaration; the worker then ran it twice.
    assert len(pids.read_text().split()) == 4


def test_a_hung_program_fails_no_hang_and_never_outlives_its_worker(tmp_path: Path) -> None:
    """The runner kills the worker at the timeout; the program dies with it, and a new worker
    with a new program runs the rest."""
    pids = tmp_path / "pids"
    summary, report = run_corpus(
        connectable("hang", "--pids", str(pids)), faux_corpus()[:3], timeout=2.0, max_fail=IN_ORDER
    )
    assert [outcome for _, _, outcome in outcomes(report)] == ["passed"] * 2 + ["failed"] + [
        "passed"
    ] * 2
    assert [f.check for f in report.results[2].failures] == ["no_hang"]
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 5  # parent; first worker: declaration, streams; second worker: the same
    assert all(_gone(pid) for pid in started)
    assert summary.elapsed < 30


def test_a_program_that_stops_answering_is_a_hang_in_process_too() -> None:
    """Without a runner (fuzzing, the pytest plugin) the pipe's own timeout ends the wait: the
    stream is recorded as hung, not crashed, and the next stream gets a fresh program."""
    factory = CommandFactory(faux("hang"), Declaration(), timeout=0.5)
    seen = observe(factory, [MISBEHAVE], Limits(), [STREAM])
    assert seen.timed_out
    assert seen.error is not None
    assert seen.error.endswith("ImplementationHung: the program did not answer feed within 0.5 s\n")
    judgement = run_checks(Expected((), frozenset()), seen, "must", OBSERVABLES)
    assert [f.check for f in judgement.failures] == ["no_hang"]
    assert observe(factory, [WEATHER], Limits(), [STREAM]).error is None


@pytest.mark.parametrize(
    ("mode", "gist"),
    [
        (
            "segfault",
            "ImplementationExited: the program was killed by SIGSEGV while answering feed",
        ),
        (
            "error",
            "ImplementationReportedError: the program answered feed with an error: "
            "faux: cannot feed",
        ),
        ("wrong-seq", "ProtocolError: the program answered feed with seq -1, not 1: "),
        ("extra-line", 'ProtocolError: the program wrote a line nobody asked for: \'{"seq": 1, '),
    ],
)
def test_a_program_that_breaks_the_protocol_fails_that_stream_only(mode: str, gist: str) -> None:
    """Each failure is the implementation's, summed up on the error's last line; the next
    stream runs normally."""
    factory = CommandFactory(faux(mode), Declaration())
    seen = observe(factory, [MISBEHAVE], Limits(), [STREAM[:100], STREAM[100:]])
    assert seen.error is not None
    assert not seen.timed_out
    assert seen.error.strip().splitlines()[-1].startswith(gist)
    assert observe(factory, [WEATHER], Limits(), [STREAM]).results[0].status == "ready"


def test_the_program_error_answer_carries_its_traceback() -> None:
    """An error answer's traceback is shown before the summary, the program is kept."""
    factory = CommandFactory(faux("error"), Declaration())
    seen = observe(factory, [MISBEHAVE], Limits(), [STREAM])
    pid = factory.pid
    assert seen.error is not None
    assert "traceback (from its answer):\n  | at feed\nstderr: (nothing)\n" in seen.error
    observe(factory, [WEATHER], Limits(), [STREAM])
    assert factory.pid == pid


def test_stderr_noise_alone_fails_nothing() -> None:
    """A program may write to stderr as it pleases."""
    factory = CommandFactory(faux("noisy"), Declaration())
    seen = observe(factory, [WEATHER], Limits(), [STREAM])
    assert seen.error is None
    assert seen.results[0].status == "ready"


def test_validate_protocol_catches_an_answer_the_schema_rejects(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Without the flag a result with status "done" fails the contract check; with it, the
    answer is the implementation's protocol error, naming what is wrong and quoting it."""
    impl = connectable("bad-result")
    args = ["run", "--jobs", "1", "--impl", impl, "-k", "trigger", str(CORPUS)]
    assert main([*args, "--out", str(tmp_path / "plain")]) == 1
    assert (
        "contract (V6; callstream explain V6): call 0 of choice 0 has status 'done', which is not "
        "in the contract" in capsys.readouterr().out
    )
    assert main([*args, "--out", str(tmp_path / "checked"), "--validate-protocol"]) == 1
    out = capsys.readouterr().out
    assert (
        "no_crash (V6; callstream explain V6): the implementation raised ProtocolError: the "
        "program answered feed with a "
        "message that breaks the schema at $.results[0].status: 'done' is not one of "
        '[\'ready\', \'rejected\']: \'{"seq": 1, "results": [{"choice": 0, ' in out
    )


def test_validate_protocol_is_for_cmd_connectables_only(capsys: pytest.CaptureFixture[str]) -> None:
    """A py: implementation has no pipe to check: a usage error."""
    code = main(["run", "--impl", "py:callstream.implementations:reference", "--validate-protocol"])
    assert code == 2
    assert "--validate-protocol checks the pipe protocol of cmd: connectables" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("program", "says"),
    [
        ("print('hello')", "the program answered start with a line that is not JSON"),
        ("pass", "the program exited with code 0 while answering start"),
        (
            'print(\'{"version": 2, "implementation": {"name": "x", "version": "1", '
            '"language": "x", "dialects": ["openai-chat"], '
            '"profile": "lenient"}}\')',
            "the program speaks protocol version 2; callstream speaks 1",
        ),
        (
            'print(\'{"version": 1, "implementation": {"name": "x"}}\')',
            "breaks the schema at $.implementation: 'version' is a required property",
        ),
    ],
)
def test_a_program_that_does_not_start_properly_is_a_usage_error(program: str, says: str) -> None:
    """Nothing runs when the start answer is wrong; the message says why."""
    spec = "cmd:" + shlex.join([sys.executable, "-c", program])
    with pytest.raises(UsageError) as raised:
        load_implementation(spec)
    assert str(raised.value).startswith(repr(spec))
    assert says in str(raised.value)


def _gone(pid: int) -> bool:
    """The process has exited (a zombie that nobody reaped yet counts: it runs no more)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


EXACT_PROGRAM = r"""
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    cmd = request["cmd"]
    if cmd == "start":
        implementation = {"name": "exact", "version": "1", "language": "python",
                          "dialects": ["openai-chat"], "profile": "lenient"}
        answer = {"version": 1, "implementation": implementation}
    elif cmd == "stop":
        break
    elif cmd == "close":
        digits = "9" * 5000
        sys.stdout.write('{"seq": %s, "results": [{"choice": 0, "index": 0, "id": "c\\u0000",'
                         ' "name": "get_weather", "arguments_text": "\\ud800 lone",'
                         ' "arguments": {"z": %s, "a": "\\udfff"}, "status": "ready",'
                         ' "reason": null}]}\n' % (json.dumps(request["seq"]), digits))
        sys.stdout.flush()
        continue
    else:
        answer = {"seq": request["seq"], "ok": True} if cmd == "run" else {
            "seq": request["seq"], "results": []}
    print(json.dumps(answer), flush=True)
"""


def test_what_a_program_hands_back_arrives_bit_exact() -> None:
    """A lone surrogate stays lone, NUL stays, a 5000-digit integer is read whole and key
    order is kept: the harness decodes the program's JSON without healing or failing it."""
    spec = "cmd:" + shlex.join([sys.executable, "-c", EXACT_PROGRAM])
    implementation = load_implementation(spec)
    seen = observe(implementation.factory, [WEATHER], Limits(), [STREAM])
    assert seen.error is None
    [result] = seen.results
    assert result.id == "c\x00"
    assert result.arguments_text == "\ud800 lone"
    assert list(result.arguments) == ["z", "a"]
    assert result.arguments["z"] == int("9" * 1000) * 10**4000 + int("9" * 4000)
    assert result.arguments["a"] == "\udfff"


OPTING_PROGRAM = r"""
import json, sys
opted = None
for line in sys.stdin:
    request = json.loads(line)
    cmd = request["cmd"]
    if cmd == "start":
        implementation = {"name": "opting", "version": "1", "language": "python",
                          "dialects": ["openai-chat"], "profile": "lenient",
                          "opt_ins": ["snapshots"]}
        answer = {"version": 1, "implementation": implementation}
    elif cmd == "stop":
        break
    elif cmd == "run":
        opted = request.get("opt_ins")
        answer = {"seq": request["seq"], "ok": True}
    elif cmd == "close":
        told = {"choice": 0, "index": 0, "id": "call_1", "name": "get_weather",
                "arguments_text": json.dumps(opted), "arguments": None,
                "status": "rejected", "reason": "malformed_json"}
        answer = {"seq": request["seq"], "results": [told]}
    else:
        answer = {"seq": request["seq"], "results": []}
    print(json.dumps(answer), flush=True)
"""


def test_a_program_that_opts_in_is_told_its_opt_ins_in_each_run() -> None:
    """The ``opt_ins`` of a start answer are the implementation's route opt-ins, and each
    ``run`` request tells the program them, as it tells the profile; both messages keep to the
    schema (``cmd+validate:``)."""
    spec = "cmd+validate:" + shlex.join([sys.executable, "-c", OPTING_PROGRAM])
    implementation = load_implementation(spec)
    assert implementation.declaration.opt_ins == frozenset({"snapshots"})
    seen = observe(implementation.factory, [WEATHER], Limits(), [STREAM])
    assert seen.error is None
    assert [result.arguments_text for result in seen.results] == ['["snapshots"]']

"""``callstream check``: an implementation's shape in about a second, one line per problem, and
the same check before ``run`` and the pytest plugin; behaviour (a crash, a hang, a wrong
verdict) is left for the run to judge."""

from __future__ import annotations

import io
import shlex
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from callstream.cli import main
from callstream.connect.check import ShapeCheck, check_command, check_in_process, check_shape
from callstream.connect.connectables import load_implementation
from callstream.connect.pipe import load_command
from callstream.connect.shape_probes import PROBES, probe
from callstream.errors import HarnessError
from callstream.implementations import DEFAULT
from callstream.reference import Assembler, Limits, Tool
from tests.mutants import MUTANTS

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
CORPUS = str(ROOT / "tests" / "fauxmplementations" / "corpus.yaml")
MISSHAPEN = "py:tests.fauxmplementations.misshapen:"
FAUX = "py:tests.fauxmplementations."
PROGRAM = ROOT / "tests" / "fauxmplementations" / "program.py"
NODE = f"cmd:node {shlex.quote(str(ROOT / 'examples' / 'node-assembler' / 'assembler.js'))}"
PLAIN = "plain call, feed() of chunk 3 of 3: result 0"
"""Where the plain call's result comes out: with the chunk that brings its finish reason."""


def shape_of(connectable: str, timeout: float = 5.0) -> ShapeCheck:
    """The check ``run`` makes: the probes in a process of their own."""
    return check_shape(load_implementation(connectable), timeout=timeout)


def problems_of(connectable: str) -> list[str]:
    return [str(problem) for problem in check_in_process(load_implementation(connectable)).problems]


@pytest.fixture
def module() -> Iterator[Any]:
    """A throwaway implementation module, importable as ``shape_impl`` in this process."""
    fake = types.ModuleType("shape_impl")
    sys.modules["shape_impl"] = fake
    yield fake
    del sys.modules["shape_impl"]


def _reference(*, tools: list[Tool], limits: Limits) -> Assembler:
    return Assembler(tools, limits=limits)


# -- right shapes -------------------------------------------------------------------------------


def test_the_reference_has_the_shape_and_the_check_says_what_it_saw() -> None:
    """Exit 0; the report names the declaration, the fields checked and each stream's
    release, and it takes well under a second."""
    out = io.StringIO()
    assert check_command(DEFAULT, timeout=5.0, stdout=out) == 0
    lines = out.getvalue().splitlines()
    assert lines[:7] == [
        f"callstream check {DEFAULT}",
        "  declares: profile lenient, dialects openai-chat, anthropic-messages, openai-responses",
        "  exposes: incremental, status, reason, arguments_text, arguments, ids, choices, findings",
        "  fields checked: choice, index, id, name, arguments_text, arguments, status, reason",
        "  plain call: ready at feed() of chunk 3 of 3",
        "  truncated call: rejected truncated at feed() of chunk 3 of 3",
        "  cut-off stream: rejected interrupted at close()",
    ]
    assert lines[7].startswith("the shape is right: 3 result(s) of 3 stream(s) checked (")


@pytest.mark.parametrize("name", ["_base", *MUTANTS])
def test_every_mutant_has_the_right_shape(name: str) -> None:
    """Mutants are wrong in behaviour only: the shape check lets them run."""
    assert problems_of(f"py:tests.mutants.{name}:factory") == []


@pytest.mark.parametrize(
    "factory",
    [
        "raising:factory",
        "hanging:factory",
        "dying:exits",
        "garbage:factory",
        "forking:daemon_hangs",
        "fuzz_hostile:os_exit_zero",
        "fuzz_hostile:swallows_the_timeout",
        "misshapen:raises_on_truncation",
        "misshapen:text_only",
    ],
)
def test_fauxmplementations_have_the_right_shape(factory: str) -> None:
    """Broken on purpose, but only on their trigger streams (or in behaviour): no problem."""
    shape = shape_of(FAUX + factory)
    assert shape.problems == ()
    assert shape.exit_code == 0


@pytest.mark.parametrize(
    "connectable",
    [
        "cmd:" + shlex.join([sys.executable, str(PROGRAM), "well"]),
        "cmd:" + shlex.join([sys.executable, str(PROGRAM), "bad-result"]),
        NODE,
    ],
)
def test_programs_are_checked_over_the_pipe(connectable: str) -> None:
    """A cmd: program speaks the protocol through the loader: the same three streams."""
    shape = shape_of(connectable)
    assert shape.problems == ()
    assert [stream.released for stream in shape.streams] == [
        ("ready at feed() of chunk 3 of 3",),
        ("rejected truncated at feed() of chunk 3 of 3",),
        ("rejected interrupted at close()",),
    ]


def test_fields_left_out_of_the_declaration_are_not_checked() -> None:
    """No parsed arguments and a numeric id are fine from an implementation that declares it
    exposes neither."""
    shape = check_in_process(load_implementation(MISSHAPEN + "text_only"))
    assert shape.problems == ()
    assert "fields checked: choice, index, name, arguments_text, status, reason" in shape.report()


def test_none_from_feed_is_nothing_released() -> None:
    """The harness reads ``None`` as "nothing final yet", so the check does too."""

    class Quiet:
        def __init__(self, tools: list[Tool], limits: Limits) -> None:
            self.assembler = Assembler(tools, limits=limits)

        def feed(self, data: bytes) -> Any:
            return self.assembler.feed(data) or None

        def close(self) -> Any:
            return self.assembler.close() or None

    implementation = load_implementation(DEFAULT)
    quiet = type(implementation)(DEFAULT, "quiet", Quiet, implementation.declaration)
    assert check_in_process(quiet).problems == ()


# -- wrong shapes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("factory", "problem"),
    [
        ("done_status", f"{PLAIN}: status 'done' is not one of ready, rejected"),
        (
            "capital_status",
            f"{PLAIN}: status 'Ready' is not one of ready, rejected (did you mean 'ready'?)",
        ),
        (
            "string_index",
            f"{PLAIN}: field 'index' is '0' (a str), not an int (the call's position in its "
            "choice: 0, 1, 2…)",
        ),
        (
            "returns_one_result",
            "plain call, feed() of chunk 3 of 3: returned a mapping (one result?), not a list "
            "of results (return [result], or [] when nothing is final)",
        ),
        (
            "returns_a_call_result",
            "plain call, feed() of chunk 3 of 3: returned a CallResult, not a list of results "
            "(return [result], or [] when nothing is final)",
        ),
        ("objects_without_text", f"{PLAIN}: a _Call has no attribute 'arguments_text'"),
        (
            "rejected_without_reason",
            "truncated call, feed() of chunk 3 of 3: result 0: a rejected result carries no "
            "reason, though the declaration exposes 'reason' (leave it out of 'observables' if "
            "rejected results carry none)",
        ),
        (
            "text_as_arguments",
            f"{PLAIN}: a ready function call's arguments are the parsed JSON object, not "
            """'{"city": "Paris"}' (a str) (leave 'arguments' out of 'observables' if results """
            "carry the text only)",
        ),
    ],
)
def test_each_wrong_shape_is_one_line_naming_where(factory: str, problem: str) -> None:
    """The stream, the call that returned it, the result and the field; a mistake that recurs
    on every stream is reported once, where it was first seen."""
    assert problems_of(MISSHAPEN + factory) == [problem]


def test_a_misspelt_reason_gets_the_closest_spelling() -> None:
    """``truncate`` is not a reason; ``truncated`` is."""
    first, second = problems_of(MISSHAPEN + "misspelt_reason")
    assert first.startswith(
        "truncated call, feed() of chunk 3 of 3: result 0: reason 'truncate' is not one of "
        "truncated, filtered, provider_finish, "
    )
    assert first.endswith(" (did you mean 'truncated'?)")
    assert second.startswith("cut-off stream, close(): result 0: reason 'interrupte' is not")
    assert second.endswith(" (did you mean 'interrupted'?)")


def test_a_factory_that_does_not_take_tools_and_limits_is_not_fed() -> None:
    """The signature says it all; no stream runs."""
    shape = check_in_process(load_implementation(MISSHAPEN + "takes_tool_list"))
    [problem] = shape.problems
    assert problem.where == "factory"
    assert problem.message.endswith(
        "cannot be called as factory(tools=[...], limits=Limits(...)): missing a required "
        "argument: 'tool_list'"
    )
    assert shape.streams == ()


@pytest.mark.parametrize("dialect", ["anthropic-messages", "openai-responses"])
def test_the_probe_streams_are_in_the_dialect_the_implementation_reads(
    module: Any, dialect: str
) -> None:
    """An assembler of one dialect is checked on streams of that dialect: each probe gets the
    result it should, where chat streams would only make it fail. (The cut-off stream's call
    stopped before the connection ended: ready at its per-call boundary, C5.)"""

    def factory(*, tools: list[Tool], limits: Limits) -> Assembler:
        return Assembler(tools, limits=limits, dialect=dialect)

    module.factory = factory
    module.CALLSTREAM = {"dialect": dialect}
    shape = check_in_process(load_implementation("py:shape_impl:factory"))
    assert shape.problems == ()
    assert [stream.summary() for stream in shape.streams] == [
        "plain call: ready at feed() of chunk 3 of 3",
        "truncated call: rejected truncated at feed() of chunk 3 of 3",
        "cut-off stream: ready at feed() of chunk 3 of 3",
    ]


def test_every_mistake_in_a_declaration_is_named(module: Any) -> None:
    """Unknown keys, a misspelt profile and an unknown observable, each on its line, each with
    the closest spelling; exit 2."""
    module.make = _reference
    module.CALLSTREAM = {"profile": "lenent", "observable": [], "observables": ["stauts"]}
    out = io.StringIO()
    assert check_command("py:shape_impl:make", timeout=5.0, stdout=out) == 2
    where = "'py:shape_impl:make': CALLSTREAM"
    assert out.getvalue().splitlines() == [
        "callstream check py:shape_impl:make",
        "1 shape problem(s):",
        f"  load: {where} has unknown keys ['observable']; known: profile, dialect, dialects, "
        "observables, opt_ins (did you mean 'observables'?)",
        f"    {where}['profile'] is 'lenent'; expected one of ('lenient', 'strict') (did you mean "
        "'lenient'?)",
        f"    {where}['observables'] names 'stauts'; observables are incremental, status, reason, "
        "arguments_text, arguments, ids, choices, findings (did you mean 'status'?)",
    ]


def test_a_connectable_that_does_not_load_is_its_one_problem() -> None:
    """Exit 2 with the loader's message."""
    out = io.StringIO()
    assert check_command("py:no_such_module_here:make", timeout=5.0, stdout=out) == 2
    assert "  load: 'py:no_such_module_here:make': no module named no_such_module_here" in (
        out.getvalue().splitlines()
    )


# -- behaviour is not shape ---------------------------------------------------------------------


def test_raising_on_one_stream_is_behaviour_shown_not_a_problem() -> None:
    """The truncated stream raises: the run judges it (no_crash); the check shows it, exit 0."""
    shape = shape_of(MISSHAPEN + "raises_on_truncation")
    assert shape.exit_code == 0
    assert shape.streams[1].summary() == (
        "truncated call: nothing released; feed() of chunk 3 of 3 raised RuntimeError: "
        "misshapen: feed() raised"
    )


def test_raising_on_every_stream_checks_nothing_and_exits_2_without_a_problem() -> None:
    """No result's shape could be seen: check says so (exit 2); a run is not stopped."""
    shape = shape_of(MISSHAPEN + "raises_always")
    assert shape.ok
    assert shape.results == 0
    assert shape.exit_code == 2
    assert shape.report().splitlines()[-1] == (
        "no stream released a result, so no result's shape could be checked"
    )


@pytest.mark.parametrize(
    ("factory", "trouble"),
    [
        ("hangs_always", "did not finish within the timeout (1 s)"),
        ("exits_always", "ended the process it ran in (exit code 5)"),
    ],
)
def test_a_hang_or_a_death_ends_the_check_not_the_command(factory: str, trouble: str) -> None:
    """The probes run in a process of their own, watched by the clock: the stream that hung
    or ended it is the last one tried."""
    started = time.perf_counter()
    shape = shape_of(MISSHAPEN + factory, timeout=1.0)
    assert time.perf_counter() - started < 10
    assert shape.ok
    assert [stream.trouble for stream in shape.streams] == [trouble]


SILENT_PROGRAM = """
import json, sys, time
START = {"version": 1, "implementation": {"name": "silent", "version": "1", "language": "py",
                                          "dialects": ["openai-chat"], "profile": "lenient"}}
for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "feed":
        time.sleep(600)
    answer = START if request["cmd"] == "start" else {"seq": request["seq"], "ok": True}
    print(json.dumps(answer), flush=True)
"""
"""A program over the pipe that starts streams and never answers a feed."""


def test_a_program_that_stops_answering_is_tried_on_one_stream_only() -> None:
    """The pipe's own timeout ends the wait; the streams after it are not tried."""
    spec = "cmd:" + shlex.join([sys.executable, "-c", SILENT_PROGRAM])
    shape = check_in_process(load_command(spec, timeout=0.5))
    assert [(stream.stream, stream.trouble) for stream in shape.streams] == [
        (
            "plain call",
            "feed() of chunk 1 of 3 raised ImplementationHung: the program did not answer feed "
            "within 0.5 s",
        )
    ]


def test_the_check_command_prints_what_it_saw_and_exits_0_or_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``callstream check --impl``: the report on stdout; 2 for a wrong shape, and for a hang
    that let no result be seen (the streams after it are not tried)."""
    assert main(["check"]) == 0
    assert capsys.readouterr().out.startswith(f"callstream check {DEFAULT}\n")
    assert main(["check", "--impl", MISSHAPEN + "string_index"]) == 2
    assert f"  {PLAIN}: field 'index' is '0' (a str)" in capsys.readouterr().out
    assert main(["check", "--impl", MISSHAPEN + "hangs_always", "--timeout", "0.5"]) == 2
    assert capsys.readouterr().out.splitlines()[-3:] == [
        "  plain call: nothing released; did not finish within the timeout (0.5 s)",
        "  not tried: truncated call, cut-off stream",
        "no stream released a result, so no result's shape could be checked",
    ]


def test_a_worker_that_cannot_load_what_the_command_loaded_is_a_harness_error() -> None:
    """As with a run's workers: exit 3, never a shape problem."""
    with pytest.raises(HarnessError, match="a worker could not load"):
        shape_of(FAUX + "parent_only:factory")


def test_probes_are_real_streams_the_reference_assembles() -> None:
    """The plain call is ready, the truncated one rejected truncated, the cut-off one
    rejected interrupted at close()."""
    implementation = load_implementation(DEFAULT)
    assert [probe(implementation, stream).released for stream in PROBES] == [
        ("ready at feed() of chunk 3 of 3",),
        ("rejected truncated at feed() of chunk 3 of 3",),
        ("rejected interrupted at close()",),
    ]


# -- before a run -------------------------------------------------------------------------------


def test_run_stops_on_a_wrong_shape_with_its_problems(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Exit 2, each problem a line, nothing run and no report, instead of every case failing."""
    out = tmp_path / "r"
    code = main(
        ["run", "--jobs", "1", "--impl", MISSHAPEN + "done_status", "--out", str(out), CORPUS]
    )
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.splitlines() == [
        f"{PLAIN}: status 'done' is not one of ready, rejected",
        f"callstream: 1 shape problem(s) in {MISSHAPEN}done_status (docs/contract.md); nothing "
        "was run",
    ]
    assert captured.out == ""
    assert not out.exists()


def test_run_goes_on_when_the_implementation_only_misbehaves(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Raising on every stream is for the run to report, case by case (no_crash)."""
    impl = MISSHAPEN + "raises_always"
    code = main(["run", "--jobs", "1", "--impl", impl, "--out", str(tmp_path / "r"), CORPUS])
    assert code == 1
    assert (
        "no_crash (V6; callstream explain V6): the implementation raised RuntimeError: "
        "misshapen: feed() raised"
    ) in capsys.readouterr().out


def test_the_pytest_plugin_refuses_a_wrong_shape_at_configure_time(
    pytester: pytest.Pytester,
) -> None:
    """A usage error with the problems, before anything is collected."""
    result = pytester.runpytest(
        f"--callstream-impl={MISSHAPEN}string_index", f"--callstream-scenarios={CORPUS}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"*--callstream-impl: {MISSHAPEN}string_index does not have the contract's shape*",
            f"{PLAIN}: field 'index' is '0' (a str), not an int*",
        ]
    )

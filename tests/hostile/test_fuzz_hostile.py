"""``callstream fuzz`` against implementations that fight it: whatever an implementation does to
the process it runs in (``os._exit``, ``sys.exit``, a signal, a ``BaseException``) or to the
fuzzer's timeout (caught, blocked, ignored, cancelled), the command finds it, shrinks it, saves
it and exits 1, as for any failure; it never exits 0 with nothing said, and never hangs.

The catalogue is ``tests.fauxmplementations.fuzz_hostile.HOSTILE``: each entry is checked
where the fuzzer runs a stream (in a search process, and alone in a process of its own), and
the two ways a search process can be lost (it ends; it hangs past every interruption) are
fuzzed end to end.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from callstream.cli import main
from callstream.connect.connectables import load_implementation
from callstream.core.spec import CallPlan, Scenario, Splitting, StreamSpec
from callstream.corpus.scenario import load_scenarios
from callstream.fuzz import InProcess, Isolated, fuzz
from callstream.reference import Tool
from callstream.reports import load_report
from callstream.strategies import scenario_for
from tests.fauxmplementations.fuzz_hostile import HOSTILE

HOSTILE_MODULE = "py:tests.fauxmplementations.fuzz_hostile"
TIMEOUT = 0.2
WHOLE = Splitting("whole")


def _stream(tools: int) -> Scenario:
    """One call, offered ``tools`` tools: two make every fauxmplementation here misbehave."""
    offered = tuple(Tool(name, None) for name in ("get_weather", "search", "lookup")[:tools])
    spec = StreamSpec(tools=offered, calls=(CallPlan("get_weather", "{}", ("{}",), id="call_0"),))
    return scenario_for(spec, (WHOLE,))


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_stream_alone_in_its_process_fails_what_the_implementation_did(name: str) -> None:
    """Run alone in a process of its own (as the fuzzer replays what ended a search process),
    each hostile stream fails the check its misbehaviour breaks, within the timeout, and the
    same implementation passes a stream it does not misbehave on."""
    run = Isolated(f"{HOSTILE_MODULE}:{name}", TIMEOUT)
    case = run(_stream(2), "lenient", WHOLE)
    assert case.outcome == "failed"
    assert [failure.check for failure in case.failures] == [HOSTILE[name]]
    assert run(_stream(1), "lenient", WHOLE).outcome == "passed"


CONTAINED = [
    "sys_exit_zero",
    "sys_exit_in_close",
    "exits_from_a_generator",
    "exits_in_the_factory",
    "keyboard_interrupt",
    "generator_exit",
    "base_exception",
    "carries_on_after_the_timeout",
]


@pytest.mark.parametrize("name", CONTAINED)
def test_what_can_be_caught_in_process_is_a_failure_there(name: str) -> None:
    """A ``BaseException`` out of the factory, ``feed()``, ``close()`` or a generator of results
    is the implementation's crash, and a timeout it catches and carries on after is still a
    hang: the search process goes on, at in-process speed."""
    implementation = load_implementation(f"{HOSTILE_MODULE}:{name}")
    case = InProcess(implementation, TIMEOUT)(_stream(2), "lenient", WHOLE)
    assert [failure.check for failure in case.failures] == [HOSTILE[name]]
    if HOSTILE[name] == "no_crash":
        assert "ImplementationExit" in case.failures[0].message


def test_an_implementation_that_ends_its_process_is_found_shrunk_and_saved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``os._exit(0)`` in ``feed()`` ends the search process without a word; the command still
    reports a ``no_crash`` find, shrunk to the two tools that trigger it and one call, saved as
    a regression that ``callstream run`` reproduces, with the report, and exits 1."""
    connectable = f"{HOSTILE_MODULE}:os_exit_zero"
    regressions = tmp_path / "regressions"
    code = main(
        [
            "fuzz",
            *("--impl", connectable, "--profile", "ci", "--max-examples", "200"),
            *("--timeout", "1", "--shrink-time", "5"),
            *("--save-regressions", str(regressions), "--out", str(tmp_path / "report")),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "FOUND" in out
    assert (
        "no_crash (V6; callstream explain V6): the implementation ended the process running the "
        "stream (exit code 0)" in out
    )
    (saved,) = regressions.iterdir()
    (scenario,) = load_scenarios([saved]).scenarios
    assert (len(scenario.spec.tools), len(scenario.spec.calls)) == (2, 1)
    report = load_report(tmp_path / "report")
    assert [result["outcome"] for result in report.results] == ["failed"]
    replay = ["run", str(saved), "--jobs", "1", "--impl", connectable]
    assert main([*replay, "--out", str(tmp_path / "replayed")]) == 1


def test_a_timeout_the_implementation_swallows_does_not_hang_the_search(tmp_path: Path) -> None:
    """An implementation that catches every interruption and sleeps on is killed past the
    timeout; its stream fails ``no_hang`` and is shrunk (each step in a process of its own,
    killed after the timeout) to the two tools that trigger it and one call."""
    result = fuzz(
        load_implementation(f"{HOSTILE_MODULE}:swallows_the_timeout"),
        profile="ci",
        max_examples=200,
        timeout=TIMEOUT,
        shrink_time=3,
        save_regressions=tmp_path / "regressions",
        out=tmp_path / "report",
    )
    assert result.exit_code == 1
    assert result.found is not None
    assert [failure.check for failure in result.found.failures] == ["no_hang"]
    assert result.scenario is not None
    assert (len(result.scenario.spec.tools), len(result.scenario.spec.calls)) == (2, 1)
    assert result.regression is not None
    assert result.regression.exists()


def test_no_search_process_is_left_behind(tmp_path: Path) -> None:
    """Every process the fuzzer started (search processes, the replaying one, the processes of
    single streams) is gone when it returns, after a find that ended a search process."""
    before = _children()
    fuzz(
        load_implementation(f"{HOSTILE_MODULE}:kills_itself"),
        profile="ci",
        max_examples=100,
        timeout=1,
        shrink_time=1,
        save_regressions=None,
        out=tmp_path / "report",
    )
    assert _children() - before <= _servers()


def _children() -> set[int]:
    """This process's live children."""
    task = Path(f"/proc/{os.getpid()}/task")
    if not task.exists():
        pytest.skip("needs /proc")
    found: set[int] = set()
    for thread in task.iterdir():
        children = (thread / "children").read_text().split()
        found |= {int(pid) for pid in children}
    return found


def _servers() -> set[int]:
    """The multiprocessing fork server and the resource tracker it starts with it, which outlive
    a run by design (they serve the next): the first fuzz of a session starts both."""
    from multiprocessing import forkserver, resource_tracker

    pids = (
        getattr(forkserver._forkserver, "_forkserver_pid", None),
        getattr(resource_tracker._resource_tracker, "_pid", None),
    )
    return {pid for pid in pids if pid is not None}

"""No process an implementation starts outlives the run: a child, a daemon that forks twice
and calls ``setsid``, on every way a worker or a program ends (the case passes, hangs and is
killed at the timeout, crashes, the run is interrupted by ^C), for ``py:`` workers and ``cmd:``
programs alike. Every process a fauxmplementation starts writes its pid to a file; after the
run, none of them may be alive. Only the trigger case's verdict is asserted: under load, the
other cases' timing is not what these tests are about."""

from __future__ import annotations

import multiprocessing
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from callstream.connect.check import check_shape
from callstream.connect.connectables import load_implementation
from callstream.core.spec import CallPlan, Scenario, Splitting, StreamSpec
from callstream.reference import Tool
from callstream.runner.execution import run
from callstream.runner.summary import RunSummary
from tests.fauxmplementations import TRIGGER
from tests.helpers import WEATHER

ROOT = Path(__file__).resolve().parents[2]
FAUX = ROOT / "tests" / "fauxmplementations"
CALLSTREAM = Path(sys.executable).with_name("callstream")


def scenario(id: str, tool: Tool) -> Scenario:
    """A one-call scenario offering ``tool``, in one piece."""
    call = CallPlan(tool.name, '{"city": "Paris"}', ('{"city": "Paris"}',), id="call_1")
    return Scenario(
        id,
        f"scenario {id}",
        ("A2",),
        StreamSpec(tools=(tool,), calls=(call,)),
        profiles=("lenient",),
        splittings=(Splitting("whole"),),
        source=f"inline:{id}",
    )


def corpus(pids: Path) -> list[Scenario]:
    """An ordinary scenario, the trigger (whose tool names the pid file), another ordinary one."""
    trigger = Tool(TRIGGER, {"type": "object", "description": str(pids)})
    return [scenario("oc-a", WEATHER), scenario("oc-trigger", trigger), scenario("oc-b", WEATHER)]


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie has ended: only its exit status is left)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def recorded(pids: Path) -> list[int]:
    return [int(pid) for pid in pids.read_text().split()] if pids.exists() else []


def left_alive(pids: Path) -> list[int]:
    """The recorded processes still alive, once the kills have had a moment to land."""
    for _ in range(50):
        living = [pid for pid in recorded(pids) if alive(pid)]
        if not living:
            return []
        time.sleep(0.1)
    return living


def outcomes(summary: RunSummary) -> list[str]:
    return [result.outcome for result in summary.results]


class Sink:
    """A report that keeps nothing."""

    def header(self, fields: Any) -> None:
        pass

    def result(self, case: Any) -> None:
        pass

    def footer(self, fields: Any) -> None:
        pass


def run_on(connectable: str, scenarios: list[Scenario], timeout: float) -> RunSummary:
    implementation = load_implementation(connectable)
    return run(scenarios, implementation, report=Sink(), jobs=1, timeout=timeout)


def program(kind: str, mode: str, pids: Path) -> str:
    argv = [sys.executable, str(FAUX / "spawning.py"), kind, mode, "--pids", str(pids)]
    return "cmd:" + shlex.join(argv)


pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="counts processes through /proc"
)


@pytest.mark.parametrize(
    ("factory", "verdict", "timeout"),
    [
        ("child_passes", "passed", 30.0),
        ("daemon_passes", "passed", 30.0),
        ("daemon_hangs", "failed", 2.0),
        ("daemon_exits", "failed", 30.0),
        ("child_exits", "failed", 30.0),
    ],
)
def test_nothing_a_py_implementation_starts_outlives_the_run(
    tmp_path: Path, factory: str, verdict: str, timeout: float
) -> None:
    """A child or a setsid daemon started by the implementation is gone after the run, whether
    its case passed, hung until the timeout or ended the worker."""
    pids = tmp_path / "pids"
    summary = run_on(f"py:tests.fauxmplementations.forking:{factory}", corpus(pids), timeout)
    assert outcomes(summary)[1] == verdict
    assert recorded(pids), "the implementation started nothing"
    assert left_alive(pids) == []


@pytest.mark.parametrize(
    ("kind", "mode", "verdict", "timeout"),
    [
        ("child", "well", "passed", 30.0),
        ("daemon", "hang", "failed", 4.0),
        ("daemon", "crash", "failed", 30.0),
    ],
)
def test_nothing_a_cmd_program_starts_outlives_the_run(
    tmp_path: Path, kind: str, mode: str, verdict: str, timeout: float
) -> None:
    """A program's helper, in its group or a daemon of its own, is gone after the run: after
    the program was stopped at the end, killed at the timeout, or exited by itself."""
    pids = tmp_path / "pids"
    summary = run_on(program(kind, mode, pids), corpus(pids), timeout)
    assert outcomes(summary)[1] == verdict
    assert len(recorded(pids)) >= 4  # the loading handshake's program and a worker's, 2 each
    assert left_alive(pids) == []


def test_nothing_a_shape_check_starts_outlives_it(tmp_path: Path) -> None:
    """The check before a run loads the program in a process of its own and runs it there:
    its helpers, daemons included, are gone when the check returns."""
    pids = tmp_path / "pids"
    implementation = load_implementation(program("daemon", "well", pids))
    assert check_shape(implementation, timeout=30.0).ok
    assert len(recorded(pids)) == 6  # the handshakes here and there, then the program, 2 each
    assert left_alive(pids) == []


def test_a_daemon_started_in_a_hung_shape_check_is_killed_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check's process keeps what the implementation starts, as a run's worker does: the
    daemon is killed with the hung stream."""
    pids = tmp_path / "pids"
    monkeypatch.setenv("CALLSTREAM_TEST_PIDS", str(pids))
    implementation = load_implementation("py:tests.fauxmplementations.misshapen:daemon_then_hangs")
    # spawn, not the forkserver: the checking process must see this test's environment.
    shape = check_shape(implementation, timeout=1.0, context=multiprocessing.get_context("spawn"))
    assert [stream.hung for stream in shape.streams] == [True]
    assert len(recorded(pids)) == 1
    assert left_alive(pids) == []


def _default_interrupt() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def started_callstream(argv: list[str]) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        [str(CALLSTREAM), *argv],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own terminal group, as a shell would give it
        # ^C's default action, as at a terminal: a shell's background job (CI started that way)
        # hands its children SIGINT ignored, and an ignored ^C would end nothing.
        preexec_fn=_default_interrupt,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def wait_for(pids: Path, count: int, process: subprocess.Popen[bytes]) -> None:
    """Until ``count`` pids are recorded (no timing is asserted: the run's own timeout ends a
    stuck wait)."""
    while len(recorded(pids)) < count:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        time.sleep(0.05)


@pytest.mark.parametrize("implementation", ["py", "cmd"])
def test_nothing_is_left_after_a_run_is_interrupted(tmp_path: Path, implementation: str) -> None:
    """^C in the middle of a hung case ends the run (exit 130) and everything it started."""
    pids = tmp_path / "pids"
    trigger = f"{{name: {TRIGGER}, parameters: {{type: object, description: '{pids}'}}}}"
    scenarios = tmp_path / "hang.yaml"
    scenarios.write_text(
        f"id: oc-hang\ntitle: hangs\nrules: [A2]\ntools: [{trigger}]\nsplittings: [whole]\n"
        f"calls:\n  - {{name: {TRIGGER}, id: call_1, arguments: '{{}}'}}\n"
    )
    if implementation == "py":
        impl, expected = "py:tests.fauxmplementations.forking:daemon_hangs", 1
    else:
        # The parent's handshake, the shape check's handshake and program, a worker's handshake.
        impl, expected = program("daemon", "hang", pids), 8
    argv = ["run", str(scenarios), "--impl", impl, "--jobs", "1", "--timeout", "60"]
    argv += ["--out", str(tmp_path / "report")]
    for process in started_callstream(argv):
        wait_for(pids, expected, process)
        time.sleep(0.3)  # into the hung feed
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=30) == 130
    assert left_alive(pids) == []

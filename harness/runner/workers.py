"""The worker processes that run a run's cases, one case at a time each, watched by the parent's
clock.

Nothing an implementation starts outlives its worker. A worker leads its own process group
(a terminal's ^C is the parent's to handle) and, on Linux, is split in two: a *keeper* that is
a child subreaper, and below it the process that serves cases. Whatever the implementation
starts stays in the keeper's tree, daemons that fork twice and call ``setsid`` included; when
the serving process ends, however it ends, the keeper kills that whole tree and ends the same
way. A worker the parent must kill (a hang, a stop) is killed with its tree, frozen first so
nothing forks its way out. Elsewhere the process group is killed. See
``callstream.connect.processes``.
"""

from __future__ import annotations

import contextlib
import math
import signal
import time
import traceback
from collections import deque
from collections.abc import Callable, Generator, Sequence
from multiprocessing import forkserver
from multiprocessing.connection import Connection, wait
from typing import Any

from ..connect.connectables import load_in_worker
from ..connect.processes import REAP_TIMEOUT, WorkerContext, end_worker, worker_context
from ..core.case import CaseResult, run_case
from ..core.checks import CHECKS
from ..core.judgement import Failure
from ..core.spec import Scenario
from ..errors import HarnessError
from .cases import Case, verdict

__all__ = ["run_cases", "start_early"]

_STARTUP_TIMEOUT = 120.0
"""Seconds a fresh worker may take to import and load the implementation (litellm alone takes
ten on a busy two-core machine; a worker that takes longer is a harness error)."""


def start_early() -> None:
    """Start the process that workers are forked from now, so that it imports callstream while
    the caller does other work (loading the scenarios takes seconds), and the first worker
    starts at once. Where workers are spawned there is no such process: nothing to do."""
    if worker_context(__name__).get_start_method() == "forkserver":
        forkserver.ensure_running()


def run_cases(
    cases: Sequence[Case], connectable: str, jobs: int, timeout: float
) -> Generator[tuple[int, CaseResult], None, None]:
    """Run ``cases`` in up to ``jobs`` workers; yields (case number, verdict) as they finish.
    Closing the generator stops every worker."""
    context = worker_context(__name__)
    queue = deque(cases)
    workers: list[_Worker] = []
    try:
        while queue or any(worker.case is not None for worker in workers):
            busy = sum(worker.case is not None for worker in workers)
            while len(workers) < min(jobs, len(queue) + busy):
                workers.append(_Worker(context, connectable, timeout))
            for worker in workers:
                if worker.ready and worker.case is None and queue:
                    worker.assign(queue.popleft())
            soonest = min(worker.deadline for worker in workers)
            wait(
                [worker.conn for worker in workers] + [w.process.sentinel for w in workers],
                timeout=max(0.0, soonest - time.monotonic()),
            )
            for worker in list(workers):
                settled = worker.poll()
                if not worker.alive:
                    workers.remove(worker)
                elif worker.ready and worker.case is None and queue:
                    # Its next case goes out before the caller writes this verdict: the worker
                    # runs while the parent writes (thousands of cases run in milliseconds).
                    worker.assign(queue.popleft())
                if settled is not None:
                    yield settled
    finally:
        _stop(workers)


class _Worker:
    """A worker process, the case it runs, and when it must be heard from by.

    The clock is per stream rather than per case: a worker says it is alive as it starts each
    new chunking of its case (at most every tenth of the timeout), so a splitting with
    thousands of chunkings (``pairs``) is not mistaken for a hang, while one stream that does
    not finish within the timeout is.
    """

    def __init__(self, context: WorkerContext, connectable: str, timeout: float) -> None:
        self.connectable = connectable
        self.timeout = timeout
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(connectable, child), name="callstream-worker"
        )
        self.process.start()
        child.close()
        self.ready = False
        self.alive = True
        self.case: Case | None = None
        self.deadline = time.monotonic() + _STARTUP_TIMEOUT
        self.sent: set[int] = set()
        """The scenarios the worker was sent, by the identity of the parent's objects."""

    def assign(self, case: Case) -> None:
        """Send ``case`` to the worker and start its clock. A scenario is sent with its first
        case only, and its later cases name it: the worker keeps the one object for all of
        them (so ``render`` and ``expect`` find its bytes and expectation again by identity),
        and the scenario is pickled once, not once per case."""
        self.case = case
        key = id(case.scenario)
        scenario = None if key in self.sent else case.scenario
        self.sent.add(key)
        task = (case.number, key, scenario, case.profile, case.splitting, self.timeout / 10)
        self.conn.send(task)
        self.deadline = time.monotonic() + self.timeout

    def poll(self) -> tuple[int, CaseResult] | None:
        """Take what the worker said, or notice it died or overran; the settled case, if any."""
        while self.alive and self.conn.poll():
            try:
                message = self.conn.recv()
            except (EOFError, OSError):
                return self._died()
            if message[0] == "alive":
                self.deadline = time.monotonic() + self.timeout
            elif message[0] == "ready":
                self.ready = True
                self.deadline = math.inf
            elif message[0] == "refused":
                raise HarnessError(f"a worker could not load {self.connectable}: {message[1]}")
            else:
                self.case = None
                self.deadline = math.inf
                return message[1], message[2]
        if self.alive and self.process.exitcode is not None:
            return self._died()
        if self.alive and time.monotonic() >= self.deadline:
            return self._overran()
        return None

    def _died(self) -> tuple[int, CaseResult]:
        self.alive = False
        # Its keeper first kills what it left; one that closed its pipe but lives on is killed.
        end_worker(self.process, grace=REAP_TIMEOUT)
        code = self.process.exitcode
        how = (
            f"killed by {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
        )
        if self.case is None:
            raise HarnessError(
                f"a worker for {self.connectable} ended ({how}) before it ran a case"
            )
        message = f"the implementation ended the worker process running this case ({how})"
        return self.case.number, verdict(
            self.case, "failed", _failure("no_crash", message), detail=f"worker {how}"
        )

    def _overran(self) -> tuple[int, CaseResult]:
        self.alive = False
        end_worker(self.process)
        if self.case is None:
            raise HarnessError(
                f"a worker did not load {self.connectable} within {_STARTUP_TIMEOUT:g} s"
            )
        message = (
            f"the implementation did not finish a stream within the timeout ({self.timeout:g} s)"
        )
        return self.case.number, verdict(
            self.case,
            "failed",
            _failure("no_hang", message),
            detail=f"worker killed after {self.timeout:g} s without progress",
        )


def _stop(workers: list[_Worker]) -> None:
    """Ask idle workers to leave, kill busy ones with all they started, and reap them all."""
    for worker in workers:
        if worker.case is None:
            with contextlib.suppress(OSError):
                worker.conn.send(None)
        else:
            end_worker(worker.process)
    for worker in workers:
        end_worker(worker.process, grace=REAP_TIMEOUT)
        worker.conn.close()


def _serve(connectable: str, conn: Connection) -> None:
    """A worker process: load the implementation, then run each case it is sent until None.
    On Linux the process called splits first: it stays behind as the keeper of the rest."""
    implementation = load_in_worker(connectable, conn)
    if implementation is None:
        return
    scenarios: dict[int, Scenario] = {}
    while True:
        try:
            task = conn.recv()
        except EOFError:  # the parent is gone
            return
        if task is None:
            return
        number, key, sent, profile, splitting, interval = task
        scenario = scenarios.setdefault(key, sent) if sent is not None else scenarios[key]
        factory = _Heartbeat(implementation.factory_for(scenario.spec.dialect), conn, interval)
        try:
            result = run_case(
                scenario, profile, splitting, factory, implementation.declaration.observables
            )
        except Exception:
            case = Case(number, scenario, profile, splitting)
            detail = "the harness could not judge this case:\n" + traceback.format_exc()
            result = verdict(case, "errored", detail=detail)
        conn.send(("result", number, result))


class _Heartbeat:
    """The implementation's factory, telling the parent "alive" as each new stream begins
    (at most every ``interval`` seconds)."""

    def __init__(self, factory: Callable[..., Any], conn: Connection, interval: float) -> None:
        self.factory = factory
        self.conn = conn
        self.interval = interval
        self.last = time.monotonic()

    def __call__(self, **kwargs: Any) -> Any:
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.conn.send(("alive",))
            self.last = now
        return self.factory(**kwargs)


def _failure(check: str, message: str) -> Failure:
    rules = next(known.rules for known in CHECKS if known.name == check)
    return Failure(check, rules, message)

"""The workers and their supervisor.

The search runs in worker processes that the command's own process supervises, so nothing an
implementation does can end the command or keep it waiting. In a worker the implementation
runs in process, at full speed: a ``SystemExit``, ``KeyboardInterrupt`` or other
``BaseException`` it raises is its crash, and a stream it takes too long over is interrupted
by a signal. What cannot be caught there (the process ended by ``os._exit`` or a signal, a
timeout swallowed or never delivered) the supervisor notices: it kills a worker stuck past the
timeout, and replays the example the worker was running, which each worker writes down before
running it, in a new worker where every stream runs in a process of its own. There it fails
``no_crash`` or ``no_hang`` and is shrunk like any failure.
"""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import tempfile
import threading
import time
from collections.abc import Set as AbstractSet
from dataclasses import replace
from multiprocessing.connection import Connection, wait
from typing import Any

from ..connect.connectables import load_implementation
from ..connect.processes import REAP_TIMEOUT, WorkerContext, exit_with_parent, worker_context
from ..core.case import CaseResult
from ..core.declaration import Implementation
from ..core.spec import Scenario, Splitting
from ..coverage import FeatureTally
from ..errors import HarnessError
from ._beacon import _BUSY, _EXAMPLE, _Beacon
from ._minimising import _minimise
from ._progress import FuzzProgress
from ._running import InProcess, Isolated, Run, _failed, _how
from ._searching import _Outcome, _Search, _search


class _Worker:
    """A search process as its supervisor sees it."""

    def __init__(
        self,
        context: WorkerContext,
        connectable: str,
        search: _Search,
        scratch: str,
        stop: Any,
    ) -> None:
        self.search = search
        self.path = os.path.join(scratch, f"worker-{search.worker}-{id(self)}.example")
        self.shared = context.Array("d", 2, lock=False)
        self.conn, child = context.Pipe(duplex=False)
        self.process = context.Process(
            target=_work,
            args=(connectable, search, child, stop, self.shared, self.path),
            name=f"callstream-fuzz-{search.worker}",
        )
        self.process.start()
        child.close()
        self.examples = 0
        self.failing = False
        self.found: tuple[Scenario, CaseResult, int] | None = None
        self.outcome: _Outcome | None = None
        self.ended: str | None = None
        """How the process ended, when it ended without reporting."""
        self.hung = False

    @property
    def running(self) -> bool:
        return self.outcome is None and self.ended is None

    def overdue(self, limit: float) -> float:
        """Seconds until the current stream is overdue (``math.inf`` between streams)."""
        busy = self.shared[_BUSY]
        return math.inf if not busy else busy + limit - time.time()

    def read(self, labels: set[str]) -> None:
        """Take every message the worker sent."""
        while self.running and self.conn.poll():
            try:
                kind, *payload = self.conn.recv()
            except (EOFError, OSError):
                break
            if kind == "tick":
                self.examples, new, self.failing = payload
                labels |= new
            elif kind == "found":
                self.found = (payload[0], payload[1], payload[2])
                self.failing = True
            elif kind == "error":
                raise HarnessError(f"fuzz worker {self.search.worker} failed: {payload[0]}")
            else:  # done
                self.outcome = payload[0]
                self.examples = self.outcome.examples
                labels |= self.outcome.labels

    def notice_end(self, limit: float, labels: set[str]) -> None:
        """Mark the worker ended if its process is gone without reporting, or kill it if its
        stream is overdue."""
        if self.running and self.process.exitcode is not None:
            self.read(labels)  # what it said just before it ended
        if not self.running:
            return
        if self.process.exitcode is not None:
            self.ended = _how(self.process)
        elif self.overdue(limit) <= 0:
            self.process.kill()
            self.process.join()
            self.hung = True
            self.ended = f"killed after {limit:g} s in one stream"
        if self.ended is not None:
            self.examples = max(self.examples, int(self.shared[_EXAMPLE]))

    def example(self) -> bytes | None:
        """The choices of the example the worker last ran, if it ran any."""
        try:
            with open(self.path, "rb") as file:
                return file.read() or None
        except FileNotFoundError:
            return None

    def close(self) -> None:
        """Reap the process, killed unless it reported and ends by itself."""
        if self.outcome is not None:
            self.process.join(REAP_TIMEOUT)
        if self.process.exitcode is None:
            self.process.kill()
        self.process.join()
        self.conn.close()


def _supervise(implementation: Implementation, search: _Search, shown: FuzzProgress) -> _Outcome:
    """Run ``search.workers`` searches in worker processes and watch them; the first failure
    found stops the others (each ends at its next example) and is the result. A worker whose
    process ends without reporting, or whose stream runs on well past the timeout (killed),
    has its last example replayed in a new worker, alone and isolated, which shrinks it."""
    # Workers fork from a server that has imported this module and drawn a few examples. The
    # name is spelt out whole: a string literal of 20 characters or fewer would be one more
    # constant Hypothesis draws, and change what a derandomised search draws.
    context = worker_context("callstream.fuzz._warming")
    stop = context.Event()
    # Past the timeout, a worker's own signal has had its chance; then the process is killed.
    limit = search.timeout + max(2.0, search.timeout)
    connectable = implementation.connectable
    labels: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="callstream-fuzz-") as scratch:
        workers = [
            _Worker(context, connectable, replace(search, worker=w), scratch, stop)
            for w in range(search.workers)
        ]
        everyone = list(workers)
        winner: _Worker | None = None
        found_after: int | None = None
        replaced: dict[_Worker, _Worker] = {}
        try:
            while any(worker.running for worker in workers):
                live = [worker for worker in workers if worker.running]
                soonest = min(worker.overdue(limit) for worker in live)
                wait(
                    [w.conn for w in live] + [w.process.sentinel for w in live],
                    timeout=min(0.5, max(0.0, soonest)),
                )
                for worker in live:
                    worker.read(labels)
                    worker.notice_end(limit, labels)
                    if winner is None and (worker.failing or worker.ended is not None):
                        winner = worker
                        others = sum(w.examples for w in everyone if w is not worker)
                        found_after = others + (
                            worker.found[2] if worker.found else worker.examples
                        )
                        stop.set()
                    if worker.ended is not None and worker.search.replay is None:
                        choices = worker.example()
                        if worker is winner and choices is not None:
                            again = replace(
                                worker.search, replay=choices, deadline=None, examples=None
                            )
                            replacement = _Worker(context, connectable, again, scratch, stop)
                            replaced[replacement] = worker
                            workers.append(replacement)
                            everyone.append(replacement)
                            winner = replacement
                shown.update(
                    sum(w.examples for w in everyone),
                    labels,
                    winner is not None,
                )
        finally:
            stop.set()
            for worker in everyone:
                worker.close()
    outcome = _Outcome(
        examples=sum(w.examples for w in everyone), labels=labels, found_after=found_after
    )
    if search.coverage:  # a worker that ended without reporting took its count with it
        outcome.features = FeatureTally()
        for worker in everyone:
            if worker.outcome is not None and worker.outcome.features is not None:
                outcome.features.merge(worker.outcome.features)
    if winner is not None:
        outcome.failing = _verdict(winner, replaced.get(winner), implementation)
    return outcome


def _verdict(
    winner: _Worker, ended: _Worker | None, implementation: Implementation
) -> tuple[Scenario, CaseResult]:
    """The failure the winning worker leaves: its shrunk find; else the find it reported before
    it ended; else the find the worker it replaced reported; else, for a replay that did not
    fail again, the example that ended the worker it replaced, failing as that worker did."""
    if winner.outcome is not None and winner.outcome.failing is not None:
        return winner.outcome.failing
    for reported in (winner.found, None if ended is None else ended.found):
        if reported is not None:
            return reported[0], reported[1]
    replayed = None if winner.outcome is None else winner.outcome.replayed
    if ended is None or replayed is None:
        raise HarnessError(
            f"fuzz worker {winner.search.worker} ended ({winner.ended}) and the example it ran "
            "could not be replayed"
        )
    scenario, splitting = replayed
    profile = implementation.declaration.profile
    kept = dataclasses.replace(scenario, splittings=(splitting,))
    if ended.hung:
        message = f"the implementation did not finish a stream: its worker was {ended.ended}"
        case = _failed(kept, profile, splitting, "no_hang", message)
    else:
        message = f"the implementation ended its worker process ({ended.ended})"
        case = _failed(kept, profile, splitting, "no_crash", message)
    detail = "the example did not fail again when replayed in a process of its own"
    return kept, dataclasses.replace(case, detail=detail)


def _work(
    connectable: str, search: _Search, conn: Connection, stop: Any, shared: Any, path: str
) -> None:
    """A worker process: loads the implementation, searches (or replays), cuts the find down
    with :func:`minimise`'s pass, reports to the supervisor."""
    # ^C is the supervisor's, which ends its workers: a KeyboardInterrupt here is the
    # implementation's own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        implementation = load_implementation(connectable)
        beacon = _Beacon(shared, path)
        run: Run
        if search.replay is None:
            # A thread is fine here (this process never forks): it ends the worker if the
            # supervisor dies, even while the implementation hangs.
            threading.Thread(target=exit_with_parent, daemon=True).start()
            run = InProcess(implementation, search.timeout)
            stopped = stop.is_set
        else:
            run = Isolated(connectable, search.timeout)
            stopped = _never
        last = [0.0]
        sent: set[str] = set()

        def watched(scenario: Scenario, profile: str, splitting: Splitting) -> CaseResult:
            with beacon.running():
                return run(scenario, profile, splitting)

        def tick(examples: int, labels: AbstractSet[str], failing: bool) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.25:
                last[0] = now
                conn.send(("tick", examples, labels - sent, failing))
                sent.update(labels)

        def found(scenario: Scenario, case: CaseResult, examples: int) -> None:
            conn.send(("found", scenario, case, examples))

        outcome = _search(implementation, search, watched, beacon, tick, stopped, found)
        if outcome.failing is not None:
            outcome.failing = _minimise(
                implementation.declaration.profile, *outcome.failing, watched
            )
    except Exception as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("done", outcome))


def _never() -> bool:
    return False

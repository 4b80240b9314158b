"""Running a corpus against an implementation: cases, worker processes, timeouts, the report.

Theory of operation: :func:`run` expands the selected scenarios into cases (scenario × the
declared profile × splitting) in corpus order. A case the implementation cannot run (another
profile or dialect: ``not_applicable``; several choices where it declares one: ``unsupported``)
is settled at once. The others go to ``jobs`` worker processes; each loads the
implementation itself from its connectable, then runs one case at a time with
:func:`~callstream.core.case.run_case` and sends the verdict back. The parent owns the clock: a
worker whose case makes no progress for ``timeout`` seconds (one stream, one chunking of the case,
does not finish) is killed and its case fails ``no_hang``; a worker that dies fails its case
``no_crash``. Either way a fresh worker takes its place and the run goes on. Verdicts arrive in
any order and are written in case order, so the report does not depend on ``jobs``, and
``max_fail`` counts failures in that order too.

Nothing an implementation starts outlives its worker. A worker leads its own process group
(a terminal's ^C is the parent's to handle) and, on Linux, is split in two: a *keeper* that is
a child subreaper, and below it the process that serves cases. Whatever the implementation
starts stays in the keeper's tree, daemons that fork twice and call ``setsid`` included; when
the serving process ends, however it ends, the keeper kills that whole tree and ends the same
way. A worker the parent must kill (a hang, a stop) is killed with its tree, frozen first so
nothing forks its way out. Elsewhere the process group is killed. See
``callstream.connect.processes``.

What the implementation does wrong is a result. Only the harness's own trouble (a worker that
cannot load the implementation, or cannot start) raises :class:`~callstream.errors.HarnessError`.
"""

from __future__ import annotations

import contextlib
import math
import signal
import time
import traceback
from collections import deque
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Protocol, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress

from ..connect.check import check_shape, checked_before_a_run
from ..connect.connectables import load_implementation
from ..connect.processes import WorkerContext, end_worker, start_worker, worker_context
from ..core.case import OUTCOMES, CaseResult, Outcome, run_case, splittings_of
from ..core.checks import CHECKS, Failure
from ..core.declaration import Applicability, Declaration, Implementation
from ..core.spec import Scenario, Splitting
from ..corpus.scenario import corpus_paths, load_scenarios
from ..errors import INTERRUPTED, HarnessError, UsageError
from ..reports import ReportWriter, failing_scenarios, new_run_folder, rerun_command
from .shard import Shard

__all__ = [
    "Case",
    "Progress",
    "ReportSink",
    "RunSummary",
    "default_timeout",
    "describe_failing",
    "expand",
    "explain",
    "format_summary",
    "make_progress",
    "rerun_words",
    "run",
    "run_command",
    "select_scenarios",
]

_STARTUP_TIMEOUT = 120.0
"""Seconds a fresh worker may take to import and load the implementation (litellm alone takes
ten on a busy two-core machine; a worker that takes longer is a harness error)."""
_REAP_TIMEOUT = 5.0
"""Seconds a worker that closed its pipe may take to exit before it is killed."""
_UNSETTLED: tuple[Outcome, ...] = ("failed", "errored")


@dataclass(frozen=True, slots=True)
class Case:
    """One scenario under one profile, cut by one splitting: the unit that passes or fails."""

    number: int
    """Its place in the run; results are written in this order."""
    scenario: Scenario
    profile: str
    splitting: Splitting
    skipped: tuple[Applicability, str] | None = None
    """Why the implementation cannot run it (outcome and reason); None when it is to be run."""

    @property
    def name(self) -> str:
        """``scenario-id[profile-splitting]``, as the pytest plugin names its items."""
        return f"{self.scenario.id}[{self.profile}-{self.splitting.label}]"


def expand(scenarios: Sequence[Scenario], declaration: Declaration) -> list[Case]:
    """Every case of ``scenarios`` under the declared profile, in order, each marked with why
    it cannot run, if it cannot."""
    cases: list[Case] = []
    for scenario in scenarios:
        skipped = declaration.skips(scenario)
        cases += [
            Case(len(cases) + n, scenario, declaration.profile, splitting, skipped)
            for n, splitting in enumerate(splittings_of(scenario))
        ]
    return cases


def select_scenarios(scenarios: Sequence[Scenario], expression: str) -> list[Scenario]:
    """The scenarios ``-k expression`` selects: comma-separated terms, each matching a scenario
    whose id contains it, that carries it as a tag, or that cites it as a rule; a term written
    ``=ID`` matches that id exactly (what rerun commands use: some ids hold others)."""
    terms = [term.strip() for term in expression.split(",")]
    if not all(terms):
        raise UsageError(
            f"-k {expression!r} has an empty term; give comma-separated ids, tags or rules"
        )
    chosen = [
        scenario
        for scenario in scenarios
        if any(
            scenario.id == term[1:]
            if term.startswith("=")
            else term in scenario.id or term in scenario.tags or term in scenario.rules
            for term in terms
        )
    ]
    if not chosen:
        raise UsageError(f"-k {expression!r} selects no scenario (it matches ids, tags and rules)")
    return chosen


class ReportSink(Protocol):
    """Where a run writes its report lines (:class:`callstream.reports.ReportWriter`)."""

    def header(self, fields: Mapping[str, Any]) -> None:
        """The first line: what runs, on what (the writer adds times, versions, platform)."""

    def result(self, case: CaseResult) -> None:
        """One verdict, in case order."""

    def footer(self, fields: Mapping[str, Any]) -> None:
        """The last line, written when the run finished (the writer adds times and counts)."""


class Progress(Protocol):
    """Shows a run's progress as verdicts arrive."""

    def start(self, total: int) -> None:
        """The run has ``total`` cases."""

    def advance(self, result: CaseResult) -> None:
        """One more case is settled."""

    def finish(self) -> None:
        """The run is over (finished, stopped or interrupted)."""


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What a run did: its verdicts in case order and how it ended."""

    results: tuple[CaseResult, ...]
    """The verdicts written to the report (all cases, unless the run stopped early)."""
    scenarios: int
    cases: int
    """Cases planned; more than ``len(results)`` when the run stopped early."""
    stopped_early: bool
    elapsed: float
    shard: Shard | None = None
    """The slice of the run this was (``--shard K/N``), or None for the whole run."""

    @property
    def counts(self) -> dict[str, int]:
        """How many verdicts have each outcome."""
        counts: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
        for result in self.results:
            counts[result.outcome] += 1
        return counts

    @property
    def failures(self) -> list[CaseResult]:
        """The failed and errored verdicts, in case order."""
        return [result for result in self.results if result.outcome in _UNSETTLED]

    @property
    def exit_code(self) -> int:
        """0 when every case that ran passed, 1 when any failed or errored."""
        return 1 if self.failures else 0


def run(
    scenarios: Sequence[Scenario],
    implementation: Implementation,
    *,
    report: ReportSink,
    jobs: int = 1,
    timeout: float = 10.0,
    max_fail: int | None = None,
    select: str | None = None,
    shard: Shard | None = None,
    progress: Progress | None = None,
    argv: Sequence[str] = (),
    rerun: Sequence[str] | None = None,
) -> RunSummary:
    """Run every case of ``scenarios`` (those ``select`` picks, see :func:`select_scenarios`;
    of those, ``shard``'s slice, see :class:`~callstream.runner.shard.Shard`) on ``implementation``
    in ``jobs`` worker processes, killing a case whose stream does not finish within
    ``timeout`` seconds; stop after ``max_fail`` failed cases. Writes the report's header
    (with ``rerun``, the command line that runs one of its scenarios again once given a
    ``-k``, see :func:`rerun_words`), results and footer."""
    if jobs < 1:
        raise UsageError(f"jobs must be at least 1, not {jobs}")
    if not 0 < timeout < math.inf:
        raise UsageError(f"the timeout must be a positive number of seconds, not {timeout}")
    if max_fail is not None and max_fail < 1:
        raise UsageError(f"max_fail must be at least 1, not {max_fail}")
    planned = list(scenarios) if select is None else select_scenarios(scenarios, select)
    chosen = planned if shard is None else shard.select(planned)
    cases = expand(chosen, implementation.declaration)
    clock = time.perf_counter()
    header = _header(implementation, chosen, cases, select, argv, rerun)
    if shard is not None:
        header["shard"] = shard.describe(planned)
    report.header(header)
    ledger = _Ledger(report, max_fail)
    shown = progress or _Silent()
    shown.start(len(cases))
    try:
        for case in cases:
            if case.skipped is not None:
                outcome, why = case.skipped
                result = _verdict(case, outcome, detail=why)
                shown.advance(result)
                ledger.add(case.number, result)
        runnable = [case for case in cases if case.skipped is None]
        with contextlib.closing(
            _run_cases(runnable, implementation.connectable, jobs, timeout)
        ) as verdicts:
            for number, result in verdicts:
                shown.advance(result)
                if ledger.add(number, result):
                    break
    finally:
        shown.finish()
    summary = RunSummary(
        tuple(ledger.written),
        len(chosen),
        len(cases),
        len(ledger.written) < len(cases),
        time.perf_counter() - clock,
        shard,
    )
    report.footer({"exit_code": summary.exit_code, "stopped_early": summary.stopped_early})
    return summary


def default_timeout(connectable: str) -> float:
    """Seconds a stream may take by default: 10 in process; 60 over a pipe or HTTP, where every
    chunk is a round trip (a one-byte splitting of a 100 KB stream is 100,000 of them)."""
    return 10.0 if connectable.startswith("py:") else 60.0


def run_command(
    paths: Sequence[str],
    *,
    impl: str,
    select: str | None,
    max_fail: int | None,
    jobs: int,
    timeout: float | None,
    out: Path | None,
    scenarios: Sequence[str] = (),
    argv: Sequence[str],
    stdout: TextIO,
    stderr: TextIO,
    shard: Shard | None = None,
) -> int:
    """``callstream run``: load the implementation and the scenarios (``paths``, or the default
    corpus, and beside them the user's ``scenarios``), run, render the report into ``out`` (default:
    a new ``reports/run-…`` folder) and print a summary. Returns the exit code: 0 every case that
    ran passed, 1 some failed or errored, 2 scenario errors (printed as ``path:line: message``) or
    shape problems (found by :func:`callstream.connect.check.check_shape`, one a line); nothing
    runs then; 130 when interrupted. As with ``python -m``, modules in the working directory can be
    loaded. Without a ``timeout``, :func:`default_timeout` of the connectable; with a ``shard``,
    only its slice of the selection runs."""
    implementation = load_implementation(impl)
    given_timeout = timeout
    if timeout is None:
        timeout = default_timeout(impl)
    loaded = load_scenarios(corpus_paths(paths, scenarios))
    if loaded.errors:
        for error in loaded.errors:
            print(error, file=stderr)
        print(f"callstream: {len(loaded.errors)} scenario error(s); nothing was run", file=stderr)
        return UsageError.exit_code
    if not loaded.scenarios:
        raise UsageError(f"no scenarios in {', '.join(paths) or 'the default corpus'}")
    if checked_before_a_run(impl):
        shape = check_shape(implementation, timeout=timeout, context=worker_context(__name__))
        if not shape.ok:
            for problem in shape.problems:
                print(problem, file=stderr)
            print(
                f"callstream: {len(shape.problems)} shape problem(s) in {impl} "
                "(docs/contract.md); nothing was run",
                file=stderr,
            )
            return UsageError.exit_code
    folder = out or new_run_folder()
    again = rerun_words(impl, paths, scenarios=scenarios, timeout=given_timeout)
    with ReportWriter(folder) as writer:
        try:
            summary = run(
                loaded.scenarios,
                implementation,
                report=writer,
                jobs=jobs,
                timeout=timeout,
                max_fail=max_fail,
                select=select,
                shard=shard,
                progress=make_progress(stderr),
                argv=argv,
                rerun=again,
            )
        except KeyboardInterrupt:
            print(f"callstream: interrupted; the partial report is in {folder}", file=stderr)
            return INTERRUPTED
        writer.render()
    stdout.write(format_summary(summary, folder, again))
    return summary.exit_code


def rerun_words(
    impl: str,
    paths: Sequence[str],
    *,
    scenarios: Sequence[str] = (),
    timeout: float | None = None,
) -> list[str]:
    """The command line of ``callstream run`` on ``impl`` with the scenario ``paths`` and the
    ``--scenarios`` files as given (and ``--timeout`` when one was given): add ``-k`` to run
    one scenario again (:func:`callstream.reports.rerun_command`)."""
    words = ["callstream", "run", "--impl", impl]
    for path in scenarios:
        words += ["--scenarios", path]
    if timeout is not None:
        words += ["--timeout", f"{timeout:g}"]
    return [*words, *paths]


def format_summary(
    summary: RunSummary, folder: Path, rerun: Sequence[str] | None = None, limit: int = 20
) -> str:
    """The lines printed after a run: the counts; then each failing scenario in one line (the
    splittings that went wrong, the first failure's message) with the command that reruns it
    under it (when ``rerun`` gives the run's command line, see :func:`rerun_words`), for
    the first ``limit`` of them; and where the report is."""
    counts = summary.counts
    lines = [
        f"{summary.cases} cases of {summary.scenarios} scenarios: {counts['passed']} passed, "
        f"{counts['failed']} failed, {counts['errored']} errored, "
        f"{counts['unsupported']} unsupported, {counts['not_applicable']} not applicable "
        f"({summary.elapsed:.1f} s" + (f", shard {summary.shard.label})" if summary.shard else ")")
    ]
    lines += describe_failing([result.to_dict() for result in summary.results], rerun, limit)
    failures = summary.failures
    if summary.stopped_early:
        lines.append(
            f"stopped after {len(failures)} failed case(s): "
            f"{summary.cases - len(summary.results)} not run"
        )
    lines.append(f"report: {folder}")
    return "\n".join(lines) + "\n"


def describe_failing(
    results: Sequence[Mapping[str, Any]], rerun: Sequence[str] | None, limit: int = 20
) -> list[str]:
    """The first ``limit`` failing scenarios of ``results`` (report lines), each in one line
    (the splittings that went wrong, the first failure's message) with the command that reruns
    it under it, when ``rerun`` gives the command line of the run (see :func:`rerun_words`)."""
    failing = failing_scenarios(results)
    lines = []
    for group in failing[:limit]:
        lines.append(group.line())
        if rerun is not None:
            lines.append("  " + rerun_command(rerun, group.scenario))
    if len(failing) > limit:
        lines.append(f"… and {len(failing) - limit} more failing scenarios")
    return lines


def explain(result: CaseResult) -> str:
    """Everything a person needs to act on a failed or errored case: first the failed checks
    with their rules (so a one-line summary shows the first), then the scenario with its rules
    and where it is defined, why it errored, and the repro."""
    lines = [
        f"{failure.check} ({failure.pointer}): {failure.message}" for failure in result.failures
    ]
    lines += [
        f"{result.scenario} [{result.profile}-{result.splitting}]: {result.title}",
        f"rules {', '.join(result.rules)}"
        + (f"; defined at {result.source}" if result.source else ""),
    ]
    if result.detail:
        lines.append(result.detail)
    if result.repro:
        lines += ["repro:", result.repro]
    return "\n".join(lines)


# -- progress -----------------------------------------------------------------------------------


def make_progress(stream: TextIO) -> Progress:
    """A progress bar on a terminal, plain periodic lines elsewhere (CI logs)."""
    return _Bar(stream) if stream.isatty() else _Lines(stream)


class _Lines:
    """Prints ``callstream: 120/800 cases, 3 failed`` at most every ``interval`` seconds."""

    def __init__(self, stream: TextIO, interval: float = 10.0) -> None:
        """Write to ``stream``."""
        self._stream = stream
        self._interval = interval
        self._total = 0
        self._done = 0
        self._failed = 0
        self._last = 0.0

    def start(self, total: int) -> None:
        """Announce the run."""
        self._total = total
        self._last = time.monotonic()
        self._line(f"running {total} cases")

    def advance(self, result: CaseResult) -> None:
        """Count a verdict; print a line when ``interval`` has passed."""
        self._done += 1
        self._failed += result.outcome in _UNSETTLED
        if time.monotonic() - self._last >= self._interval:
            self._status()

    def finish(self) -> None:
        """The final count."""
        self._status()

    def _status(self) -> None:
        self._last = time.monotonic()
        self._line(f"{self._done}/{self._total} cases, {self._failed} failed")

    def _line(self, text: str) -> None:
        print(f"callstream: {text}", file=self._stream, flush=True)


class _Bar:
    """A rich progress bar with the failure count."""

    def __init__(self, stream: TextIO) -> None:
        self._failed = 0
        self._bar = RichProgress(
            TextColumn("callstream"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            console=Console(file=stream),
        )
        self._task = self._bar.add_task("cases", total=None, failed=0)

    def start(self, total: int) -> None:
        self._bar.update(self._task, total=total)
        self._bar.start()

    def advance(self, result: CaseResult) -> None:
        self._failed += result.outcome in _UNSETTLED
        self._bar.update(self._task, advance=1, failed=self._failed)

    def finish(self) -> None:
        self._bar.stop()


class _Silent:
    """No progress display."""

    def start(self, total: int) -> None:
        pass

    def advance(self, result: CaseResult) -> None:
        pass

    def finish(self) -> None:
        pass


# -- writing in order ---------------------------------------------------------------------------


class _Ledger:
    """Holds verdicts that arrive early and writes them in case order; counts failures."""

    def __init__(self, report: ReportSink, max_fail: int | None) -> None:
        self.report = report
        self.max_fail = max_fail
        self.written: list[CaseResult] = []
        self.failed = 0
        self._early: dict[int, CaseResult] = {}

    def add(self, number: int, result: CaseResult) -> bool:
        """Take case ``number``'s verdict; True once ``max_fail`` failures are written."""
        self._early[number] = result
        while len(self.written) in self._early:
            result = self._early.pop(len(self.written))
            self.report.result(result)
            self.written.append(result)
            if result.outcome in _UNSETTLED:
                self.failed += 1
                if self.max_fail is not None and self.failed >= self.max_fail:
                    return True
        return False


# -- worker processes ---------------------------------------------------------------------------


def _run_cases(
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
                if settled is not None:
                    yield settled
                if not worker.alive:
                    workers.remove(worker)
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

    def assign(self, case: Case) -> None:
        """Send ``case`` to the worker and start its clock."""
        self.case = case
        task = (case.number, case.scenario, case.profile, case.splitting, self.timeout / 10)
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
        end_worker(self.process, grace=_REAP_TIMEOUT)
        code = self.process.exitcode
        how = (
            f"killed by {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
        )
        if self.case is None:
            raise HarnessError(
                f"a worker for {self.connectable} ended ({how}) before it ran a case"
            )
        message = f"the implementation ended the worker process running this case ({how})"
        return self.case.number, _verdict(
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
        return self.case.number, _verdict(
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
        end_worker(worker.process, grace=_REAP_TIMEOUT)
        worker.conn.close()


def _serve(connectable: str, conn: Connection) -> None:
    """A worker process: load the implementation, then run each case it is sent until None.
    On Linux the process called splits first: it stays behind as the keeper of the rest."""
    start_worker(conn)
    try:
        implementation = load_implementation(connectable)
    except UsageError as exc:
        conn.send(("refused", str(exc)))
        return
    conn.send(("ready",))
    while True:
        try:
            task = conn.recv()
        except EOFError:  # the parent is gone
            return
        if task is None:
            return
        number, scenario, profile, splitting, interval = task
        factory = _Heartbeat(implementation.factory, conn, interval)
        try:
            result = run_case(
                scenario, profile, splitting, factory, implementation.declaration.observables
            )
        except Exception:
            case = Case(number, scenario, profile, splitting)
            detail = "the harness could not judge this case:\n" + traceback.format_exc()
            result = _verdict(case, "errored", detail=detail)
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


# -- verdicts and report lines ------------------------------------------------------------------


def _verdict(
    case: Case,
    outcome: Outcome,
    *failures: Failure,
    detail: str | None = None,
    elapsed: float = 0.0,
) -> CaseResult:
    """A verdict the parent decides without running the case."""
    return CaseResult.of(
        case.scenario,
        case.profile,
        case.splitting,
        outcome,
        failures=failures,
        detail=detail,
        elapsed=elapsed,
    )


def _failure(check: str, message: str) -> Failure:
    rules = next(known.rules for known in CHECKS if known.name == check)
    return Failure(check, rules, message)


def _header(
    implementation: Implementation,
    scenarios: Sequence[Scenario],
    cases: Sequence[Case],
    select: str | None,
    argv: Sequence[str],
    rerun: Sequence[str] | None,
) -> dict[str, Any]:
    header = {
        "implementation": {
            "connectable": implementation.connectable,
            "name": implementation.name,
            "declaration": implementation.declaration.to_dict(),
        },
        "argv": list(argv),
        "scenarios": len(scenarios),
        "cases": len(cases),
        "filter": select,
    }
    return header if rerun is None else header | {"rerun": list(rerun)}

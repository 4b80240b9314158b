"""``callstream fuzz``: generated streams against an implementation, shrunk finds kept as YAML.

The generators (``harness.strategies``) draw a Scenario and a splitting; the same oracle, checks
and case runner as ``callstream run`` judge it. Hypothesis shrinks a failure to a minimal
scenario, which is written out under ``scenarios/regressions/`` (the example database is a
cache, not a corpus), with the same reports as ``run``.

Settings profiles are built here explicitly, never inherited from the ``ci`` profile Hypothesis
loads by itself when ``CI`` is set:

- ``dev``: randomised, a local example database;
- ``ci``: derandomised, bounded, no database;
- ``nightly``: randomised, time-budgeted, a shared example database (a folder, or Redis),
  read-only unless ``--db-write`` is given.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import multiprocessing
import multiprocessing.queues
import queue
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TextIO

from hypothesis import HealthCheck, Phase, assume, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    ReadOnlyDatabase,
)
from hypothesis.errors import Unsatisfiable
from rich.console import Console
from rich.live import Live
from rich.text import Text

from . import strategies
from .case import CaseResult, run_case
from .connect import Implementation, load_implementation
from .errors import HarnessError, UsageError
from .observe import StreamTimeout
from .regressions import regression_id, write_regression
from .render import render
from .report import ReportWriter, new_run_folder
from .spec import Scenario, Splitting, StreamSpec
from .split import chunkings

__all__ = [
    "FUZZ_PROFILES",
    "FuzzProgress",
    "FuzzResult",
    "database_for",
    "describe",
    "fuzz",
    "make_fuzz_progress",
    "minimise",
    "settings_for",
]

FUZZ_PROFILES = ("dev", "ci", "nightly")
_BATCH = 500
"""Examples per Hypothesis run when fuzzing for a duration (each batch with a fresh seed)."""


@dataclass
class FuzzResult:
    """What a fuzzing session found."""

    examples: int = 0
    elapsed: float = 0.0
    found: CaseResult | None = None
    """The shrunk failing case, if any."""
    scenario: Scenario | None = None
    regression: Path | None = None
    report: Path | None = None
    labels: set[str] = field(default_factory=set)
    implementation: str = ""
    found_after: int | None = None
    """The examples run when the first failure came up (before shrinking)."""

    @property
    def exit_code(self) -> int:
        """0 nothing found, 1 the implementation failed (as ``callstream run``)."""
        return 0 if self.found is None else 1


def database_for(where: str | None, *, profile: str, writable: bool) -> ExampleDatabase | None:
    """The example database for a profile: none for ``ci``; a folder or Redis otherwise."""
    if profile == "ci":
        return None
    location = where or ".hypothesis/callstream"
    if location.startswith("redis://"):
        try:
            import redis  # type: ignore[import-not-found]
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError:
            raise UsageError("--db redis://… needs the redis package: pip install redis") from None
        database: ExampleDatabase = RedisExampleDatabase(redis.Redis.from_url(location))
    else:
        database = DirectoryBasedExampleDatabase(location)
    if profile == "nightly" and not writable:
        return ReadOnlyDatabase(database)
    return database


def settings_for(profile: str, *, max_examples: int, database: ExampleDatabase | None) -> settings:
    """The Hypothesis settings of a fuzz profile, every field that matters set explicitly."""
    if profile not in FUZZ_PROFILES:
        raise UsageError(f"unknown fuzz profile {profile!r}; known: {', '.join(FUZZ_PROFILES)}")
    return settings(
        max_examples=max_examples,
        derandomize=profile == "ci",
        database=database,
        deadline=None,
        print_blob=False,
        report_multiple_bugs=False,
        # Hill-climbing on target() scores pays off over long runs, not in a bounded CI budget;
        # the explain phase (which parts of a shrunk example could vary) cost two thirds of
        # the time after a find and says nothing the saved scenario does not.
        phases=tuple(
            p
            for p in Phase
            if p is not Phase.explain and (profile != "ci" or p is not Phase.target)
        ),
        suppress_health_check=list(HealthCheck),
    )


class _Found(AssertionError):
    """Raised in the property when a case fails; Hypothesis shrinks it."""


class _Stop(BaseException):
    """Raised in the property to end a search early (time is up, or another worker found a
    failure). Not an Exception, so Hypothesis lets it through instead of shrinking it."""


@dataclass(frozen=True, slots=True)
class _Search:
    """What one search process does: its share of the budget and its own seeds."""

    profile: str
    examples: int | None
    deadline: float | None
    """``time.time()`` at which to stop (wall clock, so worker processes agree)."""
    database: str | None
    database_writable: bool
    timeout: float
    """Seconds one example's stream may take before it fails ``no_hang``."""
    shrink_time: float
    """Seconds shrinking a failure may take (each step of a hang costs ``timeout``)."""
    worker: int = 0
    workers: int = 1


@dataclass
class _Outcome:
    examples: int = 0
    labels: set[str] = field(default_factory=set)
    failing: tuple[Scenario, CaseResult] | None = None
    found_after: int | None = None


Tick = Callable[[int, AbstractSet[str], bool], None]
"""Told the examples run so far, the labels the generators attached to draws (the distinct
events seen), and whether a failure was found."""


def fuzz(
    implementation: Implementation,
    *,
    profile: str = "dev",
    max_examples: int | None = None,
    duration: float | None = None,
    workers: int = 1,
    timeout: float = 10.0,
    shrink_time: float = 120.0,
    database: str | None = None,
    database_writable: bool = False,
    save_regressions: Path | None = Path("scenarios/regressions"),
    out: Path | None = None,
    argv: list[str] | None = None,
    progress: FuzzProgress | None = None,
) -> FuzzResult:
    """Fuzz ``implementation`` until a failure is found and shrunk, the example budget is spent
    or ``duration`` seconds have passed, in ``workers`` processes that share the example
    database and split the budget. A stream that takes over ``timeout`` seconds fails
    ``no_hang``; shrinking stops after ``shrink_time`` seconds with the smallest failure seen,
    which :func:`minimise` then cuts down further."""
    if profile not in FUZZ_PROFILES:
        raise UsageError(f"unknown fuzz profile {profile!r}; known: {', '.join(FUZZ_PROFILES)}")
    if duration is not None and profile == "ci":
        raise UsageError("the ci profile is bounded by --max-examples, not by --duration")
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, not {workers}")
    for name, seconds in (("timeout", timeout), ("shrink time", shrink_time)):
        if not 0 < seconds < math.inf:
            raise UsageError(f"the {name} must be a positive number of seconds, not {seconds}")
    if duration is None and max_examples is None:
        max_examples = 1000
    database_for(database, profile=profile, writable=database_writable)  # fail early on a bad --db
    started = time.monotonic()
    search = _Search(
        profile,
        max_examples,
        None if duration is None else time.time() + duration,
        database,
        database_writable,
        timeout,
        shrink_time,
        workers=workers,
    )
    shown = progress or _Quiet()
    shown.start(max_examples, duration)
    try:
        if workers == 1:
            outcome = _search(implementation, search, shown.update, lambda: False)
        else:
            outcome = _in_parallel(implementation, search, shown)
        # The final count, all workers.
        shown.update(outcome.examples, outcome.labels, outcome.failing is not None)
    finally:
        shown.finish()
    result = FuzzResult(
        examples=outcome.examples,
        elapsed=time.monotonic() - started,
        labels=outcome.labels,
        implementation=implementation.connectable,
        found_after=outcome.found_after,
    )
    if outcome.failing is not None:
        scenario, case = minimise(implementation, *outcome.failing, timeout=timeout)
        scenario = dataclasses.replace(
            scenario,
            id=regression_id(scenario.spec, implementation.connectable),
            title="found by callstream fuzz: "
            + (case.failures[0].check if case.failures else case.outcome),
            provenance=(
                f"callstream fuzz --impl {implementation.connectable} --profile {profile}",
            ),
        )
        result.found = case
        result.scenario = scenario
        if save_regressions is not None:
            result.regression = write_regression(
                scenario, save_regressions, implementation=implementation.connectable
            )
    result.report = _write_report(implementation, result, out, argv or [])
    return result


def minimise(
    implementation: Implementation, scenario: Scenario, case: CaseResult, *, timeout: float = 10.0
) -> tuple[Scenario, CaseResult]:
    """Shrink a found stream further, where Hypothesis's shrinker stopped at a local minimum:
    drop whole calls, then tools no call names, one at a time, for as long as the stream stays
    one the oracle predicts, the reference passes it, and the implementation still fails it on
    the same check. Hypothesis shrinks the choices that drew the stream; this shrinks the
    stream itself, so a call that only came along for the ride goes."""
    wanted = case.failures[0].check if case.failures else None
    profile = implementation.declaration.profile
    reference = load_implementation(_REFERENCES[profile]).factory
    (splitting,) = scenario.splittings or (Splitting("whole"),)
    progress = True
    while progress:
        progress = False
        for spec in _smaller(scenario.spec):
            if not strategies.predictable(spec):
                continue
            trial = strategies.scenario_for(spec, (splitting,))
            if run_case(trial, profile, splitting, reference).outcome != "passed":
                continue
            with _time_limit(timeout):
                again = run_case(
                    trial,
                    profile,
                    splitting,
                    implementation.factory,
                    implementation.declaration.observables,
                )
            if again.outcome == "failed" and again.failures and again.failures[0].check == wanted:
                scenario, case, progress = trial, again, True
                break
    return scenario, case


_REFERENCES = {
    "lenient": "py:harness.implementations:reference",
    "strict": "py:harness.implementations:reference_strict",
}


def _smaller(spec: StreamSpec) -> Iterator[StreamSpec]:
    """``spec`` without one of its calls, then without one of the tools no call names."""
    if len(spec.calls) > 1:
        for n in range(len(spec.calls)):
            yield replace(spec, calls=spec.calls[:n] + spec.calls[n + 1 :])
    named = {plan.name for plan in spec.calls}
    if len(spec.tools) > 1:
        for n, tool in enumerate(spec.tools):
            if tool.name not in named:
                yield replace(spec, tools=spec.tools[:n] + spec.tools[n + 1 :])


def _search(
    implementation: Implementation, search: _Search, tick: Tick, stopped: Callable[[], bool]
) -> _Outcome:
    """One process's search: Hypothesis runs of at most ``_BATCH`` examples, each with its own
    seed, until the budget or the time is spent or a failure is found and shrunk."""
    outcome = _Outcome()
    db = database_for(search.database, profile=search.profile, writable=search.database_writable)
    claimed_profile = implementation.declaration.profile
    failing: list[tuple[Scenario, CaseResult]] = []

    shrink_until: list[float] = []

    def check(scenario: Scenario, splitting_for: Callable[[bytes], Splitting]) -> None:
        assume(implementation.declaration.skips(scenario) is None)
        data = render(scenario.spec).data
        splitting = splitting_for(data)
        # Stop only once every draw of the example is made: Hypothesis replays examples from
        # its database, and one that stopped drawing early would read as inconsistent data
        # generation (FlakyStrategyDefinition).
        now = time.time()
        if not failing and (stopped() or (search.deadline is not None and now >= search.deadline)):
            raise _Stop
        if shrink_until and now >= shrink_until[0]:
            raise _Stop  # shrinking ran out of time: keep the smallest failure seen so far
        outcome.examples += 1
        with _time_limit(search.timeout):
            case = run_case(
                scenario,
                claimed_profile,
                splitting,
                implementation.factory,
                implementation.declaration.observables,
            )
        if case.outcome == "failed":
            if outcome.found_after is None:
                outcome.found_after = outcome.examples
                shrink_until.append(time.time() + search.shrink_time)
            kept = dataclasses.replace(scenario, splittings=(_replayable(splitting, data),))
            failing.append((kept, case))
            tick(outcome.examples, strategies.seen_events(), True)
            raise _Found(case.failures[0].message if case.failures else case.outcome)
        tick(outcome.examples, strategies.seen_events(), bool(failing))

    def attempt(examples: int, batch: int) -> bool:
        """One Hypothesis run; True when it found (and shrank) a failure."""

        @given(scenario=strategies.scenarios(), data=st.data())
        @settings_for(search.profile, max_examples=examples, database=db)
        def property(scenario: Scenario, data: st.DataObject) -> None:
            def splitting_for(raw: bytes) -> Splitting:
                return data.draw(strategies.splittings(raw), label="splitting")

            check(scenario, splitting_for)

        if search.profile == "ci":  # derandomised: the first run's seed comes from the test
            test = seed(0xCA11 + batch)(property) if batch else property
        else:
            # A seed of our own even when randomised: with none, Hypothesis prints "you can
            # reproduce this by adding @seed(…)" whenever a search is stopped. A find is kept
            # as a YAML scenario instead.
            test = seed(random.SystemRandom().getrandbits(64))(property)
        try:
            test()
        except _Found:
            return True
        except (_Stop, Unsatisfiable):
            return False
        return False

    budget = search.examples
    if budget is not None:  # this worker's share
        budget = budget // search.workers + (search.worker < budget % search.workers)
    for batch in itertools.count(search.worker, search.workers):
        if search.deadline is None:
            assert budget is not None
            size = budget
        else:
            size = _BATCH if budget is None else min(_BATCH, budget - outcome.examples)
        if size <= 0 or attempt(size, batch) or stopped() or search.deadline is None:
            break
        if time.time() >= search.deadline:
            break
    outcome.labels = set(strategies.seen_events())
    if failing:
        outcome.failing = failing[-1]  # Hypothesis replays the shrunk example last
    return outcome


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the implementation with :class:`StreamTimeout` (recorded as a hang, which
    fails ``no_hang`` and is shrunk like any failure) when one example's stream takes longer
    than ``seconds``. A signal timer, so only in a main thread where SIGALRM exists: the
    command and its worker processes; elsewhere the example runs unbounded."""
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise StreamTimeout(f"the implementation did not finish the stream within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- workers ------------------------------------------------------------------------------------


def _in_parallel(implementation: Implementation, search: _Search, shown: FuzzProgress) -> _Outcome:
    """Run ``search.workers`` searches in worker processes; the first failure found stops the
    others (each ends at its next example), and is the result."""
    context = multiprocessing.get_context("spawn")
    messages: multiprocessing.queues.Queue[Any] = context.Queue()
    stop = context.Event()
    processes = [
        context.Process(
            target=_worker,
            args=(implementation.connectable, replace(search, worker=w), messages, stop),
            name=f"callstream-fuzz-{w}",
            daemon=True,
        )
        for w in range(search.workers)
    ]
    for process in processes:
        process.start()
    counts = [0] * search.workers
    failing = [False] * search.workers
    labels: set[str] = set()
    outcome = _Outcome()
    finished: set[int] = set()
    try:
        while len(finished) < len(processes):
            try:
                kind, worker, payload = messages.get(timeout=0.5)
            except queue.Empty:
                dead = [
                    w for w, p in enumerate(processes) if w not in finished and not p.is_alive()
                ]
                if dead:
                    raise HarnessError(
                        f"fuzz worker {dead[0]} died (exit code {processes[dead[0]].exitcode}) "
                        "without reporting: the implementation may have ended the process"
                    ) from None
                continue
            if kind == "tick":
                counts[worker], new, failing[worker] = payload
                labels |= new
                shown.update(sum(counts), labels, any(failing))
            elif kind == "error":
                raise HarnessError(f"fuzz worker {worker} failed: {payload}")
            else:  # done
                finished.add(worker)
                counts[worker] = payload.examples
                labels |= payload.labels
                if payload.failing is not None and outcome.failing is None:
                    outcome.failing = payload.failing
                    # Examples all workers had run when this one found it, roughly.
                    outcome.found_after = sum(counts) - payload.examples + payload.found_after
                    stop.set()
    finally:
        stop.set()
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
                process.join()
    outcome.examples = sum(counts)
    outcome.labels = labels
    return outcome


def _worker(connectable: str, search: _Search, messages: Any, stop: Any) -> None:
    """A fuzz worker process: loads the implementation, searches, reports to the parent."""
    try:
        implementation = load_implementation(connectable)
        sent: set[str] = set()
        last = [0.0]

        def tick(examples: int, labels: AbstractSet[str], failing: bool) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.25:
                last[0] = now
                messages.put(("tick", search.worker, (examples, labels - sent, failing)))
                sent.update(labels)

        outcome = _search(implementation, search, tick, stop.is_set)
    except Exception as exc:
        messages.put(("error", search.worker, f"{type(exc).__name__}: {exc}"))
        return
    messages.put(("done", search.worker, outcome))


# -- progress -----------------------------------------------------------------------------------


class FuzzProgress(Protocol):
    """Where ``fuzz`` shows how the search goes."""

    def start(self, examples: int | None, duration: float | None) -> None:
        """The budget: examples, seconds, or both."""

    def update(self, examples: int, labels: AbstractSet[str], failing: bool) -> None:
        """Examples run so far (all workers), distinct events seen, whether a failure was
        found (it is being shrunk until ``finish``)."""

    def finish(self) -> None:
        """The search is over."""


def make_fuzz_progress(stream: TextIO) -> FuzzProgress:
    """A live status line on a terminal, a plain line every ten seconds elsewhere (CI logs)."""
    return _LiveStatus(stream) if stream.isatty() else _StatusLines(stream)


class _Quiet:
    def start(self, examples: int | None, duration: float | None) -> None:
        pass

    def update(self, examples: int, labels: AbstractSet[str], failing: bool) -> None:
        pass

    def finish(self) -> None:
        pass


class _Status:
    """The figures both displays show."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.examples = 0
        self.events = 0
        self.failing = False
        self.done = False
        self.budget: int | None = None
        self.deadline: float | None = None

    def start(self, examples: int | None, duration: float | None) -> None:
        self.started = time.monotonic()
        self.budget = examples
        self.deadline = None if duration is None else self.started + duration

    def record(self, examples: int, labels: AbstractSet[str], failing: bool) -> None:
        self.examples, self.events, self.failing = examples, len(labels), failing

    def text(self) -> str:
        now = time.monotonic()
        rate = self.examples / max(now - self.started, 1e-9)
        budget = "" if self.budget is None else f"/{self.budget}"
        parts = [
            f"{self.examples}{budget} examples ({rate:.0f}/s)",
            "0 failures"
            if not self.failing
            else "1 failure"
            if self.done
            else "1 failure, shrinking",
            f"{self.events} distinct events",
        ]
        if self.deadline is not None:
            parts.append(f"{_clock(max(0.0, self.deadline - now))} left")
        elif self.budget and rate > 0 and not self.failing and not self.done:
            parts.append(f"about {_clock((self.budget - self.examples) / rate)} left")
        return ", ".join(parts)


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes}:{seconds:02d}"


class _StatusLines(_Status):
    """``callstream fuzz: 1200/3000 examples (41/s), 0 failures, 96 distinct events, …``
    at most every ``interval`` seconds."""

    def __init__(self, stream: TextIO, interval: float = 10.0) -> None:
        super().__init__()
        self._stream = stream
        self._interval = interval
        self._last = 0.0
        self._was_failing = False

    def start(self, examples: int | None, duration: float | None) -> None:
        super().start(examples, duration)
        self._last = time.monotonic()

    def update(self, examples: int, labels: AbstractSet[str], failing: bool) -> None:
        self.record(examples, labels, failing)
        now = time.monotonic()
        if now - self._last >= self._interval or (failing and not self._was_failing):
            self._last = now
            self._line()
        self._was_failing = failing

    def finish(self) -> None:
        self.done = True
        self._line()

    def _line(self) -> None:
        print(f"callstream fuzz: {self.text()}", file=self._stream, flush=True)


class _LiveStatus(_Status):
    """A status line redrawn in place (rich), four times a second."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._live = Live(console=Console(file=stream), refresh_per_second=4, transient=False)

    def start(self, examples: int | None, duration: float | None) -> None:
        super().start(examples, duration)
        self._live.start()
        self._live.update(Text(f"callstream fuzz: {self.text()}"))

    def update(self, examples: int, labels: AbstractSet[str], failing: bool) -> None:
        self.record(examples, labels, failing)
        self._live.update(Text(f"callstream fuzz: {self.text()}"))

    def finish(self) -> None:
        self.done = True
        self._live.update(Text(f"callstream fuzz: {self.text()}"))
        self._live.stop()


def _replayable(splitting: Splitting, data: bytes) -> Splitting:
    """The splitting as a scenario file can hold it: a seeded random cut becomes its offsets."""
    if splitting.kind != "random":
        return splitting
    (chunks,) = chunkings(data, splitting)
    offsets = tuple(itertools.accumulate(len(chunk) for chunk in chunks[:-1]))
    return Splitting("offsets", offsets=offsets) if offsets else Splitting("whole")


def _write_report(
    implementation: Implementation, result: FuzzResult, out: Path | None, argv: list[str]
) -> Path:
    folder = out if out is not None else new_run_folder()
    with ReportWriter(folder) as writer:
        writer.header(
            {
                "implementation": {
                    "connectable": implementation.connectable,
                    "name": implementation.name,
                    "declaration": implementation.declaration.to_dict(),
                },
                "argv": argv,
                "scenarios": 0 if result.found is None else 1,
                "cases": 0 if result.found is None else 1,
                "filter": None,
            }
        )
        if result.found is not None:
            writer.result(result.found)
        writer.footer({"exit_code": result.exit_code, "stopped_early": False})
        writer.render()
    return folder


def describe(result: FuzzResult) -> str:
    """A closing summary for people."""
    lines = [
        f"{result.examples} examples in {result.elapsed:.1f} s "
        f"({result.examples / max(result.elapsed, 1e-9):.0f}/s), "
        f"{len(result.labels)} distinct events"
    ]
    if result.found is None:
        lines.append("nothing found")
    else:
        case = result.found
        name = case.scenario if result.scenario is None else result.scenario.id
        after = "" if result.found_after is None else f" after {result.found_after} examples"
        lines.append(f"FOUND {name} [{case.profile}-{case.splitting}]{after}, then shrunk")
        lines += [f"  {f.check} ({', '.join(f.rules)}): {f.message}" for f in case.failures]
        if case.repro:
            lines += ["repro:", case.repro]
        if result.regression is not None:
            lines.append(
                f"saved: {result.regression} (callstream run {result.regression} reproduces it)"
            )
    if result.report is not None:
        lines.append(f"report: {result.report}")
    return "\n".join(lines)

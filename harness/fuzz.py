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
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from hypothesis import HealthCheck, Phase, assume, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    ReadOnlyDatabase,
)
from hypothesis.errors import Unsatisfiable

from .case import CaseResult, run_case
from .connect import Implementation
from .errors import UsageError
from .regressions import regression_id, write_regression
from .render import render
from .report import ReportWriter, new_run_folder
from .spec import Scenario, Splitting
from .split import chunkings
from .strategies import scenarios, splittings

__all__ = ["FUZZ_PROFILES", "FuzzResult", "database_for", "describe", "fuzz", "settings_for"]

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
        # Hill-climbing on target() scores pays off over long runs, not in a bounded CI budget.
        phases=tuple(p for p in Phase if profile != "ci" or p is not Phase.target),
        suppress_health_check=list(HealthCheck),
    )


class _Found(AssertionError):
    """Raised in the property when a case fails; Hypothesis shrinks it."""


def fuzz(
    implementation: Implementation,
    *,
    profile: str = "dev",
    max_examples: int | None = None,
    duration: float | None = None,
    database: str | None = None,
    database_writable: bool = False,
    save_regressions: Path | None = Path("scenarios/regressions"),
    out: Path | None = None,
    argv: list[str] | None = None,
    progress: TextIO | None = None,
) -> FuzzResult:
    """Fuzz ``implementation`` until a failure is found and shrunk, the example budget is spent
    or ``duration`` seconds have passed."""
    result = FuzzResult(implementation=implementation.connectable)
    claimed_profile = implementation.claims.profile
    started = time.monotonic()
    deadline = None if duration is None else started + duration
    if duration is not None and profile == "ci":
        raise UsageError("the ci profile is bounded by --max-examples, not by --duration")
    last_print = [started]
    db = database_for(database, profile=profile, writable=database_writable)

    def note() -> None:
        now = time.monotonic()
        if progress is not None and now - last_print[0] >= 2:
            last_print[0] = now
            left = "" if deadline is None else f", {max(0.0, deadline - now):.0f} s left"
            progress.write(
                f"callstream fuzz: {result.examples} examples, "
                f"{0 if result.found is None else 1} failure(s), "
                f"{len(result.labels)} distinct events{left}\n"
            )
            progress.flush()

    failing: list[tuple[Scenario, CaseResult]] = []

    def check(scenario: Scenario, splitting_for: Callable[[bytes], Splitting]) -> None:
        assume(implementation.claims.unclaimed(scenario) is None)
        splitting = splitting_for(render(scenario.spec).data)
        result.examples += 1
        result.labels |= _labels(scenario, splitting)
        case = run_case(scenario, claimed_profile, splitting, implementation.factory)
        note()
        if case.outcome == "failed":
            kept = _replayable(splitting, render(scenario.spec).data)
            failing.append((dataclasses.replace(scenario, splittings=(kept,)), case))
            raise _Found(case.failures[0].message if case.failures else case.outcome)

    def attempt(examples: int, batch: int) -> bool:
        """One Hypothesis run; True when it found (and shrank) a failure."""

        @given(scenario=scenarios(), data=st.data())
        @settings_for(profile, max_examples=examples, database=db)
        def property(scenario: Scenario, data: st.DataObject) -> None:
            def splitting_for(raw: bytes) -> Splitting:
                return data.draw(splittings(raw), label="splitting")

            check(scenario, splitting_for)

        test = seed(0xCA11 + batch)(property) if batch else property
        try:
            test()
        except _Found:
            return True
        except Unsatisfiable:
            return False
        return False

    if deadline is None:
        attempt(max_examples or 1000, 0)
    else:
        batch = 0
        spent = 0
        while time.monotonic() < deadline and (max_examples is None or spent < max_examples):
            size = _BATCH if max_examples is None else min(_BATCH, max_examples - spent)
            if attempt(size, batch):
                break
            spent += size
            batch += 1

    result.elapsed = time.monotonic() - started
    if failing:
        scenario, case = failing[-1]  # Hypothesis replays the shrunk example last
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


def _replayable(splitting: Splitting, data: bytes) -> Splitting:
    """The splitting as a scenario file can hold it: a seeded random cut becomes its offsets."""
    if splitting.kind != "random":
        return splitting
    (chunks,) = chunkings(data, splitting)
    offsets = tuple(itertools.accumulate(len(chunk) for chunk in chunks[:-1]))
    return Splitting("offsets", offsets=offsets) if offsets else Splitting("whole")


def _labels(scenario: Scenario, splitting: Splitting) -> set[str]:
    spec = scenario.spec
    labels = {
        f"schedule: {spec.schedule}",
        f"finish: {spec.ending.finish}",
        f"split: {splitting.kind}",
    }
    labels |= {
        f"calls: {len(spec.calls)}",
        f"choices: {spec.choices}",
        f"newline: {spec.transport.newline}",
    }
    for plan in spec.calls:
        labels |= {f"id: {plan.id_policy}", f"name: {plan.name_policy}"}
    if spec.ending.error:
        labels.add(f"error: {spec.ending.error}")
    return labels


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
                    "claims": implementation.claims.to_dict(),
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
        lines.append(f"FOUND {name} [{case.profile}-{case.splitting}]")
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

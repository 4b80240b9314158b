"""One fuzzing session, :func:`fuzz`: its arguments checked, the search run in worker processes
and shown as it goes, the find named and saved as a regression, and the report written."""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

from ..core.declaration import Implementation
from ..corpus.regressions import REGRESSIONS, regression_id, write_regression
from ..errors import UsageError
from ..rules import listed_opt_ins
from ._profiles import FUZZ_PROFILES, database_for
from ._progress import FuzzProgress, _Quiet
from ._result import FuzzResult, _write_report
from ._searching import FUZZED_OPT_INS, _Search
from ._workers import _supervise


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
    save_regressions: Path | None = REGRESSIONS,
    seed: int | None = None,
    out: Path | None = None,
    argv: list[str] | None = None,
    progress: FuzzProgress | None = None,
    coverage: bool = False,
) -> FuzzResult:
    """Fuzz ``implementation`` until a failure is found and shrunk, the example budget is spent
    or ``duration`` seconds have passed, in ``workers`` processes that share the example
    database and split the budget (each loads the implementation from its connectable). A
    stream that takes over ``timeout`` seconds fails ``no_hang``, and one that ends the worker
    process fails ``no_crash``; shrinking stops after ``shrink_time`` seconds with the smallest
    failure seen, which :func:`minimise` then cuts down further. With ``seed``, the same seed,
    budget and implementation draw the same examples (Hypothesis uses no database then).
    With ``coverage``, the wire features of every example drawn are counted
    (``FuzzResult.features``)."""
    if profile not in FUZZ_PROFILES:
        raise UsageError(f"unknown fuzz profile {profile!r}; known: {', '.join(FUZZ_PROFILES)}")
    if duration is not None and profile == "ci":
        raise UsageError("the ci profile is bounded by --max-examples, not by --duration")
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, not {workers}")
    for name, seconds in (("timeout", timeout), ("shrink time", shrink_time)):
        if not 0 < seconds < math.inf:
            raise UsageError(f"the {name} must be a positive number of seconds, not {seconds}")
    declaration = implementation.declaration
    if declaration.opt_ins and not (
        declaration.opt_ins <= FUZZED_OPT_INS and "openai-chat" in declaration.dialects
    ):
        raise UsageError(
            f"{implementation.connectable} declares the route opt-ins "
            f"{', '.join(listed_opt_ins(declaration.opt_ins))}: the fuzzer draws streams for "
            "a plain route, or an openai-chat route that opts in to snapshots alone (D76), "
            "and such a route runs no others (D74); run the scenarios written for its route "
            "with callstream run"
        )
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
        seed=seed,
        coverage=coverage,
    )
    shown = progress or _Quiet()
    shown.start(max_examples, duration)
    try:
        outcome = _supervise(implementation, search, shown)
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
        features=outcome.features,
    )
    if outcome.failing is not None:
        scenario, case = outcome.failing
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

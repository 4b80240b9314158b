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

A worker runs in :mod:`~callstream.runner.workers`; nothing an implementation starts outlives
it.

What the implementation does wrong is a result. Only the harness's own trouble (a worker that
cannot load the implementation, or cannot start) raises :class:`~callstream.errors.HarnessError`.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ..connect.check import check_shape, checked_before_a_run
from ..connect.connectables import load_implementation
from ..connect.processes import worker_context
from ..core.declaration import Implementation
from ..core.spec import Scenario
from ..corpus.scenario import corpus_paths, load_scenarios
from ..errors import INTERRUPTED, UsageError
from ..reports import ReportWriter, new_run_folder
from .cases import Case, costliest_first, expand, select_scenarios, verdict
from .ledger import Ledger, ReportSink
from .progress import Progress, Silent, make_progress
from .shard import Shard
from .summary import RunSummary, format_summary, rerun_words
from .workers import run_cases, start_early

__all__ = ["default_timeout", "run", "run_command"]


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
    ledger = Ledger(report, max_fail)
    shown = progress or Silent()
    shown.start(len(cases))
    try:
        for case in cases:
            if case.skipped is not None:
                outcome, why = case.skipped
                result = verdict(case, outcome, detail=why)
                shown.advance(result)
                ledger.add(case.number, result)
        runnable = [case for case in cases if case.skipped is None]
        if max_fail is None:
            # With max_fail, cases run in order, so that the run stops soon after a failure.
            runnable = costliest_first(runnable)
        with contextlib.closing(
            run_cases(runnable, implementation.connectable, jobs, timeout)
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
    return 10.0 if connectable.startswith(("py:", "py+events:")) else 60.0


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
    start_early()
    loaded = load_scenarios(corpus_paths(paths, scenarios))
    if loaded.refuse(stderr):
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

"""The third-party matrix: the corpus run through every installed client library (the Python
``http:`` adapters and the JavaScript pipe programs of :mod:`.roster`), rendered as one table of
libraries × rules.

Theory of operation. :func:`run_matrix` runs the chosen scenarios, in every dialect, on each
adapter that can run here through the normal runner (an adapter is judged on the scenarios of
the dialects it declares; the others are not applicable to it), so each library gets its usual
report folder (``<out>/<adapter>/report.jsonl`` and every format rendered from it), then writes
``matrix.json``: which adapters ran, with their library versions, language, timings and the
splittings used, and which could not run and why. :func:`render_matrix` renders
``matrix.md`` and ``matrix.html`` from those files alone (:mod:`.page`), as ``render_reports``
does for one run.

Streams over HTTP cost far more than in process (a request, a client library, its pydantic
models), so the matrix runs a reduced set of splittings by default (:data:`MATRIX_SPLITTINGS`,
plus each scenario's own explicit offsets), and says so in its header.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from ..connect.adapters import HttpAdapter
from ..connect.connectables import load_implementation
from ..core.case import CaseResult
from ..core.observation import observe
from ..core.rendering import render
from ..core.spec import Scenario, Splitting
from ..core.split import parse_splitting
from ..corpus.scenario import corpus_paths, load_scenarios
from ..errors import UsageError
from ..implementations import reference
from ..reports import (
    ReportWriter,
    callstream_version,
)
from ..runner.cases import select_scenarios
from ..runner.execution import run
from ..runner.progress import make_progress
from .page import INDEX, render_matrix
from .roster import Entry, roster

__all__ = [
    "MATRIX_SPLITTINGS",
    "matrix_command",
    "run_matrix",
    "with_splittings",
]

MATRIX_SPLITTINGS = (Splitting("whole"), Splitting("random", seed=1), Splitting("random", seed=2))
"""The splittings every scenario runs under in the matrix (besides its own explicit offsets)."""
_RENDERED = ("report.jsonl", "junit.xml", "summary.md", "report.html", "badge.json")


def with_splittings(
    scenarios: Sequence[Scenario], splittings: Sequence[Splitting]
) -> list[Scenario]:
    """``scenarios`` set to run under ``splittings`` plus any explicit offsets of their own
    (a scenario names offsets to cut at the one place it is about)."""
    chosen = []
    for scenario in scenarios:
        own = tuple(s for s in scenario.splittings if s.kind == "offsets" and s not in splittings)
        chosen.append(replace(scenario, splittings=(*splittings, *own)))
    return chosen


def run_matrix(
    scenarios: Sequence[Scenario],
    adapters: Sequence[Entry],
    *,
    out: Path,
    splittings: Sequence[Splitting] = MATRIX_SPLITTINGS,
    select: str | None = None,
    jobs: int = 1,
    timeout: float = 30.0,
    stderr: TextIO | None = None,
    argv: Sequence[str] = (),
) -> list[Path]:
    """Run ``scenarios`` (those ``select`` picks) under ``splittings`` on each adapter that can
    run here, write each one's report folder under ``out`` and ``matrix.json`` (listing the
    others as not run, with the reason), then render the matrix; the matrix files written."""
    if not any(entry.missing is None for entry in adapters):
        missing = "; ".join(f"{entry.name}: {entry.missing}" for entry in adapters)
        raise UsageError(f"no adapter can run here: {missing or 'name at least one'}")
    chosen = list(scenarios) if select is None else select_scenarios(scenarios, select)
    chosen = with_splittings(chosen, splittings)
    started = _now()
    columns = []
    for entry in adapters:
        if entry.missing is not None:
            continue
        name = entry.name
        implementation = load_implementation(entry.connectable)
        folder = out / name
        _clear(folder)
        if stderr is not None:
            print(f"callstream: {implementation.connectable}", file=stderr, flush=True)
        clock = time.perf_counter()
        with ReportWriter(folder) as writer:
            summary = run(
                chosen,
                implementation,
                report=writer,
                jobs=jobs,
                timeout=timeout,
                progress=None if stderr is None else make_progress(stderr),
                argv=argv,
            )
            writer.render()
        streams = sum(result.chunkings for result in summary.results)
        columns.append(
            {
                "adapter": name,
                "connectable": implementation.connectable,
                "language": entry.language,
                "dialects": list(implementation.declaration.dialects),
                "versions": dict(entry.versions) or _versions_of(implementation.factory),
                "folder": name,
                "elapsed": round(time.perf_counter() - clock, 3),
                "streams": streams,
                "ms_per_stream": _median_ms(summary.results),
            }
        )
    index = {
        "format": 1,
        "callstream": callstream_version(),
        "started": started,
        "finished": _now(),
        "argv": list(argv),
        "scenarios": len(chosen),
        "filter": select,
        "splittings": [splitting.label for splitting in splittings],
        "in_process_ms_per_stream": _in_process_cost(chosen),
        "columns": columns,
        "not_run": [
            {
                "adapter": e.name,
                "language": e.language,
                "connectable": e.connectable,
                "reason": e.missing,
            }
            for e in adapters
            if e.missing is not None
        ],
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / INDEX).write_text(json.dumps(index, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return render_matrix(out)


def matrix_command(
    paths: Sequence[str],
    *,
    adapters: str | None,
    out: Path,
    select: str | None,
    splittings: str | None,
    jobs: int,
    timeout: float,
    scenarios: Sequence[str] = (),
    js_dir: Path | None = None,
    argv: Sequence[str],
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """``callstream matrix``: run the corpus (``paths``, or the default corpus, and the user's
    ``scenarios``) on every adapter, Python and JavaScript (or those ``adapters`` names,
    comma-separated; ``js_dir`` holds the JavaScript ones) and write the matrix into ``out``,
    listing those that cannot run here with the reason. Returns 0 once it is written (the
    libraries' failures are its content), 2 on a usage or scenario error."""
    names = _adapters(adapters, roster(js_dir))
    chosen_splittings = (
        MATRIX_SPLITTINGS
        if splittings is None
        else tuple(parse_splitting(label.strip()) for label in splittings.split(","))
    )
    loaded = load_scenarios(corpus_paths(paths, scenarios))
    if loaded.refuse(stderr):
        return UsageError.exit_code
    written = run_matrix(
        loaded.scenarios,
        names,
        out=out,
        splittings=chosen_splittings,
        select=select,
        jobs=jobs,
        timeout=timeout,
        stderr=stderr,
        argv=argv,
    )
    print("\n".join(f"wrote {path}" for path in written), file=stdout)
    return 0


def _adapters(names: str | None, entries: Sequence[Entry]) -> list[Entry]:
    if names is None:
        return list(entries)
    known = {entry.name: entry for entry in entries}
    chosen = [name.strip() for name in names.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in known]
    if unknown or not chosen:
        raise UsageError(
            f"--adapters {names!r}: unknown {', '.join(unknown) or 'empty list'}; "
            f"known: {', '.join(known)}"
        )
    return [known[name] for name in chosen]


def _versions_of(factory: object) -> dict[str, str]:
    return factory.versions if isinstance(factory, HttpAdapter) else {}


def _clear(folder: Path) -> None:
    """Remove what an earlier matrix wrote in an adapter's folder, and nothing else."""
    for name in _RENDERED:
        try:
            (folder / name).unlink(missing_ok=True)
        except OSError as exc:
            raise UsageError(f"{folder / name}: cannot replace it: {exc.strerror}") from None


def _median_ms(results: Sequence[CaseResult]) -> float:
    """The median milliseconds per stream of the cases that ran (the first streams of a worker
    pay for lazy imports and connections; the median is the steady cost)."""
    per_stream = sorted(r.elapsed / r.chunkings for r in results if r.chunkings)
    return round(1000 * statistics.median(per_stream), 2) if per_stream else 0.0


def _in_process_cost(scenarios: Sequence[Scenario]) -> float:
    """The median milliseconds per stream of the reference in process on the same streams,
    whole, for comparison."""
    costs = sorted(
        observe(reference, s.spec.tools, s.spec.limits, [render(s.spec).data]).elapsed
        for s in scenarios
    )
    return round(1000 * statistics.median(costs), 3) if costs else 0.0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")

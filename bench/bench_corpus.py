"""Where the main job's time goes: a corpus run split into the implementation's time and the
harness's.

Run from the repository root::

    python -m bench.bench_corpus                 # the whole corpus, as `callstream run` runs it
    python -m bench.bench_corpus --sample 10     # every tenth scenario: a quicker look
    python -m bench.bench_corpus --impl py:tests.mutants.keeps_bom:factory --json corpus.json
    python -m bench.bench_corpus --sample 10 --replay 7   # and the harness alone, best of 7

Every case of the corpus (scenario × splitting, under the implementation's declared profile)
runs in this one process exactly as a worker of ``callstream run`` runs it
(:func:`~callstream.core.case.run_case`). The implementation's factory is wrapped so that the
processor time spent creating it and inside its ``feed`` and ``close`` is counted apart: that
is the **implementation**'s share, the floor no harness can go under. Everything else is the
**harness**'s: rendering the scenario, the oracle, cutting the chunkings, turning results into
observations, the checks, the verdict. Times are processor time of this process
(``time.process_time``), so a busy machine slows them less than it slows the wall clock.

The table gives, per dialect and per kind of splitting, the chunkings run and the microseconds
each costs the implementation and the harness; the last line projects the main job's wall time
on ``--jobs`` workers (processor time over workers: worker start-up and the report are left
out). The figures are for people and CI artefacts, not a gate: the exit status is 0 whatever
they are, unless a case fails (the bench runs passing corpora only).

Timing each call costs about 0.6 µs a reading of the processor clock, four readings a call,
and a ``pairs`` chunking makes four calls (create, two feeds, close): several µs, counted
partly to the harness, partly to the implementation. ``--replay N`` also measures the harness
alone, without them: each ``pairs`` chunking's results (what each call handed back, and the
findings) are recorded from the implementation first, then every ``pairs`` case runs against a
replay of them, which does nothing but hand them back; the best of ``N`` rounds.
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:  # also runnable as ``python bench/bench_corpus.py``
    sys.path.insert(0, str(_ROOT))

from callstream.connect.connectables import load_implementation  # noqa: E402
from callstream.core.case import run_case, splittings_of  # noqa: E402
from callstream.core.rendering import render  # noqa: E402
from callstream.core.spec import Scenario, Splitting  # noqa: E402
from callstream.core.split import chunkings  # noqa: E402
from callstream.corpus.scenario import corpus_paths, load_scenarios  # noqa: E402

REFERENCE = "py:callstream.implementations:reference"


class _Clock:
    """Processor time spent inside the implementation."""

    def __init__(self) -> None:
        self.spent = 0.0

    def timed(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent += time.process_time() - started

        return run


class _Timed:
    """An implementation object whose ``feed`` and ``close`` are timed; anything else it has
    (``findings``…) is its own."""

    def __init__(self, inner: Any, clock: _Clock) -> None:
        self._inner = inner
        self.feed = clock.timed(inner.feed)
        self.close = clock.timed(inner.close)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _timed_factory(factory: Callable[..., Any], clock: _Clock) -> Callable[..., Any]:
    make = clock.timed(factory)

    def timed(**kwargs: Any) -> _Timed:
        return _Timed(make(**kwargs), clock)

    return timed


@functools.cache
def _corpus() -> tuple[Scenario, ...]:
    """The default corpus, loaded once however many measurements read it (3.5 s a load)."""
    return tuple(load_scenarios(corpus_paths([], [])).scenarios)


def _sampled(sample: int, dialects: set[str] | None) -> list[Scenario]:
    """Every ``sample``-th scenario of the default corpus, of ``dialects`` (or all)."""
    return [
        scenario
        for scenario in _corpus()[::sample]
        if dialects is None or scenario.spec.dialect in dialects
    ]


def measure(impl: str, sample: int, dialects: set[str] | None) -> dict[str, Any]:
    """Run every ``sample``-th scenario of the default corpus (of ``dialects``, or all) and
    account for its time; raises SystemExit naming the first case that does not pass."""
    implementation = load_implementation(impl)
    declaration = implementation.declaration
    chosen = _sampled(sample, dialects)
    rows: dict[tuple[str, str], dict[str, float]] = defaultdict(
        lambda: {"chunkings": 0, "implementation": 0.0, "total": 0.0}
    )
    clock = _Clock()
    started = time.process_time()
    for scenario in chosen:
        if declaration.skips(scenario) is not None:
            continue
        factory = _timed_factory(implementation.factory_for(scenario.spec.dialect), clock)
        for splitting in splittings_of(scenario):
            before, spent = time.process_time(), clock.spent
            result = run_case(
                scenario, declaration.profile, splitting, factory, declaration.observables
            )
            if result.outcome != "passed":
                raise SystemExit(
                    f"{scenario.id} under {splitting.label}: {result.outcome}; "
                    "the bench runs a passing corpus only"
                )
            row = rows[(scenario.spec.dialect, splitting.kind)]
            row["chunkings"] += result.chunkings
            row["implementation"] += clock.spent - spent
            row["total"] += time.process_time() - before
    return {
        "implementation": implementation.name,
        "scenarios": len(chosen),
        "sample": sample,
        "seconds": time.process_time() - started,
        "rows": [
            {"dialect": dialect, "splitting": kind, **figures}
            for (dialect, kind), figures in sorted(rows.items())
        ],
    }


class _Replay:
    """An implementation that hands back what another handed back for the same chunking."""

    def __init__(self, handed: list[Any], findings: Any) -> None:
        self._handed = iter(handed)
        self.findings = findings

    def feed(self, data: bytes) -> Any:
        return next(self._handed)

    def close(self) -> Any:
        return next(self._handed)


def _replaying(runs: list[tuple[list[Any], Any]]) -> Callable[..., _Replay]:
    """A factory whose every call makes a replay of the next recorded chunking."""
    replays = iter(runs)

    def replay(**_: Any) -> _Replay:
        return _Replay(*next(replays))

    return replay


def harness_alone(impl: str, sample: int, dialects: set[str] | None, rounds: int) -> list[float]:
    """The harness's processor µs per ``pairs`` chunking of every ``sample``-th scenario, in
    each of ``rounds`` rounds, against a replay of what the implementation handed back."""
    implementation = load_implementation(impl)
    declaration = implementation.declaration
    pairs = Splitting("pairs")
    recorded: list[tuple[Scenario, list[tuple[list[Any], Any]]]] = []
    for scenario in _sampled(sample, dialects):
        spec = scenario.spec
        if declaration.skips(scenario) is not None or pairs not in splittings_of(scenario):
            continue
        factory = implementation.factory_for(spec.dialect)
        runs = []
        for chunks in chunkings(render(spec).data, pairs):
            made = factory(tools=list(spec.tools), limits=spec.limits)
            handed = [made.feed(chunk) for chunk in chunks] + [made.close()]
            runs.append((handed, getattr(made, "findings", None)))
        recorded.append((scenario, runs))
    figures = []
    for _ in range(rounds):
        spent, count = 0.0, 0
        for scenario, runs in recorded:
            replay = _replaying(runs)
            started = time.process_time()
            result = run_case(scenario, declaration.profile, pairs, replay, declaration.observables)
            spent += time.process_time() - started
            if result.outcome != "passed":
                raise SystemExit(f"{scenario.id} under pairs, replayed: {result.outcome}")
            count += result.chunkings
        figures.append(spent * 1e6 / count if count else 0.0)
    return figures


def _line(label: str, chunkings: float, implementation: float, total: float) -> str:
    harness = total - implementation
    per = 1e6 / chunkings if chunkings else 0.0
    ratio = harness / implementation if implementation else 0.0
    return (
        f"  {label:<34} {int(chunkings):>9,} {implementation * per:>9.0f} {harness * per:>9.0f}"
        f" {ratio:>8.2f}x {total:>8.1f} s"
    )


def report(figures: dict[str, Any], jobs: int) -> str:
    """The figures as a table."""
    lines = [
        f"callstream corpus benchmark: {figures['implementation']}, "
        f"{figures['scenarios']} scenarios (every {figures['sample']}th), "
        f"Python {platform.python_version()}",
        "",
        f"  {'dialect / splitting':<34} {'chunkings':>9} {'impl µs':>9} {'harn. µs':>9}"
        f" {'harn/impl':>9} {'cpu':>10}",
    ]
    totals = {"chunkings": 0.0, "implementation": 0.0, "total": 0.0}
    for row in figures["rows"]:
        lines.append(
            _line(
                f"{row['dialect']} / {row['splitting']}",
                row["chunkings"],
                row["implementation"],
                row["total"],
            )
        )
        for key in totals:
            totals[key] += row[key]
    lines.append(_line("all", totals["chunkings"], totals["implementation"], totals["total"]))
    projected = figures["seconds"] * figures["sample"] / jobs
    lines += [
        "",
        f"processor time {figures['seconds']:.1f} s; the whole corpus on {jobs} workers: "
        f"about {projected:.0f} s of wall time (start-up and the report left out)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--impl", default=REFERENCE, help="the connectable (py: only)")
    parser.add_argument("--sample", type=int, default=1, help="run every Nth scenario")
    parser.add_argument("--dialect", action="append", help="only this dialect (repeatable)")
    parser.add_argument("--jobs", type=int, default=2, help="workers the projection assumes")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument(
        "--replay", type=int, default=0, metavar="N", help="also time the harness alone, N rounds"
    )
    args = parser.parse_args(argv)
    if args.sample < 1 or args.jobs < 1:
        parser.error("--sample and --jobs must be at least 1")
    if not args.impl.startswith("py:"):
        parser.error("--impl must be an in-process py: connectable: its time is measured here")
    dialects = set(args.dialect) if args.dialect else None
    figures = measure(args.impl, args.sample, dialects)
    print(report(figures, args.jobs))
    if args.replay > 0:
        alone = harness_alone(args.impl, args.sample, dialects, args.replay)
        figures["harness_alone_us"] = alone
        print(
            f"the harness alone, against a replay: {min(alone):.1f} µs a pairs chunking "
            f"(best of {len(alone)}: {', '.join(f'{figure:.1f}' for figure in alone)})"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

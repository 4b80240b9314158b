"""Examples per second of ``callstream fuzz``, and where each example's time goes.

Run from the repository root::

    python -m bench.bench_fuzz                  # 600 examples per figure, about 2 minutes
    python -m bench.bench_fuzz --examples 200   # a quicker look
    python -m bench.bench_fuzz --impl py:tests.mutants.keeps_bom:factory --json fuzz.json

Three measurements, against the reference assembler unless ``--impl`` says otherwise:

1. **Where the time goes**, in one process, on the scenarios a search draws (in every dialect
   the implementation reads, four examples to a Hypothesis test case as a search draws them,
   ``callstream.fuzz.draw_examples``): each example is timed stage by stage, drawing the
   scenario (the generators, including the oracle's check that it can predict the plan), drawing the
   splitting, rendering the stream, deriving the expectations, feeding the implementation (the
   floor of any harness: it has to run the thing under test), and the checks; what is left of
   the wall time is Hypothesis's engine.
2. **Throughput** of ``callstream.fuzz.fuzz`` as ``callstream fuzz --profile ci`` runs it,
   with one worker process and with two (the machine's two cores), in examples per second; the
   figure includes forking the worker processes. Workers fork from a server that imports
   callstream once per process, the first run's cost: a one-example run pays it first, and
   its time is printed apart (without it the one-worker run paid it and the two-worker run,
   which came second, did not).
3. **What isolation costs**: one case (every chunking of its splitting) run in the search
   process, as the fuzzer runs every example, and run in a process of its own, as it replays
   and shrinks an example that ended a worker.

The first measurement ends with the split the fuzzer is judged by: the harness's milliseconds per
example (everything but the implementation: drawing, rendering, the oracle, the checks and the
engine) next to the implementation's own, wall and CPU. The machine is shared, so the load
average is printed with each figure: compare figures from one run, or runs back to back.

The figures are for people and CI artefacts, not a gate: the exit status is 0 whatever they are.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:  # also runnable as ``python bench/bench_fuzz.py``
    sys.path.insert(0, str(_ROOT))

from hypothesis import HealthCheck, Phase, given, reject, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from callstream import strategies  # noqa: E402
from callstream.connect.connectables import load_implementation  # noqa: E402
from callstream.core.checks import run_checks  # noqa: E402
from callstream.core.declaration import Implementation  # noqa: E402
from callstream.core.observation import observe  # noqa: E402
from callstream.core.oracle import expect  # noqa: E402
from callstream.core.rendering import render  # noqa: E402
from callstream.core.spec import Scenario, Splitting  # noqa: E402
from callstream.core.split import chunkings  # noqa: E402
from callstream.core.wire import Rendered  # noqa: E402
from callstream.fuzz import (  # noqa: E402
    EXAMPLES_PER_TEST_CASE,
    InProcess,
    Isolated,
    draw_examples,
    drawn_scenarios,
    fuzz,
    settings_for,
)

STAGES = (
    ("scenario", "drawing the scenario (generators + the oracle's predictability check)"),
    ("splitting", "drawing the splitting"),
    ("render", "rendering the stream to SSE bytes"),
    ("expect", "deriving the expectations (oracle)"),
    ("implementation", "feeding the implementation, every chunk"),
    ("checks", "running the checks"),
)


def load() -> str:
    """The load average over the last minute, as printed next to each figure."""
    return f"load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "load unknown"


def stage_times(implementation: Implementation, examples: int) -> dict[str, Any]:
    """Seconds spent in each stage over ``examples`` derandomised examples, and the wall and CPU
    time of the whole run."""
    spent: dict[str, float] = defaultdict(float)
    used: dict[str, float] = defaultdict(float)
    """CPU seconds per stage: on a loaded machine wall time stretches, CPU time much less."""
    counted = [0]
    profile = implementation.declaration.profile
    drawn = drawn_scenarios(implementation)  # what the fuzzer draws, built once as it builds it
    # A worker forks from a server that has drawn a few examples and frozen what it holds (out
    # of the garbage collector's walks): this process does the same before it is timed.
    importlib.import_module("callstream.fuzz._warming")

    since = [0.0, 0.0]
    """When the stage being timed began: wall and CPU."""

    def lap(stage: str | None = None) -> None:
        """End ``stage`` now (None: start the clock)."""
        now, cpu_now = time.perf_counter(), time.process_time()
        if stage is not None:
            spent[stage] += now - since[0]
            used[stage] += cpu_now - since[1]
        since[:] = now, cpu_now

    @st.composite
    def timed_cases(draw: st.DrawFn) -> tuple[Scenario, Rendered, Splitting]:
        # What callstream.fuzz.drawn_cases draws (a scenario the implementation does not skip,
        # a splitting of its bytes, in one composite), with a lap after each stage.
        lap()
        scenario = draw(drawn)
        if implementation.declaration.skips(scenario) is not None:
            reject()
        lap("scenario")
        raw = render(scenario.spec)
        lap("render")
        splitting = strategies.draw_splitting(draw, raw.data)
        lap("splitting")
        return scenario, raw, splitting

    timed = timed_cases()

    # The ci profile's settings, as a search runs under them.
    @given(data=st.data())
    @settings_for("ci", max_examples=-(-examples // EXAMPLES_PER_TEST_CASE), database=None)
    def one(data: st.DataObject) -> None:
        # As a search runs a test case: its examples drawn one after the other, each run.
        for scenario, raw, splitting, _ in draw_examples(data, timed):
            expected = expect(scenario.spec, raw, profile)
            lap("expect")
            for chunks in chunkings(raw.data, splitting):
                seen = observe(
                    implementation.factory, scenario.spec.tools, scenario.spec.limits, chunks
                )
                lap("implementation")
                run_checks(expected, seen, scenario.kind, implementation.declaration.observables)
                lap("checks")
            counted[0] += 1

    started, cpu = time.perf_counter(), time.process_time()
    one()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "examples": counted[0],
        "wall": wall,
        "cpu": cpu,
        "stages": dict(spent),
        "cpu_stages": dict(used),
        "load": load(),
    }


def throughput(implementation: Implementation, examples: int, workers: int) -> dict[str, Any]:
    """``fuzz`` under the ci profile with ``workers`` processes: examples and seconds."""
    with tempfile.TemporaryDirectory() as folder:
        result = fuzz(
            implementation,
            profile="ci",
            max_examples=examples,
            workers=workers,
            save_regressions=None,
            out=Path(folder) / "report",
        )
    return {
        "workers": workers,
        "examples": result.examples,
        "seconds": result.elapsed,
        "per_second": result.examples / result.elapsed,
        "found": result.found is not None,
        "load": load(),
    }


def isolation_cost(implementation: Implementation, examples: int) -> dict[str, Any]:
    """Milliseconds per case in process and in a process of its own, over ``examples`` drawn
    cases (drawn first, then timed, so drawing is not counted)."""
    cases: list[tuple[Any, Any]] = []
    drawn = drawn_scenarios(implementation)

    @given(data=st.data())
    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    def draw(data: st.DataObject) -> None:
        scenario = data.draw(drawn)
        cases.append((scenario, data.draw(strategies.splittings(render(scenario.spec).data))))

    draw()
    profile = implementation.declaration.profile
    runners: dict[str, Callable[..., Any]] = {
        "in_process": InProcess(implementation, 60.0),
        "isolated": Isolated(implementation.connectable, 60.0),
    }
    spent: dict[str, float] = {}
    for name, run in runners.items():
        started = time.perf_counter()
        for scenario, splitting in cases:
            run(scenario, profile, splitting)
        spent[name] = 1000 * (time.perf_counter() - started) / len(cases)
    return {"cases": len(cases), "ms_per_case": spent}


def split(stages: dict[str, Any]) -> dict[str, float]:
    """Milliseconds per example, wall and CPU: the harness's (everything but feeding the
    implementation, Hypothesis's engine included) and the implementation's."""
    examples = max(stages["examples"], 1)
    figures = {}
    for clock, total, by_stage in (
        ("wall", stages["wall"], stages["stages"]),
        ("cpu", stages["cpu"], stages["cpu_stages"]),
    ):
        own = by_stage.get("implementation", 0.0)
        figures[f"harness_{clock}_ms"] = 1000 * (total - own) / examples
        figures[f"implementation_{clock}_ms"] = 1000 * own / examples
    return figures


def main(argv: list[str] | None = None) -> int:
    """Measure, print a table, optionally write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--impl", default="py:callstream.implementations:reference")
    parser.add_argument("--examples", type=int, default=600, help="examples per figure")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    implementation = load_implementation(args.impl)
    print(
        f"callstream fuzz benchmark: {args.impl}, {args.examples} examples per figure, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs"
    )

    print(f"at start: {load()}")
    stages = stage_times(implementation, args.examples)
    wall = stages["wall"]
    print(
        f"\nWhere the time goes ({stages['examples']} examples, {wall:.1f} s in one process, "
        f"{stages['cpu']:.1f} s CPU; {stages['load']}):"
    )
    examples = max(stages["examples"], 1)
    print(f"  {'':<60} {'wall ms':>9} {'':>7} {'CPU ms':>9} {'':>7}")
    rows = [
        (what, stages["stages"].get(s, 0.0), stages["cpu_stages"].get(s, 0.0)) for s, what in STAGES
    ]
    engine = "Hypothesis engine (choosing, recording, bookkeeping)"
    rows.append((engine, wall - sum(r[1] for r in rows), stages["cpu"] - sum(r[2] for r in rows)))
    for what, seconds, cpu in rows:
        print(
            f"  {what[:60]:<60} {1000 * seconds / examples:9.2f} {100 * seconds / wall:6.1f}%"
            f" {1000 * cpu / examples:9.2f} {100 * cpu / max(stages['cpu'], 1e-9):6.1f}%"
        )
    stages["split"] = split(stages)
    cut = stages["split"]
    for clock in ("wall", "cpu"):
        harness, own = cut[f"harness_{clock}_ms"], cut[f"implementation_{clock}_ms"]
        print(
            f"  {clock}: the harness {harness:.2f} ms per example, the implementation {own:.2f} ms"
            f" (harness/implementation {harness / own if own else float('inf'):.2f}x)"
        )

    print("\nThroughput of callstream fuzz --profile ci:")
    start = throughput(implementation, 1, 1)
    print(
        f"  the first run in a process (one example): {start['seconds']:.2f} s, most of it "
        f"starting the server the workers fork from ({start['load']})"
    )
    runs = [throughput(implementation, args.examples, workers) for workers in (1, 2)]
    for run in runs:
        found = " (stopped at a find)" if run["found"] else ""
        print(
            f"  {run['workers']} worker(s): {run['examples']} examples in {run['seconds']:.1f} s"
            f" = {run['per_second']:.1f} examples/s{found} ({run['load']})"
        )
    if runs[0]["per_second"]:
        print(f"  speed-up with 2 workers: {runs[1]['per_second'] / runs[0]['per_second']:.2f}x")
    isolation = isolation_cost(implementation, min(args.examples, 200))
    cost = isolation["ms_per_case"]
    print(
        f"\nOne case ({isolation['cases']} drawn): {cost['in_process']:.1f} ms in the search "
        f"process, {cost['isolated']:.1f} ms in a process of its own (replaying what ended a "
        "worker)"
    )
    if args.json is not None:
        figures = {"stages": stages, "start": start, "throughput": runs, "isolation": isolation}
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

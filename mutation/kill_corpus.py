"""The corpus as the test that kills a mutant of the reference assembler.

Every scenario of the built-in corpus (``scenarios/openai-chat``, ``anthropic-messages``,
``openai-responses`` and ``regressions``), each read in its own dialect under each profile it
runs in, against the reference as it now stands on disk, built with the route opt-ins the
scenario is written for (``reference_for``: a scenario of a route that opts in to snapshots runs
on ``Assembler(snapshots=True)``), under the fast splittings only:
``whole``, one seeded ``random`` splitting, and the explicit ``offsets`` splittings a scenario
declares (they are few and aimed). ``bytes`` and ``pairs`` are left out: they multiply the run
time of a surviving mutant by the stream's length and seldom kill what the others leave alive.

It stops at the first failing case and exits 1 with that case on stderr, so a killed mutant is
cheap; it exits 0 when the whole corpus passes (the mutant survived). The mutation tool runs it
once per mutant (``mutation/run corpus``): it writes no bytecode, so a mutant compiled within
the same second as the previous one can never be read back from a stale ``.pyc``.

Loading the corpus (parsing, schema checks, the oracle's dry run) takes most of a run, so
``mutation/run`` loads it once from the unmutated tree, before the first mutant, and hands the
scenarios over pickled (``--save PATH``, then ``CALLSTREAM_MUTATION_CORPUS=PATH``). The scenarios
are plain data, and every case still renders, predicts and judges against the reference on disk.
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path
from typing import Any

sys.dont_write_bytecode = True

from functools import partial  # noqa: E402

from callstream.connect.events import EventFedFactory  # noqa: E402
from callstream.core.case import run_case, splittings_of  # noqa: E402
from callstream.core.declaration import Declaration  # noqa: E402
from callstream.core.spec import Scenario, Splitting  # noqa: E402
from callstream.corpus.scenario import default_corpus, load_scenarios  # noqa: E402
from callstream.implementations import reference_for  # noqa: E402

SEED = 1
"""The seed of the one random splitting every scenario runs under."""


def fast_splittings(scenario: Scenario) -> list[Splitting]:
    """``whole``, ``random-<SEED>`` and the scenario's own ``offsets`` splittings."""
    chosen = [Splitting("whole"), Splitting("random", seed=SEED)]
    chosen += [s for s in splittings_of(scenario) if s.kind == "offsets"]
    return chosen


def corpus(paths: list[Path]) -> tuple[Scenario, ...]:
    """The scenarios of ``paths``, else the pickled corpus ``CALLSTREAM_MUTATION_CORPUS`` names,
    else the corpus loaded now. Raises ValueError when they do not load cleanly."""
    cached = os.environ.get("CALLSTREAM_MUTATION_CORPUS")
    if cached and not paths:
        with open(cached, "rb") as handle:
            scenarios: tuple[Scenario, ...] = pickle.load(handle)
        return scenarios
    loaded = load_scenarios(paths or default_corpus())
    if loaded.errors:
        raise ValueError("\n".join(map(str, loaded.errors[:3])))
    return tuple(loaded.scenarios)


def main(argv: list[str]) -> int:
    """With ``--save PATH``: pickle the corpus to PATH. Otherwise run it (or the scenario files
    given): 0 when every case passes, 1 at the first that does not (named on stderr)."""
    paths = [] if argv[:1] == ["--save"] else [Path(arg) for arg in argv]
    try:
        scenarios = corpus(paths)
    except ValueError as problem:
        print(f"the corpus does not load:\n{problem}", file=sys.stderr)
        return 1
    if argv[:1] == ["--save"] and len(argv) == 2:
        with open(argv[1], "wb") as handle:
            pickle.dump(scenarios, handle)
        return 0
    for scenario in scenarios:
        for profile in scenario.profiles:
            route = reference_for(profile, scenario.opt_ins)
            factory = partial(route, dialect=scenario.spec.dialect)
            for splitting in fast_splittings(scenario):
                if not passes(scenario, profile, splitting, factory, ""):
                    return 1
    # Then what only ``Assembler.feed_event`` does: every scenario a reference fed decoded
    # events runs (``py+events:``), whole.
    for scenario in scenarios:
        for profile in scenario.profiles:
            dialect = scenario.spec.dialect
            declaration = Declaration(profile, (dialect,), opt_ins=scenario.opt_ins, reads="events")
            if declaration.skips(scenario) is not None:
                continue
            route = partial(reference_for(profile, scenario.opt_ins), dialect=dialect)
            factory = EventFedFactory(route, dialect)
            if not passes(scenario, profile, Splitting("whole"), factory, "fed events, "):
                return 1
    print(f"survived {len(scenarios)} scenarios", file=sys.stderr)
    return 0


def passes(scenario: Scenario, profile: str, splitting: Splitting, factory: Any, how: str) -> bool:
    """Whether the case passes; when it does not, the case and its first failures on stderr."""
    result = run_case(scenario, profile, splitting, factory)
    if result.outcome == "passed":
        return True
    where = f"{scenario.id} [{how}{profile}, {splitting.label}]"
    print(f"killed by {where}: {result.outcome}", file=sys.stderr)
    for failure in result.failures[:3]:
        print(f"  {failure}", file=sys.stderr)
    return False


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

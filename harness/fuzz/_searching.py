"""One search process's search: Hypothesis runs whose test cases draw examples (a scenario and a
splitting of it, four to a test case), run each as a case and stop at the first failure, which
Hypothesis shrinks; or, for an example that ended a worker, one run that replays it and shrinks
it."""

from __future__ import annotations

import dataclasses
import itertools
import pickle
import time
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from hypothesis import Phase, given, reject, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky, Unsatisfiable
from hypothesis.internal.conjecture.utils import calc_label_from_name

from .. import strategies
from ..core.case import CaseResult
from ..core.declaration import Implementation
from ..core.rendering import render
from ..core.spec import Scenario, Splitting
from ..core.split import chunkings
from ..coverage import FeatureTally, features_of
from ._beacon import _Beacon
from ._profiles import _Replay, database_for, settings_for
from ._running import Run

EXAMPLES_PER_TEST_CASE = 4
"""Examples (a stream and a splitting of it, run as one case) a Hypothesis test case draws and
runs, each drawn once the one before it has passed. Hypothesis spends a few tenths of a
millisecond on a test case whatever it draws (its engine, the global random state saved and
compared, the first test cases of a run tried again at their simplest); four examples to a test
case pay it once (its share of an example fell from 0.3 ms to 0.1, 600 derandomised examples).
A failure ends its test case, so a found test case holds the failing example last, and the
shrinker drops the examples before it as it drops any other span: it shrinks to one."""
try:
    from hypothesis.internal.conjecture.data import UNIQUE_COLLECTION_LABEL as _EXAMPLES
except ImportError:  # a later Hypothesis that names it otherwise: examples may be copied
    _EXAMPLES = calc_label_from_name("callstream: the examples of a test case")
"""The label of the span a test case's examples are drawn in. Hypothesis's mutator tries each
test case again with a span copied over another of the same label, up to five times; four
examples to a test case are four spans of every label they draw, and it made copies of 7 in 10
examples (1 248 distinct in 4 090). Since 6.170.1 it copies nothing within a span of this label
(the elements of a unique collection), so every example is drawn afresh."""
_BATCH = 500
"""Examples per Hypothesis run when fuzzing for a duration (each batch with a fresh seed)."""
_BUDGET_BATCH = 100
"""Examples per Hypothesis run when fuzzing to an example budget. When Hypothesis made most
examples by mutating earlier ones, a run's streams shared their rarer knobs: one run of 500
examples from seed 1000 drew no numeric id and no shared id in any of its 159 openai-chat
streams, where seed 0 drew them in 5 % and 13 %. The generators now read their knobs from bytes
(``strategies._tape``), which the mutator leaves alone, so every example is drawn afresh; runs
of 100, each from a seed of its own, still spread what a budget draws (about 0.1 s per run
more)."""


FUZZED_OPT_INS = frozenset({"snapshots"})
"""The route opt-ins the fuzzer draws streams for, in openai-chat alone: the oracle reads a plan
as a snapshots route does (D76)."""
_ROUTE_DIALECTS = ("openai-chat",)
"""The dialects the fuzzer draws for on a route with opt-ins: those whose oracle predicts it."""


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
    seed: int | None = None
    """Where the search starts (``--seed``): each run ``batch`` of it draws from
    ``seed + batch``. None lets Hypothesis choose (or derandomise, under ci)."""
    replay: bytes | None = None
    """The pickled choices of an example that ended a worker: replay it alone, every stream in
    a process of its own, and shrink it."""
    coverage: bool = False
    """Count the wire features of every example drawn (``--coverage``)."""


@dataclass
class _Outcome:
    examples: int = 0
    labels: set[str] = field(default_factory=set)
    failing: tuple[Scenario, CaseResult] | None = None
    found_after: int | None = None
    replayed: tuple[Scenario, Splitting] | None = None
    """The first example a replaying worker ran (the one that ended a worker before)."""
    features: FeatureTally | None = None
    """The wire features of the examples drawn before a find, when counted."""


Tick = Callable[[int, AbstractSet[str], bool], None]
"""Told the examples run so far, the labels the generators attached to draws (the distinct
events seen), and whether a failure was found."""


def _search(
    implementation: Implementation,
    search: _Search,
    run: Run,
    beacon: _Beacon,
    tick: Tick,
    stopped: Callable[[], bool],
    found: Callable[[Scenario, CaseResult, int], None],
) -> _Outcome:
    """One process's search: Hypothesis runs of at most ``_BATCH`` examples (``_BUDGET_BATCH``
    to a budget) until the budget or the time is spent or a failure is found and shrunk; or,
    replaying, one run that replays ``search.replay`` and shrinks it. ``found`` is told of the
    first failure, before it is shrunk."""
    outcome = _Outcome(features=FeatureTally() if search.coverage else None)
    db = database_for(search.database, profile=search.profile, writable=search.database_writable)
    claimed_profile = implementation.declaration.profile
    failing: list[tuple[Scenario, CaseResult]] = []

    shrink_until: list[float] = []
    cases = drawn_cases(implementation)

    def check(scenario: Scenario, splitting: Splitting, choices: Sequence[object]) -> None:
        """Run one example (its ``choices``, for the beacon)."""
        raw = render(scenario.spec).data
        outcome.examples += 1
        if outcome.features is not None and not failing:
            outcome.features.add(scenario.spec.dialect, features_of(scenario.spec, raw))
        if outcome.replayed is None and search.replay is not None:
            outcome.replayed = (scenario, _replayable(splitting, raw))
        beacon.example(outcome.examples, choices)
        case = run(scenario, claimed_profile, splitting)
        if case.outcome == "failed":
            kept = dataclasses.replace(scenario, splittings=(_replayable(splitting, raw),))
            if outcome.found_after is None:
                outcome.found_after = outcome.examples
                shrink_until.append(time.time() + search.shrink_time)
                found(kept, case, outcome.examples)
            failing.append((kept, case))
            tick(outcome.examples, strategies.seen_events(), True)
            raise _Found(case.failures[0].message if case.failures else case.outcome)
        tick(outcome.examples, strategies.seen_events(), bool(failing))

    def attempt(examples: int, batch: int) -> bool:
        """One Hypothesis run of ``examples`` examples; True when it found (and shrank) a
        failure."""
        until = outcome.examples + examples
        test_cases = -(-examples // EXAMPLES_PER_TEST_CASE)
        chosen = settings_for(search.profile, max_examples=test_cases, database=db)
        if search.replay is not None:
            replay = _Replay(pickle.loads(search.replay), db)
            phases = (Phase.reuse, Phase.shrink)
            chosen = settings(chosen, derandomize=False, database=replay, phases=phases)
        elif search.profile != "ci" and batch != search.worker:
            # The database's examples are replayed by each worker's first run only.
            chosen = settings(
                chosen, phases=tuple(p for p in chosen.phases if p is not Phase.reuse)
            )

        @given(data=st.data())
        @chosen
        def property(data: st.DataObject) -> None:
            stopping = False
            for scenario, splitting, choices in draw_examples(data, cases):
                # A test case draws all its examples, whatever is run of them: one that drew
                # fewer on another run would read as inconsistent data generation
                # (FlakyStrategyDefinition). So is one that a ``_Stop`` ends before its last
                # draw, when Hypothesis replays the choices it saves of it. Each worker runs
                # one example at least, however long its process took to start.
                now = time.time()
                late = search.deadline is not None and now >= search.deadline
                if not failing and outcome.examples and (stopped() or late):
                    stopping = True
                if shrink_until and now >= shrink_until[0]:
                    stopping = True  # shrinking ran out of time: keep the smallest failure
                if stopping or (outcome.examples >= until and not failing):
                    continue  # drawn, not run: the search stops, or the run's share is spent
                check(scenario, splitting, choices)
            if stopping:
                raise _Stop

        # derandomised (ci): the first run's seed comes from the test, the others' from here
        if search.seed is not None:
            test = seed(search.seed + batch)(property)
        elif search.profile == "ci" and batch:
            test = seed(0xCA11 + batch)(property)
        else:
            test = property
        try:
            test()
        except (_Found, Flaky):
            if not failing:
                raise
            return True
        except (_Stop, Unsatisfiable):
            return False
        return False

    budget = search.examples
    if budget is not None:  # this worker's share
        budget = budget // search.workers + (search.worker < budget % search.workers)
    for batch in itertools.count(search.worker, search.workers):
        if search.replay is not None:
            attempt(1, batch)
            break
        assert budget is not None or search.deadline is not None
        size = _BATCH if search.deadline is not None else _BUDGET_BATCH
        if budget is not None:
            size = min(size, budget - outcome.examples)
        before = outcome.examples
        if size <= 0 or attempt(size, batch) or stopped() or outcome.examples == before:
            break
        if search.deadline is not None and time.time() >= search.deadline:
            break
    outcome.labels = set(strategies.seen_events())
    if failing:
        outcome.failing = failing[-1]  # Hypothesis replays the shrunk example last
    return outcome


def drawn_scenarios(implementation: Implementation) -> st.SearchStrategy[Scenario]:
    """Scenarios in the dialects the implementation reads (each one drawn by its generator),
    for its route (with its opt-ins, in the dialects the oracle predicts them for)."""
    opt_ins = implementation.declaration.opt_ins
    dialects = [
        name
        for name in implementation.declaration.dialects
        if name in strategies.GENERATORS and (not opt_ins or name in _ROUTE_DIALECTS)
    ]
    if len(dialects) <= 1:
        dialect = dialects[0] if dialects else "openai-chat"
        return strategies.scenarios(dialect=dialect, opt_ins=opt_ins)
    # Each dialect's strategy built once, not once per example.
    by_dialect = {name: strategies.scenarios(dialect=name, opt_ins=opt_ins) for name in dialects}
    return st.sampled_from(dialects).flatmap(by_dialect.__getitem__)


def draw_examples(
    data: st.DataObject, cases: st.SearchStrategy[tuple[Any, ...]]
) -> Iterator[tuple[Any, ...]]:
    """A test case's examples, drawn from ``cases`` one after the other as the test case asks
    for them (``EXAMPLES_PER_TEST_CASE``), each with the choices that drew it, in a span
    Hypothesis's mutator leaves alone (``_EXAMPLES``). Each is drawn by the ConjectureData
    itself: ``data.draw`` would save and compare the global random state around it (20 µs),
    as ``given`` does around its argument. An example drawn from the same choices as the one
    before it is drawn and not given (Hypothesis tries the first test cases of a run at their
    simplest: four simplest examples each)."""
    conjecture = data.conjecture_data
    conjecture.start_span(_EXAMPLES)
    previous: object = None
    for _ in range(EXAMPLES_PER_TEST_CASE):
        start = len(conjecture.choices)
        case = conjecture.draw(cases)
        choices = conjecture.choices[start:]
        if choices != previous:
            yield (*case, choices)
        previous = choices
    conjecture.stop_span()  # left open when a failure ends the test case: Hypothesis closes it


def drawn_cases(implementation: Implementation) -> st.SearchStrategy[tuple[Scenario, Splitting]]:
    """What a search draws for each example: a scenario (``drawn_scenarios``) the implementation
    does not skip, and a splitting of its bytes, in one composite (no strategy built for each
    stream's bytes)."""
    return _cases(drawn_scenarios(implementation), implementation.declaration.skips)


@st.composite
def _cases(
    draw: st.DrawFn,
    scenarios: st.SearchStrategy[Scenario],
    skips: Callable[[Scenario], object],
) -> tuple[Scenario, Splitting]:
    scenario = draw(scenarios)
    if skips(scenario) is not None:
        reject()
    return scenario, strategies.draw_splitting(draw, render(scenario.spec).data)


def _replayable(splitting: Splitting, data: bytes) -> Splitting:
    """The splitting as a scenario file can hold it: a seeded random cut becomes its offsets."""
    if splitting.kind != "random":
        return splitting
    (chunks,) = chunkings(data, splitting)
    offsets = tuple(itertools.accumulate(len(chunk) for chunk in chunks[:-1]))
    return Splitting("offsets", offsets=offsets) if offsets else Splitting("whole")

"""Minimising a find past where Hypothesis's shrinker stops: the stream itself cut down, a call or
an unnamed tool at a time, for as long as it still fails the same check."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from .. import strategies
from ..connect.connectables import load_implementation
from ..core.case import CaseResult, run_case
from ..core.declaration import Implementation
from ..core.rendering import render
from ..core.spec import Scenario, Splitting, StreamSpec
from ._running import InProcess, Run


def minimise(
    implementation: Implementation, scenario: Scenario, case: CaseResult, *, timeout: float = 10.0
) -> tuple[Scenario, CaseResult]:
    """Shrink a found stream further, where Hypothesis's shrinker stopped at a local minimum:
    drop whole calls, then tools no call names, one at a time, for as long as the stream stays
    one the oracle predicts, the reference passes it, and the implementation still fails it on
    the same check. Hypothesis shrinks the choices that drew the stream; this shrinks the
    stream itself, so a call that only came along for the ride goes. The implementation runs
    in this process, each stream interrupted after ``timeout`` seconds."""
    run = InProcess(implementation, timeout)
    return _minimise(implementation.declaration.profile, scenario, case, run)


def _minimise(
    profile: str, scenario: Scenario, case: CaseResult, run: Run
) -> tuple[Scenario, CaseResult]:
    wanted = case.failures[0].check if case.failures else None
    opt_ins = scenario.opt_ins
    reference = load_implementation(_SNAPSHOTS if opt_ins else _REFERENCES[profile])
    (splitting,) = scenario.splittings or (Splitting("whole"),)
    progress = True
    while progress:
        progress = False
        for spec in _smaller(scenario.spec):
            if not strategies.predictable(spec, opt_ins):
                continue
            fitted = _within(splitting, render(spec).data)
            trial = strategies.scenario_for(spec, (fitted,), opt_ins)
            factory = reference.factory_for(spec.dialect)
            if run_case(trial, profile, fitted, factory).outcome != "passed":
                continue
            again = run(trial, profile, fitted)
            if again.outcome == "failed" and again.failures and again.failures[0].check == wanted:
                scenario, case, progress = trial, again, True
                break
    return scenario, case


_REFERENCES = {
    "lenient": "py:callstream.implementations:reference",
    "strict": "py:callstream.implementations:reference_strict",
}
_SNAPSHOTS = "py:callstream.implementations:reference_snapshots"
"""The reference of the one route that opts in the fuzzer draws for (snapshots, D76)."""


def _within(splitting: Splitting, data: bytes) -> Splitting:
    """An offsets splitting without the offsets past the end of ``data``, a shorter stream than
    the one it was drawn for: the cut is the same (cutting ignores them), and the scenario file
    it is saved in, which refuses them, loads."""
    if splitting.kind != "offsets":
        return splitting
    offsets = tuple(offset for offset in splitting.offsets if 0 < offset < len(data))
    return Splitting("offsets", offsets=offsets) if offsets else Splitting("whole")


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

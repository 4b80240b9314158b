"""What a fuzzing session found: :class:`FuzzResult`, written as a run's report (the formats
``callstream run`` writes) and summed up for people by :func:`describe`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.case import CaseResult
from ..core.declaration import Implementation
from ..core.spec import Scenario
from ..corpus.regressions import non_defaults, reproduce_command
from ..coverage import FeatureTally
from ..reports import ReportWriter, new_run_folder


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
    features: FeatureTally | None = None
    """How often each wire feature was drawn, when counted (``--coverage``)."""

    @property
    def exit_code(self) -> int:
        """0 nothing found, 1 the implementation failed (as ``callstream run``)."""
        return 0 if self.found is None else 1


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
        footer: dict[str, object] = {"exit_code": result.exit_code, "stopped_early": False}
        if result.features is not None:
            footer["features"] = result.features.to_dict()
        writer.footer(footer)
        writer.render()
    return folder


def describe(result: FuzzResult) -> str:
    """A closing summary for people."""
    lines = [
        f"{result.examples} examples in {result.elapsed:.1f} s "
        f"({result.examples / max(result.elapsed, 1e-9):.0f}/s), "
        f"{len(result.labels)} distinct events"
    ]
    if result.features is not None:
        lines.append(result.features.table())
    if result.found is None:
        lines.append("nothing found")
    else:
        case = result.found
        name = case.scenario if result.scenario is None else result.scenario.id
        after = "" if result.found_after is None else f" after {result.found_after} examples"
        lines.append(f"FOUND {name} [{case.profile}-{case.splitting}]{after}, then shrunk")
        lines += [f"  {f.check} ({f.pointer}): {f.message}" for f in case.failures]
        if result.scenario is not None and (limits := _limits_set(result.scenario)):
            lines.append(f"  under limits {limits} (the others at their defaults)")
        if case.repro:
            lines += ["repro:", case.repro]
        if result.regression is not None:
            rerun = reproduce_command(result.regression, result.implementation)
            lines.append(f"saved: {result.regression} ({rerun} reproduces it)")
    if result.report is not None:
        lines.append(f"report: {result.report}")
    return "\n".join(lines)


def _limits_set(scenario: Scenario) -> str:
    """The limits of the scenario's stream that differ from ``Limits()``'s, as ``name=value``
    (a find such as "must be rejected too_large" reads oddly without them)."""
    limits = non_defaults(scenario.spec.limits)
    return ", ".join(f"{name}={value}" for name, value in limits.items())

"""What a run did, and what is printed after it: the counts, each failing scenario with the
command that reruns it, and everything a person needs to act on one failed case."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.case import OUTCOMES, CaseResult, Outcome
from ..reports import failing_scenarios, rerun_command
from .shard import Shard

__all__ = [
    "UNSETTLED",
    "RunSummary",
    "describe_failing",
    "explain",
    "format_summary",
    "rerun_words",
]

UNSETTLED: tuple[Outcome, ...] = ("failed", "errored")
"""The outcomes a run counts as failures: its exit code is 1 when any case has one."""


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What a run did: its verdicts in case order and how it ended."""

    results: tuple[CaseResult, ...]
    """The verdicts written to the report (all cases, unless the run stopped early)."""
    scenarios: int
    cases: int
    """Cases planned; more than ``len(results)`` when the run stopped early."""
    stopped_early: bool
    elapsed: float
    shard: Shard | None = None
    """The slice of the run this was (``--shard K/N``), or None for the whole run."""

    @property
    def counts(self) -> dict[str, int]:
        """How many verdicts have each outcome."""
        counts: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
        for result in self.results:
            counts[result.outcome] += 1
        return counts

    @property
    def failures(self) -> list[CaseResult]:
        """The failed and errored verdicts, in case order."""
        return [result for result in self.results if result.outcome in UNSETTLED]

    @property
    def exit_code(self) -> int:
        """0 when every case that ran passed, 1 when any failed or errored."""
        return 1 if self.failures else 0


def rerun_words(
    impl: str,
    paths: Sequence[str],
    *,
    scenarios: Sequence[str] = (),
    timeout: float | None = None,
) -> list[str]:
    """The command line of ``callstream run`` on ``impl`` with the scenario ``paths`` and the
    ``--scenarios`` files as given (and ``--timeout`` when one was given): add ``-k`` to run
    one scenario again (:func:`callstream.reports.rerun_command`)."""
    words = ["callstream", "run", "--impl", impl]
    for path in scenarios:
        words += ["--scenarios", path]
    if timeout is not None:
        words += ["--timeout", f"{timeout:g}"]
    return [*words, *paths]


def format_summary(
    summary: RunSummary, folder: Path, rerun: Sequence[str] | None = None, limit: int = 20
) -> str:
    """The lines printed after a run: the counts; then each failing scenario in one line (the
    splittings that went wrong, the first failure's message) with the command that reruns it
    under it (when ``rerun`` gives the run's command line, see :func:`rerun_words`), for
    the first ``limit`` of them; and where the report is."""
    counts = summary.counts
    lines = [
        f"{summary.cases} cases of {summary.scenarios} scenarios: {counts['passed']} passed, "
        f"{counts['failed']} failed, {counts['errored']} errored, "
        f"{counts['unsupported']} unsupported, {counts['not_applicable']} not applicable "
        f"({summary.elapsed:.1f} s" + (f", shard {summary.shard.label})" if summary.shard else ")")
    ]
    lines += describe_failing([result.to_dict() for result in summary.results], rerun, limit)
    failures = summary.failures
    if summary.stopped_early:
        lines.append(
            f"stopped after {len(failures)} failed case(s): "
            f"{summary.cases - len(summary.results)} not run"
        )
    lines.append(f"report: {folder}")
    return "\n".join(lines) + "\n"


def describe_failing(
    results: Sequence[Mapping[str, Any]], rerun: Sequence[str] | None, limit: int = 20
) -> list[str]:
    """The first ``limit`` failing scenarios of ``results`` (report lines), each in one line
    (the splittings that went wrong, the first failure's message) with the command that reruns
    it under it, when ``rerun`` gives the command line of the run (see :func:`rerun_words`)."""
    failing = failing_scenarios(results)
    lines = []
    for group in failing[:limit]:
        lines.append(group.line())
        if rerun is not None:
            lines.append("  " + rerun_command(rerun, group.scenario))
    if len(failing) > limit:
        lines.append(f"… and {len(failing) - limit} more failing scenarios")
    return lines


def explain(result: CaseResult) -> str:
    """Everything a person needs to act on a failed or errored case: first the failed checks
    with their rules (so a one-line summary shows the first), then the scenario with its rules
    and where it is defined, why it errored, and the repro."""
    lines = [
        f"{failure.check} ({failure.pointer}): {failure.message}" for failure in result.failures
    ]
    lines += [
        f"{result.scenario} [{result.profile}-{result.splitting}]: {result.title}",
        f"rules {', '.join(result.rules)}"
        + (f"; defined at {result.source}" if result.source else ""),
    ]
    if result.detail:
        lines.append(result.detail)
    if result.repro:
        lines += ["repro:", result.repro]
    return "\n".join(lines)

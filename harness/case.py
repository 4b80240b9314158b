"""One case: a scenario, under one profile, torn apart by one splitting, run on one
implementation, judged by the checks. Everything here is in-process and deterministic; the
runner adds processes and timeouts around it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .checks import Failure, run_checks
from .observe import Observation, observe
from .oracle import expect
from .render import render
from .spec import Scenario, Splitting
from .split import DEFAULT_SPLITTINGS, chunkings

__all__ = ["CaseResult", "format_chunks", "run_case", "splittings_of"]

Outcome = Literal["passed", "failed", "not_claimed", "errored"]


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The verdict on one case."""

    scenario: str
    title: str
    rules: tuple[str, ...]
    tags: tuple[str, ...]
    kind: str
    profile: str
    splitting: str
    outcome: Outcome
    chunkings: int = 0
    """How many chunkings were run (``pairs`` runs one per byte)."""
    failures: tuple[Failure, ...] = ()
    repro: str | None = None
    """The first failing chunking, boundaries marked and escapes visible."""
    detail: str | None = None
    """Why the case was not claimed or errored."""
    elapsed: float = 0.0
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The result line of ``report.jsonl``."""
        return {
            "type": "result",
            "scenario": self.scenario,
            "title": self.title,
            "rules": list(self.rules),
            "tags": list(self.tags),
            "kind": self.kind,
            "profile": self.profile,
            "splitting": self.splitting,
            "outcome": self.outcome,
            "chunkings": self.chunkings,
            "failures": [
                {"check": f.check, "rules": list(f.rules), "message": f.message}
                for f in self.failures
            ],
            "repro": self.repro,
            "detail": self.detail,
            "elapsed": round(self.elapsed, 6),
            "source": self.source,
        }


def splittings_of(scenario: Scenario) -> tuple[Splitting, ...]:
    """The splittings a scenario runs under."""
    return scenario.splittings or DEFAULT_SPLITTINGS


def run_case(
    scenario: Scenario, profile: str, splitting: Splitting, factory: Callable[..., Any]
) -> CaseResult:
    """Run every chunking of ``splitting`` until one fails; the verdict with its repro."""
    spec = scenario.spec
    rendered = render(spec)
    expected = expect(spec, rendered, profile)
    runs = 0
    elapsed = 0.0
    for chunks in chunkings(rendered.data, splitting):
        runs += 1
        seen = observe(factory, spec.tools, spec.limits, chunks)
        elapsed += seen.elapsed
        failures = run_checks(expected, seen, scenario.kind)
        if failures:
            return _result(
                scenario, profile, splitting, "failed", runs, elapsed, failures, chunks, seen
            )
    return _result(scenario, profile, splitting, "passed", runs, elapsed)


def _result(
    scenario: Scenario,
    profile: str,
    splitting: Splitting,
    outcome: Outcome,
    runs: int,
    elapsed: float,
    failures: Sequence[Failure] = (),
    chunks: Sequence[bytes] | None = None,
    seen: Observation | None = None,
) -> CaseResult:
    repro = None
    if chunks is not None:
        repro = format_chunks(chunks)
        if seen is not None:
            released = "\n".join(
                f"  after chunk {r.chunk}: {r.result.to_dict()}" for r in seen.releases
            )
            repro += "\nreleased:\n" + (released or "  nothing")
            if seen.error:
                repro += "\nraised:\n" + seen.error
    return CaseResult(
        scenario.id,
        scenario.title,
        scenario.rules,
        scenario.tags,
        scenario.kind,
        profile,
        splitting.label,
        outcome,
        runs,
        tuple(failures),
        repro,
        None,
        elapsed,
        scenario.source,
    )


def format_chunks(chunks: Sequence[bytes], limit: int = 40) -> str:
    """Chunks one per line, escapes visible, so a boundary inside ``\\r\\n`` or a UTF-8
    character can be seen: ``[3] b'data: {"choi'``. Long chunkings show their first
    and last ``limit // 2`` chunks."""
    lines = [f"[{n}] {chunk!r}" for n, chunk in enumerate(chunks)]
    if len(lines) > limit:
        half = limit // 2
        lines = [*lines[:half], f"… {len(lines) - limit} more chunks …", *lines[-half:]]
    return "\n".join(lines)

"""The certificate's model: every finding across the runs of the probes, the same finding of
several runs as one, flakiness, the verdict, and the lines printed at the end."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ...corpus.cassette import Recording
from ..route_checks import ROUTE_CHECKS, SEVERITIES, RouteFinding, Timing

__all__ = [
    "FORMAT",
    "SEVERITY_SYMBOL",
    "WORDS",
    "Certificate",
    "CertificateFinding",
    "ProbeRun",
    "Verdict",
]

FORMAT = 1
"""The version of ``certificate.json``."""
Verdict = Literal["pass", "pass-with-findings", "fail"]
WORDS = {"pass": "PASS", "pass-with-findings": "PASS WITH FINDINGS", "fail": "FAIL"}
"""Each verdict, as a headline says it."""
SEVERITY_SYMBOL = {"error": "✗", "warning": "⚠", "info": "ℹ"}


@dataclass(frozen=True, slots=True)
class ProbeRun:
    """One run of one probe: its answers' figures and what the checks found."""

    probe: str
    title: str
    repeat: int
    findings: tuple[RouteFinding, ...]
    stream: Timing
    nonstream: Timing | None
    cassettes: tuple[str, ...] = ()
    """The cassette files of its answers."""
    recording: Recording | None = field(default=None, compare=False)
    """The streamed answer, for the report's repro."""

    def to_dict(self) -> dict[str, Any]:
        """As JSON-serialisable data."""
        return {
            "repeat": self.repeat,
            "stream": self.stream.to_dict(),
            "non_stream": None if self.nonstream is None else self.nonstream.to_dict(),
            "findings": len(self.findings),
            "cassettes": list(self.cassettes),
        }


@dataclass(frozen=True, slots=True)
class CertificateFinding:
    """A finding over every run of its probe."""

    first: RouteFinding
    """Its first occurrence: the detail and excerpt shown."""
    repeats: tuple[int, ...]
    """The runs it was seen in."""
    runs: int
    """How many runs its probe had."""
    count: int
    """How many times it was seen, all runs together."""
    cassette: str | None

    @property
    def flaky(self) -> bool:
        """Seen in some runs of its probe and not in others."""
        return len(self.repeats) < self.runs

    def to_dict(self) -> dict[str, Any]:
        """As JSON-serialisable data."""
        out = self.first.to_dict()
        del out["repeat"]
        return {
            **out,
            "repeats": list(self.repeats),
            "runs": self.runs,
            "flaky": self.flaky,
            "count": self.count,
            "cassette": self.cassette,
        }


@dataclass(frozen=True, slots=True)
class Certificate:
    """What a certification found out about a route."""

    base_url: str
    model: str
    profile: str
    date: str
    """When the certification started (ISO 8601, UTC)."""
    callstream: str
    runs: tuple[ProbeRun, ...]
    skipped: tuple[tuple[str, str], ...] = ()
    """Probes not run, with why (the route could not be reached, or refused the key)."""
    elapsed: float = 0.0
    dialect: str = "openai-chat"
    """The dialect the route was asked in."""
    findings: tuple[CertificateFinding, ...] = field(init=False, compare=False)
    """Every finding over the runs, worst first, then in probe and check order."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "findings", _aggregate(self.runs))

    @property
    def verdict(self) -> Verdict:
        """``fail``, ``pass-with-findings`` or ``pass`` (see the module docstring)."""
        severities = {finding.first.severity for finding in self.findings}
        if "error" in severities or self.skipped or not self.runs:
            return "fail"
        return "pass-with-findings" if "warning" in severities else "pass"

    @property
    def exit_code(self) -> int:
        """1 when the route failed, else 0."""
        return 1 if self.verdict == "fail" else 0

    def checks(self) -> list[dict[str, Any]]:
        """Each check's standing: ``failed`` (an error seen in every run of its probe),
        ``flaky`` (an error or a warning seen in some runs only), ``warned``, or ``passed``."""
        out = []
        for check in ROUTE_CHECKS:
            mine = [f for f in self.findings if f.first.check == check.name]
            bad = [f for f in mine if f.first.severity != "info"]
            errors = [f for f in bad if f.first.severity == "error"]
            if any(not f.flaky for f in errors):
                status = "failed"
            elif any(f.flaky for f in bad):
                status = "flaky"
            elif bad:
                status = "warned"
            else:
                status = "passed"
            out.append(
                {
                    "name": check.name,
                    "title": check.title,
                    "status": status,
                    "errors": len(errors),
                    "warnings": len(bad) - len(errors),
                    "notes": len(mine) - len(bad),
                }
            )
        return out

    def counts(self) -> dict[str, int]:
        """Findings by severity, and how many are flaky."""
        findings = self.findings
        counts: dict[str, int] = dict.fromkeys(SEVERITIES, 0)
        for finding in findings:
            counts[finding.first.severity] += 1
        counts["flaky"] = sum(finding.flaky for finding in findings)
        return counts

    def to_dict(self) -> dict[str, Any]:
        """``certificate.json``."""
        probes: dict[str, dict[str, Any]] = {}
        for run in self.runs:
            entry = probes.setdefault(
                run.probe, {"name": run.probe, "title": run.title, "runs": []}
            )
            entry["runs"].append(run.to_dict())
        return {
            "certificate": FORMAT,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "route": {"base_url": self.base_url, "model": self.model, "dialect": self.dialect},
            "profile": self.profile,
            "date": self.date,
            "callstream": self.callstream,
            "repeat": max((run.repeat for run in self.runs), default=0),
            "elapsed": round(self.elapsed, 3),
            "counts": self.counts(),
            "checks": self.checks(),
            "probes": list(probes.values()),
            "skipped": [{"probe": probe, "reason": reason} for probe, reason in self.skipped],
            "findings": [finding.to_dict() for finding in self.findings],
        }

    @property
    def _dialect(self) -> str:
        """The dialect as the summary names it: only when it is not the default."""
        return "" if self.dialect == "openai-chat" else f"{self.dialect}, "

    def summary(self, folder: Path | None = None, limit: int = 30) -> str:
        """The lines printed at the end of a certification or a replay."""
        counts = self.counts()
        flaky = f" ({counts['flaky']} flaky)" if counts["flaky"] else ""
        probes = len({run.probe for run in self.runs})
        repeat = max((run.repeat for run in self.runs), default=0)
        lines = [
            f"{WORDS[self.verdict]}: {self.model} at {self.base_url} ({self._dialect}"
            f"{self.profile} profile): "
            f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} notes"
            f"{flaky}; {probes} probes × {repeat} in {self.elapsed:.1f} s"
        ]
        for probe, reason in self.skipped:
            lines.append(f"  not run: {probe}: {reason}")
        findings = self.findings
        for finding in findings[:limit]:
            lines.append("  " + _one_line(finding))
        if len(findings) > limit:
            lines.append(f"  … and {len(findings) - limit} more")
        if folder is not None:
            lines.append(f"certificate: {folder / 'certificate.md'} (also .json and .html)")
        return "\n".join(lines) + "\n"


def _aggregate(runs: Sequence[ProbeRun]) -> tuple[CertificateFinding, ...]:
    """The findings of every run, the same finding of several runs as one."""
    runs_of: dict[str, int] = {}
    cassette_of: dict[tuple[str, int], tuple[str, ...]] = {}
    grouped: dict[tuple[Any, ...], list[RouteFinding]] = {}
    for run in runs:
        runs_of[run.probe] = runs_of.get(run.probe, 0) + 1
        cassette_of[(run.probe, run.repeat)] = run.cassettes
        for finding in run.findings:
            grouped.setdefault(finding.key, []).append(finding)
    out = []
    for found in grouped.values():
        first = found[0]
        cassettes = cassette_of[(first.probe, first.repeat)]
        answer = 0 if first.stream or len(cassettes) < 2 else 1
        out.append(
            CertificateFinding(
                first,
                tuple(sorted({f.repeat for f in found})),
                runs_of[first.probe],
                len(found),
                cassettes[answer] if cassettes else None,
            )
        )
    probes = list(runs_of)
    checks = [check.name for check in ROUTE_CHECKS]
    return tuple(
        sorted(
            out,
            key=lambda f: (
                SEVERITIES.index(f.first.severity),
                probes.index(f.first.probe),
                not f.first.stream,
                checks.index(f.first.check),
            ),
        )
    )


def _one_line(finding: CertificateFinding) -> str:
    first = finding.first
    quirk = f" [{first.quirk}]" if first.quirk else ""
    runs = f"r{','.join(map(str, finding.repeats))}" if finding.runs > 1 else ""
    where = ", ".join(part for part in ("stream" if first.stream else "non-stream", runs) if part)
    flaky = f" FLAKY {len(finding.repeats)}/{finding.runs}" if finding.flaky else ""
    return (
        f"{SEVERITY_SYMBOL[first.severity]} {first.severity:<7} {first.check}{quirk} "
        f"{first.probe} ({where}){flaky}: {first.title}"
        + (f": {first.detail}" if first.detail else "")
    )

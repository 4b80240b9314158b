"""The files a certificate is written as: ``certificate.json``, ``.md`` and ``.html``, beside
the usual report folder, in which each run of a probe is a case."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...core.case import CaseResult, format_repro
from ...core.judgement import Failure
from ...core.spec import Scenario, Splitting, StreamSpec
from ...reports import ReportWriter, write_files
from ...rules import rule_ids
from ...scrub import Scrubber
from ..route_checks import RouteFinding
from .html import html_page
from .markdown import markdown
from .model import Certificate, ProbeRun

__all__ = ["write_certificate"]

_WHOLE = Splitting("whole")


def write_certificate(
    certificate: Certificate,
    folder: Path,
    *,
    argv: Sequence[str],
    selection: str | None,
    scrubber: Scrubber | None = None,
) -> list[Path]:
    """Write the certificate (JSON, Markdown, HTML) and the usual report folder into
    ``folder``; the files written. With ``scrubber``, every file written is scrubbed once more
    as a whole, whatever wrote it."""
    texts = {
        "certificate.json": json.dumps(certificate.to_dict(), ensure_ascii=False, indent=2) + "\n",
        "certificate.md": markdown(certificate),
        "certificate.html": html_page(certificate),
    }
    written = write_files(folder, texts)
    with ReportWriter(folder) as writer:
        writer.header(_report_header(certificate, argv, selection))
        for run in certificate.runs:
            writer.result(_case(run, certificate.profile))
        for probe, reason in certificate.skipped:
            writer.result(_skipped(probe, reason, certificate.profile))
        writer.footer(
            {
                "exit_code": certificate.exit_code,
                "stopped_early": bool(certificate.skipped),
                "elapsed": round(certificate.elapsed, 3),
            }
        )
        written += [writer.path, *writer.render()]
    if scrubber is not None:
        scrubber.files(written)
    return written


# -- the usual report ---------------------------------------------------------------------------


def _report_header(
    certificate: Certificate, argv: Sequence[str], selection: str | None
) -> dict[str, Any]:
    return {
        "implementation": {
            "connectable": f"route:{certificate.base_url}",
            "name": f"{certificate.model} at {certificate.base_url}",
            "declaration": {"profile": certificate.profile},
        },
        "route": {"base_url": certificate.base_url, "model": certificate.model},
        "argv": list(argv),
        "scenarios": len(
            {run.probe for run in certificate.runs} | {p for p, _ in certificate.skipped}
        ),
        "cases": len(certificate.runs) + len(certificate.skipped),
        "filter": selection,
    }


def _case(run: ProbeRun, profile: str) -> CaseResult:
    errors = [f for f in run.findings if f.severity == "error"]
    others = [f for f in run.findings if f.severity != "error"]
    failures = tuple(Failure(f.check, rule_ids("R"), _sentence(f)) for f in errors)
    repro = None
    if errors and run.recording is not None and run.recording.chunks:
        repro = format_repro([chunk.data for chunk in run.recording.chunks])
    detail = "\n".join(f"{f.severity}: {f.check}: {_sentence(f)}" for f in others) or None
    elapsed = run.stream.total + (run.nonstream.total if run.nonstream else 0.0)
    result = CaseResult.of(
        _probe_scenario(run.probe, run.title, run.cassettes[0] if run.cassettes else ""),
        profile,
        _WHOLE,
        "failed" if errors else "passed",
        chunkings=1 if run.nonstream is None else 2,
        failures=failures,
        repro=repro,
        detail=detail,
        elapsed=elapsed,
    )
    return replace(result, splitting=f"repeat-{run.repeat}")


def _skipped(probe: str, reason: str, profile: str) -> CaseResult:
    result = CaseResult.of(
        _probe_scenario(probe, "not run", ""),
        profile,
        _WHOLE,
        "errored",
        detail=f"not run: {reason}",
    )
    return replace(result, splitting="not-run")


def _probe_scenario(name: str, title: str, source: str) -> Scenario:
    return Scenario(
        name, title, rule_ids("R"), StreamSpec(tools=()), tags=("certify",), source=source
    )


def _sentence(finding: RouteFinding) -> str:
    quirk = f"[{finding.quirk}] " if finding.quirk else ""
    answer = "" if finding.stream else " (non-streaming answer)"
    return f"{quirk}{finding.title}{answer}" + (f": {finding.detail}" if finding.detail else "")

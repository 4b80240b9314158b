"""The certificate of a route: every finding across the runs, flakiness, the verdict, and the
files it is written as.

Theory of operation. A certification runs each probe ``--repeat`` times; each run gives
:class:`~callstream.certification.route_checks.RouteFinding` s. Findings of different runs are the
same finding when they agree on probe, answer, check, quirk and title; a finding seen in only some
runs of its probe is **flaky**: a model is not deterministic, and a check that passes sometimes and
fails sometimes has not passed. The verdict:

- ``fail``: any error (flaky or not), or a probe that could not be run;
- ``pass-with-findings``: no error, but warnings (deviations the lenient profile mends);
- ``pass``: nothing but information.

The exit code is that of ``callstream run``: 0 for pass and pass-with-findings, 1 for fail.
The certificate is written as ``certificate.json`` (the data), ``certificate.md`` and
``certificate.html``, beside the usual report folder (``report.jsonl`` with one result per run
of a probe, and what is rendered from it: JUnit XML, the Markdown summary, the HTML page, the
badge).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ..core.case import CaseResult, format_repro
from ..core.judgement import Failure
from ..core.spec import Scenario, Splitting, StreamSpec
from ..corpus.cassette import Recording
from ..reports import (
    SYMBOL,
    ReportWriter,
    h,
    md,
    md_block,
    md_code,
    page_head,
    plural,
    visible,
    write_files,
)
from ..rules import rule_ids
from ..scrub import Scrubber
from .route_checks import ROUTE_CHECKS, SEVERITIES, RouteFinding, Timing

__all__ = ["FORMAT", "Certificate", "ProbeRun", "Verdict", "write_certificate"]

FORMAT = 1
"""The version of ``certificate.json``."""
Verdict = Literal["pass", "pass-with-findings", "fail"]
_TONE = {"pass": "passed", "pass-with-findings": "hole", "fail": "failed"}
"""The report page's colour classes for each verdict and severity."""
_SEVERITY_TONE = {"error": "failed", "warning": "hole", "info": "not_applicable"}
_SEVERITY_SYMBOL = {"error": "✗", "warning": "⚠", "info": "ℹ"}
_WORDS = {"pass": "PASS", "pass-with-findings": "PASS WITH FINDINGS", "fail": "FAIL"}
_PLURAL = {"error": "errors", "warning": "warnings", "info": "notes"}
_WHOLE = Splitting("whole")


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
            "route": {"base_url": self.base_url, "model": self.model},
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

    def summary(self, folder: Path | None = None, limit: int = 30) -> str:
        """The lines printed at the end of a certification or a replay."""
        counts = self.counts()
        flaky = f" ({counts['flaky']} flaky)" if counts["flaky"] else ""
        probes = len({run.probe for run in self.runs})
        repeat = max((run.repeat for run in self.runs), default=0)
        lines = [
            f"{_WORDS[self.verdict]}: {self.model} at {self.base_url} ({self.profile} profile): "
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
        "certificate.md": _markdown(certificate),
        "certificate.html": _html(certificate),
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


# -- words ------------------------------------------------------------------------------------


def _sentence(finding: RouteFinding) -> str:
    quirk = f"[{finding.quirk}] " if finding.quirk else ""
    answer = "" if finding.stream else " (non-streaming answer)"
    return f"{quirk}{finding.title}{answer}" + (f": {finding.detail}" if finding.detail else "")


def _one_line(finding: CertificateFinding) -> str:
    first = finding.first
    quirk = f" [{first.quirk}]" if first.quirk else ""
    runs = f"r{','.join(map(str, finding.repeats))}" if finding.runs > 1 else ""
    where = ", ".join(part for part in ("stream" if first.stream else "non-stream", runs) if part)
    flaky = f" FLAKY {len(finding.repeats)}/{finding.runs}" if finding.flaky else ""
    return (
        f"{_SEVERITY_SYMBOL[first.severity]} {first.severity:<7} {first.check}{quirk} "
        f"{first.probe} ({where}){flaky}: {first.title}"
        + (f": {first.detail}" if first.detail else "")
    )


def _runs_text(finding: CertificateFinding) -> str:
    if finding.runs == 1:
        return ""
    seen = ", ".join(map(str, finding.repeats))
    label = "flaky: " if finding.flaky else ""
    return f"{label}in run {seen} of {finding.runs}"


# -- Markdown -----------------------------------------------------------------------------------


def _markdown(certificate: Certificate) -> str:
    counts = certificate.counts()
    out = [
        f"# callstream certificate: {md(certificate.model)} — {_WORDS[certificate.verdict]}",
        "",
        f"Route {md_code(certificate.base_url)} · model {md_code(certificate.model)} · "
        f"{md(certificate.profile)} profile · {md(certificate.date)} · callstream "
        f"{md(certificate.callstream)} · {certificate.elapsed:.1f} s",
        "",
        f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} notes"
        + (f", {counts['flaky']} flaky" if counts["flaky"] else "")
        + f"; exit code {certificate.exit_code}.",
        "",
        "## Checks",
        "",
        "| | Check | What it certifies | Errors | Warnings | Notes |",
        "|---|---|---|--:|--:|--:|",
    ]
    for check in certificate.checks():
        out.append(
            f"| {_check_symbol(check['status'])} {check['status']} | {md_code(check['name'])} | "
            f"{md(check['title'])} | {check['errors']} | {check['warnings']} | {check['notes']} |"
        )
    if certificate.skipped:
        out += ["", "## Not run", ""]
        out += [f"- {md_code(probe)}: {md(reason)}" for probe, reason in certificate.skipped]
    findings = certificate.findings
    if findings:
        out += ["", "## Findings", ""]
        for finding in findings:
            first = finding.first
            quirk = f" [{first.quirk}]" if first.quirk else ""
            runs = _runs_text(finding)
            out += [
                f"### {_SEVERITY_SYMBOL[first.severity]} {first.severity}: {md_code(first.check)}"
                f"{md(quirk)} {md(first.title)}",
                "",
                f"Probe {md_code(first.probe)}, {'streamed' if first.stream else 'non-streaming'}"
                f" answer"
                + (f", {md(runs)}" if runs else "")
                + (f", byte {first.offset}" if first.offset is not None else "")
                + (f", cassette {md_code(finding.cassette)}" if finding.cassette else "")
                + ".",
                "",
                md(first.detail),
                "",
            ]
            if first.excerpt:
                out += [md_block(visible(first.excerpt)), ""]
    if out[-1]:
        out.append("")
    out += [
        "## Probes",
        "",
        "| Probe | Run | First byte | First event | Longest gap | Total | Bytes | Events "
        "| Keep-alives | Findings |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for run in certificate.runs:
        t = run.stream
        out.append(
            f"| {md_code(run.probe)} | {run.repeat} | {_seconds(t.first_byte)} | "
            f"{_seconds(t.first_event)} | {_seconds(t.max_gap)} | {_seconds(t.total)} | "
            f"{t.bytes} | {t.events} | {t.comments} | {len(run.findings)} |"
        )
    return "\n".join(out).rstrip("\n") + "\n"


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f} s"


def _check_symbol(status: str) -> str:
    return {"failed": "✗", "flaky": "~", "warned": "⚠", "passed": "✓"}[status]


# -- HTML -------------------------------------------------------------------------------------

_CHECK_TONE = {"failed": "failed", "flaky": "errored", "warned": "hole", "passed": "passed"}


def _html(certificate: Certificate) -> str:
    counts = certificate.counts()
    verdict = certificate.verdict
    tone = _TONE[verdict]
    headline = f"{SYMBOL[tone]} {_WORDS[verdict]}"
    tiles = (
        "".join(
            f'<div class="tile {_SEVERITY_TONE[severity]}"><b>{counts[severity]}</b>'
            f"{_SEVERITY_SYMBOL[severity]} {_PLURAL[severity]}</div>"
            for severity in SEVERITIES
        )
        + f'<div class="tile errored"><b>{counts["flaky"]}</b>~ flaky</div>'
    )
    facts = [
        ("route", f"<code>{h(certificate.base_url)}</code>"),
        ("model", f"<code>{h(certificate.model)}</code>"),
        ("profile", h(certificate.profile)),
        ("date", h(certificate.date)),
        ("callstream", h(certificate.callstream)),
        ("runs", f"{plural(len(certificate.runs), 'run')} in {certificate.elapsed:.1f} s"),
        ("exit code", str(certificate.exit_code)),
    ]
    rows = "".join(
        f'<tr><td class="sym {_CHECK_TONE[c["status"]]}">{_check_symbol(c["status"])}</td>'
        f"<th scope=row><code>{h(c['name'])}</code></th><td>{h(c['title'])}</td>"
        f'<td class="n">{c["errors"]}</td><td class="n">{c["warnings"]}</td>'
        f'<td class="n">{c["notes"]}</td></tr>'
        for c in certificate.checks()
    )
    parts = [
        *page_head(f"callstream certificate: {certificate.model} — {_WORDS[verdict]}"),
        "<body>",
        "<header>",
        f'<h1>callstream certificate <span class="impl">· {h(certificate.model)}</span></h1>',
        f'<p class="verdict {tone}">{h(headline)}</p>',
        f'<div class="tiles">{tiles}</div>',
        '<dl class="meta">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>",
        "</header>",
        "<main>",
        '<section id="checks"><h2>Checks</h2><table class="matrix"><thead><tr><th></th>'
        '<th>Check</th><th>What it certifies</th><th class="n">Errors</th>'
        f'<th class="n">Warnings</th><th class="n">Notes</th></tr></thead><tbody>{rows}'
        "</tbody></table></section>",
        _html_skipped(certificate),
        _html_findings(certificate),
        _html_probes(certificate),
        "</main>",
        f"<footer>Written by callstream {h(certificate.callstream)}; the data is in "
        "certificate.json, the recordings in cassettes/.</footer>",
        "</body>",
        "</html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def _html_skipped(certificate: Certificate) -> str:
    if not certificate.skipped:
        return ""
    items = "".join(
        f"<li><code>{h(probe)}</code>: {h(reason)}</li>" for probe, reason in certificate.skipped
    )
    return f'<section id="not-run"><h2>Not run</h2><ul>{items}</ul></section>'


def _html_findings(certificate: Certificate) -> str:
    findings = certificate.findings
    if not findings:
        return ""
    blocks = []
    for finding in findings:
        first = finding.first
        quirk = f" [{first.quirk}]" if first.quirk else ""
        facts = [
            f"probe <code>{h(first.probe)}</code>",
            "streamed answer" if first.stream else "non-streaming answer",
        ]
        runs = _runs_text(finding)
        if runs:
            facts.append(h(runs))
        if first.offset is not None:
            facts.append(f"byte {first.offset}")
        if finding.cassette:
            facts.append(f"<code>{h(finding.cassette)}</code>")
        excerpt = f"<pre>{h(first.excerpt)}</pre>" if first.excerpt else ""
        flaky = ' <span class="cell errored">flaky</span>' if finding.flaky else ""
        blocks.append(
            f'<details class="group {_SEVERITY_TONE[first.severity]}" open><summary>'
            f'<span class="sym">{_SEVERITY_SYMBOL[first.severity]}</span> '
            f"<code>{h(first.check)}</code>{h(quirk)} {h(first.title)}{flaky}"
            f'<span class="where">{h(first.probe)}</span></summary>'
            f'<div class="body"><p>{h(first.detail)}</p>{excerpt}'
            f'<p class="facts">{" · ".join(facts)}</p></div></details>'
        )
    return f'<section id="findings"><h2>Findings ({len(findings)})</h2>{"".join(blocks)}</section>'


def _html_probes(certificate: Certificate) -> str:
    rows = "".join(
        f"<tr><td><code>{h(run.probe)}</code></td><td class='n'>{run.repeat}</td>"
        + "".join(
            f"<td class='n'>{html.escape(_seconds(value))}</td>"
            for value in (
                run.stream.first_byte,
                run.stream.first_event,
                run.stream.max_gap,
                run.stream.total,
            )
        )
        + f"<td class='n'>{run.stream.bytes}</td><td class='n'>{run.stream.events}</td>"
        f"<td class='n'>{run.stream.comments}</td><td class='n'>{len(run.findings)}</td>"
        f"<td>{' '.join(f'<code>{h(c)}</code>' for c in run.cassettes)}</td></tr>"
        for run in certificate.runs
    )
    return (
        '<section id="probes"><h2>Probes: the streamed answers</h2><table><thead><tr>'
        "<th>Probe</th><th class='n'>Run</th><th class='n'>First byte</th>"
        "<th class='n'>First event</th><th class='n'>Longest gap</th><th class='n'>Total</th>"
        "<th class='n'>Bytes</th><th class='n'>Events</th><th class='n'>Keep-alives</th>"
        "<th class='n'>Findings</th><th>Cassettes</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )

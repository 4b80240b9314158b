"""``certificate.md``: the certificate as Markdown."""

from __future__ import annotations

from ...reports import md, md_block, md_code, visible
from ._words import check_symbol, runs_text, seconds
from .model import SEVERITY_SYMBOL, WORDS, Certificate

__all__ = ["markdown"]


def markdown(certificate: Certificate) -> str:
    counts = certificate.counts()
    out = [
        f"# callstream certificate: {md(certificate.model)} — {WORDS[certificate.verdict]}",
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
            f"| {check_symbol(check['status'])} {check['status']} | {md_code(check['name'])} | "
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
            runs = runs_text(finding)
            out += [
                f"### {SEVERITY_SYMBOL[first.severity]} {first.severity}: {md_code(first.check)}"
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
            f"| {md_code(run.probe)} | {run.repeat} | {seconds(t.first_byte)} | "
            f"{seconds(t.first_event)} | {seconds(t.max_gap)} | {seconds(t.total)} | "
            f"{t.bytes} | {t.events} | {t.comments} | {len(run.findings)} |"
        )
    return "\n".join(out).rstrip("\n") + "\n"

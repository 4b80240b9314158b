"""``certificate.html``: the certificate as one self-contained page."""

from __future__ import annotations

import html

from ...reports import SYMBOL, h, page_head, plural
from ..route_checks import SEVERITIES
from ._words import check_symbol, runs_text, seconds
from .model import SEVERITY_SYMBOL, WORDS, Certificate

__all__ = ["html_page"]

_TONE = {"pass": "passed", "pass-with-findings": "hole", "fail": "failed"}
"""The report page's colour classes for each verdict and severity."""
_SEVERITY_TONE = {"error": "failed", "warning": "hole", "info": "not_applicable"}
_PLURAL = {"error": "errors", "warning": "warnings", "info": "notes"}
_CHECK_TONE = {"failed": "failed", "flaky": "errored", "warned": "hole", "passed": "passed"}


def html_page(certificate: Certificate) -> str:
    counts = certificate.counts()
    verdict = certificate.verdict
    tone = _TONE[verdict]
    headline = f"{SYMBOL[tone]} {WORDS[verdict]}"
    tiles = (
        "".join(
            f'<div class="tile {_SEVERITY_TONE[severity]}"><b>{counts[severity]}</b>'
            f"{SEVERITY_SYMBOL[severity]} {_PLURAL[severity]}</div>"
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
        f'<tr><td class="sym {_CHECK_TONE[c["status"]]}">{check_symbol(c["status"])}</td>'
        f"<th scope=row><code>{h(c['name'])}</code></th><td>{h(c['title'])}</td>"
        f'<td class="n">{c["errors"]}</td><td class="n">{c["warnings"]}</td>'
        f'<td class="n">{c["notes"]}</td></tr>'
        for c in certificate.checks()
    )
    parts = [
        *page_head(f"callstream certificate: {certificate.model} — {WORDS[verdict]}"),
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
        runs = runs_text(finding)
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
            f'<span class="sym">{SEVERITY_SYMBOL[first.severity]}</span> '
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
            f"<td class='n'>{html.escape(seconds(value))}</td>"
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

"""``report.html``'s failures: each failing scenario with its first problem and its rerun
command, its cases gzip-packed into the page (within a budget) for the page's script to unpack
when the scenario is opened, each case's chunk lines with the boundaries marked."""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..rules import failure_pointer
from .markup import clip, h, visible
from .model import JSONL, Report
from .verdicts import (
    SYMBOL,
    FailingScenario,
    Verdict,
    case_counts,
    check_names,
    failing_scenarios,
    first_problem,
    plural,
    rerun_command,
    scenario_verdicts,
)

__all__ = ["html_failures", "html_scenario"]

_PACKED_BUDGET = 500_000
"""Characters of packed cases (gzip, then base64) report.html holds with every bad case's
repro. Past it each failing scenario keeps the repro of its first bad case only (report.jsonl
has them all), so that a run in which every case fails still renders a page under 1 MB."""


def html_failures(report: Report) -> str:
    """Every failing scenario as a line that opens onto its bad cases. What it opens onto is
    packed (gzip, base64) into the section and unpacked by the page's script when it is
    opened: one scenario's cases differ mostly in how the stream was cut, so they pack
    tightly, and the page stays a single file that needs nothing but itself."""
    failing = failing_scenarios(report.results)
    if not failing:
        return ""
    verdicts = scenario_verdicts(report.results)
    rerun = report.header.get("rerun")
    every_repro = True
    packed = _pack(failing, rerun, every_repro)
    if len(packed) > _PACKED_BUDGET:
        every_repro = False
        packed = _pack(failing, rerun, every_repro)
    groups = "".join(
        _html_group(
            group.scenario,
            verdicts[group.scenario],
            group.cases,
            f'<div class="cases slot" data-for="{h(group.scenario)}"></div>',
            anchor=True,
        )
        for group in failing
    )
    total = sum(len(group.cases) for group in failing)
    repros = (
        ""
        if every_repro
        else '<p class="legend">So that this page stays small, each scenario keeps the repro '
        f"of its first bad case only; every case's repro is in {JSONL}.</p>"
    )
    return (
        f'<section id="failures" data-cases="{packed}"><h2>Failures '
        f"({plural(total, 'case')} in {plural(len(failing), 'scenario')})</h2>"
        f'<noscript><p class="legend">The cases are packed into this page and need JavaScript '
        f"to show; {JSONL} has them.</p></noscript>"
        '<p><button data-open="1">expand all</button> <button data-open="0">collapse all</button>'
        f"</p>{repros}{groups}</section>"
    )


def _pack(
    failing: Sequence[FailingScenario], rerun: Sequence[str] | None, every_repro: bool
) -> str:
    """What each failing scenario opens onto, as JSON by scenario id, gzipped (the same bytes
    for the same report) and base64-encoded, for an attribute the page's script unpacks with
    ``DecompressionStream``."""
    fragments = {
        group.scenario: _html_overview(group, rerun) + _html_cases(group.cases, every_repro)
        for group in failing
    }
    data = json.dumps(fragments, ensure_ascii=False).encode("utf-8")
    return base64.b64encode(gzip.compress(data, compresslevel=9, mtime=0)).decode("ascii")


def _html_overview(group: FailingScenario, rerun: Sequence[str] | None) -> str:
    """Where a failing scenario went wrong and its first problem, in a line (as ``callstream
    run`` prints it), and the command that reruns it, given the run's ``rerun`` words."""
    out = f'<p class="problem">[{h(group.splittings())}] {h(first_problem(group.first))}</p>'
    if rerun is not None:
        out += f'<p class="rerun">rerun: <code>{h(rerun_command(rerun, group.scenario))}</code></p>'
    return out


def html_scenario(
    scenario: str, verdict: Verdict, cases: Sequence[tuple[int, Mapping[str, Any]]]
) -> str:
    """A failing scenario: a summary line, opening onto each of its bad cases, in the page."""
    group = FailingScenario(scenario, verdict.outcome, tuple(cases))
    body = _html_overview(group, None) + _html_cases(cases, every_repro=True)
    return _html_group(scenario, verdict, cases, f'<div class="cases">{body}</div>', anchor=False)


def _html_group(
    scenario: str,
    verdict: Verdict,
    cases: Sequence[tuple[int, Mapping[str, Any]]],
    body: str,
    *,
    anchor: bool,
) -> str:
    """A failing scenario's ``<details>``: its summary line, then ``body``. ``anchor`` gives it
    the id ``scenario-<id>`` the rules matrix links to."""
    results = [result for _, result in cases]
    checks = check_names(results)
    words = [
        *(result["outcome"] for result in results),
        *verdict.rules,
        *(rule for result in results for f in result["failures"] for rule in f["rules"]),
        *(result["splitting"] for result in results),
        *results[0]["tags"],
    ]
    where = f' id="scenario-{h(scenario)}"' if anchor else ""
    return (
        f'<details class="group {verdict.outcome}"{where} '
        f'data-filter="{h(" ".join(dict.fromkeys(words)))}"><summary>'
        f'<span class="sym">{SYMBOL[verdict.outcome]}</span> <code>{h(scenario)}</code> '
        f"{h(verdict.title)}"
        f'<span class="where">{h(case_counts(verdict))}</span>'
        f'<span class="checknames">{h(checks)}</span>'
        f"</summary>{body}</details>"
    )


def _html_cases(cases: Sequence[tuple[int, Mapping[str, Any]]], every_repro: bool) -> str:
    """A failing scenario's bad cases, the first open; each with its repro, or (without
    ``every_repro``) only the first."""
    return "".join(
        _html_case(line, result, repro=every_repro or n == 0, opened=n == 0)
        for n, (line, result) in enumerate(cases)
    )


def _html_case(line: int, result: Mapping[str, Any], *, repro: bool, opened: bool) -> str:
    """One bad case: its failed checks, its detail and (if ``repro``) its repro."""
    outcome = result["outcome"]
    rows = "".join(
        f"<tr><td><code>{h(failure['check'])}</code></td><td>{h(failure_pointer(failure['rules']))}"
        f"</td><td>{h(failure['message'])}</td></tr>"
        for failure in result["failures"]
    )
    body = []
    if rows:
        body.append(
            "<table><thead><tr><th>Check</th><th>Rules</th><th>What went wrong</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )
    if result["detail"] is not None:
        body.append(f"<h4>Detail</h4>{_html_lines(clip(result['detail'], 400, 100_000))}")
    if result["repro"] is not None and repro:
        body.append(
            "<h4>Repro: the stream line by line with its offsets, chunk boundaries ┊, "
            "releases ◀</h4>"
            f"{_html_lines(clip(result['repro'], 400, 100_000))}"
        )
    elif result["repro"] is not None:
        cut = result["repro"].split("\n", 1)[0].rstrip(":")
        body.append(
            f"<h4>Repro</h4><p class='facts'>{h(cut)}; in full on {JSONL} line {line} (the "
            "first case above shows its own).</p>"
        )
    body.append(
        f'<p class="facts">{h(result["kind"])} scenario · rules {h(", ".join(result["rules"]))}'
        f" · tags {h(', '.join(result['tags']) or 'none')}"
        f" · {plural(result['chunkings'], 'chunking')} run"
        f" · {result['elapsed']:.3f} s"
        + (f" · defined at <code>{h(result['source'])}</code>" if result["source"] else "")
        + f" · {JSONL} line {line}</p>"
    )
    return (
        f'<details class="case {outcome}" id="line-{line}"{" open" if opened else ""}><summary>'
        f'<span class="sym">{SYMBOL[outcome]}</span> '
        f"{h(result['profile'])} / {h(result['splitting'])}"
        f'<span class="checknames">{h(check_names([result]))}</span>'
        f'</summary><div class="body">{"".join(body)}</div></details>'
    )


_OFFSET = re.compile(r" *\d+ | +…$")
"""The offset that starts a repro's stream line (``    205 ``, eight characters or more), or
the gap between the lines shown."""


_MARK = "  ◀ "
"""What starts a release noted on a repro line (the stream itself is shown escaped, so this
never comes from it)."""


def _html_lines(text: str) -> str:
    """Text line by line, each line wrapping under itself past its offset, so a long chunk
    line of a repro is read without scrolling sideways; offsets, chunk boundaries ``┊`` and
    release marks ``◀`` set apart."""
    lines = []
    for line in visible(text).split("\n"):
        stream, *marks = line.split(_MARK)
        offset = _OFFSET.match(stream)
        start = offset.end() if offset and offset.end() >= 8 else 0
        shown = html.escape(stream[start:], quote=False).replace("┊", '<b class="cut">┊</b>')
        if start:
            shown = f'<span class="at">{html.escape(stream[:start])}</span>{shown}'
        shown += "".join(
            f'  <span class="mark">◀ {html.escape(mark, quote=False)}</span>' for mark in marks
        )
        lines.append(f"<div>{shown}</div>")
    return f'<div class="lines">{"".join(lines)}</div>'

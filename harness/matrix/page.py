"""The matrix as pages: ``matrix.md`` and ``matrix.html`` rendered from ``matrix.json``, the
adapters' reports it names and the reviewed known bugs alone, so the same files always give the
same bytes. A cell is a rule's verdict for one library over the scenarios citing it; each
failing scenario is shown with the repro of its first failing case, with the report package's
own renderers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..core.case import OUTCOMES
from ..core.declaration import OBSERVABLES
from ..core.dialects import NOT_CERTIFIABLE
from ..errors import UsageError
from ..reports import (
    JSONL,
    LABEL,
    SYMBOL,
    Report,
    RuleTally,
    failing_cases,
    h,
    html_scenario,
    load_report,
    md,
    md_block,
    md_code,
    page_head,
    plural,
    rule_table,
    scenario_verdicts,
    summary_scenario,
    visible,
)
from ..rules import RULE_TEXT, RULES
from .bugs import BUGS, Triage, load_bugs, triage

__all__ = ["INDEX", "render_matrix"]

INDEX = "matrix.json"
"""The file :func:`~callstream.matrix.build.run_matrix` writes beside the reports: which adapters
ran, with their versions, timings and splittings."""


def render_matrix(out: Path) -> list[Path]:
    """Render ``matrix.md`` and ``matrix.html`` from ``out/matrix.json``, the reports it names
    and the reviewed known bugs (``out/bugs.yaml``, if there is one); the files written. The
    same files always give the same bytes."""
    try:
        index = json.loads((out / INDEX).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{out / INDEX}: cannot read the matrix index: {exc}") from None
    columns = [(column, load_report(out / column["folder"] / JSONL)) for column in index["columns"]]
    known = load_bugs(out / BUGS)
    triaged = [
        triage(report.results, known.get(column["adapter"], ())) for column, report in columns
    ]
    written = []
    for name, text in (
        ("matrix.md", _markdown(index, columns, triaged)),
        ("matrix.html", _html_page(index, columns, triaged)),
    ):
        path = out / name
        path.write_text(text, encoding="utf-8", newline="\n")
        written.append(path)
    return written


# --- what both formats show ---


def _cell(rule: str, tally: RuleTally) -> tuple[str, str]:
    """A rule's standing for one library: (state, short text)."""
    judged = tally["passed"] + tally["failed"] + tally["errored"]
    if not judged and not tally["not_observable"] and rule in NOT_CERTIFIABLE:
        return "not_applicable", "n/a"
    if tally["failed"]:
        return "failed", f"{SYMBOL['failed']} {tally['failed']}/{judged}"
    if tally["errored"]:
        return "errored", f"{SYMBOL['errored']} {tally['errored']}/{judged}"
    if tally["passed"]:
        return "passed", f"{SYMBOL['passed']} {tally['passed']}"
    for state in ("not_observable", "unsupported"):
        if tally[state]:
            return state, f"{SYMBOL[state]} {LABEL[state]}"
    return "not_applicable", SYMBOL["not_applicable"]


def _counts(report: Report) -> dict[str, int]:
    counts: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
    for result in report.results:
        counts[result["outcome"]] += 1
    return counts


def _standing(report: Report) -> tuple[str, str]:
    """``210/240 passed`` (or ``30 failed``) and a shields.io colour."""
    counts = _counts(report)
    ran = counts["passed"] + counts["failed"] + counts["errored"]
    if counts["failed"] or counts["errored"]:
        return f"{counts['passed']}/{ran} passed", "red"
    if ran:
        return f"{ran}/{ran} passed", "brightgreen"
    return "nothing ran", "lightgrey"


def _badge_url(adapter: str, report: Report) -> str:
    message, colour = _standing(report)

    def part(text: str) -> str:
        return quote(text.replace("-", "--").replace("_", "__"), safe="")

    return f"https://img.shields.io/badge/{part(adapter)}-{part(message)}-{colour}"


def _hidden(report: Report) -> str:
    """What the library does not expose (``not: incremental, reason``), or ``everything``."""
    declared = report.header["implementation"]["declaration"]
    shown = set(declared.get("observables", OBSERVABLES))
    hidden = [name for name in OBSERVABLES if name not in shown]
    return f"not: {', '.join(hidden)}" if hidden else "everything"


def _versions(column: Mapping[str, Any]) -> str:
    return ", ".join(f"{name} {version}" for name, version in column["versions"].items())


def _language(column: Mapping[str, Any]) -> str:
    """The adapter's language (a matrix written before there were two says none: Python)."""
    return str(column.get("language", "python"))


def _dialects(column: Mapping[str, Any]) -> str:
    """The dialects the adapter reads (a matrix written before there were several: chat)."""
    return ", ".join(column.get("dialects", ("openai-chat",)))


def _not_run(index: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The adapters that could not run where the matrix was made, each with the reason."""
    return list(index.get("not_run", ()))


def _intro(index: Mapping[str, Any], columns: Sequence[tuple[Mapping[str, Any], Report]]) -> str:
    costs = [column["ms_per_stream"] for column, _ in columns]
    cost = f"{min(costs):.0f}–{max(costs):.0f} ms" if costs else "?"
    splittings = ", ".join(index["splittings"])
    selected = f" selected by `-k {index['filter']}`" if index["filter"] else ""
    return (
        f"The scenario corpus ({index['scenarios']} scenarios{selected}, every dialect; a library "
        "is judged on the dialects it declares) run through each client library's real stack: "
        "for a Python library the provider emulator streams each case over HTTP on 127.0.0.1, "
        "one write per chunk; a JavaScript library runs in a pipe program whose fetch answers "
        "with the case's bytes, one read per chunk. The library's assembled calls are judged "
        "like any implementation's. "
        f"Splittings: {splittings}, plus a scenario's own explicit offsets. "
        f"A stream through a library costs {cost} here, against "
        f"{index['in_process_ms_per_stream']:.2f} ms for the reference in process, and `bytes` "
        "and `pairs` would cost a request per byte or per cut: `--splittings` changes the set."
    )


_READING = (
    "A cell is a rule's verdict for one library over the scenarios judged on it (those citing "
    "it, and any in which a check proving it failed): "
    f"{SYMBOL['passed']} n: n scenarios showed the rule kept; {SYMBOL['failed']} f/n: in f of "
    "the n, a check proving the rule failed in at least one splitting; "
    f"{SYMBOL['not_observable']}: every check that could prove the rule reads something the "
    "library does not expose (results that come out only when the stream has ended cannot show "
    f"release timing, C4); {SYMBOL['unsupported']}: a non-feature the library declares (one "
    "choice only); n/a: no scenario can certify the rule through the contract. Every library "
    "runs every scenario: what it does not intend to do is judged like the rest."
)


# --- Markdown ---


def _markdown(
    index: Mapping[str, Any],
    columns: Sequence[tuple[Mapping[str, Any], Report]],
    triaged: Sequence[Triage],
) -> str:
    out = [
        "# Third-party assemblers × callstream rules",
        "",
        " ".join(
            f"![{md(column['connectable'])}: {md(_standing(report)[0])}]"
            f"({_badge_url(column['adapter'], report)})"
            for column, report in columns
        ),
        "",
        _intro(index, columns),
        "",
        f"Generated by `callstream matrix` (callstream {md(index['callstream'])}) on "
        f"{md(index['started'])}.",
        "",
        "## Libraries",
        "",
        "| Adapter | Language | Dialect | Versions | Exposes | Cases | "
        + " | ".join(LABEL[outcome].capitalize() for outcome in OUTCOMES)
        + " | ms/stream |",
        "|---|---|---|---|---|--:|" + "--:|" * len(OUTCOMES) + "--:|",
    ]
    for column, report in columns:
        counts = _counts(report)
        out.append(
            f"| {md_code(column['connectable'])} | {md(_language(column))} | "
            f"{md(_dialects(column))} | {md(_versions(column))} | {md(_hidden(report))} | "
            f"{len(report.results)} | "
            + " | ".join(str(counts[outcome]) for outcome in OUTCOMES)
            + f" | {column['ms_per_stream']:.1f} |"
        )
    if not_run := _not_run(index):
        out += ["", "Not run here:", ""]
        out += [
            f"- {md_code(entry['connectable'])} ({md(entry['language'])}): {md(entry['reason'])}"
            for entry in not_run
        ]
    tables = [rule_table(report.results) for _, report in columns]
    out += [
        "",
        "## Rules",
        "",
        _READING,
        "",
        "| Rule | Title | " + " | ".join(md_code(c["adapter"]) for c, _ in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for rule, title in RULES.items():
        cells = [_cell(rule, table[rule])[1] for table in tables]
        out.append(f"| {rule} | {md(title)} | " + " | ".join(cells) + " |")
    for (column, report), found in zip(columns, triaged, strict=True):
        failing = failing_cases(report.results)
        verdicts = scenario_verdicts(report.results)
        out += ["", f"## Failures: {md_code(column['connectable'])}", ""]
        if not failing:
            out += ["None: every case that ran passed.", ""]
            continue
        out += _markdown_bugs(found)
        # Folded, so the page stays a table first; GitHub renders Markdown inside <details>.
        out += [
            f"<details><summary>{plural(len(failing), 'failing scenario')}, each with the "
            "repro of its first failing case (all cases: "
            f"<code>{column['folder']}/report.html</code>)</summary>",
            "",
        ]
        for scenario, cases in failing.items():
            out += summary_scenario(scenario, verdicts[scenario], cases)
        out += ["</details>", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _markdown_bugs(found: Triage) -> list[str]:
    """A library's distinct bugs, each with the rules it breaks (quoted), its cause, its
    scenarios and its minimal repro; then the failing scenarios no reviewed bug explains."""
    shown = [bug for bug in found.bugs if bug.failing]
    out = [f"### Distinct bugs ({len(shown)})", ""]
    for number, bug in enumerate(shown, 1):
        out += [
            f"{number}. **{md(bug.bug.title)}** ({md(', '.join(bug.bug.rules))}). "
            f"Cause: {md(bug.bug.cause)}. Scenarios ({len(bug.failing)}): "
            + ", ".join(md_code(s) for s in bug.failing)
            + ".",
            "",
        ]
        out += [f"   > {rule}: {md(RULE_TEXT[rule])}" for rule in bug.bug.rules]
        if bug.repro is not None:
            repro = bug.repro
            first = repro["failures"][0]
            out += [
                "",
                f"   Minimal repro, `{md(repro['scenario'])}` "
                f"[{md(repro['profile'])}-{md(repro['splitting'])}]: "
                f"{md_code(first['check'])} {md(first['message'])}",
                "",
                "   <details><summary>the stream</summary>",
                "",
                _indent(md_block(visible(repro["repro"] or "")), "   "),
                "",
                "   </details>",
            ]
        out.append("")
    if found.untriaged:
        out += [
            f"Failing scenarios not yet traced to a bug ({len(found.untriaged)}): "
            + ", ".join(md_code(s) for s in found.untriaged)
            + ".",
            "",
        ]
    return out


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line else line for line in text.split("\n"))


# --- HTML ---

_STANDING_STATE = {"red": "failed", "brightgreen": "passed", "lightgrey": "not_applicable"}
"""The page's own colour for a standing: it loads nothing, so it reads offline."""

_MATRIX_CSS = """
.grid td.state { text-align: center; white-space: nowrap; font-family: ui-monospace, monospace;
  color: var(--c); background: var(--bg); }
.grid td.state a { color: inherit; }
td.standing { white-space: nowrap; color: var(--c); background: var(--bg); }
.wide { overflow-x: auto; }
"""


def _html_page(
    index: Mapping[str, Any],
    columns: Sequence[tuple[Mapping[str, Any], Report]],
    triaged: Sequence[Triage],
) -> str:
    libraries = "".join(
        f"<tr><td><code>{h(column['connectable'])}</code></td><td>{h(_language(column))}</td>"
        f"<td>{h(_dialects(column))}</td><td>{h(_versions(column))}</td>"
        f"<td>{h(_hidden(report))}</td><td class='n'>{len(report.results)}</td>"
        + "".join(f"<td class='n'>{_counts(report)[o]}</td>" for o in OUTCOMES)
        + f"<td class='n'>{column['ms_per_stream']:.1f}</td>"
        + f"<td class='state standing {_STANDING_STATE[_standing(report)[1]]}'>"
        f"{h(_standing(report)[0])}</td></tr>"
        for column, report in columns
    )
    heads = "".join(
        f"<th title='{h(c['connectable'])}'><code>{h(c['adapter'])}</code></th>" for c, _ in columns
    )
    tables = [rule_table(report.results) for _, report in columns]
    rows = []
    for rule, title in RULES.items():
        cells = []
        for (column, report), table in zip(columns, tables, strict=True):
            state, text = _cell(rule, table[rule])
            link = _first_failure(column["adapter"], report, rule) if state == "failed" else None
            shown = f'<a href="#{link}">{h(text)}</a>' if link else h(text)
            cells.append(f'<td class="state {state}">{shown}</td>')
        rows.append(f"<tr><th scope='row'>{h(rule)}</th><td>{h(title)}</td>{''.join(cells)}</tr>")
    failures = []
    for (column, report), found in zip(columns, triaged, strict=True):
        failing = failing_cases(report.results)
        verdicts = scenario_verdicts(report.results)
        groups = "".join(
            html_scenario(scenario, verdicts[scenario], cases).replace(
                'id="line-', f'id="{column["adapter"]}-line-'
            )
            for scenario, cases in failing.items()
        )
        failures.append(
            f"<section><h2>Failures: <code>{h(column['connectable'])}</code> "
            f"({len(failing)} scenarios)</h2>{_html_bugs(found) if failing else ''}"
            f"{groups or '<p>None: every case that ran passed.</p>'}"
            "</section>"
        )
    parts = [
        *page_head("callstream: third-party assemblers × rules", _MATRIX_CSS),
        "<body><header>",
        "<h1>callstream <span class='impl'>· third-party assemblers × rules</span></h1>",
        f"<p>{h(_intro(index, columns))}</p>",
        f"<p class='legend'>Generated by callstream {h(index['callstream'])} on "
        f"{h(index['started'])}.</p>",
        "</header><main>",
        "<section><h2>Libraries</h2><table><thead><tr><th>Adapter</th><th>Language</th>"
        "<th>Dialect</th><th>Versions</th>"
        "<th>Exposes</th><th class='n'>Cases</th>"
        + "".join(f"<th class='n'>{h(LABEL[o])}</th>" for o in OUTCOMES)
        + f"<th class='n'>ms/stream</th><th>Standing</th></tr></thead><tbody>{libraries}</tbody>"
        f"</table>{_html_not_run(index)}</section>",
        f"<section><h2>Rules</h2><p class='legend'>{h(_READING)}</p>"
        "<div class='wide'>"
        f"<table class='grid'><thead><tr><th>Rule</th><th>Title</th>{heads}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div></section>",
        *failures,
        "</main></body></html>",
    ]
    return "\n".join(parts) + "\n"


def _html_not_run(index: Mapping[str, Any]) -> str:
    not_run = _not_run(index)
    if not not_run:
        return ""
    items = "".join(
        f"<li><code>{h(entry['connectable'])}</code> ({h(entry['language'])}): "
        f"{h(entry['reason'])}</li>"
        for entry in not_run
    )
    return f"<p>Not run here:</p><ul class='not-run'>{items}</ul>"


def _html_bugs(found: Triage) -> str:
    shown = [bug for bug in found.bugs if bug.failing]
    items = []
    for bug in shown:
        quoted = "".join(
            f"<blockquote><b>{h(rule)}</b> {h(RULE_TEXT[rule])}</blockquote>"
            for rule in bug.bug.rules
        )
        repro = ""
        if bug.repro is not None:
            first = bug.repro["failures"][0]
            repro = (
                f"<details><summary>minimal repro: <code>{h(bug.repro['scenario'])}</code> "
                f"[{h(bug.repro['profile'])}-{h(bug.repro['splitting'])}] "
                f"<code>{h(first['check'])}</code> {h(first['message'])}</summary>"
                f"<pre>{h(bug.repro['repro'] or '')}</pre></details>"
            )
        items.append(
            f"<li><b>{h(bug.bug.title)}</b> ({h(', '.join(bug.bug.rules))}). Cause: "
            f"{h(bug.bug.cause)}. Scenarios ({len(bug.failing)}): "
            + ", ".join(f"<code>{h(s)}</code>" for s in bug.failing)
            + f"{quoted}{repro}</li>"
        )
    untraced = (
        f"<p>Failing scenarios not yet traced to a bug ({len(found.untriaged)}): "
        + ", ".join(f"<code>{h(s)}</code>" for s in found.untriaged)
        + "</p>"
        if found.untriaged
        else ""
    )
    return f"<h3>Distinct bugs ({len(shown)})</h3><ol>{''.join(items)}</ol>{untraced}"


def _first_failure(adapter: str, report: Report, rule: str) -> str | None:
    """The anchor of the first case in which a check proving ``rule`` failed."""
    for line, result in enumerate(report.results, 2):
        if any(rule in failure["rules"] for failure in result["failures"]):
            return f"{adapter}-line-{line}"
    return None

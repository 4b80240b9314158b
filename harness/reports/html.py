"""``report.html``: one self-contained page, the rules × scenarios matrix and the failing scenarios
(each one's cases gzip-packed in the page and unpacked by its script when opened:
:mod:`.html_failures`), with a filter box; readable offline and at 420 px."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any

from ..core.case import OUTCOMES
from ..core.checks import CHECKS
from ..core.dialects import NOT_CERTIFIABLE
from ..rules import RuleId
from .html_failures import html_failures, html_scenario
from .markup import h, page_head
from .model import JSONL, RULE_STATES, Report, count_outcomes, rule_states, rule_table
from .verdicts import (
    LABEL,
    SYMBOL,
    Verdict,
    check_names,
    failing_scenarios,
    headline_of,
    of_corpus,
    plural,
    report_name,
    row_state,
    rule_title,
    scenario_verdicts,
    standing_of,
)

__all__ = [
    "check_rules",
    "html_page",
    "html_scenario",
]


_SCRIPT = """
var packed = null;
function unpack() {
  if (!packed) {
    var data = document.getElementById("failures").getAttribute("data-cases");
    packed = window.DecompressionStream
      ? new Response(new Blob([Uint8Array.from(atob(data), function (c) {
          return c.charCodeAt(0);
        })]).stream().pipeThrough(new DecompressionStream("gzip"))).json()
      : Promise.reject(new Error("this browser has no DecompressionStream"));
  }
  return packed;
}
function fill(group) {
  var slot = group.querySelector(".slot[data-for]");
  if (!slot) return Promise.resolve(group);
  return unpack().then(function (cases) {
    if (slot.hasAttribute("data-for")) {
      slot.innerHTML = cases[slot.getAttribute("data-for")];
      slot.removeAttribute("data-for");
    }
    return group;
  }, function (error) {
    slot.textContent = "The cases could not be unpacked (" + error.message + "); " +
      "report.jsonl has them.";
    throw error;
  });
}
function groups() { return Array.prototype.slice.call(document.querySelectorAll("details.group")); }
function openTarget() {
  var id = decodeURIComponent(location.hash.slice(1));
  var target = id && document.getElementById(id);
  if (!target && /^line-/.test(id)) {
    Promise.all(groups().map(fill)).then(function () {
      if (document.getElementById(id)) openTarget();
    }, function () {});
    return;
  }
  for (var node = target; node; node = node.parentElement) {
    if (node.tagName === "DETAILS") node.open = true;
  }
  if (target) target.scrollIntoView();
}
groups().forEach(function (group) {
  group.addEventListener("toggle", function () {
    if (group.open) fill(group).catch(function () {});
  });
});
window.addEventListener("hashchange", openTarget);
openTarget();
document.querySelectorAll("button[data-open]").forEach(function (button) {
  button.addEventListener("click", function () {
    var open = button.dataset.open === "1";
    groups().forEach(function (group) {
      if (group.hidden) return;
      group.open = open;
      if (!open) group.querySelectorAll("details").forEach(function (d) { d.open = false; });
      else fill(group).then(function () {
        group.querySelectorAll("details").forEach(function (d) { d.open = true; });
      }, function () {});
    });
  });
});
var box = document.getElementById("filter");
var shown = document.getElementById("shown");
var items = Array.prototype.slice.call(document.querySelectorAll("[data-filter]"));
// What an item is matched on: its own text (its summary's, for a scenario) unless it holds
// other items, and its data-filter words and those of the items around it.
var words = items.map(function (item) {
  var text = item.querySelector("[data-filter]") ? ""
    : (item.querySelector("summary") || item).textContent;
  for (var node = item; node && node.getAttribute; node = node.parentElement) {
    text += " " + (node.getAttribute("data-filter") || "");
  }
  return text.toLowerCase();
});
function count(selector) {
  var all = document.querySelectorAll(selector);
  var seen = Array.prototype.filter.call(all, function (e) { return !e.hidden; });
  return seen.length + " of " + all.length;
}
function applyFilter() {
  var terms = box.value.toLowerCase().split(/\\s+/).filter(Boolean);
  for (var i = items.length - 1; i >= 0; i--) {
    var text = words[i];
    var match = terms.every(function (term) { return text.indexOf(term) >= 0; });
    items[i].hidden = !(match || items[i].querySelector("[data-filter]:not([hidden])"));
  }
  shown.textContent = terms.length
    ? count("#rules tbody tr") + " rules, " + count("details.group") + " failing scenarios"
    : "";
}
box.addEventListener("input", applyFilter);
box.parentElement.hidden = false;
if (box.value) applyFilter();
"""


def html_page(report: Report) -> str:
    header, footer = report.header, report.footer
    counts = count_outcomes(report.results)
    verdicts = scenario_verdicts(report.results)
    headline = headline_of(report)
    tone: str = standing_of(report)[1]
    if not report.footer and tone in ("passed", "unsupported", "not_applicable"):
        tone = "hole"
    tiles = "".join(
        f'<div class="tile {outcome}"><b>{counts[outcome]}</b>'
        f"{SYMBOL[outcome]} {LABEL[outcome]}</div>"
        for outcome in OUTCOMES
    )
    parts = [
        *page_head(f"callstream: {report_name(report)} — {headline}"),
        "<body>",
        "<header>",
        f'<h1>callstream <span class="impl">· {h(report_name(report))}</span></h1>',
        f'<p class="verdict {tone}">{h(headline)}</p>',
        f'<div class="tiles">{tiles}</div>',
        f'<dl class="meta">{_html_meta(header, footer, len(verdicts))}</dl>',
        "</header>",
        "<main>",
        # Shown by the script, which alone can filter.
        '<div class="filter" hidden><input type="search" id="filter" autocomplete="off" '
        'placeholder="Filter: rule, scenario, check, outcome" '
        'aria-label="Filter by rule, scenario id, check name or outcome">'
        '<output id="shown" for="filter"></output></div>',
        _html_matrix(report),
        html_failures(report),
        _html_not_observable(report),
        _html_skipped(report),
        "</main>",
        f"<footer>Rendered by callstream {h(header['callstream'])} from {JSONL}.</footer>",
        f"<script>{_SCRIPT}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def _html_meta(header: Mapping[str, Any], footer: Mapping[str, Any] | None, scenarios: int) -> str:
    implementation = header["implementation"]
    facts: list[tuple[str, str]] = [
        ("implementation", f"<code>{h(implementation['connectable'])}</code>"),
        (
            "declaration",
            f"<code>{h(json.dumps(implementation['declaration'], sort_keys=True))}</code>",
        ),
        (
            "run",
            f"{plural(header['cases'], 'case')} planned in "
            f"{plural(header['scenarios'], 'scenario')}; "
            f"{plural(scenarios, 'scenario')} reported",
        ),
        ("started", h(header["started"])),
    ]
    if footer:
        early = ", stopped early" if footer["stopped_early"] else ""
        facts += [
            ("finished", f"{h(footer['finished'])} ({footer['elapsed']:.1f} s{early})"),
            ("exit code", h(footer["exit_code"])),
        ]
    else:
        facts.append(("finished", "<strong>no: the report has no footer</strong>"))
    facts += [
        ("command", f"<code>{h(shlex.join(header['argv']))}</code>"),
        (
            "filter",
            "none: every scenario"
            if header["filter"] is None
            else f"<code>-k {h(shlex.quote(str(header['filter'])))}</code>",
        ),
        (
            "harness",
            f"callstream {h(header['callstream'])} · Python {h(header['python'])} · "
            f"{h(header['platform'])}",
        ),
    ]
    return "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in facts)


def _html_matrix(report: Report) -> str:
    verdicts = scenario_verdicts(report.results)
    states = rule_states(report.results)
    checks = {
        group.scenario: check_names(r for _, r in group.cases)
        for group in failing_scenarios(report.results)
    }
    by_rule: dict[str, list[tuple[str, str]]] = {}
    for scenario, rules in states.items():
        for rule, (state, _) in rules.items():
            by_rule.setdefault(rule, []).append((scenario, state))
    legend = " ".join(
        f'<span class="cell {state}">{SYMBOL[state]} {LABEL[state]}</span>' for state in RULE_STATES
    )
    rows = []
    for rule, tally in rule_table(report.results, corpus=of_corpus(report)).items():
        state = row_state(tally)
        if tally["hole"] and rule not in by_rule:
            cells = (
                f'<span class="cell hole" data-filter="hole">⚠ hole: no scenario cites '
                f"{h(rule)}</span>"
            )
        elif rule not in by_rule:
            reason = h(NOT_CERTIFIABLE.get(RuleId(rule), ""))
            cells = (
                '<span class="cell not_applicable" data-filter="not_certifiable">'
                f"not certifiable here: {reason}</span>"
            )
        else:
            cells = " ".join(
                _html_cell(scenario, verdicts[scenario], shown, checks.get(scenario, ""))
                for scenario, shown in by_rule[rule]
            )
        numbers = "".join(
            f'<td class="n {kind if tally[kind] else "zero"}">{tally[kind]}</td>'  # type: ignore[literal-required]
            for kind in RULE_STATES
        )
        row = '<tr class="hole"' if tally["hole"] else "<tr"
        rows.append(
            f'{row} data-filter="{h(rule)}"><td class="sym {state}">{SYMBOL[state]}</td>'
            f'<th scope="row">{h(rule)}</th><td class="title">{h(rule_title(rule))}</td>'
            f'<td class="n">{tally["scenarios"]}</td>{numbers}<td class="cells">{cells}</td></tr>'
        )
    head = "".join(f'<th class="n" title="{LABEL[o]}">{SYMBOL[o]}</th>' for o in RULE_STATES)
    return (
        '<section id="rules"><h2>Rules × scenarios</h2>'
        f'<p class="legend">{legend} <span class="cell hole">{SYMBOL["hole"]} hole</span> '
        "— each scenario is shown under every rule it cites, and under any rule a failed check "
        "of it proves. A scenario fails a rule when a check proving that rule failed in one of "
        "its cases; a failed one links to its failures.</p>"
        '<table class="matrix"><thead><tr><th></th><th>Rule</th><th class="title">Title</th>'
        f'<th class="n">Cites</th>{head}<th>Scenarios</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


def _html_cell(scenario: str, verdict: Verdict, state: str, checks: str) -> str:
    cases = ", ".join(f"{n} {LABEL[o]}" for o, n in verdict.cases.items() if n)
    words = " ".join([state, *checks.split(", ")]).strip()
    attributes = (
        f'class="cell {state}" title="{h(verdict.title)} ({h(cases)})" data-filter="{h(words)}"'
    )
    text = f"{SYMBOL[state]} {h(scenario)}"
    if state in ("failed", "errored"):
        return f'<a {attributes} href="#scenario-{h(scenario)}">{text}</a>'
    return f"<span {attributes}>{text}</span>"


def _html_not_observable(report: Report) -> str:
    """Which checks could not see what they read, and in how many cases."""
    counts: dict[str, int] = {}
    for result in report.results:
        for check in result.get("not_observable", ()):
            counts[check] = counts.get(check, 0) + 1
    if not counts:
        return ""
    rows = "".join(
        '<tr data-filter="not_observable">'
        f"<td><code>{h(check)}</code></td><td>{h(', '.join(check_rules(check)))}</td>"
        f"<td class='n'>{n}</td></tr>"
        for check, n in counts.items()
    )
    return (
        '<section id="not-observable"><h2>Not observable</h2><details>'
        f"<summary>{plural(len(counts), 'check')} read what the implementation does not "
        "expose (its declaration): never counted as passed</summary><table><thead><tr>"
        "<th>Check</th><th>Rules it proves</th><th class='n'>Cases</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></details></section>"
    )


def check_rules(name: str) -> tuple[str, ...]:
    return next((check.rules for check in CHECKS if check.name == name), ())


def _html_skipped(report: Report) -> str:
    reasons: dict[tuple[str, str], dict[str, int]] = {}
    for result in report.results:
        if result["outcome"] in ("unsupported", "not_applicable"):
            why = reasons.setdefault((result["scenario"], result["outcome"]), {})
            detail = result["detail"] or LABEL[result["outcome"]]
            why[detail] = why.get(detail, 0) + 1
    if not reasons:
        return ""
    total = sum(sum(why.values()) for why in reasons.values())
    rows = "".join(
        f'<tr data-filter="{outcome}">'
        f"<td><code>{h(scenario)}</code></td><td>{h(LABEL[outcome])}</td>"
        f"<td class='n'>{n}</td><td>{h(detail)}</td></tr>"
        for (scenario, outcome), why in reasons.items()
        for detail, n in why.items()
    )
    return (
        f'<section id="not-run"><h2>Not run ({total})</h2><details>'
        f"<summary>{plural(total, 'case')} in {plural(len(reasons), 'scenario')}: "
        "unsupported (a non-feature the implementation declares) or not applicable (another "
        "profile or dialect)</summary><table><thead><tr>"
        "<th>Scenario</th><th>Outcome</th><th class='n'>Cases</th><th>Why</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></details></section>"
    )

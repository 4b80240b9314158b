"""``summary.md``: totals, the rule table and the failing scenarios with their repros, for CI step
summaries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.dialects import NOT_CERTIFIABLE
from ..rules import RuleId, failure_pointer
from .markup import clip, md, md_block, md_code, visible
from .model import RULE_STATES, Report, count_outcomes, rule_table
from .verdicts import (
    LABEL,
    SYMBOL,
    FailingScenario,
    Verdict,
    case_counts,
    check_names,
    failing_scenarios,
    first_problem,
    headline_of,
    of_corpus,
    plural,
    report_name,
    rerun_command,
    row_state,
    rule_title,
    scenario_verdicts,
    totals,
)

__all__ = [
    "summary_markdown",
    "summary_scenario",
]


_SUMMARY_DETAILED = 25
"""Failing scenarios shown in full in summary.md; the rest get one line each, up to
``_SUMMARY_LISTED`` (GitHub caps a step summary at 1 MiB)."""


_SUMMARY_LISTED = 200


def summary_markdown(report: Report) -> str:
    header, footer = report.header, report.footer
    counts = count_outcomes(report.results)
    out = [
        f"# callstream: {md(report_name(report))} — {md(headline_of(report))}",
        "",
        f"{totals(counts)} of {plural(len(report.results), 'case')} in "
        f"{plural(len(scenario_verdicts(report.results)), 'scenario')}.",
        "",
        f"Implementation {md_code(header['implementation']['connectable'])} · "
        f"callstream {md(header['callstream'])} · started {md(header['started'])}"
        + (
            f" · {footer['elapsed']:.1f} s · exit code {footer['exit_code']}"
            + (" · stopped early" if footer["stopped_early"] else "")
            if footer
            else " · **the run did not finish: no footer**"
        ),
        "",
        "## Rules",
        "",
        "Each scenario counts once under every rule it cites (*Cite it*) and under any rule a "
        "failed check of it proves, so a rule may fail in more scenarios than cite it.",
        "",
        "| | Rule | Title | Cite it | "
        + " | ".join(LABEL[state].capitalize() for state in RULE_STATES)
        + " |",
        "|---|---|---|--:|" + "--:|" * len(RULE_STATES),
    ]
    table = rule_table(report.results, corpus=of_corpus(report))
    for rule, tally in table.items():
        if tally["hole"]:
            scenarios = "**0: hole**"
        elif not tally["scenarios"] and rule in NOT_CERTIFIABLE:
            scenarios = f"0: not certifiable here ({md(NOT_CERTIFIABLE[RuleId(rule)])})"
        else:
            scenarios = str(tally["scenarios"])
        out.append(
            f"| {SYMBOL[row_state(tally)]} | {md(rule)} | {md(rule_title(rule))} | "
            f"{scenarios} | "
            + " | ".join(str(tally[state]) for state in RULE_STATES)  # type: ignore[literal-required]
            + " |"
        )
    holes = [rule for rule, tally in table.items() if tally["hole"]]
    if holes:
        out += ["", f"{SYMBOL['hole']} Holes: no scenario cites {', '.join(holes)}."]
    failing = failing_scenarios(report.results)
    if failing:
        verdicts = scenario_verdicts(report.results)
        rerun = report.header.get("rerun")
        out += ["", "## Failures", ""]
        for group in failing[:_SUMMARY_DETAILED]:
            out += summary_scenario(group.scenario, verdicts[group.scenario], group.cases, rerun)
        rest = failing[_SUMMARY_DETAILED:]
        if rest:
            out += [f"{plural(len(rest), 'more failing scenario')}, all in report.html:", ""]
            out += [
                f"- {SYMBOL[group.outcome]} {md_code(group.scenario)} "
                f"\\[{md(group.splittings())}\\] {md(first_problem(group.first))}"
                for group in rest[:_SUMMARY_LISTED]
            ]
            if len(rest) > _SUMMARY_LISTED:
                out.append(f"- … and {len(rest) - _SUMMARY_LISTED} more")
    return "\n".join(out).rstrip("\n") + "\n"


def summary_scenario(
    scenario: str,
    verdict: Verdict,
    cases: Sequence[tuple[int, Mapping[str, Any]]],
    rerun: Sequence[str] | None = None,
) -> list[str]:
    """A failing scenario: where it went wrong (profiles and splittings, the checks), the
    command that reruns it (given the run's ``rerun`` words), then its first bad case in full,
    with the repro."""
    group = FailingScenario(scenario, verdict.outcome, tuple(cases))
    first = group.first
    out = [
        f"### {SYMBOL[verdict.outcome]} {md_code(scenario)} {md(verdict.title)}",
        "",
        f"{md(case_counts(verdict))} ({md(group.splittings())}) · "
        f"checks {md(check_names(result for _, result in cases))} · "
        f"rules {md(', '.join(verdict.rules))}"
        + (f" · {md_code(first['source'])}" if first["source"] else ""),
        "",
    ]
    if rerun is not None:
        out += [md_block(rerun_command(rerun, scenario), "sh"), ""]
    out += [
        f"**{md(first['profile'])}/{md(first['splitting'])}** {md(LABEL[first['outcome']])}:",
        "",
    ]
    out += [
        f"- {md_code(failure['check'])} ({md(failure_pointer(failure['rules']))}): "
        + md(failure["message"])
        for failure in first["failures"]
    ]
    if first["failures"]:
        out.append("")
    for text in (first["detail"], first["repro"]):
        if text is not None:
            out += [md_block(visible(clip(text, 60, 6000))), ""]
    return out

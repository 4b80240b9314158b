"""Reports: one folder per run, every format rendered from its JSON-lines file.

Theory of operation. ``report.jsonl`` is the source of truth: a header line, one result line
per case (``CaseResult.to_dict()``), and a footer line, each valid by
``schemas/report.schema.json`` (the header and the footer are checked as they are written, a
result line is valid by construction, which the tests hold it to) and flushed as soon as it is
written, so a run that crashes keeps every verdict it reached (its report just has no footer).
Every other file is rendered from the *parsed lines* of that file, never from Python objects,
so ``render_reports`` can re-render a report from the file alone, later, byte for byte the
same::

    report.jsonl   header, results, footer: the source of truth
    junit.xml      one <testsuite> per profile, for CI test tabs
    summary.md     totals, the rule table and the failures, for CI step summaries
    report.html    one self-contained page: the rules × scenarios matrix and the failures
                   (each scenario's cases packed, unpacked by its script), with a filter
    badge.json     a shields.io endpoint badge

Every format lists a failing scenario once (:class:`FailingScenario`): the splittings that
went wrong, its first problem and, when the header has the run's ``rerun`` words, the command
that runs it again. A scenario's verdict on a rule it cites is the verdict over its cases:
failed if any case failed, else errored if any errored, else passed if any ran (every case
that ran passed), else not claimed.
"""

from __future__ import annotations

from .html import html_scenario
from .markdown import summary_scenario
from .markup import h, md, md_block, md_code, page_head, visible
from .model import (
    FORMAT,
    JSONL,
    RULE_STATES,
    Report,
    RuleTally,
    callstream_version,
    load_report,
    rule_states,
    rule_table,
)
from .verdicts import (
    LABEL,
    SYMBOL,
    FailingScenario,
    Verdict,
    failing_cases,
    failing_scenarios,
    first_problem,
    plural,
    rerun_command,
    scenario_verdicts,
)
from .writer import ReportWriter, new_run_folder, render_reports, write_files, write_report

__all__ = [
    "FORMAT",
    "JSONL",
    "LABEL",
    "RULE_STATES",
    "SYMBOL",
    "FailingScenario",
    "Report",
    "ReportWriter",
    "RuleTally",
    "Verdict",
    "callstream_version",
    "failing_cases",
    "failing_scenarios",
    "first_problem",
    "h",
    "html_scenario",
    "load_report",
    "md",
    "md_block",
    "md_code",
    "new_run_folder",
    "page_head",
    "plural",
    "render_reports",
    "rerun_command",
    "rule_states",
    "rule_table",
    "scenario_verdicts",
    "summary_scenario",
    "visible",
    "write_files",
    "write_report",
]

"""Run reports: report.jsonl is the source of truth, every other format is rendered from it."""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import callstream.reports.html_failures as report_module
from callstream.connect.connectables import load_implementation
from callstream.core.case import CaseResult, run_case, splittings_of
from callstream.core.dialects import NOT_CERTIFIABLE
from callstream.core.judgement import Failure
from callstream.corpus.scenario import default_corpus, load_scenarios
from callstream.errors import HarnessError, UsageError
from callstream.reference import Limits, Tool
from callstream.reports import (
    ReportWriter,
    load_report,
    new_run_folder,
    render_reports,
    rule_table,
)
from callstream.reports.model import line_problem
from callstream.rules import RULES
from callstream.runner.cases import Case, verdict

REFERENCE = "py:callstream.implementations:reference"
SCHEMA = Path(__file__).parent.parent / "harness" / "schemas" / "report.schema.json"
RENDERED = ("junit.xml", "summary.md", "report.html", "badge.json")

HEADER = {
    "implementation": {
        "connectable": "py:tests.fakes:assembler",
        "name": "fake <assembler> & co",
        "declaration": {"profile": "lenient", "dialect": "openai-chat", "observables": ["ids"]},
    },
    "argv": ["callstream", "run", "py:tests.fakes:assembler"],
    "scenarios": 4,
    "cases": 6,
    "filter": None,
    "rerun": ["callstream", "run", "--impl", "py:tests.fakes:assembler"],
}
REPRO = (
    '[0] b\'data: {"choices": [{"delta": {"tool_calls": [{"function": {"arguments": "{\\\\u00\'\n'
    "[1] b'e9\"}}]}}]}\\r\\n\\r\\n'\r\n"
    "released:\n"
    "  after chunk 0: {'status': 'ready', 'arguments_text': '{\\\\u00'}\n"
    "raised:\n"
    "Traceback: \x00 NUL, \x1b[31m ANSI, \x7f DEL, ```fence``` and </pre><script>x</script>"
)
PASSED = CaseResult(
    "a2-escape-split",
    "Escapes split across chunks",
    ("A2",),
    ("json",),
    "must",
    "lenient",
    "bytes",
    "passed",
    chunkings=120,
    elapsed=0.0125,
    source="scenarios/openai-chat/a2.yaml:1",
)
FAILED = CaseResult(
    "c4-early-release",
    "Released before the finish <b>chunk</b> & its [DONE]",
    ("C4", "A2"),
    ("lifecycle",),
    "must",
    "lenient",
    "bytes",
    "failed",
    chunkings=2,
    failures=(
        Failure(
            "no_premature_release",
            ("C4",),
            "call 0 of choice 0 was released after byte 12, before its completion signal "
            "ended at byte 80",
        ),
        Failure("text_exact", ("A2",), "call 0 of choice 0 has arguments_text '{\\\\u00'"),
    ),
    repro=REPRO,
    elapsed=0.25,
    source="scenarios/openai-chat/c4.yaml:7",
)
FAILED_STRICT_PASSED = CaseResult(
    "c4-early-release",
    FAILED.title,
    FAILED.rules,
    FAILED.tags,
    "must",
    "strict",
    "whole",
    "passed",
    chunkings=1,
    source=FAILED.source,
)
NOT_APPLICABLE = CaseResult(
    "t2-crlf-split",
    "CR and LF in different chunks",
    ("T2",),
    ("bytes",),
    "must",
    "strict",
    "pairs",
    "not_applicable",
    detail="the implementation follows the lenient profile; the scenario runs under strict",
    source="scenarios/openai-chat/t2.yaml:3",
)
ERRORED = CaseResult(
    "v5-runaway",
    "A runaway argument stream",
    ("V5",),
    ("json",),
    "must",
    "lenient",
    "whole",
    "errored",
    detail="the implementation process exited with signal 9\r\nstderr: \x00out of memory\r",
    elapsed=3.5,
    source="scenarios/openai-chat/v5.yaml:1",
)
CASES = (PASSED, FAILED, FAILED_STRICT_PASSED, NOT_APPLICABLE, ERRORED)


def write_report(
    folder: Path, cases: tuple[CaseResult, ...] = CASES, exit_code: int = 1
) -> list[Path]:
    """A finished run over ``cases``, rendered."""
    with ReportWriter(folder) as writer:
        writer.header(HEADER)
        for case in cases:
            writer.result(case)
        writer.footer({"exit_code": exit_code, "stopped_early": False})
        return writer.render()


def unpacked(page: str) -> dict[str, str]:
    """What report.html packs for each failing scenario, as the page's script unpacks it."""
    packed = re.search(r'<section id="failures" data-cases="([^"]*)"', page)
    assert packed is not None
    fragments: dict[str, str] = json.loads(gzip.decompress(base64.b64decode(packed.group(1))))
    return fragments


class _Raises:
    """An implementation whose every ``feed()`` raises."""

    def feed(self, data: bytes) -> list[Any]:
        raise RuntimeError("every stream fails")

    def close(self) -> list[Any]:
        return []


def _raising(*, tools: list[Tool], limits: Limits) -> _Raises:
    return _Raises()


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """The folder of a finished, rendered run over ``CASES``."""
    folder = tmp_path / "run"
    write_report(folder)
    return folder


def test_every_line_validates_against_the_schema_and_round_trips(run: Path) -> None:
    """Each line of report.jsonl is valid JSON under the published schema, and the results
    read back are exactly ``CaseResult.to_dict()``, control characters and all."""
    validator = Draft202012Validator(json.loads(SCHEMA.read_text()))
    Draft202012Validator.check_schema(validator.schema)
    lines = (run / "report.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 + len(CASES)
    for line in lines:
        validator.validate(json.loads(line))
    header, results, footer = load_report(run / "report.jsonl")
    assert results == [case.to_dict() for case in CASES]
    assert results[1]["repro"] == REPRO
    assert header["implementation"] == HEADER["implementation"]
    assert footer is not None


def test_every_verdict_a_run_reaches_is_a_valid_line(tmp_path: Path) -> None:
    """The writer does not check a verdict's line against the schema: each verdict a run can
    reach is valid by construction. Passed and failed (run_case, with a repro), not applicable
    and unsupported (settled by the parent), failed no_hang and no_crash (a worker killed or
    dead), errored (the harness could not judge the case)."""
    scenario = load_scenarios(default_corpus()).scenarios[0]
    case = Case(0, scenario, "lenient", splittings_of(scenario)[0])
    reference = load_implementation(REFERENCE).factory_for(scenario.spec.dialect)
    hung = Failure("no_hang", ("V5",), "the implementation did not finish a stream")
    verdicts = [
        run_case(scenario, "lenient", case.splitting, reference),
        run_case(scenario, "lenient", case.splitting, _raising),
        verdict(case, "not_applicable", detail="the scenario runs under strict"),
        verdict(case, "unsupported", detail="the implementation reads one choice"),
        verdict(case, "failed", hung, detail="worker killed after 10 s without progress"),
        verdict(case, "errored", detail="the harness could not judge this case:\nTraceback"),
    ]
    assert [result.outcome for result in verdicts] == [
        "passed",
        "failed",
        "not_applicable",
        "unsupported",
        "failed",
        "errored",
    ]
    for result in verdicts:
        assert line_problem(result.to_dict()) is None, result
    write_report(tmp_path, tuple(verdicts))
    assert load_report(tmp_path).results == [result.to_dict() for result in verdicts]


def test_header_and_footer_fill_in_what_the_runner_does_not_know(run: Path) -> None:
    """The header gains the format, version, start time and platform; the footer gains the
    finish time, elapsed seconds and the counts of the results written."""
    header, _, footer = load_report(run)
    assert (header["type"], header["format"], header["cases"]) == ("header", 2, 6)
    assert header["callstream"]
    assert header["python"]
    assert header["platform"]
    assert datetime.fromisoformat(header["started"]).tzinfo is not None
    assert footer is not None
    assert footer["counts"] == {
        "passed": 2,
        "failed": 1,
        "errored": 1,
        "unsupported": 0,
        "not_applicable": 1,
    }
    assert (footer["exit_code"], footer["stopped_early"]) == (1, False)
    assert datetime.fromisoformat(footer["finished"]) >= datetime.fromisoformat(header["started"])
    assert footer["elapsed"] >= 0


def test_a_run_that_crashes_keeps_every_line_it_wrote(tmp_path: Path) -> None:
    """A crash mid-run leaves the header and the results so far on disk; the report still
    loads (without a footer) and renders, saying the run did not finish."""

    def crash() -> None:
        with ReportWriter(tmp_path) as writer:
            writer.header(HEADER)
            writer.result(PASSED)
            raise RuntimeError("the runner died")

    with pytest.raises(RuntimeError):
        crash()
    _, results, footer = load_report(tmp_path)
    assert (len(results), footer) == (1, None)
    render_reports(tmp_path)
    assert "did not finish" in (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "did not finish" in (tmp_path / "report.html").read_text(encoding="utf-8")
    badge = json.loads((tmp_path / "badge.json").read_text())
    assert (badge["message"], badge["color"]) == ("1/1 passed (unfinished)", "orange")


def test_rule_table_counts_each_scenario_once_per_rule_it_is_judged_on(run: Path) -> None:
    """A scenario counts once under every rule it cites: failed there only when a check proving
    that rule failed in one of its cases, even when its other case passed."""
    table = rule_table(load_report(run).results)
    assert table["A2"] == {
        "scenarios": 2,
        "passed": 1,
        "failed": 1,
        "errored": 0,
        "not_observable": 0,
        "unsupported": 0,
        "not_applicable": 0,
        "hole": False,
    }
    assert (table["C4"]["scenarios"], table["C4"]["failed"], table["C4"]["passed"]) == (1, 1, 0)
    assert (table["T2"]["scenarios"], table["T2"]["not_applicable"]) == (1, 1)
    assert (table["V5"]["scenarios"], table["V5"]["errored"]) == (1, 1)


def test_a_failure_counts_against_the_rule_its_check_proves_not_every_rule_cited() -> None:
    """A scenario citing A5 and E4 whose text_exact check failed is red under A2 (which it does
    not cite) and stays green under A5 and E4."""
    line = FAILED.to_dict() | {
        "rules": ["A5", "E4"],
        "failures": [{"check": "text_exact", "rules": ["A2"], "message": "'{}' expected ''"}],
    }
    table = rule_table([line])
    assert (table["A2"]["failed"], table["A2"]["scenarios"], table["A2"]["hole"]) == (1, 0, True)
    assert (table["A5"]["passed"], table["A5"]["failed"]) == (1, 0)
    assert (table["E4"]["passed"], table["E4"]["failed"]) == (1, 0)


def test_a_rule_only_unobservable_checks_could_prove_is_not_observable_never_passed() -> None:
    """Release timing (C4) cannot be seen in results that come out at close(): a C4 scenario
    that passed its other checks stands "not observable" under C4. A crash hides the rest."""
    line = PASSED.to_dict() | {"rules": ["C4", "A2"], "not_observable": ["no_premature_release"]}
    table = rule_table([line])
    assert (table["C4"]["not_observable"], table["C4"]["passed"]) == (1, 0)
    assert table["A2"]["passed"] == 1
    crashed = FAILED.to_dict() | {
        "rules": ["A2"],
        "failures": [{"check": "no_crash", "rules": ["V6"], "message": "raised KeyError"}],
    }
    table = rule_table([crashed])
    assert (table["V6"]["failed"], table["A2"]["not_observable"], table["A2"]["passed"]) == (
        1,
        1,
        0,
    )


def test_rules_no_scenario_cites_are_listed_as_holes(run: Path) -> None:
    """Every rule of REQUIREMENTS.md is in the table, in order; the uncited ones are holes,
    except those no scenario can certify (NOT_CERTIFIABLE), which are listed with why."""
    table = rule_table(load_report(run).results)
    assert list(table) == list(RULES)
    holes = {rule for rule, tally in table.items() if tally["hole"]}
    assert holes == set(RULES) - {"A2", "C4", "T2", "V5"} - set(NOT_CERTIFIABLE)
    assert table["C6"]["scenarios"] == 0
    assert "not certifiable here (the contract has no cancel step" in (
        run / "summary.md"
    ).read_text(encoding="utf-8")
    assert table["V3"]["scenarios"] == 0


def test_a_scenario_passes_when_every_case_that_ran_passed() -> None:
    """Cases that did not run do not stop a scenario passing; a scenario with no case run is
    not applicable (or unsupported); a rule outside RULES is still counted, after the known
    ones."""
    line = PASSED.to_dict()
    results = [
        line | {"rules": ["A2", "Z9"]},
        line | {"rules": ["A2", "Z9"], "outcome": "not_applicable", "profile": "strict"},
        line | {"scenario": "other", "outcome": "not_applicable"},
        line | {"scenario": "third", "outcome": "unsupported"},
    ]
    table = rule_table(results)
    assert (
        table["A2"]["passed"],
        table["A2"]["not_applicable"],
        table["A2"]["unsupported"],
        table["A2"]["scenarios"],
    ) == (1, 1, 1, 3)
    assert list(table)[-1] == "Z9"
    assert table["Z9"]["not_observable"] == 1  # no check proves a rule the suite does not know


def test_junit_parses_and_counts_each_outcome(run: Path) -> None:
    """junit.xml is valid XML even with NUL in a repro: one suite per profile, a failure with
    its checks and repro, not applicable as skipped, errored as error."""
    root = ET.parse(run / "junit.xml").getroot()
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "5",
        "failures": "1",
        "errors": "1",
        "skipped": "1",
    }
    suites = {suite.get("name"): suite for suite in root.iter("testsuite")}
    assert set(suites) == {"lenient", "strict"}
    assert (suites["lenient"].get("tests"), suites["strict"].get("tests")) == ("3", "2")
    cases = {(case.get("classname"), case.get("name")): case for case in root.iter("testcase")}
    failure = cases["c4-early-release", "lenient/bytes"].find("failure")
    assert failure is not None
    assert failure.text is not None
    assert failure.get("message", "").startswith(
        "no_premature_release (C4; callstream explain C4): call 0"
    )
    assert failure.get("type") == "no_premature_release,text_exact"
    assert "text_exact (A2; callstream explain A2)" in failure.text
    assert "Traceback: \\x00 NUL, \\x1b[31m ANSI, \\x7f DEL" in failure.text
    assert "</pre><script>" in failure.text  # escaped by XML, read back as text
    skipped = cases["t2-crlf-split", "strict/pairs"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "not applicable"
    error = cases["v5-runaway", "lenient/whole"].find("error")
    assert error is not None
    assert error.text is not None
    assert "signal 9\nstderr: \\x00out of memory\\r" in error.text
    assert cases["a2-escape-split", "lenient/bytes"].find("*") is None


def test_summary_holds_the_rule_table_and_each_failure_with_its_repro(run: Path) -> None:
    """summary.md: a title with the implementation and totals, a row per rule with holes
    marked, then each failure with its checks and its repro fenced, escapes visible."""
    text = (run / "summary.md").read_text(encoding="utf-8")
    title = text.splitlines()[0]
    assert title.startswith("# callstream: fake \\<assembler\\> \\& co — ✗ 1 failed, 1 errored")
    assert (
        "2 passed, 1 failed, 1 errored, 0 unsupported, 1 not applicable of 5 cases in 4 "
        "scenarios" in text
    )
    assert "| ✗ | A2 | Append arguments verbatim | 2 | 1 | 1 | 0 | 0 | 0 | 0 |" in text
    assert "| ⚠ | V3 | Known tools only | **0: hole** | 0 | 0 | 0 | 0 | 0 | 0 |" in text
    assert "### ✗ `c4-early-release` Released before the finish \\<b\\>chunk" in text
    assert (
        "1 failed of 2 cases (lenient: bytes) · checks no\\_premature\\_release, text\\_exact · "
        "rules C4, A2 · `scenarios/openai-chat/c4.yaml:7`" in text
    )
    assert "```sh\ncallstream run --impl py:tests.fakes:assembler -k =c4-early-release\n```" in text
    assert "**lenient/bytes** failed:" in text
    assert (
        "- `no_premature_release` (C4; callstream explain C4): call 0 of choice 0 was released "
        "after byte 12"
    ) in text
    fence = "````"  # the repro holds ``` so its fence is longer
    block = text.split(fence + "text\n", 1)[1].split("\n" + fence, 1)[0]
    assert block == REPRO.replace("\r\n", "\n").replace("\x00", "\\x00").replace(
        "\x1b", "\\x1b"
    ).replace("\x7f", "\\x7f")
    assert "### ! `v5-runaway` A runaway argument stream" in text
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f]", text)


def test_failures_are_grouped_by_scenario_and_the_summary_stays_short(tmp_path: Path) -> None:
    """A scenario failing in several cases is one entry naming where it failed, with its first
    case in full; past 25 failing scenarios, summary.md gives one line each, as the console
    does. report.html has every case, grouped, each with its repro."""
    again = CaseResult(**{**_fields(FAILED), "profile": "strict", "splitting": "pairs"})
    many = tuple(
        CaseResult(
            **{**_fields(FAILED), "scenario": f"bad-{n:02d}", "failures": FAILED.failures[1:]}
        )
        for n in range(26)
    )
    write_report(tmp_path, (FAILED, again, *many))
    text = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "2 failed of 2 cases (lenient: bytes; strict: pairs) · checks" in text
    assert text.count("### ✗") == 25
    assert "2 more failing scenarios, all in report.html:" in text
    assert (
        "- ✗ `bad-25` \\[lenient: bytes\\] text\\_exact (A2; callstream explain A2): call 0 of "
        "choice 0 has arguments\\_text" in text
    )
    assert text.count("````text") == 25
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.count('<details class="group failed"') == 27
    assert "Failures (28 cases in 27 scenarios)" in page
    cases = unpacked(page)
    assert list(cases)[:2] == ["c4-early-release", "bad-00"]
    assert "".join(cases.values()).count('<details class="case failed"') == 28
    first, second = cases["c4-early-release"].split('<details class="case failed" id="line-3"')
    assert (
        "[lenient: bytes; strict: pairs] no_premature_release (C4; callstream explain C4): call 0 "
        "of choice 0"
    ) in first
    assert (
        "rerun: <code>callstream run --impl py:tests.fakes:assembler -k =c4-early-release" in first
    )
    assert second.count("<h4>Repro: ") == 1
    assert "keeps the repro of its first bad case only" not in page


def test_past_the_budget_each_scenario_keeps_the_repro_of_its_first_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When every repro would make report.html too big, each scenario keeps its first case's
    repro, the others say where theirs is, and the page says so."""
    monkeypatch.setattr(report_module, "_PACKED_BUDGET", 100)
    repro = "2 chunks, cut after bytes 12:\n      0 data: {}\\n"
    first = CaseResult(**{**_fields(FAILED), "repro": repro})
    again = CaseResult(**{**_fields(first), "profile": "strict", "splitting": "pairs"})
    write_report(tmp_path, (first, again))
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "each scenario keeps the repro of its first bad case only" in page
    first, second = unpacked(page)["c4-early-release"].split('id="line-3"')
    assert first.count("<h4>Repro: ") == 1
    assert "<h4>Repro: " not in second
    assert "2 chunks, cut after bytes 12; in full on report.jsonl line 3" in second


def test_html_of_a_run_where_every_case_fails_stays_small(tmp_path: Path) -> None:
    """Every case of the corpus failing, each with its repro and traceback, still renders a
    report.html of under 2 KB a scenario (about 1.3 MB for the 733 scenarios of three dialects)
    that holds every scenario and case."""
    loaded = load_scenarios(default_corpus())
    results = [
        run_case(scenario, "lenient", splitting, _raising)
        for scenario in loaded.scenarios
        if "lenient" in scenario.profiles
        for splitting in splittings_of(scenario)
    ]
    assert len(results) > 3000
    assert all(result.outcome == "failed" and result.repro for result in results)
    write_report(tmp_path, tuple(results))
    page = (tmp_path / "report.html").read_bytes()
    assert len(page) < 2_000 * len(loaded.scenarios)
    cases = unpacked(page.decode("utf-8"))
    assert len(cases) == len({result.scenario for result in results})
    assert "".join(cases.values()).count('<details class="case failed"') == len(results)


def test_summary_clips_a_very_long_repro_but_the_jsonl_keeps_it(tmp_path: Path) -> None:
    """A repro of a thousand lines shows its head and tail in summary.md; report.jsonl has it
    whole."""
    repro = "\n".join(f"[{n}] b'x'" for n in range(1000))
    long = CaseResult(**{**_fields(FAILED), "repro": repro})
    write_report(tmp_path, (long,))
    text = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "[0] b'x'" in text
    assert "[999] b'x'" in text
    assert "[500] b'x'" not in text
    assert "940 lines cut (full repro in report.jsonl)" in text
    assert load_report(tmp_path).results[0]["repro"] == repro


class _Page(HTMLParser):
    """Collects the tags, links and text of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.links: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.links += [value or "" for name, value in attrs if name in ("href", "src")]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_is_one_page_with_the_matrix_and_the_escaped_repro(run: Path) -> None:
    """report.html needs nothing from the network, shows each scenario under each rule it
    cites with a symbol, a failed one linking to its failures, and shows each failure's repro
    escaped inside <details>."""
    page_text = (run / "report.html").read_text(encoding="utf-8")
    page = _Page()
    page.feed(page_text)
    assert page.tags.count("script") == 1
    assert "link" not in page.tags
    assert "img" not in page.tags
    assert all(link.startswith("#") for link in page.links)
    assert '<table class="matrix">' in page_text
    row_a2 = re.search(
        r"<tr data-filter=\"A2\"><td class=\"sym failed\">✗</td><th scope=\"row\">A2</th>.*?</tr>",
        page_text,
    )
    assert row_a2 is not None
    assert "✓ a2-escape-split</span>" in row_a2.group()
    assert 'href="#scenario-c4-early-release">✗ c4-early-release</a>' in row_a2.group()
    assert '<details class="group failed" id="scenario-c4-early-release"' in page_text
    assert '<tr class="hole" data-filter="V3"><td class="sym hole">⚠</td>' in page_text
    cases = unpacked(page_text)
    assert '<details class="case failed" id="line-3" open>' in cases["c4-early-release"]
    assert '<details class="case errored" id="line-6" open>' in cases["v5-runaway"]
    assert "&lt;/pre&gt;&lt;script&gt;x&lt;/script&gt;" in cases["c4-early-release"]
    assert "Released before the finish &lt;b&gt;chunk&lt;/b&gt; &amp; its [DONE]" in page_text
    assert "fake &lt;assembler&gt; &amp; co" in page_text
    fragment = _Page()
    fragment.feed(cases["c4-early-release"])
    assert "Traceback: \\x00 NUL, \\x1b[31m ANSI" in "".join(fragment.text)
    for text in (page_text, *cases.values()):
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f]", text)


def test_repro_lines_wrap_under_their_offsets(tmp_path: Path) -> None:
    """Each line of a repro is a block that wraps under itself past its offset, so a long chunk
    line is read without scrolling sideways; offsets, boundaries and releases stand apart."""
    repro = (
        "3 chunks, cut after bytes 5, 9:\n"
        '      0 data:┊ {"a"┊: 1}\\n  ◀ after byte 12: call 0 of choice 0 released ready\n'
        "        …\n"
        "   1024 data: [DONE]\\n"
    )
    write_report(tmp_path, (CaseResult(**{**_fields(FAILED), "repro": repro}),))
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    lines = unpacked(page)["c4-early-release"].split('<div class="lines">')[1]
    assert lines.startswith(
        "<div>3 chunks, cut after bytes 5, 9:</div>"
        '<div><span class="at">      0 </span>data:<b class="cut">┊</b> {"a"<b class="cut">┊</b>'
        ': 1}\\n  <span class="mark">◀ after byte 12: call 0 of choice 0 released ready</span>'
        "</div>"
        '<div><span class="at">        …</span></div>'
        '<div><span class="at">   1024 </span>data: [DONE]\\n</div></div>'
    )
    rule = re.search(r"\.lines > div \{[^}]*\}", page)
    assert rule is not None
    assert "white-space: pre-wrap" in rule.group()
    assert "padding-left: 8ch; text-indent: -8ch" in rule.group()


def test_the_filter_box_matches_rules_scenarios_checks_and_outcomes(run: Path) -> None:
    """The page carries a filter box, shown by its script, which hides what does not match:
    each rule row, scenario cell, failing scenario and not-run row carries the words it is
    matched on (its own text besides)."""
    page = (run / "report.html").read_text(encoding="utf-8")
    assert '<div class="filter" hidden><input type="search" id="filter" autocomplete="off"' in page
    script = page.split("<script>")[1]
    assert 'box.addEventListener("input", applyFilter);' in script
    assert "box.parentElement.hidden = false;" in script
    assert '<tr data-filter="C4">' in page
    assert (
        '<a class="cell failed" title="Released before the finish &lt;b&gt;chunk&lt;/b&gt; &amp; '
        'its [DONE] (1 passed, 1 failed)" data-filter="failed no_premature_release text_exact" '
        'href="#scenario-c4-early-release">'
    ) in page
    assert 'data-filter="passed">✓ a2-escape-split</span>' in page
    group = re.search(r'<details class="group errored" [^>]*>', page)
    assert group is not None
    assert 'data-filter="errored V5 whole json"' in group.group()
    assert '<tr data-filter="not_applicable"><td><code>t2-crlf-split</code>' in page


def test_badge_says_how_many_passed_or_failed(run: Path, tmp_path: Path) -> None:
    """badge.json is a shields.io endpoint: red with the failures, green with passed/ran."""
    assert json.loads((run / "badge.json").read_text()) == {
        "schemaVersion": 1,
        "label": "callstream",
        "message": "1 failed, 1 errored",
        "color": "red",
    }
    write_report(tmp_path / "green", (PASSED, FAILED_STRICT_PASSED, NOT_APPLICABLE), exit_code=0)
    badge = json.loads((tmp_path / "green" / "badge.json").read_text())
    assert (badge["message"], badge["color"]) == ("2/2 passed", "brightgreen")


def test_rendering_again_from_the_jsonl_alone_gives_the_same_files(tmp_path: Path) -> None:
    """Copied alone to another folder, report.jsonl renders byte-identical files, which show
    no time but the run's own."""
    first, again = tmp_path / "first", tmp_path / "again"
    with ReportWriter(first) as writer:
        writer.header(HEADER | {"started": "2020-01-02T03:04:05+00:00"})
        for case in CASES:
            writer.result(case)
        writer.footer(
            {"finished": "2020-01-02T03:09:05+00:00", "exit_code": 1, "stopped_early": False}
        )
        writer.render()
    again.mkdir()
    shutil.copy(first / "report.jsonl", again / "report.jsonl")
    written = render_reports(again)
    assert sorted(path.name for path in written) == sorted(RENDERED)
    for name in RENDERED:
        assert (again / name).read_bytes() == (first / name).read_bytes(), name
        text = (again / name).read_text(encoding="utf-8")
        times = set(re.findall(r"\d{4}-\d\d-\d\dT\d\d:\d\d", text))
        assert times <= {"2020-01-02T03:04", "2020-01-02T03:09"}, name


def _fields(case: CaseResult) -> dict[str, Any]:
    return {name: getattr(case, name) for name in case.__dataclass_fields__}


def _set(lines: list[str], number: int, change: dict[str, Any]) -> str:
    line = json.loads(lines[number - 1]) | change
    return json.dumps(line)


@pytest.mark.parametrize(
    ("damage", "line", "says"),
    [
        (lambda lines: [*lines[:2], '{"type": "result", "scenario": ', *lines[3:]], 3, "not JSON"),
        (
            lambda lines: [*lines[:2], _set(lines, 3, {"outcome": "maybe"}), *lines[3:]],
            3,
            "$.outcome: 'maybe' is not one of",
        ),
        (
            lambda lines: [*lines[:2], _set(lines, 3, {"failures": [{"check": 1}]}), *lines[3:]],
            3,
            "$.failures[0]",
        ),
        (
            lambda lines: [*lines[:3], _set(lines, 4, {"failures": lines[2:3]}), *lines[4:]],
            4,
            "$.failures: ",
        ),
        (lambda lines: [*lines[:2], "[1, 2]", *lines[3:]], 3, "must be a JSON object"),
        (lambda lines: lines[1:], 1, "the first line must be the header, not 'result'"),
        (lambda lines: [*lines, lines[1]], 8, "a line after the footer"),
        (lambda lines: [lines[0], *lines[2:]], 6, "do not match the 4 result lines"),
        (lambda lines: [_set(lines, 1, {"format": 3}), *lines[1:]], 1, "report format 3"),
    ],
    ids=[
        "not-json",
        "bad-outcome",
        "bad-failure",
        "passed-with-failures",
        "not-object",
        "no-header",
        "after-footer",
        "counts",
        "format",
    ],
)
def test_a_broken_report_names_the_line(run: Path, damage: Any, line: int, says: str) -> None:
    """A damaged report.jsonl is refused with a usage error naming the file, the line and
    what is wrong with it; nothing is rendered from it."""
    path = run / "report.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(damage(lines)) + "\n", encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        render_reports(run)
    assert f"report.jsonl:{line}: " in str(caught.value)
    assert says in str(caught.value)


def test_a_writer_renders_the_same_files_as_a_fresh_read(run: Path) -> None:
    """A run's writer renders from the lines it has just checked and written, without checking
    them again; the files are byte for byte those ``render_reports`` makes from the file."""
    names = ("junit.xml", "summary.md", "report.html", "badge.json")
    written = {name: (run / name).read_bytes() for name in names}
    render_reports(run)
    assert {name: (run / name).read_bytes() for name in names} == written


def test_an_unvalidated_read_still_checks_order_and_counts(run: Path) -> None:
    """``validate=False`` leaves out the schema, not the structure: a field the schema refuses
    is read, a footer whose counts disagree is not."""
    path = run / "report.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines[:1], _set(lines, 2, {"elapsed": "slow"}), *lines[2:]]) + "\n")
    with pytest.raises(UsageError, match=r"report\.jsonl:2: "):
        load_report(path)
    assert load_report(path, validate=False).results[0]["elapsed"] == "slow"
    path.write_text("\n".join([lines[0], *lines[2:]]) + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match="do not match"):
        load_report(path, validate=False)


def test_an_empty_or_missing_report_is_a_usage_error(tmp_path: Path) -> None:
    """No file, or an empty one, is refused with a message saying so."""
    with pytest.raises(UsageError, match="cannot read the report"):
        load_report(tmp_path / "nowhere.jsonl")
    (tmp_path / "report.jsonl").write_text("")
    with pytest.raises(UsageError, match=r"report.jsonl:1: the report is empty"):
        load_report(tmp_path)


def test_the_writer_refuses_a_line_the_schema_rejects(tmp_path: Path) -> None:
    """An invalid header is a harness error, naming the field, and is never written."""
    writer = ReportWriter(tmp_path)
    with pytest.raises(HarnessError, match=r"report.jsonl:1: .*'implementation' is a required"):
        writer.header({key: value for key, value in HEADER.items() if key != "implementation"})
    writer.close()
    assert (tmp_path / "report.jsonl").read_text() == ""


def test_the_writer_keeps_header_results_footer_in_order(tmp_path: Path) -> None:
    """A result before the header, or anything after the footer, is a harness error."""
    writer = ReportWriter(tmp_path)
    with pytest.raises(HarnessError, match="between the header and the footer"):
        writer.result(PASSED)
    writer.header(HEADER)
    writer.footer({"exit_code": 0, "stopped_early": True})
    with pytest.raises(HarnessError, match="between the header and the footer"):
        writer.result(PASSED)


def test_the_writer_never_overwrites_a_report(run: Path) -> None:
    """Opening a folder that already holds a report is a usage error; the report is intact."""
    before = (run / "report.jsonl").read_bytes()
    with pytest.raises(UsageError, match="already holds a report"):
        ReportWriter(run)
    assert (run / "report.jsonl").read_bytes() == before


def test_a_lone_surrogate_survives_the_round_trip(tmp_path: Path) -> None:
    """Text that is not valid Unicode (a lone surrogate) is written as its JSON escape and read
    back as itself; the renders show it escaped."""
    odd = CaseResult(**{**_fields(FAILED), "title": "half a pair: \ud83d"})
    write_report(tmp_path, (odd,))
    assert load_report(tmp_path).results[0]["title"] == "half a pair: \ud83d"
    assert "half a pair: \\ud83d" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_runs_started_in_the_same_second_get_their_own_folders(tmp_path: Path) -> None:
    """Run folders are named by their UTC start time, with a suffix when that name is taken."""
    when = datetime(2026, 11, 29, 23, 15, tzinfo=UTC)
    first, second = new_run_folder(tmp_path, when), new_run_folder(tmp_path, when)
    assert (first.name, second.name) == ("run-20261129-231500", "run-20261129-231500-2")
    assert first.is_dir()
    assert second.is_dir()

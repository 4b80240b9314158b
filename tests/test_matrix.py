"""``callstream matrix``: the corpus through each client library, rendered as libraries × rules
with every failure's repro, from the per-library reports it writes."""

from __future__ import annotations

import json
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from callstream.cli import main
from callstream.core.case import CaseResult
from callstream.core.judgement import Failure
from callstream.core.spec import CallPlan, Scenario, Splitting, StreamSpec
from callstream.errors import UsageError
from callstream.matrix.build import MATRIX_SPLITTINGS, with_splittings
from callstream.matrix.page import render_matrix
from callstream.reports import ReportWriter
from tests.helpers import NOW

PICKED = "oc-q-id-repeated-every-delta,oc-a-openai-single-call-fragmented"


def test_callstream_matrix_runs_each_library_and_shows_rules_failures_and_repros(
    tmp_path: Path,
) -> None:
    """The openai adapter on two scenarios: the normal report folder, matrix.json, and a
    matrix.md where the doubled id is a failed A3 with its chunks shown, its header stating
    the splittings and what a stream costs over HTTP."""
    code = main(
        ["matrix", "--adapters", "openai", "-k", PICKED, "--out", str(tmp_path), "--jobs", "1"]
    )
    assert code == 0
    assert {path.name for path in tmp_path.iterdir()} == {
        "matrix.md",
        "matrix.html",
        "matrix.json",
        "openai",
    }
    assert (tmp_path / "openai" / "report.html").is_file()
    index = json.loads((tmp_path / "matrix.json").read_text())
    assert index["splittings"] == ["whole", "random-1", "random-2"]
    [column] = index["columns"]
    assert (column["connectable"], set(column["versions"])) == ("http:openai", {"openai"})
    assert column["streams"] == 6
    text = (tmp_path / "matrix.md").read_text()
    assert "Splittings: whole, random-1, random-2" in text
    assert "ms for the reference in process" in text
    assert "| A3 | Set metadata, never concatenate it | ✗ 1/1 |" in text
    assert "| A2 | Append arguments verbatim | ✓ 1 |" in text
    assert "| C4 | No premature execution | – |" in text
    assert "| A8 | Preview is not the buffer | n/a |" in text
    assert "| not: incremental, arguments, findings |" in text
    assert "| `http:openai` | python | openai-chat | openai " in text  # the dialect it reads
    assert "## Failures: `http:openai`" in text
    assert "call\\_abccall\\_abc" in text
    assert '"id":"call_abc"' in text  # the repro's stream lines
    assert "img.shields.io/badge/openai-" in text


@pytest.fixture
def rendered(tmp_path: Path) -> Path:
    """A matrix folder written by hand: two libraries, one failing a case with a repro."""
    for adapter, outcome in (("good", "passed"), ("bad", "failed")):
        result = CaseResult(
            "oc-x",
            "a title",
            ("A3",),
            ("delta",),
            "must",
            "lenient",
            "whole",
            outcome,
            chunkings=1,
            failures=(Failure("identity", ("A3",), "id 'aa', expected 'a'"),)
            if outcome == "failed"
            else (),
            repro="1 chunk of 9 bytes:\n      0 data: {}\\n" if outcome == "failed" else None,
        )
        with ReportWriter(tmp_path / adapter) as writer:
            writer.header(
                {
                    "implementation": {
                        "connectable": f"http:{adapter}",
                        "name": adapter,
                        "declaration": {
                            "profile": "lenient",
                            "dialect": "openai-chat",
                            "observables": ["status", "ids"],
                        },
                    },
                    "argv": [],
                    "scenarios": 1,
                    "cases": 1,
                    "filter": None,
                }
            )
            writer.result(result)
            writer.footer({"exit_code": 0, "stopped_early": False})
    index = {
        "format": 1,
        "callstream": "test",
        "started": "2026-01-01T00:00:00+00:00",
        "finished": "2026-01-01T00:00:01+00:00",
        "argv": [],
        "scenarios": 1,
        "filter": None,
        "splittings": ["whole"],
        "in_process_ms_per_stream": 0.2,
        "columns": [
            {
                "adapter": a,
                "connectable": f"http:{a}",
                "versions": {a: "1.0"},
                "folder": a,
                "elapsed": 1.0,
                "streams": 1,
                "ms_per_stream": 20.0,
            }
            for a in ("good", "bad")
        ],
    }
    (tmp_path / "matrix.json").write_text(json.dumps(index))
    render_matrix(tmp_path)
    return tmp_path


def test_a_cell_is_a_rules_verdict_per_library(rendered: Path) -> None:
    """One row per rule, one column per library: passed, failed, not applicable."""
    text = (rendered / "matrix.md").read_text()
    assert "| A3 | Set metadata, never concatenate it | ✓ 1 | ✗ 1/1 |" in text
    assert "| A2 | Append arguments verbatim | – | – |" in text
    assert "![http:bad: 0/1 passed](https://img.shields.io/badge/bad-0%2F1%20passed-red)" in text
    assert "None: every case that ran passed." in text


def test_the_html_page_is_well_formed_with_unique_anchors(rendered: Path) -> None:
    """Every id is unique across libraries, and a failed cell links to its failure."""

    class Page(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.ids: Counter[str] = Counter()
            self.links: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found = dict(attrs)
            if found.get("id"):
                self.ids[str(found["id"])] += 1
            if tag == "a" and str(found.get("href", "")).startswith("#"):
                self.links.append(str(found["href"])[1:])

    page = Page()
    page.feed((rendered / "matrix.html").read_text())
    assert all(count == 1 for count in page.ids.values())
    assert page.links == ["bad-line-2"]
    assert set(page.links) <= set(page.ids)


def test_the_matrix_renders_again_from_its_files_byte_for_byte(rendered: Path) -> None:
    """matrix.md and matrix.html come from matrix.json and the reports alone."""
    before = {name: (rendered / name).read_bytes() for name in ("matrix.md", "matrix.html")}
    render_matrix(rendered)
    assert {name: (rendered / name).read_bytes() for name in before} == before


def test_the_matrix_keeps_a_scenarios_own_offsets_and_drops_its_other_splittings() -> None:
    """Offsets cut where a scenario is about; bytes and pairs would cost a request per byte."""
    call = CallPlan("get_time", "{}", ("{}",), id="call_1")
    scenario = Scenario(
        "s",
        "s",
        ("A2",),
        StreamSpec(tools=(NOW,), calls=(call,)),
        splittings=(Splitting("bytes"), Splitting("offsets", offsets=(7,)), Splitting("pairs")),
    )
    [chosen] = with_splittings([scenario], MATRIX_SPLITTINGS)
    assert [s.label for s in chosen.splittings] == ["whole", "random-1", "random-2", "at-7"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--adapters", "openai,gemini"], "unknown gemini; known: openai"),
        (["--splittings", "whole,halves"], "'halves' is not a splitting"),
    ],
)
def test_bad_arguments_are_usage_errors(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Unknown adapters and splittings are refused before anything runs (exit code 2)."""
    assert main(["matrix", *argv, "--out", str(tmp_path)]) == 2
    assert says in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_failures_are_grouped_into_the_reviewed_bugs_with_rule_text_and_repro(
    rendered: Path,
) -> None:
    """bugs.yaml names each library's distinct bugs: the matrix shows each with the rule text
    it breaks, its cause, its scenarios and its minimal repro; a failing scenario no bug names
    is listed as not yet traced."""
    text = (rendered / "matrix.md").read_text()
    assert "Failing scenarios not yet traced to a bug (1): `oc-x`." in text
    (rendered / "bugs.yaml").write_text(
        "bad:\n"
        "  - title: A repeated id is concatenated\n"
        "    rules: [A3]\n"
        "    cause: bad/deltas.py adds every string field\n"
        "    scenarios: [oc-x, oc-fixed-since]\n"
    )
    render_matrix(rendered)
    text = (rendered / "matrix.md").read_text()
    assert "### Distinct bugs (1)" in text
    assert (
        "1. **A repeated id is concatenated** (A3). Cause: bad/deltas.py adds every string "
        "field. Scenarios (1): `oc-x`." in text
    )
    assert "   > A3: id, type and function.name arrive whole" in text
    assert "Minimal repro, `oc-x` [lenient-whole]: `identity` id 'aa', expected 'a'" in text
    assert "not yet traced" not in text
    page = (rendered / "matrix.html").read_text()
    assert "<blockquote><b>A3</b> id, type and function.name arrive whole" in page


def test_a_malformed_bug_list_is_a_usage_error_naming_the_entry(rendered: Path) -> None:
    """A bug without a cause, or citing a rule that does not exist, stops the rendering."""
    (rendered / "bugs.yaml").write_text(
        "bad:\n  - title: x\n    rules: [Z1]\n    cause: y\n    scenarios: [oc-x]\n"
    )
    with pytest.raises(UsageError, match=r"bugs.yaml: bad\[0\]: rules must be a list of rule"):
        render_matrix(rendered)
    (rendered / "bugs.yaml").write_text("bad:\n  - {title: x, rules: [A3]}\n")
    with pytest.raises(UsageError, match=r"bad\[0\]: a bug has exactly the keys cause, rules"):
        render_matrix(rendered)

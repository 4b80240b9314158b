"""``callstream report merge``: three shards merged are the single run, every format rendered as
the run renders it; reports that are not the shards of one run, overlap or lack a shard are
refused with a message that says which."""

from __future__ import annotations

import base64
import gzip
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from callstream.cli import main
from callstream.errors import UsageError
from callstream.implementations import DEFAULT
from callstream.reports import load_report
from callstream.reports.merge import merge_command, merge_reports, read_shard
from callstream.runner.execution import run_command
from callstream.runner.shard import Shard

CORPUS = str(Path(__file__).parent / "fauxmplementations" / "corpus.yaml")
RAISING = "py:tests.fauxmplementations.raising:factory"
FORMATS = ("report.jsonl", "junit.xml", "summary.md", "report.html", "badge.json")


def run_into(
    out: Path, impl: str = RAISING, shard: Shard | None = None, select: str | None = None
) -> int:
    """``callstream run`` of the mini corpus into ``out``, as the command line would."""
    argv = ["callstream", "run", CORPUS, "--impl", impl]
    if shard is not None:
        argv += ["--shard", shard.label]
    return run_command(
        [CORPUS],
        impl=impl,
        select=select,
        max_fail=None,
        jobs=1,
        timeout=10.0,
        out=out,
        argv=argv,
        stdout=io.StringIO(),
        stderr=io.StringIO(),
        shard=shard,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mini corpus on the raising fauxmplementation: as one run (``whole``) and as three
    shards (``1``, ``2``, ``3``), with their exit codes in ``codes.json``."""
    root = tmp_path_factory.mktemp("runs")
    codes = {"whole": run_into(root / "whole")}
    for k in (1, 2, 3):
        codes[str(k)] = run_into(root / str(k), shard=Shard(k, 3))
    (root / "codes.json").write_text(json.dumps(codes))
    return root


def merge(out: Path, *folders: Path, allow_partial: bool = False) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = merge_command(
        out, list(folders), allow_partial=allow_partial, stdout=stdout, stderr=stderr
    )
    return code, stdout.getvalue(), stderr.getvalue()


def timeless(text: str) -> str:
    """A rendered report with its times taken out: timestamps, seconds, elapsed fields, those
    of the cases report.html packs (gzip, base64) included."""
    text = re.sub(
        r'data-cases="([^"]*)"',
        lambda packed: gzip.decompress(base64.b64decode(packed.group(1))).decode("utf-8"),
        text,
    )
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", "T", text)
    text = re.sub(r'"(elapsed|started|finished)": [^,}]+', r'"\1": _', text)
    text = re.sub(r'time="[\d.]+"', 'time=""', text)
    return re.sub(r"\d+\.\d+ s\b", "_ s", text)


def without_timings(line: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in line.items() if key not in ("elapsed", "finished")}


def test_three_shards_merged_are_the_single_run(runs: Path, tmp_path: Path) -> None:
    """Merged in any order, three shards give the single run's result lines in its order, its
    footer counts and exit code, and every format as the run rendered it, times aside."""
    code, stdout, _ = merge(tmp_path / "merged", runs / "3", runs / "1", runs / "2")
    whole, merged = load_report(runs / "whole"), load_report(tmp_path / "merged")
    assert [without_timings(r) for r in merged.results] == [
        without_timings(r) for r in whole.results
    ]
    assert merged.footer is not None
    assert whole.footer is not None
    assert without_timings(merged.footer) == without_timings(whole.footer)
    assert merged.footer["counts"]["failed"] == 1
    assert code == json.loads((runs / "codes.json").read_text())["whole"] == 1
    for name in FORMATS[1:]:
        assert timeless((tmp_path / "merged" / name).read_text()) == timeless(
            (runs / "whole" / name).read_text()
        ), name
    assert stdout == (
        "merged 3/3 shards: 6 cases of 4 scenarios: 4 passed, 1 failed, 0 errored, "
        f"0 unsupported, 1 not applicable\nreport: {tmp_path / 'merged'}\n"
    )


def test_the_merged_header_is_the_whole_runs(runs: Path, tmp_path: Path) -> None:
    """The merged header counts the whole run, keeps the command without --shard and names
    the shards merged; the shards' own headers count their slices."""
    merge(tmp_path / "merged", runs / "1", runs / "2", runs / "3")
    header = load_report(tmp_path / "merged").header
    whole = load_report(runs / "whole").header
    assert (header["scenarios"], header["cases"]) == (whole["scenarios"], whole["cases"]) == (4, 6)
    assert header["argv"] == whole["argv"]
    assert header["merged"] == {"count": 3, "shards": [1, 2, 3], "missing": []}
    assert "shard" not in header
    assert [load_report(runs / k).header["cases"] for k in "123"] == [2, 1, 3]


def test_merged_shards_that_all_passed_exit_0(tmp_path: Path) -> None:
    """On the reference every case passes: the merge exits 0."""
    for k in (1, 2):
        assert run_into(tmp_path / str(k), impl=DEFAULT, shard=Shard(k, 2)) == 0
    code, stdout, _ = merge(tmp_path / "merged", tmp_path / "1", tmp_path / "2")
    assert code == 0
    assert stdout.startswith("merged 2/2 shards: 6 cases of 4 scenarios: 5 passed, 0 failed")


def test_a_missing_shard_is_named_and_refused(runs: Path, tmp_path: Path) -> None:
    """1/3 and 3/3 given: the merge says 2/3 is missing and writes nothing."""
    with pytest.raises(UsageError, match=r"^shard 2/3 missing \(given: .*1 \(shard 1/3\), "):
        merge(tmp_path / "merged", runs / "1", runs / "3")
    assert not (tmp_path / "merged").exists()


def test_allow_partial_merges_what_there_is_and_says_what_is_missing(
    runs: Path, tmp_path: Path
) -> None:
    """With --allow-partial the merge has shards 1 and 3, says 2/3 is missing, records it in
    the header, and its footer says the run stopped early; no failure was merged: exit 0."""
    code, stdout, stderr = merge(tmp_path / "merged", runs / "1", runs / "3", allow_partial=True)
    report = load_report(tmp_path / "merged")
    assert code == 0
    assert stderr == "callstream: merged without shard 2/3: the report lacks its cases\n"
    assert stdout.startswith("merged 2/3 shards: 5 cases of 3 scenarios: 4 passed, 0 failed")
    assert report.header["merged"] == {"count": 3, "shards": [1, 3], "missing": [2]}
    assert report.footer is not None
    assert report.footer["stopped_early"] is True
    assert "stopped early" in (tmp_path / "merged" / "summary.md").read_text()


def test_a_shard_given_twice_is_refused(runs: Path, tmp_path: Path) -> None:
    """The same shard twice (two copies of one folder) would count its cases twice."""
    shutil.copytree(runs / "2", tmp_path / "copy")
    with pytest.raises(UsageError, match=r"^shard 2/3 is given twice: .*2 and .*copy"):
        merge(tmp_path / "merged", runs / "1", runs / "2", tmp_path / "copy", runs / "3")


def test_a_case_in_two_reports_is_refused(runs: Path, tmp_path: Path) -> None:
    """A report whose header claims another shard but holds a case of shard 1 overlaps it."""
    forged = tmp_path / "forged"
    forged.mkdir()
    lines = (runs / "1" / "report.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    header["shard"]["index"] = 2
    (forged / "report.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(
        UsageError, match=r"^the case oc-faux-paris\[lenient-whole\] is in .*1 \(shard 1/3\) and"
    ):
        merge(tmp_path / "merged", runs / "1", forged, runs / "3", allow_partial=True)


def test_reports_of_different_implementations_are_refused(runs: Path, tmp_path: Path) -> None:
    """Shard 2 run on the reference cannot complete shards of the raising implementation."""
    run_into(tmp_path / "2", impl=DEFAULT, shard=Shard(2, 3))
    with pytest.raises(UsageError, match=r"^cannot merge reports of different implementations: "):
        merge(tmp_path / "merged", runs / "1", tmp_path / "2", runs / "3")


def test_reports_of_different_corpora_are_refused(runs: Path, tmp_path: Path) -> None:
    """A shard of another selection is not a shard of this run: fewer scenarios, or the same
    ones picked by a -k the other shards were not given."""
    run_into(tmp_path / "fewer", shard=Shard(2, 3), select="oc-faux-r,oc-faux-t")
    run_into(tmp_path / "all", shard=Shard(2, 3), select="oc-faux")
    for other in ("fewer", "all"):
        with pytest.raises(UsageError, match=r"^cannot merge reports of different corpora: ") as e:
            merge(tmp_path / "merged", runs / "1", tmp_path / other, runs / "3")
        assert f"{tmp_path / other} (shard 2/3): " in str(e.value)


def test_reports_of_different_shard_counts_are_refused(runs: Path, tmp_path: Path) -> None:
    """Shard 2 of 2 is not the rest of a run cut in three."""
    run_into(tmp_path / "2", shard=Shard(2, 2))
    with pytest.raises(UsageError, match=r"^cannot merge reports of different shard counts: "):
        merge(tmp_path / "merged", runs / "1", tmp_path / "2")


def test_an_unfinished_shard_is_refused_or_left_out(runs: Path, tmp_path: Path) -> None:
    """A shard whose report has no footer is refused; with --allow-partial it is left out and
    counted missing."""
    cut = tmp_path / "cut"
    cut.mkdir()
    lines = (runs / "2" / "report.jsonl").read_text().splitlines()
    (cut / "report.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(UsageError, match=r"cut \(shard 2/3\): the run did not finish"):
        merge(tmp_path / "merged", runs / "1", cut, runs / "3")
    code, _, stderr = merge(tmp_path / "merged", runs / "1", cut, runs / "3", allow_partial=True)
    assert code == 0
    assert "left out " in stderr
    assert "merged without shard 2/3" in stderr
    assert load_report(tmp_path / "merged").header["merged"]["missing"] == [2]


def test_a_folder_that_holds_a_report_is_not_overwritten(runs: Path) -> None:
    """OUT must not hold a report already: merging into a shard's own folder is refused."""
    before = (runs / "1" / "report.jsonl").read_bytes()
    with pytest.raises(UsageError, match="already holds a report"):
        merge(runs / "1", runs / "1", runs / "2", runs / "3")
    assert (runs / "1" / "report.jsonl").read_bytes() == before


def test_a_report_of_an_unsharded_run_merges_alone(runs: Path) -> None:
    """A run without --shard is its own shard 1/1: merged alone it is itself."""
    merged = merge_reports([read_shard(runs / "whole")])
    whole = load_report(runs / "whole")
    assert merged.report.results == whole.results
    assert merged.report.header["merged"] == {"count": 1, "shards": [1], "missing": []}


def test_the_command_line_merges_and_exits_2_on_a_missing_shard(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``callstream report merge OUT DIR...`` merges (exit 1: a case failed, as the run); with
    a shard missing it exits 2 and says which."""
    folders = [str(runs / k) for k in "123"]
    assert main(["report", "merge", str(tmp_path / "merged"), *folders]) == 1
    assert (tmp_path / "merged" / "junit.xml").exists()
    capsys.readouterr()
    assert main(["report", "merge", str(tmp_path / "partial"), folders[0], folders[2]]) == 2
    assert capsys.readouterr().err.startswith("callstream: error: shard 2/3 missing (given: ")

"""``python -m bench.bench_corpus`` accounts for a corpus run: every dialect and splitting gets
a row, the implementation's share is measured apart from the harness's, and a failing case
stops it instead of being timed as if it passed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.bench_corpus import main
from callstream.core.dialects import DIALECTS


def test_a_sample_of_the_corpus_is_split_into_implementation_and_harness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    figures = tmp_path / "corpus.json"
    assert main(["--sample", "150", "--json", str(figures)]) == 0
    out = capsys.readouterr().out
    saved = json.loads(figures.read_text("utf-8"))
    assert {row["dialect"] for row in saved["rows"]} == set(DIALECTS)
    assert {row["splitting"] for row in saved["rows"]} == {"whole", "bytes", "pairs", "random"}
    for row in saved["rows"]:
        assert row["chunkings"] > 0
        assert 0 < row["implementation"] < row["total"]
    for row in saved["rows"]:
        label = f"{row['dialect']} / {row['splitting']}"
        assert any(
            line.split()[:4] == [*label.split(), f"{row['chunkings']:,}"]
            for line in out.splitlines()
        ), label
    assert "the whole corpus on 2 workers: about" in out


def test_the_harness_alone_is_timed_against_a_replay_of_the_implementation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    figures = tmp_path / "corpus.json"
    assert main(["--sample", "150", "--replay", "2", "--json", str(figures)]) == 0
    alone = json.loads(figures.read_text("utf-8"))["harness_alone_us"]
    assert len(alone) == 2
    assert all(figure > 0 for figure in alone)
    assert f"the harness alone, against a replay: {min(alone):.1f} µs" in capsys.readouterr().out


class _Nothing:
    def feed(self, data: bytes) -> list[object]:
        return []

    def close(self) -> list[object]:
        return []


def hands_back_nothing(**_: object) -> _Nothing:
    """An implementation that never hands back a call."""
    return _Nothing()


def test_a_failing_case_stops_the_bench(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match="the bench runs a passing corpus only"):
        main(["--sample", "150", "--impl", "py:tests.test_bench_corpus:hands_back_nothing"])

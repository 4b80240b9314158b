"""``python -m bench.bench_dialects`` plans the same calls in every dialect, and the reference
hands each back exactly as planned (the bench exits 1 otherwise), so its figures compare like
with like."""

from __future__ import annotations

import pytest

from bench.bench_dialects import main
from callstream.core.dialects import DIALECTS


def test_every_dialect_carries_the_same_calls_and_gets_a_row(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--sizes", "2000,4000", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    table = out.split("\n\n")[0]  # the reference's table; the contenders' comes after it
    rows = [line for line in table.splitlines() if line.startswith("| ") and " B |" in line]
    assert [row.split(" | ")[0].removeprefix("| ") for row in rows] == [*DIALECTS, *DIALECTS]
    assert all(f"{name}: ms/MB at 4,000 B over 2,000 B per call" in out for name in DIALECTS)


def test_the_anthropic_sdks_accumulator_is_a_contender_on_its_wire(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """accumulate_event folds the same Messages stream, hands back the planned calls (the bench
    exits 1 otherwise) and gets a row per size beside the reference; none above the cap."""
    pytest.importorskip("anthropic")
    assert main(["--sizes", "500,1000", "--repeat", "1", "--contender-max-size", "500"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "accumulate_event | anthropic-messages" in line]
    assert [row.split(" | ")[2] for row in rows] == ["500 B"]


def test_openai_pythons_responses_state_is_a_contender_on_its_wire(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """ResponseStreamState folds the same Responses stream and hands back the planned calls
    (the bench exits 1 otherwise), with a row beside the reference."""
    pytest.importorskip("openai")
    assert main(["--sizes", "500", "--repeat", "1", "--contender-max-size", "500"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "ResponseStreamState | openai-responses" in line]
    assert [row.split(" | ")[2] for row in rows] == ["500 B"]

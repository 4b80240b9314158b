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
    rows = [line for line in out.splitlines() if line.startswith("| ") and " B |" in line]
    assert [row.split(" | ")[0].removeprefix("| ") for row in rows] == [*DIALECTS, *DIALECTS]
    assert all(f"{name}: ms/MB at 4,000 B over 2,000 B per call" in out for name in DIALECTS)

"""The fuzzer as the test that kills a mutant of the reference assembler.

``callstream fuzz`` against the reference as it now stands on disk (lenient, every dialect it
reads), under the ci profile with a fixed seed and a fixed example budget (``--examples``,
default 300), so every mutant meets the same streams. It exits 1 as soon as the search finds a
failure (shrinking is cut to a token, since only the verdict counts here) and 0 when the budget
is spent without one (the mutant survived). Finds and reports go to a temporary folder.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import argparse  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

from callstream.connect.connectables import load_implementation  # noqa: E402
from callstream.fuzz import fuzz  # noqa: E402
from callstream.implementations import DEFAULT  # noqa: E402

SEED = 0
"""The seed every mutant's search starts from."""


def main(argv: list[str]) -> int:
    """1 when the fuzzer finds a failure within the budget, 0 when it does not."""
    parser = argparse.ArgumentParser(prog="mutation/kill_fuzz.py", description=__doc__)
    parser.add_argument("--examples", type=int, default=300)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="callstream-mutation-") as scratch:
        result = fuzz(
            load_implementation(DEFAULT),
            profile="ci",
            max_examples=args.examples,
            seed=SEED,
            shrink_time=0.01,
            save_regressions=Path(scratch) / "finds",
            out=Path(scratch) / "report",
        )
    if result.found is not None:
        print(f"killed after {result.found_after} examples", file=sys.stderr)
        return 1
    print(f"survived {result.examples} examples", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The fuzzer as the test that kills a mutant of the reference assembler.

``callstream fuzz`` against the reference as it now stands on disk (every dialect it reads),
under the ci profile with a fixed seed and a fixed example budget (``--examples``, default 300),
so every mutant meets the same streams: first the lenient reference; then, if the mutant
survived that, the strict one (``--strict-examples``, default half ``--examples``) on streams of
its own seed; then as many with the lenient reference fed decoded events (``py+events:``), which
reaches ``Assembler.feed_event``; then as many on the reference's snapshots route
(``reference_snapshots``, openai-chat streams read as cumulative snapshots, D76). A mutant that
changes only what the strict profile does (a quirk it rejects a call for, a call the lenient
profile keeps), only what ``feed_event`` does, or only what a route that opts in does, is
invisible to a lenient run of bytes, and a mutant the lenient run kills never pays for the
others. It exits 1 as soon as a search finds a failure (shrinking is cut to a token, since
only the verdict counts here) and 0 when every budget is spent without one (the mutant
survived). Finds and reports go to a temporary folder.
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
"""The seed every mutant's lenient search starts from."""
STRICT = "py:callstream.implementations:reference_strict"
STRICT_SEED = 1000
"""The seed of the strict search: far past the lenient search's (one seed per 500 examples), so
the strict reference meets other streams than the lenient one did."""
EVENTS = "py+events:callstream.implementations:reference"
EVENTS_SEED = 2000
"""The seed of the last search, the lenient reference fed decoded events (``Assembler.feed_event``
behind callstream's SSE decoder): what only that API does is invisible to the other two."""
SNAPSHOTS = "py:callstream.implementations:reference_snapshots"
SNAPSHOTS_SEED = 3000
"""The seed of the search on the snapshots route (the one route that opts in the fuzzer draws
for): what only ``CallBook.append``'s snapshot reading does is invisible to the others."""


def main(argv: list[str]) -> int:
    """1 when the fuzzer finds a failure within any budget, 0 when it does not."""
    parser = argparse.ArgumentParser(prog="mutation/kill_fuzz.py", description=__doc__)
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--strict-examples", type=int, default=None)
    args = parser.parse_args(argv)
    strict_examples = args.examples // 2 if args.strict_examples is None else args.strict_examples
    searches = [
        (DEFAULT, args.examples, SEED),
        (STRICT, strict_examples, STRICT_SEED),
        (EVENTS, strict_examples, EVENTS_SEED),
        (SNAPSHOTS, strict_examples, SNAPSHOTS_SEED),
    ]
    for connectable, examples, seed in searches:
        if examples <= 0:
            continue
        with tempfile.TemporaryDirectory(prefix="callstream-mutation-") as scratch:
            result = fuzz(
                load_implementation(connectable),
                profile="ci",
                max_examples=examples,
                seed=seed,
                shrink_time=0.01,
                save_regressions=Path(scratch) / "finds",
                out=Path(scratch) / "report",
            )
        profile = {STRICT: "strict", EVENTS: "event-fed", SNAPSHOTS: "snapshots-route"}.get(
            connectable, "lenient"
        )
        if result.found is not None:
            print(f"killed after {result.found_after} {profile} examples", file=sys.stderr)
            return 1
        print(f"survived {result.examples} {profile} examples", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

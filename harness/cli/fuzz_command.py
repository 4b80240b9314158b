"""``callstream fuzz``: generated streams against an implementation, a failure shrunk and kept
as a scenario."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..connect.connectables import load_implementation
from ..corpus.regressions import REGRESSIONS
from .command import Command
from .options import IMPL, connectable, duration, jobs_option, out_option, positive, timeout_option

__all__ = ["FUZZ"]


def _fuzz_arguments(command: argparse.ArgumentParser) -> None:
    budget = command.add_mutually_exclusive_group()
    budget.add_argument("--max-examples", type=positive, metavar="N", help="example budget")
    budget.add_argument(
        "--duration", type=duration, metavar="TIME", help="time budget: 90s, 10m, 1h"
    )
    command.add_argument("--profile", choices=("dev", "ci", "nightly"), default="dev")
    command.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="search from this seed: the same seed, budget and implementation draw the same "
        "examples (no example database is used then)",
    )
    jobs_option(
        command,
        default=1,
        aliases=("--workers",),
        help="search in N processes that share the example database and split the budget "
        "(default: 1)",
    )
    timeout_option(
        command,
        default=10.0,
        help="seconds one example's stream may take before it fails no_hang (default: 10)",
    )
    command.add_argument(
        "--shrink-time",
        type=duration,
        default=120.0,
        metavar="TIME",
        help="how long to shrink a failure before keeping the smallest seen (default: 2m)",
    )
    command.add_argument(
        "--db",
        metavar="DIR|redis://…",
        help="example database (default .hypothesis/callstream; none under the ci profile)",
    )
    command.add_argument(
        "--db-write",
        action="store_true",
        help="let the nightly profile write to a shared database (read-only otherwise)",
    )
    command.add_argument(
        "--save-regressions",
        type=Path,
        default=REGRESSIONS,
        metavar="DIR",
        help="where a shrunk find is written as YAML (default: %(default)s, under the working "
        "directory)",
    )
    command.add_argument(
        "--coverage",
        action="store_true",
        help="count how often each wire feature (callstream.coverage) was drawn, and show the "
        "table at the end and in the report's footer",
    )
    out_option(command, "fuzz")


def _fuzz(args: argparse.Namespace) -> int:
    # Hypothesis and the generators load only for fuzzing.
    from ..fuzz import describe, fuzz, make_fuzz_progress

    implementation = load_implementation(connectable(args))
    result = fuzz(
        implementation,
        profile=args.profile,
        max_examples=args.max_examples,
        duration=args.duration,
        workers=args.jobs,
        seed=args.seed,
        timeout=args.timeout,
        shrink_time=args.shrink_time,
        database=args.db,
        database_writable=args.db_write,
        save_regressions=args.save_regressions,
        out=args.out,
        argv=args.argv,
        progress=make_fuzz_progress(sys.stderr),
        coverage=args.coverage,
    )
    print(describe(result))
    return result.exit_code


FUZZ = Command(
    "generate adversarial streams against an implementation; keep what fails",
    "Draw streams from callstream's Hypothesis generators, judge them with the same oracle "
    "and checks as `run`, shrink a failure to a minimal stream, save it as a YAML scenario "
    "that `callstream run` reproduces, and write the same reports. Exits 0 when nothing was "
    "found, 1 when the implementation failed, 2 on usage errors. Needs the fuzz extra: "
    "pip install 'callstream[fuzz]'.",
    run=_fuzz,
    arguments=_fuzz_arguments,
    parents=(IMPL,),
)

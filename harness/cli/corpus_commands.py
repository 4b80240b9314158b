"""The commands on the scenario corpus and what a run makes of it: ``run``, ``report merge``,
``check`` (an implementation's shape, before a run), ``lint`` and ``explain``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..connect.check import check_command
from ..corpus.explain import explanation
from ..corpus.linting import lint
from ..errors import UsageError
from ..reports.merge import merge_command
from ..runner.execution import default_timeout, run_command
from ..runner.shard import Shard
from .command import Command
from .options import CORPUS, IMPL, SELECTION, connectable, jobs_option, out_option, timeout_option

__all__ = ["CHECK", "EXPLAIN", "LINT", "REPORT", "RUN"]


def _run_arguments(command: argparse.ArgumentParser) -> None:
    jobs_option(command, default=os.cpu_count() or 1)
    timeout_option(
        command,
        default=None,
        help="seconds one stream of a case may take before its worker is killed (default: 10 "
        "in process, 60 for cmd: and http:, where every chunk is a round trip)",
    )
    out_option(command, "run")
    command.add_argument(
        "--shard",
        metavar="K/N",
        help="run only the K-th of N slices of the selection, for N CI jobs; join their "
        "reports with callstream report merge",
    )


def _run(args: argparse.Namespace) -> int:
    return run_command(
        args.paths,
        impl=connectable(args),
        select=args.select,
        max_fail=args.max_fail,
        jobs=args.jobs,
        timeout=args.timeout,
        out=args.out,
        scenarios=args.scenarios,
        argv=args.argv,
        stdout=sys.stdout,
        stderr=sys.stderr,
        shard=None if args.shard is None else Shard.parse(args.shard),
    )


RUN = Command(
    "run the scenario corpus against an implementation",
    "Run every case (scenario × the declared profile × splitting) on the implementation "
    "in worker processes, each stream within a timeout; write the report folder and print "
    "a summary. Exits 0 when every case that ran passed, 1 when any failed, 2 on scenario "
    "or usage errors, 3 when the harness itself failed.",
    run=_run,
    arguments=_run_arguments,
    parents=(CORPUS, IMPL, SELECTION),
)


def _merge_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("out", type=Path, metavar="OUT", help="the merged report folder, new")
    command.add_argument(
        "reports", nargs="+", metavar="REPORT_DIR", help="the shards' report folders, any order"
    )
    command.add_argument(
        "--allow-partial",
        action="store_true",
        help="merge without the shards that are missing or did not finish (the report says which)",
    )


def _report_merge(args: argparse.Namespace) -> int:
    return merge_command(
        args.out,
        args.reports,
        allow_partial=args.allow_partial,
        stdout=sys.stdout,
        stderr=sys.stderr,
    )


REPORT = Command(
    "work on report folders: merge the reports of a run's shards",
    "Commands on the report folders that run, fuzz and certify write.",
    commands={
        "merge": Command(
            "join the reports of a run's shards into the report of the whole run",
            "Join the report folders of the shards of one run (callstream run "
            "--shard K/N) into OUT, rendering every format as a single run would. Refuses "
            "reports of different implementations or corpora, overlapping shards and, "
            "unless --allow-partial, missing or unfinished ones. Exits 0 when every case "
            "passed, 1 when any failed, 2 on usage or input errors.",
            run=_report_merge,
            arguments=_merge_arguments,
        )
    },
)


def _check_arguments(command: argparse.ArgumentParser) -> None:
    timeout_option(
        command,
        default=None,
        help="seconds one stream may take (default: as for run, 10 in process, 60 for cmd:)",
    )


def _check(args: argparse.Namespace) -> int:
    impl = connectable(args)
    timeout = args.timeout or default_timeout(impl)
    return check_command(impl, timeout=timeout, stdout=sys.stdout)


CHECK = Command(
    "check an implementation's shape in about a second, before a run",
    "Load the implementation, check that its declaration reads and that its factory takes "
    "tools= and limits=, then feed it three tiny streams (a plain call, a truncated one, "
    "one cut off) and check what feed() and close() return: lists of results with the "
    "contract's fields, of their types, with its statuses and reasons. Prints what was "
    "checked and what the implementation declares, then each problem on one line. What a "
    "stream does (raising, hanging, a wrong verdict) is for run to judge. Exits 0 when the "
    "shape is right, 2 when it is not or no result showed it.",
    run=_check,
    arguments=_check_arguments,
    parents=(IMPL,),
)


def _lint_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="scenario files or folders (default: the built-in corpus)",
    )
    command.add_argument(
        "--coverage",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="report rules and quirks that no scenario covers (default: on for the corpus and "
        "for folders, off when only files are named)",
    )
    command.add_argument(
        "--features",
        action="store_true",
        help="show how many scenarios of each dialect show each wire feature "
        "(callstream.coverage), as callstream fuzz --coverage does for generated streams",
    )


def _lint(args: argparse.Namespace) -> int:
    coverage = args.coverage
    if coverage is None:
        coverage = not args.paths or any(path.is_dir() for path in args.paths)
    report = lint(args.paths, check_coverage=coverage, count_features=args.features)
    for problem in report.problems:
        print(problem)
    if report.problems:
        return UsageError.exit_code
    if report.features is not None:
        print(report.features.table())
    print(report.summary)
    return 0


LINT = Command(
    "check scenario files: schema, tools, rules, the oracle, ids and coverage",
    "Load scenario files as a run would and report every problem as path:line: message; "
    "then check that every rule and openai-chat quirk is covered. Exits 2 if anything is "
    "wrong.",
    run=_lint,
    arguments=_lint_arguments,
)


def _explain_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("id", nargs="?", metavar="ID", help="default: list them all")


def _explain(args: argparse.Namespace) -> int:
    sys.stdout.write(explanation(args.id))
    return 0


EXPLAIN = Command(
    "print a rule or a quirk: its text, checks, scenarios and tests",
    "Print a rule (A3) or a quirk (openai-chat/C3, or C20 where no rule has the id) from "
    "docs/rules.md: its text, why, what each profile does and the decisions taken; then "
    "the checks that prove it, the built-in scenarios that cite it and, in a checkout, the "
    "tests. Without an id, list every rule and quirk. Exits 2 for an unknown id, naming "
    "the closest.",
    run=_explain,
    arguments=_explain_arguments,
)

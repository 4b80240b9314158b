"""The ``callstream`` command: a thin layer over functions the tests call directly.

Exit codes: 0 everything passed (every call ready), 1 the implementation or stream failed
(a call was rejected), 2 usage error, 3 harness error.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from reference_impl import PROFILES

from .assemble import AssembleRun, assemble_stream
from .connect import load_implementation
from .errors import HarnessError, UsageError
from .implementations import DEFAULT
from .lint import lint
from .runner import run_command
from .tools import load_tools

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    args.argv = ["callstream", *(sys.argv[1:] if argv is None else argv)]
    try:
        code: int = args.command(args)
    except HarnessError as exc:
        print(f"callstream: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        return 0
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="callstream",
        description="Conformance suite and fuzzer for streamed tool-call assemblers.",
    )
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")

    assemble = commands.add_parser(
        "assemble",
        help="run a recorded SSE stream through the reference assembler",
        description=(
            "Feed a recorded response body (text/event-stream) to the reference assembler and "
            "print one JSON object per tool call, then a summary with the findings. Exits 1 if "
            "any call was rejected."
        ),
    )
    assemble.add_argument("file", help="recorded stream, or - for standard input")
    assemble.add_argument(
        "--tools",
        metavar="TOOLS.json",
        help="the tools the request offered (enables unknown-tool and schema checks)",
    )
    assemble.add_argument("--profile", choices=PROFILES, default="lenient")
    assemble.add_argument(
        "--chunk-size",
        type=_positive,
        metavar="N",
        help="feed N bytes at a time (default: the whole file at once)",
    )
    assemble.add_argument(
        "--snapshots", action="store_true", help="the route sends cumulative snapshots (C10)"
    )
    assemble.add_argument(
        "--repair-json", action="store_true", help="repair repeated or unclosed JSON (C11, C12)"
    )
    assemble.add_argument("--format", choices=("json", "text"), default="json")
    assemble.add_argument(
        "--report", metavar="PATH", help="also write the JSON lines to PATH (folders are created)"
    )
    assemble.set_defaults(command=_assemble)

    run = commands.add_parser(
        "run",
        help="run the scenario corpus against an implementation",
        description=(
            "Run every case (scenario × the claimed profile × splitting) on the implementation "
            "in worker processes, each stream within a timeout; write the report folder and "
            "print a summary. Exits 0 when every claimed case passed, 1 when any failed, 2 on "
            "scenario or usage errors, 3 when the harness itself failed."
        ),
    )
    run.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="scenario files or folders (default: the corpus in scenarios/)",
    )
    run.add_argument(
        "--impl",
        default=DEFAULT,
        metavar="CONNECTABLE",
        help="the implementation, as py:module:factory (default: the reference, lenient)",
    )
    run.add_argument(
        "-k",
        dest="select",
        metavar="EXPR",
        help="only scenarios whose id contains a term, or that carry it as a tag or cite it as "
        "a rule; comma-separated terms, any may match",
    )
    run.add_argument("--max-fail", type=_positive, metavar="N", help="stop after N failed cases")
    run.add_argument(
        "--jobs",
        type=_positive,
        default=os.cpu_count() or 1,
        metavar="N",
        help="worker processes (default: one per CPU, %(default)s)",
    )
    run.add_argument(
        "--timeout",
        type=_seconds,
        default=10.0,
        metavar="S",
        help="seconds one stream of a case may take before its worker is killed "
        "(default: %(default)s)",
    )
    run.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="the report folder (default: a new reports/run-<timestamp>/)",
    )
    run.set_defaults(command=_run)

    lint_command = commands.add_parser(
        "lint",
        help="check scenario files: schema, tools, rules, the oracle, ids and coverage",
        description=(
            "Load scenario files as a run would and report every problem as path:line: message; "
            "then check that every rule and openai-chat quirk is covered. Exits 2 if anything "
            "is wrong."
        ),
    )
    lint_command.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="scenario files or folders (default: scenarios/openai-chat and scenarios/regressions)",
    )
    lint_command.add_argument(
        "--coverage",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="report rules and quirks that no scenario covers (default: on for the corpus and "
        "for folders, off when only files are named)",
    )
    lint_command.set_defaults(command=_lint)

    fuzz_command = commands.add_parser(
        "fuzz",
        help="generate adversarial streams against an implementation; keep what fails",
        description=(
            "Draw streams from callstream's Hypothesis generators, judge them with the same "
            "oracle and checks as `run`, shrink a failure to a minimal stream, save it as a YAML "
            "scenario that `callstream run` reproduces, and write the same reports. Exits 0 when "
            "nothing was found, 1 when the implementation failed, 2 on usage errors."
        ),
    )
    fuzz_command.add_argument(
        "--impl", default=DEFAULT, metavar="CONNECTABLE", help="the implementation (py:…)"
    )
    budget = fuzz_command.add_mutually_exclusive_group()
    budget.add_argument("--max-examples", type=_positive, metavar="N", help="example budget")
    budget.add_argument(
        "--duration", type=_duration, metavar="TIME", help="time budget: 90s, 10m, 1h"
    )
    fuzz_command.add_argument("--profile", choices=("dev", "ci", "nightly"), default="dev")
    fuzz_command.add_argument(
        "--workers",
        type=_positive,
        default=1,
        metavar="N",
        help="search in N processes that share the example database and split the budget "
        "(default: 1)",
    )
    fuzz_command.add_argument(
        "--db",
        metavar="DIR|redis://…",
        help="example database (default .hypothesis/callstream; none under the ci profile)",
    )
    fuzz_command.add_argument(
        "--db-write",
        action="store_true",
        help="let the nightly profile write to a shared database (read-only otherwise)",
    )
    fuzz_command.add_argument(
        "--save-regressions",
        type=Path,
        default=Path("scenarios/regressions"),
        metavar="DIR",
        help="where a shrunk find is written as YAML (default: %(default)s)",
    )
    fuzz_command.add_argument("--out", type=Path, metavar="DIR", help="the report folder")
    fuzz_command.set_defaults(command=_fuzz)
    return parser


def _assemble(args: argparse.Namespace) -> int:
    tools = None if args.tools is None else load_tools(args.tools)
    data = _read_stream(args.file)
    size = args.chunk_size or max(len(data), 1)
    pieces = [data[i : i + size] for i in range(0, len(data), size)]
    run = assemble_stream(
        pieces,
        tools,
        profile=args.profile,
        snapshots=args.snapshots,
        repair_json=args.repair_json,
    )
    lines = [json.dumps(release.to_dict(), ensure_ascii=False) for release in run.releases]
    lines.append(json.dumps(run.summary(), ensure_ascii=False))
    if args.report:
        _write_report(Path(args.report), lines)
    if args.format == "json":
        for line in lines:
            print(line)
    else:
        _print_text(run, sys.stdout)
    return 0 if run.all_ready else 1


def _run(args: argparse.Namespace) -> int:
    return run_command(
        args.paths,
        impl=args.impl,
        select=args.select,
        max_fail=args.max_fail,
        jobs=args.jobs,
        timeout=args.timeout,
        out=args.out,
        argv=args.argv,
        stdout=sys.stdout,
        stderr=sys.stderr,
    )


def _fuzz(args: argparse.Namespace) -> int:
    # Hypothesis and the generators load only for fuzzing.
    from .fuzz import describe, fuzz, make_fuzz_progress

    implementation = load_implementation(args.impl)
    result = fuzz(
        implementation,
        profile=args.profile,
        max_examples=args.max_examples,
        duration=args.duration,
        workers=args.workers,
        database=args.db,
        database_writable=args.db_write,
        save_regressions=args.save_regressions,
        out=args.out,
        argv=args.argv,
        progress=make_fuzz_progress(sys.stderr),
    )
    print(describe(result))
    return result.exit_code


def _duration(value: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600}
    number, unit = (value[:-1], value[-1]) if value[-1:] in units else (value, "s")
    try:
        seconds = float(number) * units[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a duration like 90s, 10m or 1h"
        ) from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return seconds


def _lint(args: argparse.Namespace) -> int:
    coverage = args.coverage
    if coverage is None:
        coverage = not args.paths or any(path.is_dir() for path in args.paths)
    report = lint(args.paths, check_coverage=coverage)
    for problem in report.problems:
        print(problem)
    if report.problems:
        return UsageError.exit_code
    print(report.summary)
    return 0


def _read_stream(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(name).read_bytes()
    except OSError as exc:
        raise UsageError(f"{name}: cannot read the stream: {exc.strerror or exc}") from None


def _write_report(path: Path, lines: list[str]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the report: {exc.strerror or exc}") from None


def _print_text(run: AssembleRun, out: TextIO) -> None:
    for release in run.releases:
        result = release.result
        when = "at close" if release.after_byte is None else f"after byte {release.after_byte}"
        head = f"choice {result.choice} call {result.index}: {result.name} (id {result.id})"
        if result.ready:
            out.write(
                f"{head} READY {when}\n  {json.dumps(result.arguments, ensure_ascii=False)}\n"
            )
        else:
            out.write(f"{head} REJECTED {result.reason} {when}\n  {result.detail}\n")
            out.write(f"  raw: {_clip(result.arguments_text)}\n")
    summary: dict[str, Any] = run.summary()["summary"]
    out.write(
        f"{summary['calls']} call(s): {summary['ready']} ready, {summary['rejected']} rejected"
        f" ({summary['profile']} profile, {summary['bytes']} bytes)\n"
    )
    if run.failure:
        out.write(f"stream failed: {run.failure}\n")
    for finding in run.findings:
        out.write(f"finding [{finding.severity}] {finding}\n")


def _clip(text: str, limit: int = 200) -> str:
    shown = json.dumps(text, ensure_ascii=False)
    return shown if len(shown) <= limit else shown[:limit] + "…"


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return seconds


if __name__ == "__main__":
    sys.exit(main())

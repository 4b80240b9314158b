"""The ``callstream`` command: a thin layer over functions the tests call directly.

Exit codes, the same for every command:

- 0 everything passed (every call ready);
- 1 the implementation or the stream failed (a case failed, a call was rejected);
- 2 a usage error: bad arguments or input files, printed as ``path:line: message``;
- 3 the harness failed: one line on stderr; for an unexpected exception (a bug in
  callstream) the line names the log file that holds its traceback;
- 130 interrupted by ^C.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import sys
import tempfile
import traceback
from collections.abc import Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import IO, Any, TextIO

from callstream.reference import PROFILES

from ..connect.check import check_command
from ..connect.connectables import load_implementation
from ..core.tools import load_tools
from ..corpus.assemble import READ_SIZE, AssembleRun, assemble_stream
from ..corpus.explain import explanation
from ..corpus.linting import lint
from ..corpus.regressions import REGRESSIONS
from ..corpus.scenario import corpus_paths, load_scenarios
from ..errors import INTERRUPTED, HarnessError, UsageError, missing_extra
from ..implementations import DEFAULT
from ..reports import new_run_folder
from ..reports.merge import merge_command
from ..runner.execution import default_timeout, run_command
from ..runner.shard import Shard
from .completion import SHELLS, completion_script

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code. Bare ``callstream`` prints the help."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    args.argv = ["callstream", *(sys.argv[1:] if argv is None else argv)]
    try:
        code: int = args.command(args)
    except ModuleNotFoundError as exc:
        extra = missing_extra(exc)
        if extra is None:
            print(f"callstream: internal error: {_gist(exc)}; {_log_traceback()}", file=sys.stderr)
            return HarnessError.exit_code
        print(f"callstream {args.argv[1]}: {extra}", file=sys.stderr)
        return extra.exit_code
    except HarnessError as exc:
        print(f"callstream: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("callstream: interrupted", file=sys.stderr)
        return INTERRUPTED
    except Exception as exc:  # a bug in callstream: never a traceback that exits 1
        print(f"callstream: internal error: {_gist(exc)}; {_log_traceback()}", file=sys.stderr)
        return HarnessError.exit_code
    return code


def _gist(exc: BaseException) -> str:
    """The exception's type and the first line of its message, clipped."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "…"


def _log_traceback() -> str:
    """Write the exception being handled, with its traceback, to a new log file; the words
    that point to it."""
    try:
        with tempfile.NamedTemporaryFile(
            "w",
            prefix="callstream-error-",
            suffix=".log",
            delete=False,
            encoding="utf-8",
            errors="backslashreplace",
        ) as log:
            log.write(f"callstream {' '.join(sys.argv[1:])}\n{traceback.format_exc()}")
    except OSError as exc:
        return f"the traceback could not be written to a log file: {exc.strerror or exc}"
    return f"the traceback is in {log.name}"


EXIT_CODES = """exit codes:
  0    everything passed
  1    the implementation or the stream failed (a case failed, a call was rejected)
  2    usage or input error, printed as path:line: message (or a missing extra to install)
  3    callstream itself failed: one line, and the log file that holds the traceback
  130  interrupted"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="callstream",
        description="Conformance suite and fuzzer for streamed tool-call assemblers.",
        epilog=f"{EXIT_CODES}\n\nThe rules: callstream explain; one command: callstream "
        "COMMAND --help.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"callstream {_version()}")
    parser.set_defaults(command=None)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    def command(name: str, summary: str, description: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(
            name,
            help=summary,
            description=description,
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        return sub

    assemble = command(
        "assemble",
        "run a recorded SSE stream through the reference assembler",
        "Feed a recorded response body (text/event-stream) to the reference assembler and "
        "print one JSON object per tool call, then a summary with the findings. Exits 1 if "
        "any call was rejected.",
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
        help=f"feed N bytes at a time (default: {READ_SIZE >> 10} KiB, as read)",
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

    run = command(
        "run",
        "run the scenario corpus against an implementation",
        "Run every case (scenario × the declared profile × splitting) on the implementation "
        "in worker processes, each stream within a timeout; write the report folder and print "
        "a summary. Exits 0 when every case that ran passed, 1 when any failed, 2 on scenario "
        "or usage errors, 3 when the harness itself failed.",
    )
    _corpus_options(run)
    _impl_options(run)
    _selection_options(run)
    _jobs_option(run, default=os.cpu_count() or 1)
    _timeout_option(
        run,
        default=None,
        help="seconds one stream of a case may take before its worker is killed (default: 10 "
        "in process, 60 for cmd: and http:, where every chunk is a round trip)",
    )
    _out_option(run, "run")
    run.add_argument(
        "--shard",
        metavar="K/N",
        help="run only the K-th of N slices of the selection, for N CI jobs; join their "
        "reports with callstream report merge",
    )
    run.set_defaults(command=_run)

    report = command(
        "report",
        "work on report folders: merge the reports of a run's shards",
        "Commands on the report folders that run, fuzz and certify write.",
    )
    report.set_defaults(command=lambda args: _print_help(report))
    merge = report.add_subparsers(title="commands", metavar="COMMAND").add_parser(
        "merge",
        help="join the reports of a run's shards into the report of the whole run",
        description="Join the report folders of the shards of one run (callstream run "
        "--shard K/N) into OUT, rendering every format as a single run would. Refuses reports "
        "of different implementations or corpora, overlapping shards and, unless "
        "--allow-partial, missing or unfinished ones. Exits 0 when every case passed, 1 when "
        "any failed, 2 on usage or input errors.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    merge.add_argument("out", type=Path, metavar="OUT", help="the merged report folder, new")
    merge.add_argument(
        "reports", nargs="+", metavar="REPORT_DIR", help="the shards' report folders, any order"
    )
    merge.add_argument(
        "--allow-partial",
        action="store_true",
        help="merge without the shards that are missing or did not finish (the report says which)",
    )
    merge.set_defaults(command=_report_merge)

    check = command(
        "check",
        "check an implementation's shape in about a second, before a run",
        "Load the implementation, check that its declaration reads and that its factory takes "
        "tools= and limits=, then feed it three tiny streams (a plain call, a truncated one, "
        "one cut off) and check what feed() and close() return: lists of results with the "
        "contract's fields, of their types, with its statuses and reasons. Prints what was "
        "checked and what the implementation declares, then each problem on one line. What a "
        "stream does (raising, hanging, a wrong verdict) is for run to judge. Exits 0 when the "
        "shape is right, 2 when it is not or no result showed it.",
    )
    _impl_options(check)
    _timeout_option(
        check,
        default=None,
        help="seconds one stream may take (default: as for run, 10 in process, 60 for cmd:)",
    )
    check.set_defaults(command=_check)

    lint_command = command(
        "lint",
        "check scenario files: schema, tools, rules, the oracle, ids and coverage",
        "Load scenario files as a run would and report every problem as path:line: message; "
        "then check that every rule and openai-chat quirk is covered. Exits 2 if anything is "
        "wrong.",
    )
    lint_command.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="scenario files or folders (default: the built-in corpus)",
    )
    lint_command.add_argument(
        "--coverage",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="report rules and quirks that no scenario covers (default: on for the corpus and "
        "for folders, off when only files are named)",
    )
    lint_command.set_defaults(command=_lint)

    explain = command(
        "explain",
        "print a rule or a quirk: its text, checks, scenarios and tests",
        "Print a rule (A3) or a quirk (openai-chat/C3, or C20 where no rule has the id) from "
        "docs/rules.md: its text, why, what each profile does and the decisions taken; then "
        "the checks that prove it, the built-in scenarios that cite it and, in a checkout, the "
        "tests. Without an id, list every rule and quirk. Exits 2 for an unknown id, naming "
        "the closest.",
    )
    explain.add_argument("id", nargs="?", metavar="ID", help="default: list them all")
    explain.set_defaults(command=_explain)

    fuzz_command = command(
        "fuzz",
        "generate adversarial streams against an implementation; keep what fails",
        "Draw streams from callstream's Hypothesis generators, judge them with the same oracle "
        "and checks as `run`, shrink a failure to a minimal stream, save it as a YAML scenario "
        "that `callstream run` reproduces, and write the same reports. Exits 0 when nothing was "
        "found, 1 when the implementation failed, 2 on usage errors. Needs the fuzz extra: "
        "pip install 'callstream[fuzz]'.",
    )
    _impl_options(fuzz_command)
    budget = fuzz_command.add_mutually_exclusive_group()
    budget.add_argument("--max-examples", type=_positive, metavar="N", help="example budget")
    budget.add_argument(
        "--duration", type=_duration, metavar="TIME", help="time budget: 90s, 10m, 1h"
    )
    fuzz_command.add_argument("--profile", choices=("dev", "ci", "nightly"), default="dev")
    fuzz_command.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="search from this seed: the same seed, budget and implementation draw the same "
        "examples (no example database is used then)",
    )
    _jobs_option(
        fuzz_command,
        default=1,
        aliases=("--workers",),
        help="search in N processes that share the example database and split the budget "
        "(default: 1)",
    )
    _timeout_option(
        fuzz_command,
        default=10.0,
        help="seconds one example's stream may take before it fails no_hang (default: 10)",
    )
    fuzz_command.add_argument(
        "--shrink-time",
        type=_duration,
        default=120.0,
        metavar="TIME",
        help="how long to shrink a failure before keeping the smallest seen (default: 2m)",
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
        default=REGRESSIONS,
        metavar="DIR",
        help="where a shrunk find is written as YAML (default: %(default)s, under the working "
        "directory)",
    )
    _out_option(fuzz_command, "fuzz")
    fuzz_command.set_defaults(command=_fuzz)

    serve = command(
        "serve",
        "serve scenarios from a local OpenAI-compatible provider emulator",
        "Answer POST /v1/chat/completions with the scenario the request's model names "
        "(scenario:<id>, or scenario:<id>@<splitting> to cut it: whole, bytes, random-3, "
        "at-5,9), each chunk its own write; GET /v1/models lists them. Point any client at it "
        "with base_url http://HOST:PORT/v1. ^C stops it. Needs the serve extra.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="default: %(default)s")
    serve.add_argument("--port", type=int, default=8000, help="default: %(default)s")
    _scenarios_option(serve)
    serve.add_argument(
        "--delay",
        type=_pause,
        default=0.0,
        metavar="S",
        help="seconds between chunks (default: %(default)s)",
    )
    serve.add_argument(
        "--route",
        metavar="NAME",
        help="answer every model that is not a scenario as this emulated route: openai, gemini, "
        "ollama, litellm, vllm, openrouter, azure or never-finishes (route:<name> always works)",
    )
    serve.set_defaults(command=_serve, paths=[])

    certify_command = command(
        "certify",
        "certify a live OpenAI-compatible route: probes, cassettes, a certificate",
        "Send each probe (a long-arguments call, a parameterless tool, parallel calls, "
        "tool_choice required and named, a max_tokens cut, text then a call, include_usage) to "
        "the route through httpx, streaming and, where it helps, not streaming; record every "
        "answer byte for byte as a cassette (secrets scrubbed); check it under the profile; "
        "write certificate.json, .md and .html beside the usual reports. Exits 0 on pass or "
        "pass with findings (warnings only), 1 on fail, 2 on usage errors, 3 when the harness "
        "itself failed. Needs the serve extra (httpx).",
    )
    certify_command.add_argument(
        "--base-url", required=True, metavar="URL", help="the route, as a client's base_url (…/v1)"
    )
    certify_command.add_argument("--model", required=True, metavar="NAME", help="the model to ask")
    certify_command.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="the environment variable holding the API key, sent as Authorization: Bearer "
        "(default: OPENAI_API_KEY if set; none is sent otherwise)",
    )
    certify_command.add_argument("--profile", choices=PROFILES, default="lenient")
    certify_command.add_argument(
        "--probes",
        default="all",
        metavar="all|NAME,…",
        help="the probes to send (default: all)",
    )
    certify_command.add_argument(
        "--probes-file",
        action="append",
        default=[],
        metavar="FILE",
        help="more probes, in the shape of harness/probes.yaml (repeatable)",
    )
    certify_command.add_argument(
        "--repeat",
        type=_positive,
        default=1,
        metavar="N",
        help="run each probe N times: a check that fails in some runs only is flaky (default: 1)",
    )
    _timeout_option(
        certify_command,
        default=30.0,
        help="the most seconds to connect, to the first data event and between two data "
        "events; keep-alive comments are not progress (default: %(default)s)",
    )
    certify_command.add_argument(
        "--deadline",
        type=_seconds,
        metavar="S",
        help="the most seconds one answer may take in all (default: four times the timeout)",
    )
    certify_command.add_argument(
        "--max-bytes",
        type=_positive,
        default=4 << 20,
        metavar="N",
        help="the most bytes of one answer read; a longer answer is a finding (default: "
        "%(default)s)",
    )
    _out_option(certify_command, "certify")
    certify_command.set_defaults(command=_certify)

    replay_command = command(
        "replay",
        "re-check cassettes offline, as certify checked them",
        "Load cassettes (files, or folders holding *.cassette.jsonl), pair each streamed answer "
        "with its non-streaming twin, and run the certify checks again; print the verdict and, "
        "with --out, write the certificate and reports. Exit codes as certify.",
    )
    replay_command.add_argument("cassettes", nargs="+", type=Path, metavar="CASSETTE")
    replay_command.add_argument(
        "--profile", choices=PROFILES, help="default: the profile they were recorded under"
    )
    replay_command.add_argument(
        "--out", type=Path, metavar="DIR", help="write the certificate here"
    )
    replay_command.set_defaults(command=_replay)

    matrix = command(
        "matrix",
        "run the corpus through every installed client library (http: adapters)",
        "Run the corpus on each installed http: adapter (openai, openai-state, "
        "openai-done-events, langchain, litellm) through the normal runner, writing each one's "
        "report folder, then matrix.md and matrix.html: library × rule, pass / fail / not "
        "observable, each failure with its repro. Exits 0 once the matrix is written. Needs the "
        "adapters extra.",
    )
    _corpus_options(matrix)
    matrix.add_argument(
        "--adapters", metavar="A,B", help="comma-separated adapter names (default: installed)"
    )
    matrix.add_argument(
        "--out",
        type=Path,
        default=Path("reports/third-party"),
        metavar="DIR",
        help="where the matrix and the reports go (default: %(default)s)",
    )
    matrix.add_argument(
        "-k", dest="select", metavar="EXPR", help="only scenarios matching, as for run"
    )
    matrix.add_argument(
        "--splittings",
        metavar="S,S",
        help="comma-separated splittings (default: whole,random-1,random-2)",
    )
    _jobs_option(
        matrix,
        default=os.cpu_count() or 1,
        help="worker processes per adapter (default: %(default)s)",
    )
    _timeout_option(matrix, default=30.0, help="seconds one stream may take (default: %(default)s)")
    matrix.set_defaults(command=_matrix)

    completion = command(
        "completion",
        "print a shell completion script",
        'Print a completion script for the shell: eval "$(callstream completion bash)" in '
        "~/.bashrc, or the same with zsh in ~/.zshrc.",
    )
    completion.add_argument("shell", choices=SHELLS)
    completion.set_defaults(command=lambda args: _completion(parser, args))
    return parser


# -- options shared by several commands: each declared once ------------------------------------


def _impl_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--impl",
        default=DEFAULT,
        metavar="CONNECTABLE",
        help="the implementation: py:module:factory, cmd:'PROGRAM ARGS' or http:ADAPTER "
        "(default: the reference, lenient)",
    )
    command.add_argument(
        "--validate-protocol",
        action="store_true",
        help="check every pipe-protocol message, both ways, against its schema (cmd: only)",
    )


def _corpus_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="scenario files or folders to run instead of the built-in corpus",
    )
    _scenarios_option(command)


def _scenarios_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--scenarios",
        action="append",
        default=[],
        metavar="PATH",
        help="your own scenario file or folder, added to the built-in corpus (repeatable)",
    )


def _selection_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "-k",
        dest="select",
        metavar="EXPR",
        help="only scenarios whose id contains a term, or that carry it as a tag or cite it as "
        "a rule; comma-separated terms, any may match; =ID matches one id exactly",
    )
    command.add_argument(
        "--max-fail",
        "--maxfail",
        dest="max_fail",
        type=_positive,
        metavar="N",
        help="stop after N failed cases",
    )


def _jobs_option(
    command: argparse.ArgumentParser,
    *,
    default: int,
    aliases: tuple[str, ...] = (),
    help: str = "worker processes (default: one per CPU, %(default)s)",
) -> None:
    command.add_argument(
        "--jobs",
        "-j",
        *aliases,
        dest="jobs",
        type=_positive,
        default=default,
        metavar="N",
        help=help,
    )


def _timeout_option(command: argparse.ArgumentParser, *, default: float | None, help: str) -> None:
    command.add_argument("--timeout", type=_seconds, default=default, metavar="S", help=help)


def _out_option(command: argparse.ArgumentParser, prefix: str) -> None:
    command.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help=f"the report folder, new or empty (default: a new reports/{prefix}-<time>/)",
    )


def _version() -> str:
    try:
        return metadata.version("callstream")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _completion(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    sys.stdout.write(completion_script(parser, args.shell))
    return 0


def _assemble(args: argparse.Namespace) -> int:
    tools = None if args.tools is None else load_tools(args.tools)
    with _open_stream(args.file) as source:
        run = assemble_stream(
            _pieces(source, args.file, args.chunk_size or READ_SIZE),
            tools,
            profile=args.profile,
            snapshots=args.snapshots,
            repair_json=args.repair_json,
        )
    lines = [_json_line(release.to_dict()) for release in run.releases]
    lines.append(_json_line(run.summary()))
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
        impl=_connectable(args),
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


def _print_help(parser: argparse.ArgumentParser) -> int:
    """A command group given no command: its help, as bare ``callstream`` prints its own."""
    parser.print_help()
    return 0


def _report_merge(args: argparse.Namespace) -> int:
    return merge_command(
        args.out,
        args.reports,
        allow_partial=args.allow_partial,
        stdout=sys.stdout,
        stderr=sys.stderr,
    )


def _check(args: argparse.Namespace) -> int:
    impl = _connectable(args)
    timeout = args.timeout or default_timeout(impl)
    return check_command(impl, timeout=timeout, stdout=sys.stdout)


def _connectable(args: argparse.Namespace) -> str:
    """``--impl``, with the pipe protocol checked when ``--validate-protocol`` asks for it."""
    if not args.validate_protocol:
        return str(args.impl)
    from ..connect.pipe import with_protocol_validation

    return with_protocol_validation(args.impl)


def _fuzz(args: argparse.Namespace) -> int:
    # Hypothesis and the generators load only for fuzzing.
    from ..fuzz import describe, fuzz, make_fuzz_progress

    implementation = load_implementation(_connectable(args))
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
    )
    print(describe(result))
    return result.exit_code


def _serve(args: argparse.Namespace) -> int:
    from ..emulator import serve  # uvicorn loads only to serve

    loaded = load_scenarios(corpus_paths(args.paths, args.scenarios))
    for error in loaded.errors:
        print(error, file=sys.stderr)
    if loaded.errors:
        return UsageError.exit_code
    serve(
        loaded.scenarios,
        host=args.host,
        port=args.port,
        delay=args.delay,
        route=args.route,
        out=sys.stdout,
    )
    return 0


def _certify(args: argparse.Namespace) -> int:
    from ..certification.certifying import Target
    from ..scrub import scrubbed_output

    variable = args.api_key_env or "OPENAI_API_KEY"
    api_key = os.environ.get(variable) or None
    if api_key is None and args.api_key_env:
        raise UsageError(f"--api-key-env {variable}: that environment variable is not set")
    target = Target(args.base_url, args.model, api_key)
    with scrubbed_output(target.scrubber):
        return _certify_target(args, target, variable)


def _certify_target(args: argparse.Namespace, target: Any, variable: str) -> int:
    from ..certification.certificate import write_certificate
    from ..certification.certifying import Limits, certify
    from ..certification.probes import load_probes, select_probes

    api_key = target.api_key
    probes = select_probes(load_probes(args.probes_file), args.probes)
    deadline = args.deadline or 4 * args.timeout
    if deadline < args.timeout:
        raise UsageError(f"--deadline {deadline} is shorter than --timeout {args.timeout}")
    folder = _report_folder(args.out, "certify")
    scrubber = target.scrubber
    print(
        f"callstream: certifying {args.model} at {scrubber.url(args.base_url)} "
        f"({args.profile} profile, {len(probes)} probes × {args.repeat}"
        + ("" if api_key else f", no API key: {variable} is not set")
        + ")",
        file=sys.stderr,
        flush=True,
    )
    try:
        certificate = certify(
            target,
            probes,
            profile=args.profile,
            repeat=args.repeat,
            limits=Limits(args.timeout, deadline, args.max_bytes),
            out=folder,
            progress=_say,
        )
    except KeyboardInterrupt:
        print(f"callstream: interrupted; the cassettes so far are in {folder}", file=sys.stderr)
        return INTERRUPTED
    argv = [scrubber.url(word) if "://" in word else scrubber.text(word) for word in args.argv]
    write_certificate(certificate, folder, argv=argv, selection=args.probes, scrubber=scrubber)
    sys.stdout.write(certificate.summary(folder))
    print(f"cassettes: {folder / 'cassettes'}")
    return certificate.exit_code


def _replay(args: argparse.Namespace) -> int:
    from ..certification.certificate import write_certificate
    from ..certification.certifying import replay

    certificate = replay(args.cassettes, profile=args.profile, progress=_say)
    if args.out is not None:
        folder = _report_folder(args.out, "replay")
        write_certificate(certificate, folder, argv=args.argv, selection=None)
        sys.stdout.write(certificate.summary(folder))
    else:
        sys.stdout.write(certificate.summary())
    return certificate.exit_code


def _report_folder(out: Path | None, prefix: str) -> Path:
    """``out`` (created), or a new ``reports/<prefix>-<time>/``; refused if it holds a report."""
    if out is None:
        return new_run_folder(prefix=prefix)
    if (out / "report.jsonl").exists():
        raise UsageError(f"{out}: already holds a report; choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{out}: cannot create the folder: {exc.strerror or exc}") from None
    return out


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _matrix(args: argparse.Namespace) -> int:
    from ..matrix.build import matrix_command  # the adapters load only for the matrix

    return matrix_command(
        args.paths,
        adapters=args.adapters,
        out=args.out,
        select=args.select,
        splittings=args.splittings,
        jobs=args.jobs,
        timeout=args.timeout,
        scenarios=args.scenarios,
        argv=args.argv,
        stdout=sys.stdout,
        stderr=sys.stderr,
    )


def _pause(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not 0 <= seconds < math.inf:
        raise argparse.ArgumentTypeError("must be zero or a positive number of seconds")
    return seconds


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


def _explain(args: argparse.Namespace) -> int:
    sys.stdout.write(explanation(args.id))
    return 0


def _open_stream(name: str) -> contextlib.AbstractContextManager[IO[bytes]]:
    """The recorded stream to read: standard input for ``-`` (left open), else the file."""
    if name == "-":
        return contextlib.nullcontext(sys.stdin.buffer)
    try:
        return open(name, "rb")
    except OSError as exc:
        raise UsageError(f"{name}: cannot read the stream: {exc.strerror or exc}") from None


def _pieces(source: IO[bytes], name: str, size: int) -> Iterator[bytes]:
    """The stream ``size`` bytes at a time, read as it is fed: never held whole."""
    while True:
        try:
            piece = source.read(size)
        except OSError as exc:
            raise UsageError(f"{name}: cannot read the stream: {exc.strerror or exc}") from None
        if not piece:
            return
        yield piece


def _json_line(value: Any) -> str:
    """One JSON line, non-ASCII text as is; a lone surrogate (peer data may carry one as a
    ``\\ud800`` escape) stays an escape, so the line is always valid UTF-8 and valid JSON."""
    return _printable(json.dumps(value, ensure_ascii=False))


def _printable(text: str) -> str:
    """``text`` with any lone surrogate written as its ``\\uXXXX`` escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _write_report(path: Path, lines: list[str]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the report: {exc.strerror or exc}") from None


def _print_text(run: AssembleRun, out: TextIO) -> None:
    out.write(_printable(_text(run)))


def _text(run: AssembleRun) -> str:
    """The run for a person: each call, the counts, any stream failure, the findings."""
    out = io.StringIO()
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
    return out.getvalue()


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

"""The commands on OpenAI-compatible routes: ``serve`` (the provider emulator), ``certify``
(a live route, recorded as cassettes), ``replay`` (those cassettes, offline) and ``matrix``
(the client libraries, through the http: adapters)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from callstream.reference import PROFILES

from ..corpus.scenario import corpus_paths, load_scenarios
from ..errors import INTERRUPTED, UsageError
from ..reports import new_run_folder
from .command import Command
from .options import (
    CORPUS,
    jobs_option,
    out_option,
    pause,
    positive,
    scenarios_option,
    seconds,
    timeout_option,
)

__all__ = ["CERTIFY", "MATRIX", "REPLAY", "SERVE"]


def _serve_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--host", default="127.0.0.1", help="default: %(default)s")
    command.add_argument("--port", type=int, default=8000, help="default: %(default)s")
    scenarios_option(command)
    command.add_argument(
        "--delay",
        type=pause,
        default=0.0,
        metavar="S",
        help="seconds between chunks (default: %(default)s)",
    )
    command.add_argument(
        "--route",
        metavar="NAME",
        help="answer every model that is not a scenario as this emulated route: openai, gemini, "
        "ollama, litellm, vllm, openrouter, azure or never-finishes; on /v1/messages anthropic, "
        "anthropic-overloaded, anthropic-no-message-stop, anthropic-no-index, "
        "anthropic-doubled-input or anthropic-vllm; on /v1/responses openai-responses, "
        "responses-reordered, responses-no-terminal, responses-empty-output, "
        "responses-args-in-added or responses-no-done (route:<name> always works, on its "
        "dialect's path)",
    )
    command.set_defaults(paths=[])


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


SERVE = Command(
    "serve scenarios from a local OpenAI-compatible provider emulator",
    "Answer POST /v1/chat/completions with the scenario the request's model names "
    "(scenario:<id>, or scenario:<id>@<splitting> to cut it: whole, bytes, random-3, "
    "at-5,9), each chunk its own write; GET /v1/models lists them. Point any client at it "
    "with base_url http://HOST:PORT/v1. ^C stops it. Needs the serve extra.",
    run=_serve,
    arguments=_serve_arguments,
)


def _certify_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--base-url", required=True, metavar="URL", help="the route, as a client's base_url (…/v1)"
    )
    command.add_argument("--model", required=True, metavar="NAME", help="the model to ask")
    command.add_argument(
        "--dialect",
        choices=("openai-chat", "anthropic-messages", "openai-responses"),
        default="openai-chat",
        help="the route's wire: POST …/chat/completions, …/messages (x-api-key, "
        "anthropic-version: 2023-06-01) or …/responses (default: %(default)s)",
    )
    command.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="the environment variable holding the API key, sent as Authorization: Bearer "
        "(x-api-key for anthropic-messages) (default: OPENAI_API_KEY, ANTHROPIC_API_KEY for "
        "anthropic-messages, if set; none is sent otherwise)",
    )
    command.add_argument("--profile", choices=PROFILES, default="lenient")
    command.add_argument(
        "--probes",
        default="all",
        metavar="all|NAME,…",
        help="the probes to send (default: all)",
    )
    command.add_argument(
        "--probes-file",
        action="append",
        default=[],
        metavar="FILE",
        help="more probes, in the shape of harness/probes.yaml (repeatable)",
    )
    command.add_argument(
        "--repeat",
        type=positive,
        default=1,
        metavar="N",
        help="run each probe N times: a check that fails in some runs only is flaky (default: 1)",
    )
    timeout_option(
        command,
        default=30.0,
        help="the most seconds to connect, to the first data event and between two data "
        "events; keep-alive comments are not progress (default: %(default)s)",
    )
    command.add_argument(
        "--deadline",
        type=seconds,
        metavar="S",
        help="the most seconds one answer may take in all (default: four times the timeout)",
    )
    command.add_argument(
        "--max-bytes",
        type=positive,
        default=4 << 20,
        metavar="N",
        help="the most bytes of one answer read; a longer answer is a finding (default: "
        "%(default)s)",
    )
    out_option(command, "certify")


def _certify(args: argparse.Namespace) -> int:
    from ..certification.certifying import Target
    from ..scrub import scrubbed_output

    default = "ANTHROPIC_API_KEY" if args.dialect == "anthropic-messages" else "OPENAI_API_KEY"
    variable = args.api_key_env or default
    api_key = os.environ.get(variable) or None
    if api_key is None and args.api_key_env:
        raise UsageError(f"--api-key-env {variable}: that environment variable is not set")
    target = Target(args.base_url, args.model, api_key, args.dialect)
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
    dialect = "" if args.dialect == "openai-chat" else f"{args.dialect}, "
    print(
        f"callstream: certifying {args.model} at {scrubber.url(args.base_url)} "
        f"({dialect}{args.profile} profile, {len(probes)} probes × {args.repeat}"
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


CERTIFY = Command(
    "certify a live OpenAI-compatible route: probes, cassettes, a certificate",
    "Send each probe (a long-arguments call, a parameterless tool, parallel calls, "
    "tool_choice required and named, a max_tokens cut, text then a call, include_usage) to "
    "the route through httpx, streaming and, where it helps, not streaming; record every "
    "answer byte for byte as a cassette (secrets scrubbed); check it under the profile; "
    "write certificate.json, .md and .html beside the usual reports. Exits 0 on pass or "
    "pass with findings (warnings only), 1 on fail, 2 on usage errors, 3 when the harness "
    "itself failed. Needs the serve extra (httpx).",
    run=_certify,
    arguments=_certify_arguments,
)


def _replay_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("cassettes", nargs="+", type=Path, metavar="CASSETTE")
    command.add_argument(
        "--profile", choices=PROFILES, help="default: the profile they were recorded under"
    )
    command.add_argument("--out", type=Path, metavar="DIR", help="write the certificate here")


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


REPLAY = Command(
    "re-check cassettes offline, as certify checked them",
    "Load cassettes (files, or folders holding *.cassette.jsonl), pair each streamed answer "
    "with its non-streaming twin, and run the certify checks again; print the verdict and, "
    "with --out, write the certificate and reports. Exit codes as certify.",
    run=_replay,
    arguments=_replay_arguments,
)


def _matrix_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--adapters", metavar="A,B", help="comma-separated adapter names (default: every one)"
    )
    command.add_argument(
        "--js-adapters",
        type=Path,
        default=None,
        metavar="DIR",
        help="the JavaScript adapters' folder (default: adapters/js, in a checkout)",
    )
    command.add_argument(
        "--out",
        type=Path,
        default=Path("reports/third-party"),
        metavar="DIR",
        help="where the matrix and the reports go (default: %(default)s)",
    )
    command.add_argument(
        "-k", dest="select", metavar="EXPR", help="only scenarios matching, as for run"
    )
    command.add_argument(
        "--splittings",
        metavar="S,S",
        help="comma-separated splittings (default: whole,random-1,random-2)",
    )
    jobs_option(
        command,
        default=os.cpu_count() or 1,
        help="worker processes per adapter (default: %(default)s)",
    )
    timeout_option(command, default=30.0, help="seconds one stream may take (default: %(default)s)")


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
        js_dir=args.js_adapters,
        argv=args.argv,
        stdout=sys.stdout,
        stderr=sys.stderr,
    )


MATRIX = Command(
    "run the corpus through every client library, Python and JavaScript",
    "Run the corpus, every dialect, on each adapter that can run here: the Python http: "
    "adapters (openai, openai-state, openai-done-events, langchain, litellm, …) and the "
    "JavaScript pipe programs of adapters/js (openai-node, the AI SDK, LangChain.js), through "
    "the normal runner, writing each one's report folder, then matrix.md and matrix.html: "
    "library × rule, pass / fail / not observable, each failure with its repro; an adapter "
    "whose runtime or packages are missing is listed as not run, with the reason. Exits 0 "
    "once the matrix is written. Needs the adapters extra, and node with `npm ci` run in "
    "adapters/js for the JavaScript ones.",
    run=_matrix,
    arguments=_matrix_arguments,
    parents=(CORPUS,),
)

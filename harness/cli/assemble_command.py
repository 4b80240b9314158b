"""``callstream assemble``: a recorded stream through the reference assembler, printed as JSON
lines or as text for a person."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, TextIO

from callstream.reference import DIALECTS, PROFILES

from ..core.tools import load_tools
from ..corpus.assemble import READ_SIZE, AssembleRun, assemble_stream
from ..errors import UsageError
from .command import Command
from .options import positive

__all__ = ["ASSEMBLE"]


def _assemble_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("file", help="recorded stream, or - for standard input")
    command.add_argument(
        "--tools",
        metavar="TOOLS.json",
        help="the tools the request offered (enables unknown-tool and schema checks)",
    )
    command.add_argument(
        "--dialect",
        choices=tuple(DIALECTS),
        default="openai-chat",
        help="the wire format the stream is in (default: openai-chat)",
    )
    command.add_argument("--profile", choices=PROFILES, default="lenient")
    command.add_argument(
        "--chunk-size",
        type=positive,
        metavar="N",
        help=f"feed N bytes at a time (default: {READ_SIZE >> 10} KiB, as read)",
    )
    command.add_argument(
        "--snapshots", action="store_true", help="the route sends cumulative snapshots (C10)"
    )
    command.add_argument(
        "--repair-json", action="store_true", help="repair repeated or unclosed JSON (C11, C12)"
    )
    command.add_argument("--format", choices=("json", "text"), default="json")
    command.add_argument(
        "--report", metavar="PATH", help="also write the JSON lines to PATH (folders are created)"
    )


def _assemble(args: argparse.Namespace) -> int:
    tools = None if args.tools is None else load_tools(args.tools)
    with _open_stream(args.file) as source:
        run = assemble_stream(
            _pieces(source, args.file, args.chunk_size or READ_SIZE),
            tools,
            dialect=args.dialect,
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
        f" ({summary['dialect']}, {summary['profile']} profile, {summary['bytes']} bytes)\n"
    )
    if run.failure:
        out.write(f"stream failed: {run.failure}\n")
    for finding in run.findings:
        out.write(f"finding [{finding.severity}] {finding}\n")
    return out.getvalue()


def _clip(text: str, limit: int = 200) -> str:
    shown = json.dumps(text, ensure_ascii=False)
    return shown if len(shown) <= limit else shown[:limit] + "…"


ASSEMBLE = Command(
    "run a recorded SSE stream through the reference assembler",
    "Feed a recorded response body (text/event-stream) to the reference assembler and "
    "print one JSON object per tool call, then a summary with the findings. Exits 1 if "
    "any call was rejected.",
    run=_assemble,
    arguments=_assemble_arguments,
)

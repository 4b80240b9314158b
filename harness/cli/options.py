"""The options several commands share, each declared once, and the argument types they parse
with. A type's message is what argparse prints after ``argument --NAME:``."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from ..implementations import DEFAULT

__all__ = [
    "connectable",
    "corpus_options",
    "duration",
    "impl_options",
    "jobs_option",
    "out_option",
    "pause",
    "positive",
    "scenarios_option",
    "seconds",
    "selection_options",
    "timeout_option",
]


def impl_options(command: argparse.ArgumentParser) -> None:
    """``--impl`` and ``--validate-protocol``: the implementation a command works on."""
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


def connectable(args: argparse.Namespace) -> str:
    """``--impl``, with the pipe protocol checked when ``--validate-protocol`` asks for it."""
    if not args.validate_protocol:
        return str(args.impl)
    from ..connect.pipe import with_protocol_validation

    return with_protocol_validation(args.impl)


def corpus_options(command: argparse.ArgumentParser) -> None:
    """The scenario files or folders to run, and ``--scenarios`` to add the user's own."""
    command.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="scenario files or folders to run instead of the built-in corpus",
    )
    scenarios_option(command)


def scenarios_option(command: argparse.ArgumentParser) -> None:
    """``--scenarios``: the user's own scenarios, beside the built-in corpus."""
    command.add_argument(
        "--scenarios",
        action="append",
        default=[],
        metavar="PATH",
        help="your own scenario file or folder, added to the built-in corpus (repeatable)",
    )


def selection_options(command: argparse.ArgumentParser) -> None:
    """``-k`` and ``--max-fail``: which cases run, and how many failures end the run."""
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
        type=positive,
        metavar="N",
        help="stop after N failed cases",
    )


def jobs_option(
    command: argparse.ArgumentParser,
    *,
    default: int,
    aliases: tuple[str, ...] = (),
    help: str = "worker processes (default: one per CPU, %(default)s)",
) -> None:
    """``--jobs``/``-j``: how many processes; the default and its words are the command's."""
    command.add_argument(
        "--jobs",
        "-j",
        *aliases,
        dest="jobs",
        type=positive,
        default=default,
        metavar="N",
        help=help,
    )


def timeout_option(command: argparse.ArgumentParser, *, default: float | None, help: str) -> None:
    """``--timeout``: seconds; what they bound, and the default, are the command's."""
    command.add_argument("--timeout", type=seconds, default=default, metavar="S", help=help)


def out_option(command: argparse.ArgumentParser, prefix: str) -> None:
    """``--out``: the report folder, by default a new ``reports/<prefix>-<time>/``."""
    command.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help=f"the report folder, new or empty (default: a new reports/{prefix}-<time>/)",
    )


def positive(value: str) -> int:
    """A whole number, at least 1."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def seconds(value: str) -> float:
    """A positive, finite number of seconds."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not 0 < number < math.inf:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return number


def pause(value: str) -> float:
    """A finite number of seconds that may be zero."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not 0 <= number < math.inf:
        raise argparse.ArgumentTypeError("must be zero or a positive number of seconds")
    return number


def duration(value: str) -> float:
    """A time like ``90s``, ``10m`` or ``1h`` (seconds without a unit), in seconds."""
    units = {"s": 1, "m": 60, "h": 3600}
    number, unit = (value[:-1], value[-1]) if value[-1:] in units else (value, "s")
    try:
        total = float(number) * units[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a duration like 90s, 10m or 1h"
        ) from None
    if total <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return total

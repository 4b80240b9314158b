"""The options several commands share, each declared once, and the argument types they parse
with. A type's message is what argparse prints after ``argument --NAME:``.

A group that commands take whole is a parent parser (``parents=[IMPL]``): its options come
first in the command's help, in the order of its parents. An option whose default or words are
the command's own (``--jobs``, ``--timeout``, ``--out``) is added by a function, where the
command declares it."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from ..implementations import DEFAULT

__all__ = [
    "CORPUS",
    "IMPL",
    "SELECTION",
    "connectable",
    "duration",
    "jobs_option",
    "out_option",
    "pause",
    "positive",
    "scenarios_option",
    "seconds",
    "timeout_option",
]


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


IMPL = argparse.ArgumentParser(add_help=False)
"""``--impl`` and ``--validate-protocol``: the implementation a command works on."""
IMPL.add_argument(
    "--impl",
    default=DEFAULT,
    metavar="CONNECTABLE",
    help="the implementation: py:module:factory, py+events:module:factory (an event-level "
    "assembler: feed_event), cmd:'PROGRAM ARGS' or http:ADAPTER "
    "(default: the reference, lenient)",
)
IMPL.add_argument(
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


def scenarios_option(command: argparse.ArgumentParser) -> None:
    """``--scenarios``: the user's own scenarios, beside the built-in corpus."""
    command.add_argument(
        "--scenarios",
        action="append",
        default=[],
        metavar="PATH",
        help="your own scenario file or folder, added to the built-in corpus (repeatable)",
    )


CORPUS = argparse.ArgumentParser(add_help=False)
"""The scenario files or folders to run, and ``--scenarios`` to add the user's own."""
CORPUS.add_argument(
    "paths",
    nargs="*",
    metavar="PATH",
    help="scenario files or folders to run instead of the built-in corpus",
)
scenarios_option(CORPUS)

SELECTION = argparse.ArgumentParser(add_help=False)
"""``-k`` and ``--max-fail``: which cases run, and how many failures end the run."""
SELECTION.add_argument(
    "-k",
    dest="select",
    metavar="EXPR",
    help="only scenarios whose id contains a term, or that carry it as a tag or cite it as "
    "a rule; comma-separated terms, any may match; =ID matches one id exactly",
)
SELECTION.add_argument(
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

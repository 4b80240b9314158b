"""The argument parser of ``callstream``, built from the table of commands: each command's
summary, description, parent option groups and own arguments, and the function it runs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping

from ..reports import callstream_version
from .assemble_command import ASSEMBLE
from .command import Command
from .completion import SHELLS, completion_script
from .corpus_commands import CHECK, EXPLAIN, LINT, REPORT, RUN
from .fuzz_command import FUZZ
from .provider_commands import CERTIFY, MATRIX, REPLAY, SERVE

__all__ = ["COMMANDS", "EXIT_CODES", "build_parser"]

EXIT_CODES = """exit codes:
  0    everything passed
  1    the implementation or the stream failed (a case failed, a call was rejected)
  2    usage or input error, printed as path:line: message (or a missing extra to install)
  3    callstream itself failed: one line, and the log file that holds the traceback
  130  interrupted"""
"""The epilog of every command's help, the same for all."""


def _completion_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("shell", choices=SHELLS)


def _completion(args: argparse.Namespace) -> int:
    sys.stdout.write(completion_script(build_parser(), args.shell))
    return 0


COMPLETION = Command(
    "print a shell completion script",
    'Print a completion script for the shell: eval "$(callstream completion bash)" in '
    "~/.bashrc, or the same with zsh in ~/.zshrc.",
    run=_completion,
    arguments=_completion_arguments,
)

COMMANDS: dict[str, Command] = {
    "assemble": ASSEMBLE,
    "run": RUN,
    "report": REPORT,
    "check": CHECK,
    "lint": LINT,
    "explain": EXPLAIN,
    "fuzz": FUZZ,
    "serve": SERVE,
    "certify": CERTIFY,
    "replay": REPLAY,
    "matrix": MATRIX,
    "completion": COMPLETION,
}
"""Every command, by name, in the order the help lists them."""


def build_parser() -> argparse.ArgumentParser:
    """The parser of the whole command line: every command of ``COMMANDS``; a parsed
    command's ``command`` is the function that runs it (None for bare ``callstream``)."""
    parser = argparse.ArgumentParser(
        prog="callstream",
        description="Conformance suite and fuzzer for streamed tool-call assemblers.",
        epilog=f"{EXIT_CODES}\n\nThe rules: callstream explain; one command: callstream "
        "COMMAND --help.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    version = callstream_version(unknown="unknown (not installed)")
    parser.add_argument("--version", action="version", version=f"callstream {version}")
    parser.set_defaults(command=None)
    _add_commands(parser, COMMANDS)
    return parser


def _add_commands(parser: argparse.ArgumentParser, commands: Mapping[str, Command]) -> None:
    """Declare ``commands`` under ``parser``, each naming the function that runs it."""
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name, command in commands.items():
        sub = subparsers.add_parser(
            name,
            help=command.summary,
            description=command.description,
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            parents=command.parents,
        )
        if command.arguments is not None:
            command.arguments(sub)
        if command.commands:
            _add_commands(sub, command.commands)
        sub.set_defaults(command=command.run or _help_of(sub))


def _help_of(group: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """A command group given no command: its help, as bare ``callstream`` prints its own."""

    def print_help(args: argparse.Namespace) -> int:
        group.print_help()
        return 0

    return print_help

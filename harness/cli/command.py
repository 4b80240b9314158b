"""What a ``callstream`` command is: the record each command module fills in, and from which
the parser declares the command and ``main`` finds the function that runs it."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

__all__ = ["Command"]


@dataclass(frozen=True)
class Command:
    """One command of the command line: its help, its arguments and the function that runs it,
    or, for a group such as ``report``, the commands it holds."""

    summary: str
    """The line the list of commands shows for it."""
    description: str
    """The paragraph its ``--help`` opens with."""
    run: Callable[[argparse.Namespace], int] | None = None
    """Runs it on the parsed arguments and returns the exit code; a group given no command of
    its own prints its help instead."""
    arguments: Callable[[argparse.ArgumentParser], None] | None = None
    """Declares its own arguments, after those of its parents."""
    parents: tuple[argparse.ArgumentParser, ...] = ()
    """The shared option groups it takes whole, in the order its help lists them."""
    commands: Mapping[str, Command] = field(default_factory=dict)
    """The commands of a group, by name (``report merge``)."""

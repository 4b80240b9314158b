"""Implementations that start processes of their own on the trigger stream, then behave, hang
or end their worker: each started process writes its pid to the file that the trigger tool's
``description`` names, so a test can check that none outlives the run.

- a *child* is forked and sleeps: it stays in the worker's process group;
- a *daemon* forks twice and calls ``setsid`` in between, as daemons do: it is in a session
  and a group of its own, and its parent has ended.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from callstream.reference import Assembler, Limits, Tool

from . import TRIGGER
from .spawning import spawn

EXIT_CODE = 7


def child_passes(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Forks a sleeping child on the trigger stream, then assembles like the reference."""
    _start(tools, daemon=False)
    return Assembler(tools, limits=limits)


def daemon_passes(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Starts a daemon on the trigger stream, then assembles like the reference."""
    _start(tools, daemon=True)
    return Assembler(tools, limits=limits)


def daemon_hangs(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Starts a daemon on the trigger stream, then never returns from ``feed()``."""
    return _Hangs() if _start(tools, daemon=True) else Assembler(tools, limits=limits)


def daemon_exits(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Starts a daemon on the trigger stream, then ends the worker with ``os._exit(7)``."""
    return _Exits() if _start(tools, daemon=True) else Assembler(tools, limits=limits)


def child_exits(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Forks a sleeping child on the trigger stream, then ends the worker with ``os._exit(7)``."""
    return _Exits() if _start(tools, daemon=False) else Assembler(tools, limits=limits)


class _Hangs:
    def feed(self, data: bytes) -> list[Any]:
        while True:
            time.sleep(60)

    def close(self) -> list[Any]:
        return []


class _Exits:
    def feed(self, data: bytes) -> list[Any]:
        os._exit(EXIT_CODE)

    def close(self) -> list[Any]:
        return []


def _start(tools: Sequence[Tool], *, daemon: bool) -> bool:
    """On the trigger stream, start a child or a daemon and record its pid; True if it did."""
    trigger = next((tool for tool in tools if tool.name == TRIGGER), None)
    if trigger is None:
        return False
    pid = spawn(daemon=daemon)
    with open((trigger.parameters or {})["description"], "a") as pids:
        pids.write(f"{pid}\n")
    return True

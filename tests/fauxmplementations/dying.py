"""Implementations that end their own process on the trigger stream."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from typing import Any

from callstream.reference import Assembler, Limits, Tool

from . import misbehaves

EXIT_CODE = 7


class _Exits:
    def feed(self, data: bytes) -> list[Any]:
        os._exit(EXIT_CODE)

    def close(self) -> list[Any]:
        return []


class _Segfaults:
    def feed(self, data: bytes) -> list[Any]:
        ctypes.string_at(0)  # reads address 0: SIGSEGV
        return []

    def close(self) -> list[Any]:
        return []


def exits(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Calls ``os._exit(7)`` in ``feed()`` on the trigger stream; the reference otherwise."""
    return _Exits() if misbehaves(tools) else Assembler(tools, limits=limits)


def segfaults(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Segfaults in ``feed()`` on the trigger stream; the reference otherwise."""
    return _Segfaults() if misbehaves(tools) else Assembler(tools, limits=limits)

"""An implementation that returns things that are not results on the trigger stream."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from callstream.reference import Assembler, Limits, Tool

from . import misbehaves


class _Garbage:
    def feed(self, data: bytes) -> list[Any]:
        return []

    def close(self) -> list[Any]:
        return ["garbage", 42, {"choice": "zero", "status": "maybe"}]


def factory(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Closes with a string, a number and a malformed dict on the trigger stream; the reference
    otherwise."""
    return _Garbage() if misbehaves(tools) else Assembler(tools, limits=limits)

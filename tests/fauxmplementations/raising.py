"""An implementation whose ``feed()`` raises on the trigger stream."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from callstream.reference import Assembler, Limits, Tool

from . import misbehaves


class _Raises:
    def feed(self, data: bytes) -> list[Any]:
        raise RuntimeError("fauxmplementation: feed() blew up")

    def close(self) -> list[Any]:
        return []


def factory(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Raises from ``feed()`` on the trigger stream; the reference otherwise."""
    return _Raises() if misbehaves(tools) else Assembler(tools, limits=limits)

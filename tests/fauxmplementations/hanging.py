"""An implementation whose ``feed()`` never returns on the trigger stream."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from callstream.reference import Assembler, Limits, Tool

from . import misbehaves


class _Hangs:
    def feed(self, data: bytes) -> list[Any]:
        while True:
            time.sleep(60)

    def close(self) -> list[Any]:
        return []


def factory(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Sleeps forever in ``feed()`` on the trigger stream; the reference otherwise."""
    return _Hangs() if misbehaves(tools) else Assembler(tools, limits=limits)

"""Recognises only ``data: `` with a space, dropping every ``data:{…}`` event.

The space after the colon is optional in SSE; some gateways and local servers omit it, and
clients matching ``line.startswith("data: ")`` silently receive an empty stream
(openclaw/openclaw#129905). Breaks T3: ``data:`` with or without one leading space.
"""

from __future__ import annotations

from ._base import CALLSTREAM, BaseAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["T3"]
CITES = ["openclaw/openclaw#129905"]


class RequiresSpaceAfterData(BaseAssembler):
    """Skips a ``data:`` line whose value does not start with a space."""

    def on_line(self, line: str) -> None:
        if line.startswith("data:") and not line.startswith("data: "):
            return
        super().on_line(line)


factory = RequiresSpaceAfterData

"""Keeps a leading byte-order mark, so the first line reads ``\\ufeffdata`` and its event is lost.

The WHATWG event-stream decoder strips one BOM at the start of the stream; the web-platform
tests check it (web-platform-tests/wpt:eventsource/format-bom.js). A parser that keeps it sees
an unknown field, ignores the line and drops the first event, which in a tool-call stream is
the header with the call's id and name. Breaks T3: a leading BOM is skipped.
"""

from __future__ import annotations

from ._base import CALLSTREAM, BaseAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["T3"]
CITES = ["web-platform-tests/wpt:eventsource/format-bom.js"]


class KeepsBom(BaseAssembler):
    """Leaves the stream's first text as it is."""

    def strip_bom(self, text: str) -> str:
        return text


factory = KeepsBom

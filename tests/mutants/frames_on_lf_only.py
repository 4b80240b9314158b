"""Ends lines at LF only, so a stream with CRLF or CR line endings yields no event at all.

Parsers that split the body on ``"\\n\\n"`` never find an event boundary in ``\\r\\n\\r\\n`` (or in
``\\r\\r``) and silently drop every chunk of an upstream behind a CRLF-emitting proxy
(miruamel/xuan#194); Gemini/Vertex streams end events with ``\\r\\n\\r\\n``. Breaks T2: LF, CRLF and
a lone CR all end lines.
"""

from __future__ import annotations

from ._base import CALLSTREAM, BaseAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["T2"]
CITES = ["miruamel/xuan#194"]


class FramesOnLfOnly(BaseAssembler):
    """Splits lines on LF; a CR is just part of the line."""

    def split_lines(self, text: str) -> list[str]:
        lines = (self.pending_line + text).split("\n")
        self.pending_line = lines.pop()
        return lines


factory = FramesOnLfOnly

"""Reads a CRLF cut between two chunks as two line endings, the LF making a blank line.

A parser that forgets that the previous chunk ended with CR treats the LF that starts the next
chunk as one more line ending: an empty line, which dispatches the event being built. An event
of several ``data:`` lines is then cut in two, and each half fails to parse
(rexxars/eventsource-parser#17, still open; fixed in vercel/ai#6197). Breaks T1 and T2: a CRLF
split across reads is one line ending.
"""

from __future__ import annotations

from ._base import CALLSTREAM, BaseAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["T1", "T2"]
CITES = ["rexxars/eventsource-parser#17", "vercel/ai#6197"]


class SplitsCrlfAcrossChunks(BaseAssembler):
    """Does not carry a trailing CR over to the next chunk."""

    def split_lines(self, text: str) -> list[str]:
        self.after_cr = False
        return super().split_lines(text)


factory = SplitsCrlfAcrossChunks

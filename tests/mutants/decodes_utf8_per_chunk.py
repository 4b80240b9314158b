"""Decodes each transport chunk on its own, so a character cut between chunks becomes U+FFFD.

``chunk.decode("utf-8", errors="replace")`` turns the two halves of a multi-byte character into
two replacement characters. Inside a JSON string the damage still parses, so the corrupted value
is returned as a successful tool argument (deeplethe/utopia#764; danielmiessler/Fabric#2203).
Breaks T1: a chunk boundary may fall anywhere, inside a multi-byte UTF-8 character too.
"""

from __future__ import annotations

from ._base import CALLSTREAM, BaseAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["T1"]
CITES = ["deeplethe/utopia#764", "danielmiessler/Fabric#2203"]


class DecodesUtf8PerChunk(BaseAssembler):
    """Decodes every chunk as if it were the whole stream."""

    def decode_chunk(self, data: bytes) -> str:
        return data.decode("utf-8", errors="replace")


factory = DecodesUtf8PerChunk

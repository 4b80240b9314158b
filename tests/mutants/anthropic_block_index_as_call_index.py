"""Numbers each call by its content block's index, so a text block before it shifts it.

Anthropic counts every block (text, thinking, tool_use) in ``index``; a tool call's position is
its rank among tool_use blocks. litellm mapped the block index straight onto the OpenAI tool
index, so after a text block at 0 the first call came out at index 1
(BerriAI/litellm#5231; fixed the same way by Portkey-AI/gateway#1284). Breaks A5 and E4: calls
are numbered by their own order, and released in it.
"""

from __future__ import annotations

from typing import Any

from ._anthropic_base import CALLSTREAM, AnthropicAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A5", "E4"]
CITES = ["BerriAI/litellm#5231", "Portkey-AI/gateway#1284"]


class BlockIndexAsCallIndex(AnthropicAssembler):
    """Reports each call at its block index."""

    def release(self) -> list[dict[str, Any]]:
        """The results, renumbered by block index."""
        released = super().release()
        for result in released:
            wire = result.pop("wire_index", None)
            if wire is not None:
                result["index"] = wire
        return released


factory = BlockIndexAsCallIndex

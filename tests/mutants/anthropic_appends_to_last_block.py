"""Appends every ``input_json_delta`` to the most recently started tool_use block.

An accumulator that tracks one "current" block instead of routing by ``index`` sends the
fragments of interleaved blocks to the wrong call: praxis-proxy attached ``call_0``'s arguments
to ``call_1`` (praxis-proxy/ai#266), SGLang merged three calls' input into the first block
(sgl-project/sglang#39782), and anthropic-sdk-python appends blocks without checking their index
("TODO: check index", research/wire_formats.md §4.3). Breaks A5: a fragment belongs to the block
its index names.
"""

from __future__ import annotations

from typing import Any

from ._anthropic_base import CALLSTREAM, AnthropicAssembler, Block

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A5"]
CITES = ["praxis-proxy/ai#266", "sgl-project/sglang#39782"]


class AppendsToLastBlock(AnthropicAssembler):
    """Deltas go to the latest tool_use block that is still open."""

    def block_for(self, payload: dict[str, Any]) -> Block:
        """The named block for stops and non-input deltas; the latest open tool block for
        input."""
        delta = payload.get("delta") or {}
        if delta.get("type") == "input_json_delta":
            tools = [b for b in self.blocks.values() if b.call is not None and b.open]
            if tools:
                return tools[-1]
        return super().block_for(payload)


factory = AppendsToLastBlock

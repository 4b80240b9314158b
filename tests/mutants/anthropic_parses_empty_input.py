"""Parses a tool_use block's streamed text even when nothing was streamed: ``json.loads("")``.

A parameterless tool's block starts with ``input: {}`` and streams at most ``partial_json: ""``,
so the accumulated text is empty. Parsing it fails, and the valid call is lost: litellm
(BerriAI/litellm#5063), langchainrb (patterns-ai-core/langchainrb#960), haystack
(deepset-ai/haystack-core-integrations#1947) and Anthropic.SDK for .NET (tghamm/Anthropic.SDK#115)
all shipped it. Breaks C1 and V1: the input of a block that streamed nothing is the start's
``{}``, and a parameterless tool is then called with it.
"""

from __future__ import annotations

import json
from typing import Any

from callstream.reference import Tool

from ._anthropic_base import CALLSTREAM, AnthropicAssembler, Block
from ._base import Call

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["C1", "V1"]
CITES = [
    "BerriAI/litellm#5063",
    "patterns-ai-core/langchainrb#960",
    "deepset-ai/haystack-core-integrations#1947",
    "tghamm/Anthropic.SDK#115",
]


class ParsesEmptyInput(AnthropicAssembler):
    """Never falls back to the start's input."""

    def boundary(self, block: Block) -> None:
        """Parse what was streamed, empty or not."""
        block.streamed = True
        super().boundary(block)

    def parse_arguments(self, call: Call, tool: Tool | None) -> dict[str, Any] | None:
        """``json.loads`` of the text as it is: ``""`` raises."""
        try:
            value = json.loads(call.text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


factory = ParsesEmptyInput

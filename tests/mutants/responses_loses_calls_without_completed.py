"""Releases calls only at response.completed, so a stream that ends without it loses finished calls.

openai-python's ``get_final_response()`` raises "Didn"t receive a response.completed event" and
the calls it had finished go with it (openai/openai-python#3538); readers that flush calls only
on ``response.completed`` drop them when the connection ends first
(OvidijusParsiunas/deep-chat#510, vercel-labs/ai-python#171). Breaks C5 and C2: a call complete
at its own boundary stays complete.
"""

from __future__ import annotations

from typing import Any

from ._responses_base import CALLSTREAM, ResponsesAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["C5", "C2"]
CITES = [
    "openai/openai-python#3538",
    "OvidijusParsiunas/deep-chat#510",
    "vercel-labs/ai-python#171",
]


class ResponsesLosesCallsWithoutCompleted(ResponsesAssembler):
    """The base Responses assembler with the bug of the module docstring."""

    def on_item_done(self, payload: dict[str, Any]) -> None:
        """The boundary ignored: the call waits for response.completed."""
        item = payload.get("item") or {}
        if item.get("type") in ("function_call", "custom_tool_call"):
            call = self.route_item(
                {"item_id": item.get("id"), "output_index": payload.get("output_index")}
            )
            call.status = item.get("status")  # type: ignore[attr-defined]


factory = ResponsesLosesCallsWithoutCompleted

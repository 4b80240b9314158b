"""Gives a call the item's id (fc_…) where the call_id (call_…) belongs.

A tool result must carry the ``call_id``; readers that took ``item.id`` instead sent results the
API could not pair with their call (Alishahryar1/free-claude-code#1189, crewAIInc/crewAI#6657,
nodetool-ai/nodetool#4252). Breaks E2: results go back carrying the original call ids.
"""

from __future__ import annotations

from typing import Any

from ._responses_base import CALLSTREAM, ResponsesAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["E2"]
CITES = ["Alishahryar1/free-claude-code#1189", "crewAIInc/crewAI#6657", "nodetool-ai/nodetool#4252"]


class ResponsesUsesItemIdAsCallId(ResponsesAssembler):
    """The base Responses assembler with the bug of the module docstring."""

    def on_added(self, payload: dict[str, Any]) -> None:
        """The item id taken for the call id."""
        item = payload.get("item") or {}
        if item.get("id"):
            payload = {**payload, "item": {**item, "call_id": item["id"]}}
        super().on_added(payload)

    def on_item_done(self, payload: dict[str, Any]) -> None:
        """The done item's call_id is not looked at either."""
        item = payload.get("item") or {}
        super().on_item_done({**payload, "item": {**item, "call_id": None}})


factory = ResponsesUsesItemIdAsCallId

"""Completes a call at its output_item.added, before any argument arrived.

openai-agents-python emitted ``tool_called`` on ``ResponseOutputItemAddedEvent``, whose
``arguments`` are still empty, and had to move it to ``ResponseOutputItemDoneEvent``
(openai/openai-agents-python#1629, openai/openai-agents-python#1636). Breaks C4: nothing is
released before its completion signal.
"""

from __future__ import annotations

from typing import Any

from ._responses_base import CALLSTREAM, ResponsesAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["C4"]
CITES = ["openai/openai-agents-python#1629", "openai/openai-agents-python#1636"]


class ResponsesReleasesAtAdded(ResponsesAssembler):
    """The base Responses assembler with the bug of the module docstring."""

    def on_added(self, payload: dict[str, Any]) -> None:
        """The call is completed as soon as it is added."""
        super().on_added(payload)
        if self.calls and self.calls[-1].wire == payload.get("output_index"):
            self.complete(self.calls[-1])


factory = ResponsesReleasesAtAdded

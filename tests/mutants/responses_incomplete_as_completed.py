"""Completes the calls of a response.incomplete as if it were response.completed.

An agent loop that never looked at the response's status executed the ``function_call`` items
of a response stopped by ``max_output_tokens``, the last one holding an argument prefix that
sometimes parses (OpenRouterTeam/typescript-agent#125; the same with ``finish_reason: length``
in LibreChat-AI/agents#280). Breaks C3: truncation is not success.
"""

from __future__ import annotations

from typing import Any

from ._responses_base import CALLSTREAM, ResponsesAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["C3"]
CITES = ["OpenRouterTeam/typescript-agent#125", "LibreChat-AI/agents#280"]


class ResponsesIncompleteAsCompleted(ResponsesAssembler):
    """The base Responses assembler with the bug of the module docstring."""

    def on_terminal(self, kind: str, response: dict[str, Any]) -> None:
        """response.incomplete read as response.completed."""
        if kind == "response.incomplete":
            kind = "response.completed"
        super().on_terminal(kind, response)


factory = ResponsesIncompleteAsCompleted

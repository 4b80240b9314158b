"""Sends every delta and done event to the most recently added call, whatever item it names.

A Responses reader that keeps one "current item" (the last ``output_item.added``) and dispatches
``function_call_arguments.delta``, ``.done`` and ``output_item.done`` through it mixes parallel
calls whose events interleave: every call but the last ends with empty arguments. Seen in
oh-my-pi's ``processResponsesStream`` behind llama.cpp's ``/v1/responses``
(can1357/oh-my-pi#1882, can1357/oh-my-pi#1880) and in a Responses transport keyed by the current
call id (vellum-ai/vellum-assistant#25848). Breaks A5: route by the item the event names.
"""

from __future__ import annotations

from typing import Any

from ._base import Call
from ._responses_base import CALLSTREAM, ResponsesAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A5"]
CITES = ["can1357/oh-my-pi#1882", "can1357/oh-my-pi#1880", "vellum-ai/vellum-assistant#25848"]


class ResponsesRoutesToCurrentItem(ResponsesAssembler):
    """The base Responses assembler with the bug of the module docstring."""

    def route_item(self, payload: dict[str, Any]) -> Call:
        """The latest call, whatever the event names."""
        if not self.calls:
            return super().route_item(payload)
        return self.calls[-1]


factory = ResponsesRoutesToCurrentItem

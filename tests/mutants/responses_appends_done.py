"""Appends the whole text of .done and output_item.done to the deltas instead of comparing it.

A proxy translating Responses into Chat Completions appended the ``.done`` arguments (and the
done item"s) after the streamed deltas, so every call came out as its JSON two or three times:
``{"city":"Zurich",…}{"city":"Zurich",…}`` (Soju06/codex-lb#284); simonw/llm concatenated the
arguments twice the same way (simonw/llm#1130). Breaks A2: the text is the deltas, a restatement
is never appended.
"""

from __future__ import annotations

from typing import Any

from ._base import Call
from ._responses_base import CALLSTREAM, ResponsesAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A2"]
CITES = ["Soju06/codex-lb#284", "simonw/llm#1130"]


class ResponsesAppendsDone(ResponsesAssembler):
    """The base Responses assembler with the bug of the module docstring."""

    def restate(self, call: Call, text: Any) -> None:
        """The restatement appended to the buffer."""
        if isinstance(text, str):
            self.append_arguments(call, text)


factory = ResponsesAppendsDone

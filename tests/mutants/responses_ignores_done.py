"""Takes a call's text from its deltas only, ignoring the text .done and output_item.done restate.

A backend that sends the arguments only in ``function_call_arguments.done`` (Codex Spark) leaves
a deltas-only reader with empty arguments: the call runs with ``{}`` or fails validation
(earendil-works/pi#2745, lidge-jun/opencodex#4652). Breaks A2: the restatement is the text when
no delta came.
"""

from __future__ import annotations

from typing import Any

from ._base import Call
from ._responses_base import CALLSTREAM, ResponsesAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A2"]
CITES = ["earendil-works/pi#2745", "lidge-jun/opencodex#4652"]


class ResponsesIgnoresDone(ResponsesAssembler):
    """The base Responses assembler with the bug of the module docstring."""

    def restate(self, call: Call, text: Any) -> None:
        """Restatements ignored."""


factory = ResponsesIgnoresDone

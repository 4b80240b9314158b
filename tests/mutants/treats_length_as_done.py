"""Treats ``finish_reason: "length"`` as done, so a call cut off by the token limit runs.

vLLM's streaming once rewrote ``length`` to ``tool_calls`` for truncated calls
(vllm-project/vllm#53269); consumers that complete calls on any finish reason do the same to
themselves. A truncated call whose text happens to parse is executed with whatever arguments the
limit left it. Breaks C3: truncation is not success.
"""

from __future__ import annotations

from ._base import CALLSTREAM, BaseAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["C3"]
CITES = ["vllm-project/vllm#53269"]


class TreatsLengthAsDone(BaseAssembler):
    """Reads ``length`` as ``tool_calls``."""

    def on_finish(self, choice: int, finish_reason: str) -> None:
        super().on_finish(choice, "tool_calls" if finish_reason == "length" else finish_reason)


factory = TreatsLengthAsDone

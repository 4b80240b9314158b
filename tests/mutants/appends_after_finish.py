"""Keeps appending deltas that arrive after the finish reason, settling calls only at the end.

LiteLLM's proxy appends a duplicate "summary" chunk, with the call's whole arguments again, after
all the others (BerriAI/litellm#20480). An assembler that settles its calls only when the stream
is over, folding in every chunk it got, appends the copy: ``{…}{…}``. Breaks C1 (the finish
reason marks the calls complete) and A2 (their text is the fragments that came before it).
"""

from __future__ import annotations

from collections.abc import Sequence

from callstream.reference import Limits, Reason, Tool

from ._base import CALLSTREAM, BaseAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["C1", "A2"]
CITES = ["BerriAI/litellm#20480"]


class AppendsAfterFinish(BaseAssembler):
    """Notes each finish reason and applies it only when the stream ends."""

    def __init__(
        self, *, tools: Sequence[Tool] | None = None, limits: Limits | None = None
    ) -> None:
        super().__init__(tools=tools, limits=limits)
        self.noted: dict[int, str] = {}

    def on_finish(self, choice: int, finish_reason: str) -> None:
        self.noted.setdefault(choice, finish_reason)

    def end(self, reason: Reason) -> None:
        for choice, finish_reason in self.noted.items():
            super().on_finish(choice, finish_reason)
        super().end(reason)


factory = AppendsAfterFinish

"""Merges parallel calls that share an index, so Ollama's calls (all at index 0) become one.

Ollama streams every parallel call whole at ``index: 0``, told apart only by a new ``id`` and
``name`` (ollama/ollama#15457; vercel/ai#14277). An accumulator keyed by index alone appends the
second call to the first: ``{"query": "Emma Bull"}{"query": "Virginia Woolf"}``
(huggingface/smolagents#1958). Breaks A5 as the lenient profile reads it: a new id with a name at
an index in use is a new call.
"""

from __future__ import annotations

from ._base import CALLSTREAM, BaseAssembler, Call

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A5"]
CITES = ["ollama/ollama#15457", "vercel/ai#14277", "huggingface/smolagents#1958"]


class MergesIndexZeroCalls(BaseAssembler):
    """The call at an index takes every later delta there, whatever its id."""

    def route(
        self, choice: int, index: int | None, call_id: str | None, name: str | None
    ) -> Call | None:
        if index is not None and (choice, index) in self.positions:
            return self.positions[choice, index]
        return super().route(choice, index, call_id, name)


factory = MergesIndexZeroCalls

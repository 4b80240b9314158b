"""Crashes with ``IndexError`` on a chunk whose ``choices`` is empty.

Code that reads ``chunk["choices"][0]`` fails on Azure OpenAI's first chunk, which carries only
``prompt_filter_results`` and ``choices: []`` (AbanteAI/archive-old-cli-mentat#429,
pydantic/pydantic-ai#164), and on the usage chunk that ``include_usage`` adds at the end. Breaks
A4: a chunk without choices carries no update (quirk C21), so it changes nothing.
"""

from __future__ import annotations

from typing import Any

from ._base import CALLSTREAM, BaseAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A4"]
CITES = ["AbanteAI/archive-old-cli-mentat#429", "pydantic/pydantic-ai#164"]


class CrashesOnEmptyChoices(BaseAssembler):
    """Reads the first choice of every chunk."""

    def on_chunk(self, payload: dict[str, Any]) -> None:
        self.on_choice(payload["choices"][0])


factory = CrashesOnEmptyChoices

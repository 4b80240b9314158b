"""Crashes with ``TypeError`` when a tool-call delta has no ``index``.

openai-python's stream helper looks calls up with ``tool_calls[tool_call_delta.index]``; Gemini's
OpenAI-compatible endpoint sends no ``index``, and the lookup raises ``TypeError: list indices
must be integers or slices, not NoneType`` (openai/openai-python#2806). Breaks A5: where a
provider sends no index, fall back to the call id.
"""

from __future__ import annotations

import operator
from typing import Any, cast

from ._base import CALLSTREAM, BaseAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A5"]
CITES = ["openai/openai-python#2806"]


class CrashesOnMissingIndex(BaseAssembler):
    """Uses ``index`` as a list index, which must be an integer."""

    def tool_index(self, entry: dict[str, Any]) -> int | None:
        # The SDK's type says ``index: int``; its chunks are built without validation.
        return operator.index(cast("int", entry.get("index")))


factory = CrashesOnMissingIndex

"""Drops the arguments of the delta that carries the name, so llama.cpp's leading ``{`` is lost.

Later llama.cpp builds send ``id``, ``type``, ``name`` and the opening ``{`` of the arguments in
one first delta; clients that take only the identity from a header delta and start the argument
buffer empty lose that text (ggml-org/llama.cpp#22722). The same clients lose every argument of
providers that send a whole call in one delta (Groq, Mistral). Breaks A2: every
``function.arguments`` fragment is appended, the header's included.
"""

from __future__ import annotations

from typing import Any

from ._base import CALLSTREAM, BaseAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A2"]
CITES = ["ggml-org/llama.cpp#22722"]


class DropsHeaderArguments(BaseAssembler):
    """Takes only the identity from a delta that names the function."""

    def on_tool_delta(self, choice: int, entry: dict[str, Any]) -> None:
        function = entry.get("function") or {}
        if function.get("name"):
            entry = {**entry, "function": {"name": function["name"]}}
        super().on_tool_delta(choice, entry)


factory = DropsHeaderArguments

"""Never checks the arguments against the tool's JSON Schema, so any JSON object runs.

openai-python's stream helper parses arguments into the tool's model only for ``strict`` tools;
for the rest the caller gets whatever JSON the model wrote, as its tests show
(openai/openai-python:tests/lib/chat/test_completions_streaming.py). Models do write ill-typed
arguments, such as the string ``"3"`` for an integer (Bedrock Llama, per langchain-aws). Breaks
V2: the parsed value is checked against the tool's schema before it may run.
"""

from __future__ import annotations

from typing import Any

from ._base import CALLSTREAM, BaseAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["V2"]
CITES = ["openai/openai-python:tests/lib/chat/test_completions_streaming.py"]


class SkipsSchemaValidation(BaseAssembler):
    """Accepts every parsed object."""

    def matches_schema(self, name: str, value: dict[str, Any]) -> bool:
        return True


factory = SkipsSchemaValidation

"""Calls a tool with ``{}`` when its arguments never arrived: ``json.loads(arguments or "{}")``.

Streams do lose arguments: vLLM streamed only the name with ``arguments=None``
(vllm-project/vllm#9693). Defaulting the missing text to ``{}`` turns that loss into a call that
runs with no arguments, the way hermes-agent swapped truncated arguments for ``{}`` and
dispatched them (NousResearch/hermes-agent#105189). Only a tool whose schema requires a field is
saved, by the schema check. Breaks V1: parse the complete text once; what never arrived is not
an empty object, except for a tool that takes no parameters.
"""

from __future__ import annotations

from typing import Any

from callstream.reference import Tool

from ._base import CALLSTREAM, BaseAssembler, Call

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["V1"]
CITES = ["vllm-project/vllm#9693", "NousResearch/hermes-agent#105189"]


class EmptyArgumentsBecomeObject(BaseAssembler):
    """Parses ``text or "{}"``."""

    def parse_arguments(self, call: Call, tool: Tool | None) -> dict[str, Any] | None:
        if not call.text:
            return {}
        return super().parse_arguments(call, tool)


factory = EmptyArgumentsBecomeObject

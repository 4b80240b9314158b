"""Keys calls by function name, so two calls to the same tool merge into one.

hermes-agent's Gemini adapter keyed in-flight calls by ``(part_index, name, …)``; when the model
called one tool twice, the second call's arguments were appended to the first, giving
``{…}{…}`` (NousResearch/hermes-agent#59871). Dify's agent runner kept calls in a dict keyed by
tool name and lost all but one of the calls to the same tool (langgenius/dify#16220). Breaks A6:
never key by function name.
"""

from __future__ import annotations

from ._base import CALLSTREAM, BaseAssembler, Call

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A6"]
CITES = ["NousResearch/hermes-agent#59871", "langgenius/dify#16220"]


class KeysByFunctionName(BaseAssembler):
    """A delta naming a function already called continues that call, at whatever index."""

    def route(
        self, choice: int, index: int | None, call_id: str | None, name: str | None
    ) -> Call | None:
        if name is not None and index is not None:
            for call in self.calls_of(choice):
                if call.name == name:
                    self.positions[choice, index] = call
                    return call
        return super().route(choice, index, call_id, name)


factory = KeysByFunctionName

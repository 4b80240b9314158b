"""Keeps the arguments output_item.added carried and appends the deltas that repeat them.

A backend that puts the whole arguments in ``output_item.added`` and then streams them again as
deltas (icoretech/codex-pooler#193) doubles the text of a reader that starts from the added
item, as openai-python's ``ResponseStreamState`` does, and as the Chat Completions example of
async-openai did with Mistral's header arguments (64bit/async-openai#329). Breaks A2: the first
delta starts the text again.
"""

from __future__ import annotations

from typing import Any

from ._responses_base import CALLSTREAM, ResponsesAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A2"]
CITES = ["icoretech/codex-pooler#193", "64bit/async-openai#329"]


class ResponsesKeepsAddedArguments(ResponsesAssembler):
    """The base Responses assembler with the bug of the module docstring."""

    def on_delta(self, payload: dict[str, Any]) -> None:
        """Every delta appended to whatever the call holds."""
        call = self.route_item(payload)
        if call.restated is None:  # type: ignore[attr-defined]
            self.append_arguments(call, payload.get("delta"))


factory = ResponsesKeepsAddedArguments

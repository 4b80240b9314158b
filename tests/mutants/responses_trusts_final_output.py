"""Takes the calls from response.completed's output, dropping the streamed ones it does not list.

Backends that end with ``output: []`` (router-for-me/CLIProxyAPI#2626, QuantumNous/new-api#4362)
leave a reader that builds the turn from the terminal snapshot with no calls at all, although
every call streamed and completed (RakuenSoftware/aimee#2043, NousResearch/hermes-agent#5758,
open-webui/open-webui#27800). Breaks C1: the streamed items are the calls.
"""

from __future__ import annotations

from typing import Any

from ._responses_base import CALLSTREAM, ResponsesAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["C1"]
CITES = [
    "RakuenSoftware/aimee#2043",
    "NousResearch/hermes-agent#5758",
    "open-webui/open-webui#27800",
]


class ResponsesTrustsFinalOutput(ResponsesAssembler):
    """The base Responses assembler with the bug of the module docstring."""

    def on_item_done(self, payload: dict[str, Any]) -> None:
        """Nothing is released before the final output."""

    def on_terminal(self, kind: str, response: dict[str, Any]) -> None:
        """Only the calls the final output lists are completed; the others are forgotten."""
        listed = {
            item.get("call_id") for item in response.get("output") or () if isinstance(item, dict)
        }
        if kind == "response.completed":
            for call in self.calls:
                if call.id in listed:
                    self.complete(call)
                else:
                    call.final = True
        super().on_terminal(kind, response)


factory = ResponsesTrustsFinalOutput

"""Parses the input after every fragment and fails the whole message on invalid JSON.

anthropic-sdk-python's accumulator re-parses the buffer with jiter after each
``input_json_delta`` and raised a bare ``ValueError`` when fine-grained streaming delivered
invalid JSON (anthropics/anthropic-sdk-python#1265), aborting the stream: ``get_final_message``
never returns, and a valid call earlier in the same message is lost with it. The calls are also
only handed over with the final message, never at their own ``content_block_stop``. Breaks V1
and C5: invalid input is one call's failure, found once at its boundary, and a call complete at
its boundary stands.
"""

from __future__ import annotations

import json
from typing import Any

from callstream.reference import Reason

from ._anthropic_base import CALLSTREAM, AnthropicAssembler, Block
from ._base import StreamFailure

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["V1", "C5"]
CITES = ["anthropics/anthropic-sdk-python#1265"]


class RaisesOnInvalidInput(AnthropicAssembler):
    """Fails on the first fragment no partial parser accepts; releases at message_stop only."""

    def on_input(self, block: Block, fragment: Any) -> None:
        """Append, then check the buffer still reads as the start of a JSON value."""
        super().on_input(block, fragment)
        if block.call is not None and not _could_be_prefix(block.call.text):
            raise StreamFailure(Reason.PROTOCOL_ERROR)

    def boundary(self, block: Block) -> None:
        """Nothing at the block's stop: the final message, at the stop reason, holds every
        call."""
        block.open = False
        block.held = True


def _could_be_prefix(text: str) -> bool:
    """True when some continuation of ``text`` is valid JSON (a partial parser's test)."""
    for tail in ("", '"', "}", '"}', "]}", '"]}', "0}", "null}", '":0}'):
        try:
            json.loads(text + tail)
        except ValueError:
            continue
        return True
    return text.rstrip().endswith((",", ":", "{", "[")) and _could_be_prefix(text.rstrip()[:-1])


factory = RaisesOnInvalidInput

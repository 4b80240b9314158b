"""JSON-parses the data of every named event, also an empty one, and fails the stream.

Proxies and CDNs flush an ``event:`` line whose ``data:`` is empty; the Anthropic SDK then ran
``JSON.parse('')`` and aborted (anthropics/anthropic-sdk-typescript#903), and hermes-agent had to
patch the Python SDK's decoder for ``JSONDecodeError`` on the same frames
(NousResearch/hermes-agent#35418). Breaks T3: empty data carries nothing to parse.
"""

from __future__ import annotations

from callstream.reference import Reason

from ._anthropic_base import CALLSTREAM, AnthropicAssembler
from ._base import StreamFailure

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["T3"]
CITES = ["anthropics/anthropic-sdk-typescript#903", "NousResearch/hermes-agent#35418"]


class ParsesEmptyData(AnthropicAssembler):
    """An event with empty data is parsed like any other, and fails."""

    def on_event(self, event: str, data: str) -> None:
        """``json.loads("")`` raises: the stream is broken."""
        if not data and not self.ended:
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        super().on_event(event, data)


factory = ParsesEmptyData

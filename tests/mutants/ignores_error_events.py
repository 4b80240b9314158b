"""Ignores an in-band error: the error payload is read as a chunk without choices.

A stream that fails after HTTP 200 says so in a data event, nested (``{"error": {…}}``, OpenAI,
OpenRouter) or flat (``{"object": "error", …}``, vLLM), or with ``event: error``. A client that
skips payloads without ``choices`` never sees it, reports the stream as merely unfinished and
loses the provider's code and message; goose had to learn vLLM's flat shape (block/goose#8031).
Breaks T4 and C3: an error payload ends the stream as failed, and its calls as ``stream_error``.
"""

from __future__ import annotations

from typing import Any

from ._base import CALLSTREAM, BaseAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["T4", "C3"]
CITES = ["block/goose#8031"]


class IgnoresErrorEvents(BaseAssembler):
    """Lets an error payload pass as noise."""

    def on_error(self, payload: Any) -> None:
        """Nothing: the payload has no choices, so there is nothing to do."""


factory = IgnoresErrorEvents

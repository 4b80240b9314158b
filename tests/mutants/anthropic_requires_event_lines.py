"""Dispatches Anthropic events by their SSE ``event:`` name only, dropping events without one.

The ``event:`` line is optional in SSE and redundant here (the payload carries ``type``), but
the TypeScript SDK's parser and pi's own dispatched only on the name: behind a proxy that omits
the lines every event was dropped silently (earendil-works/pi#1983, earendil-works/pi#4381).
Breaks T3: an event without an ``event:`` line is a ``message`` event, and its data still says
what it is.
"""

from __future__ import annotations

from ._anthropic_base import CALLSTREAM, AnthropicAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["T3"]
CITES = ["earendil-works/pi#1983", "earendil-works/pi#4381"]


class RequiresEventLines(AnthropicAssembler):
    """Ignores ``message`` events (those with no ``event:`` line)."""

    def on_event(self, event: str, data: str) -> None:
        """Only named events are read."""
        if event != "message":
            super().on_event(event, data)


factory = RequiresEventLines

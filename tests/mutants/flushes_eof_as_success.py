"""Completes the open calls when the connection closes without a finish reason or ``[DONE]``.

Providers end streams silently mid-call (CommandCodeAI/command-code#785). The workaround
proposed to pi for such providers, to "proceed anyway" when tool calls were received
(earendil-works/pi#6226), runs whatever text arrived, which still parses whenever the cut fell
after a closing brace. Breaks C2 and C3: the end of the stream is a fallback flush that reports
how the stream ended, and a stream cut off mid-call is not success.
"""

from __future__ import annotations

from ._base import CALLSTREAM, BaseAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["C2", "C3"]
CITES = ["CommandCodeAI/command-code#785", "earendil-works/pi#6226"]


class FlushesEofAsSuccess(BaseAssembler):
    """At end of file, completes every call still open."""

    def on_eof(self) -> None:
        for call in self.calls:
            self.complete(call)


factory = FlushesEofAsSuccess

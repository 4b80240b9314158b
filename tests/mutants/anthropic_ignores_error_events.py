"""Classifies errors by HTTP status: an ``error`` event inside a 200 stream is not an error.

The Messages API streams with status 200 and reports an overload mid-stream as
``event: error`` / ``{"type": "error", "error": {"type": "overloaded_error", …}}``. Clients
that key on the status never see it: anthropic-sdk-python raised a bare ``APIStatusError`` with
``status_code=200`` (anthropics/anthropic-sdk-python#1918), retries keyed on the status never
fired (vercel/ai#10653, Podden/openwebui_anthropic_api_manifold_pipe#19), and gateways logged
the stream as a success (Helicone/helicone#4678). Breaks T4 and C3: an error event ends the
stream as failed, its open calls ``stream_error``, classified by ``error.type``.
"""

from __future__ import annotations

from typing import Any

from ._anthropic_base import CALLSTREAM, AnthropicAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["T4", "C3"]
CITES = [
    "anthropics/anthropic-sdk-python#1918",
    "vercel/ai#10653",
    "Podden/openwebui_anthropic_api_manifold_pipe#19",
    "Helicone/helicone#4678",
]


class IgnoresErrorEvents(AnthropicAssembler):
    """The status was 200, so an error event is noise."""

    def on_error(self, payload: Any) -> None:
        """Nothing: the HTTP status said the request succeeded."""


factory = IgnoresErrorEvents

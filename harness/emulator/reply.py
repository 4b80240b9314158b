"""What the provider emulator answers one model name with: a :class:`Reply`, built by the
emulated routes and played by the app."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["SSE", "Reply"]

SSE = "text/event-stream; charset=utf-8"
"""The content type of a streamed answer."""


@dataclass(frozen=True, slots=True)
class Reply:
    """What the emulator answers one model name with."""

    chunks: tuple[bytes, ...]
    """The response body, each chunk written and flushed on its own."""
    delays: tuple[float, ...] = ()
    """Seconds to wait before writing each chunk (missing entries: none)."""
    status: int = 200
    content_type: str = SSE
    completion: Mapping[str, Any] | None = None
    """The JSON body for ``stream: false``; None answers such a request with a 400."""
    linger: float = 0.0
    """Seconds the connection stays open after the last chunk (or until the client leaves)."""
    heartbeat: float = 0.0
    """While the connection lingers, a ``: keep-alive`` comment every this many seconds."""
    headers: tuple[tuple[str, str], ...] = ()
    """More response headers (a hostile route echoes a credential in one)."""

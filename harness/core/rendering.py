"""Rendering a StreamSpec: its dialect's events, then SSE bytes (:mod:`.wire`).

``render(spec)`` returns the bytes and, for each event, the stream offset just past its blank
line, so the oracle can say from which byte a call may be released (C4). Literal specs are
encoded as given (events, read by the dialect) or passed through (bytes).
"""

from __future__ import annotations

from .dialects import dialect
from .spec import StreamSpec
from .wire import Event, Rendered, encode

__all__ = ["render", "render_events"]


def render(spec: StreamSpec) -> Rendered:
    """The spec as SSE bytes, with the end offset of every event."""
    if spec.literal_sse is not None:
        return Rendered(spec.literal_sse, (), ())
    return encode(
        render_events(spec), spec.transport, keepalive=spec.noise.keepalive, cut=spec.ending.cut
    )


def render_events(spec: StreamSpec) -> list[Event]:
    """The spec as the list of events its dialect sends it as."""
    speaker = dialect(spec.dialect)
    if spec.literal_events is not None:
        return [speaker.literal(item) for item in spec.literal_events]
    return speaker.events(spec)

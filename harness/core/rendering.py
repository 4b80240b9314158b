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


_RECENT: dict[int, tuple[StreamSpec, Rendered]] = {}
"""The last few specs rendered, by identity, with their bytes. A fuzzed spec is rendered by the
generator's check that the oracle predicts it, by ``scenario_for``, by the search loop and by
``run_case``; a spec is frozen, so its bytes are the same each time and are worked out once."""
_KEPT = 8


def render(spec: StreamSpec) -> Rendered:
    """The spec as SSE bytes, with the end offset of every event."""
    kept = _RECENT.get(id(spec))
    if kept is not None and kept[0] is spec:
        return kept[1]
    rendered = _render(spec)
    if len(_RECENT) >= _KEPT:
        _RECENT.pop(next(iter(_RECENT)), None)
    _RECENT[id(spec)] = (spec, rendered)
    return rendered


def _render(spec: StreamSpec) -> Rendered:
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

"""How long one answer took, and how much of it came: the figures a certificate lists."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from ...corpus.cassette import Recording
from .reading import events_of

__all__ = ["Timing", "timing_of"]


@dataclass(frozen=True, slots=True)
class Timing:
    """How long one answer took, in seconds from sending the request."""

    response: float | None
    """Until the status line and headers."""
    first_byte: float | None
    first_event: float | None
    """Until the first data event (comments do not count)."""
    max_gap: float | None
    """The longest wait between two data events."""
    total: float
    bytes: int
    events: int
    """Data events, ``[DONE]`` included."""
    comments: int

    def to_dict(self) -> dict[str, Any]:
        """As JSON-serialisable data."""
        return {
            "response": self.response,
            "first_byte": self.first_byte,
            "first_event": self.first_event,
            "max_gap": self.max_gap,
            "total": self.total,
            "bytes": self.bytes,
            "events": self.events,
            "comments": self.comments,
        }


def timing_of(recording: Recording) -> Timing:
    """The figures of one answer."""
    events, comments = events_of(recording) if recording.stream else ([], 0)
    times = [event.t for event in events]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    return Timing(
        response=None if recording.response is None else recording.response.t,
        first_byte=recording.chunks[0].t if recording.chunks else None,
        first_event=times[0] if times else None,
        max_gap=round(max(gaps), 6) if gaps else None,
        total=recording.ended.t,
        bytes=len(recording.body),
        events=len(times),
        comments=comments,
    )

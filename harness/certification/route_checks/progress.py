"""The checks of progress: an answer that passed a size limit, stopped making progress, took
longer than the deadline or lost its connection in the middle."""

from __future__ import annotations

from .answer import Answer, StreamAnswer
from .findings import RouteFinding

__all__ = ["cut_short", "too_large"]


def too_large(answer: Answer) -> list[RouteFinding]:
    """An answer whose reading stopped at a size limit: the byte cap, or the SSE decoder's
    limits on a line or an event."""
    recording = answer.recording
    if recording.ended.how != "too-large":
        return []
    return [
        answer.finding(
            "size",
            "error",
            "the answer passed a size limit",
            f"after {len(recording.body)} bytes: {recording.ended.error}",
            offset=len(recording.body),
        )
    ]


def cut_short(answer: StreamAnswer) -> list[RouteFinding]:
    """A stream that ended before its end: past a size limit, without progress within the
    timeout, past the deadline, or on a broken connection."""
    recording = answer.recording
    ended = recording.ended
    events = len(answer.reading.events)
    limit = recording.context.get("timeout")
    if ended.how == "too-large":
        return too_large(answer)
    if ended.how == "idle":
        comments = answer.reading.comments
        what = f"only {comments} keep-alive comments" if comments else "silence"
        return [
            answer.finding(
                "progress",
                "error",
                "no progress: no data event within the timeout",
                f"{what} after {events} data events; abandoned at {ended.t:.2f} s"
                + (f" (timeout {limit} s)" if limit else ""),
                offset=len(recording.body),
            )
        ]
    if ended.how == "deadline":
        return [
            answer.finding(
                "progress",
                "error",
                "the response did not end within the deadline",
                f"{events} data events, {len(recording.body)} bytes; abandoned at {ended.t:.2f} s",
                offset=len(recording.body),
            )
        ]
    if ended.how == "error":
        return [
            answer.finding(
                "connection",
                "error",
                "the connection broke in the middle of the response",
                f"after {len(recording.body)} bytes: {ended.error}",
                offset=len(recording.body),
            )
        ]
    return []

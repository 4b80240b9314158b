"""The checks of the transport: whether an answer came at all, with a 2xx status and the content
type and encoding asked for, as an event stream free of in-band errors that the reference could
read to its end."""

from __future__ import annotations

from ..wires import qualified
from ._text import content_type_of, error_message
from .answer import Answer, StreamAnswer, an_event_stream
from .findings import RouteFinding

__all__ = [
    "completion_content_type",
    "no_events",
    "stream_content_type",
    "stream_errors",
    "unanswered",
]

_NO_RESPONSE = {
    "no-connection": ("connection", "the route cannot be reached"),
    "no-response": ("progress", "no response within the timeout"),
    "deadline": ("progress", "no response within the deadline"),
}
"""The check and the title for an answer without a response, by how it ended."""
_BROKE_BEFORE = ("connection", "the connection broke before a response")


def unanswered(answer: Answer) -> list[RouteFinding]:
    """Why there is no answer to judge, if there is none: no connection or no response, a
    status other than 2xx, or a compressed body."""
    recording = answer.recording
    ended = recording.ended
    if recording.response is None:
        check, title = _NO_RESPONSE.get(ended.how, _BROKE_BEFORE)
        return [answer.finding(check, "error", title, ended.error or "")]
    status = recording.response.status
    if not 200 <= status < 300:
        body = recording.body.decode("utf-8", "replace")
        return [
            answer.finding(
                "http_status",
                "error",
                f"the route answered {status}",
                error_message(body) or "no body",
                offset=0,
                excerpt=body,
            )
        ]
    if ended.how == "encoded":
        return [
            answer.finding(
                "content_encoding",
                "error",
                "a compressed body although identity was asked for",
                ended.error or "",
            )
        ]
    return []


def stream_content_type(answer: StreamAnswer) -> list[RouteFinding]:
    """A stream sent as anything but ``text/event-stream``."""
    content_type = content_type_of(answer.recording)
    if content_type.startswith("text/event-stream"):
        return []
    return [
        answer.finding(
            "content_type",
            answer.deviation,
            "a stream not sent as text/event-stream",
            f"content type {content_type or 'missing'!r}",
        )
    ]


def completion_content_type(answer: Answer) -> list[RouteFinding]:
    """A non-streaming answer sent as anything but ``application/json``."""
    content_type = content_type_of(answer.recording)
    if content_type.startswith("application/json"):
        return []
    return [
        answer.finding(
            "content_type",
            answer.deviation,
            "a non-streaming answer not sent as application/json",
            f"content type {content_type or 'missing'!r}",
        )
    ]


def no_events(answer: StreamAnswer) -> list[RouteFinding]:
    """A body without a single event, that was not cut short: not an event stream."""
    if an_event_stream(answer):
        return []
    body = answer.recording.body
    return [
        answer.finding(
            "sse_framing",
            "error",
            "no event in the body: not an event stream",
            f"{len(body)} bytes without a single data event",
            offset=0,
            excerpt=body[:160].decode("utf-8", "replace"),
        )
    ]


def stream_errors(answer: StreamAnswer) -> list[RouteFinding]:
    """An error carried in the stream (an ``error`` event, an error payload), else what
    stopped the reference reading it: either way the answer is not whole."""
    reading = answer.reading
    if reading.error is not None:
        number, event = reading.error
        return [
            answer.finding(
                "stream_error",
                "error",
                "the stream carried an error",
                f"event {number}: {reading.failure or event.data}",
                quirk=qualified(answer.wire, "C26"),
                offset=event.offset,
                excerpt=event.data,
            )
        ]
    if reading.failure is None:
        return []
    # Not JSON, not a chunk, or past a limit: the reference said which, in its words.
    bad = next(
        (
            event
            for event, payload in zip(reading.events, reading.payloads, strict=True)
            if event.data and event.data.strip() != "[DONE]" and not isinstance(payload, dict)
        ),
        None,
    )
    return [
        answer.finding(
            "chunk_envelope",
            "error",
            "the stream could not be read to its end",
            reading.failure,
            offset=None if bad is None else bad.offset,
            excerpt=None if bad is None else bad.data,
        )
    ]

"""A streamed body read once: its data events located in bytes and time, and what the reference
assembler made of it, fed line by line so that each deviation it records is located at the
event that caused it."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from callstream.reference import Assembler, CallResult, Finding, SSEDecoder, SSELimitError

from ...core.case import line_spans
from ...core.tools import parse_tools
from ...corpus.cassette import Recording
from ..wires import Wire, wire_of
from ._text import parse_json
from .findings import Profile

__all__ = ["NOT_READ", "DataEvent", "StreamReading", "events_of", "read_stream"]


@dataclass(frozen=True, slots=True)
class DataEvent:
    """A data event of a streamed body, where it lies in the body and when it came."""

    offset: int
    """Where the event's first field line starts."""
    end: int
    """Where the line that dispatched it ends."""
    t: float
    """When the bytes that dispatched it arrived."""
    event: str
    data: str


def events_of(recording: Recording) -> tuple[list[DataEvent], int]:
    """The data events of a streamed body, located in bytes and time, and the comment count."""
    if not recording.chunks:
        return [], 0
    decoder = SSEDecoder()
    ends = list(itertools.accumulate(len(chunk.data) for chunk in recording.chunks))
    times = [chunk.t for chunk in recording.chunks]
    events: list[DataEvent] = []
    first: int | None = None  # where the event being read started
    body = recording.body
    for start, line in _lines(body):
        blank = not line.strip(b"\r\n")
        if first is None and not blank and not line.startswith(b":"):
            first = start
        stop = start + len(line)
        at = times[min(bisect.bisect_left(ends, stop), len(times) - 1)]
        try:
            dispatched = decoder.feed(line)
        except SSELimitError as exc:
            # The rest cannot be decoded: the size check reports it, from how it ended.
            dispatched = exc.events
            stop = len(body)
        for event in dispatched:
            events.append(
                DataEvent(start if first is None else first, stop, at, event.event, event.data)
            )
        if stop == len(body):
            break
        if blank:
            first = None
    decoder.close()
    return events, decoder.comments


Location = tuple[int, str]
"""Where a finding was first seen: the byte offset of its event, and the event's text."""


@dataclass(frozen=True, slots=True)
class StreamReading:
    """A streamed body fed to the reference line by line: every finding and release located,
    every event's payload parsed once."""

    events: tuple[DataEvent, ...]
    payloads: tuple[Any, ...]
    """Each event's data parsed as JSON (None where it is not JSON)."""
    comments: int
    """Keep-alive comments."""
    findings: tuple[Finding, ...]
    """What the reference recorded under the profile, in the order it first saw each."""
    located: Mapping[tuple[str, int | None, int | None], Location]
    """Where each finding, by (quirk, choice, call index), was first seen."""
    released: Mapping[tuple[int, int], int]
    """The offset of the line that released each call, by (choice, call index)."""
    results: tuple[CallResult, ...]
    """The calls as the profile releases them."""
    lenient_results: tuple[CallResult, ...]
    """The calls as a lenient assembler releases them: what the route meant to call."""
    failure: str | None
    """Why the reference could not read the stream to its end, if it could not."""
    error: tuple[int, DataEvent] | None
    """The number (from 1) and the event of the first event that carries an error: an
    ``error`` event, an error payload, or the dialect's failure (``response.failed``)."""


NOT_READ = StreamReading((), (), 0, (), {}, {}, (), (), None, None)
"""The reading of a body that is not an answer to judge: nothing in it is read."""


def read_stream(recording: Recording, profile: Profile) -> StreamReading:
    """Feed the streamed body of ``recording`` to the reference under ``profile`` (and, under
    the strict profile, to a lenient assembler too), line by line, in the dialect it was
    recorded in."""
    body = recording.body
    wire = wire_of(recording.context)
    tools = parse_tools(recording.request.body.get("tools") or [])
    assembler = Assembler(tools, profile=profile, dialect=wire.name)
    lenient = Assembler(tools, dialect=wire.name) if profile == "strict" else None
    events, comments = events_of(recording)
    located: dict[tuple[str, int | None, int | None], Location] = {}
    released: dict[tuple[int, int], int] = {}
    results: list[CallResult] = []
    lenient_results: list[CallResult] = []

    def locate(offset: int, excerpt: str) -> None:
        for finding in assembler.findings:
            located.setdefault((finding.quirk, finding.choice, finding.index), (offset, excerpt))

    dispatched = 0  # events dispatched by the lines fed so far
    for start, line in _lines(body):
        stop = start + len(line)
        while dispatched < len(events) and events[dispatched].end <= stop:
            dispatched += 1
        fed = assembler.feed(line)
        for result in fed:
            released[(result.choice, result.index)] = start
        results += fed
        if lenient is not None:
            lenient_results += lenient.feed(line)
        if dispatched:
            last = events[dispatched - 1]
            locate(last.offset, last.data)
        else:
            locate(start, line.decode("utf-8", "replace"))
    results += assembler.close()
    locate(len(body), body[-120:].decode("utf-8", "replace"))
    payloads = tuple(parse_json(event.data) for event in events)
    return StreamReading(
        events=tuple(events),
        payloads=payloads,
        comments=comments,
        findings=tuple(assembler.findings),
        located=located,
        released=released,
        results=tuple(results),
        lenient_results=tuple(
            lenient_results + lenient.close() if lenient is not None else results
        ),
        failure=assembler.failure,
        error=_first_error(events, payloads, wire),
    )


def _first_error(
    events: Sequence[DataEvent], payloads: Sequence[Any], wire: Wire
) -> tuple[int, DataEvent] | None:
    for number, (event, payload) in enumerate(zip(events, payloads, strict=True), 1):
        if (
            event.event == "error"
            or (isinstance(payload, dict) and payload.get("error"))
            or wire.is_error(payload)
        ):
            return number, event
    return None


def _lines(body: bytes) -> Iterator[tuple[int, bytes]]:
    """Each line of ``body`` with its offset, line ending included."""
    for start, stop in line_spans(body):
        yield start, body[start:stop]

"""What a check reads: one answer of a run of a probe, read once, with what the probe asked for,
and how far the answer got (the gates a check may need it to have passed).

An answer gets as far as it gets: the route may not answer at all, answer something other than
2xx, or compress the body (then there is nothing to judge); a stream may hold no event, or be
aborted (too slow, too large, cut) or broken (an error event, a body the reference cannot read)
(then it is not judged as a whole); a non-streaming answer may be too large or not an answer
of the dialect (a chat.completion, a Message, a response object). Each check names the gate
it needs in the table, and the gates are computed here, from the answer alone: no check
depends on another having run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from callstream.reference import CallResult

from ...corpus.cassette import Recording
from .. import wires
from ..wires import Wire, wire_of
from ._text import clip, parse_json, writable
from .findings import Profile, RouteFinding, Severity
from .reading import NOT_READ, StreamReading, read_stream

__all__ = [
    "Answer",
    "Asked",
    "CompletionAnswer",
    "StreamAnswer",
    "a_completion",
    "aborted",
    "always",
    "an_event_stream",
    "answered",
    "comparable",
    "read_completion",
    "read_streamed",
    "read_whole",
    "twin_of",
    "within_size",
]

_ABORTED = frozenset(
    {"idle", "deadline", "too-large", "encoded", "error", "no-connection", "no-response"}
)
"""How an answer ends when we stopped reading it, not the route."""


@dataclass(frozen=True, slots=True)
class Asked(wires.Asked):
    """What the probe asked of the route (see :class:`callstream.certification.wires.Asked`)."""

    @classmethod
    def of(cls, recording: Recording) -> Asked:
        """What ``recording`` 's request asked for, read in the dialect it was recorded in."""
        asked = wire_of(recording.context).asked(recording.request.body, recording.calls)
        return cls(asked.named, asked.required, asked.limited, asked.wants_usage, asked.calls)


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer of a run of a probe, and how it is judged: what every check reads."""

    recording: Recording
    stream: bool
    """The streamed answer (else the non-streaming one): where its findings were found."""
    profile: Profile
    asked: Asked

    @property
    def wire(self) -> Wire:
        """The dialect the answer was asked and is read in."""
        return wire_of(self.recording.context)

    @property
    def strict(self) -> bool:
        """Judged under the strict profile."""
        return self.profile == "strict"

    @property
    def deviation(self) -> Severity:
        """The severity of a deviation from the dialect's documented behaviour that a lenient
        assembler mends: an error under the strict profile, else a warning."""
        return "error" if self.strict else "warning"

    def finding(
        self,
        check: str,
        severity: Severity,
        title: str,
        detail: str,
        *,
        quirk: str | None = None,
        offset: int | None = None,
        excerpt: str | None = None,
    ) -> RouteFinding:
        """A finding of ``check`` in this answer; the detail and the excerpt (clipped) made
        writable as UTF-8."""
        return RouteFinding(
            check,
            severity,
            title,
            writable(detail),
            self.recording.probe,
            self.recording.repeat,
            self.stream,
            quirk,
            offset,
            None if excerpt is None else writable(clip(excerpt)),
        )


@dataclass(frozen=True, slots=True)
class StreamAnswer(Answer):
    """The streamed answer, with its reading by the reference (:data:`NOT_READ` when there
    is no answer to read)."""

    reading: StreamReading


@dataclass(frozen=True, slots=True)
class CompletionAnswer(Answer):
    """The non-streaming answer, parsed when it is within the size limit."""

    completion: Any
    """The body as JSON (None when it is not JSON, or was not read)."""
    calls: list[tuple[str | None, str]] | None
    """The name and argument text of each of its calls, when it is an answer of the dialect
    (a chat.completion with a message, a Message, a response object)."""
    finish: str | None
    """How it says it finished (``finish_reason``, ``stop_reason``, ``status``)."""
    twin: tuple[CallResult, ...] | None
    """The calls of the streamed answer of the same run, as a lenient assembler made them,
    when that answer was read whole: what this one is compared with."""


def read_streamed(recording: Recording, profile: Profile, asked: Asked) -> StreamAnswer:
    """The streamed answer in ``recording``, read by the reference when there is one."""
    reading = read_stream(recording, profile) if _is_answer(recording) else NOT_READ
    return StreamAnswer(recording, True, profile, asked, reading)


def read_completion(
    recording: Recording,
    profile: Profile,
    asked: Asked,
    twin: tuple[CallResult, ...] | None,
) -> CompletionAnswer:
    """The non-streaming answer in ``recording``, compared with ``twin`` (see
    :attr:`CompletionAnswer.twin`)."""
    completion = None
    if _is_whole_body(recording):
        completion = parse_json(recording.body.decode("utf-8", "replace"))
    read = wire_of(recording.context).completion(completion)
    calls, finish = (None, None) if read is None else read
    return CompletionAnswer(recording, False, profile, asked, completion, calls, finish, twin)


def twin_of(answer: StreamAnswer) -> tuple[CallResult, ...] | None:
    """What a non-streaming answer of the same run is compared with: the calls of the
    streamed answer as a lenient assembler made them, when it was read whole."""
    return answer.reading.lenient_results if read_whole(answer) else None


# -- gates: how far an answer got ---------------------------------------------------------------


def always(answer: Answer) -> bool:
    """Every answer, even one that never began."""
    return True


def answered(answer: Answer) -> bool:
    """The route answered 2xx, with the body as asked: there is an answer to judge."""
    return _is_answer(answer.recording)


def aborted(answer: Answer) -> bool:
    """We stopped reading the answer (too slow, too large, cut), not the route."""
    return answer.recording.ended.how in _ABORTED


def an_event_stream(answer: StreamAnswer) -> bool:
    """An answer whose body holds events (data or keep-alive comments), or was aborted
    before any came."""
    reading = answer.reading
    return answered(answer) and bool(reading.events or reading.comments or aborted(answer))


def read_whole(answer: StreamAnswer) -> bool:
    """An event stream read to its end: not aborted, no error event, and nothing the
    reference could not read. Only such an answer is judged as a whole."""
    reading = answer.reading
    return (
        an_event_stream(answer)
        and not aborted(answer)
        and reading.error is None
        and reading.failure is None
    )


def within_size(answer: Answer) -> bool:
    """An answer to judge that did not pass the size limit."""
    return _is_whole_body(answer.recording)


def a_completion(answer: CompletionAnswer) -> bool:
    """A non-streaming answer that is an answer of the dialect (a chat.completion with a
    message, a Message, a response object)."""
    return answer.calls is not None


def comparable(answer: CompletionAnswer) -> bool:
    """An answer of the dialect whose streamed twin was read whole."""
    return a_completion(answer) and answer.twin is not None


def _is_whole_body(recording: Recording) -> bool:
    return _is_answer(recording) and recording.ended.how != "too-large"


def _is_answer(recording: Recording) -> bool:
    response = recording.response
    return (
        response is not None and 200 <= response.status < 300 and recording.ended.how != "encoded"
    )

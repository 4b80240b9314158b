"""The checks of an answer as a table, in the order they run, and :func:`check_probe`, which runs
them on one run of a probe.

The order is the order findings are listed in for a run (``report.jsonl`` shows them so); a
certificate lists them by severity, probe and route check instead. A check runs on an answer
that got as far as it ``needs`` (see ``answer``), and files each finding under one of the route
checks it ``reports``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ...corpus.cassette import Recording
from .answer import (
    Answer,
    Asked,
    CompletionAnswer,
    StreamAnswer,
    a_completion,
    always,
    an_event_stream,
    answered,
    comparable,
    read_completion,
    read_streamed,
    read_whole,
    twin_of,
    within_size,
)
from .calls import calls_made, rejected_calls
from .comparison import completion_arguments, not_a_completion, same_calls
from .findings import Profile, RouteFinding
from .finishes import finishes, usage
from .progress import cut_short, too_large
from .quirks import QUIRK_CHECKS, quirks
from .transport import (
    completion_content_type,
    no_events,
    stream_content_type,
    stream_errors,
    unanswered,
)

__all__ = ["NONSTREAM_CHECKS", "STREAM_CHECKS", "AnswerCheck", "check_probe"]

A = TypeVar("A", bound=Answer)


@dataclass(frozen=True, slots=True)
class AnswerCheck(Generic[A]):
    """A check of one answer: a function of the answer, read once, that returns its findings."""

    function: Callable[[A], list[RouteFinding]]
    needs: Callable[[A], bool]
    """The gate the answer must have passed for the check to run."""
    reports: tuple[str, ...]
    """The route checks (``ROUTE_CHECKS``) its findings are filed under."""


_NO_ANSWER = ("connection", "progress", "http_status", "content_encoding")
_REJECTIONS = (
    "finish_reason",
    "calls_made",
    "arguments_json",
    "arguments_schema",
    "identity_once",
    "chunk_envelope",
)

STREAM_CHECKS: tuple[AnswerCheck[StreamAnswer], ...] = (
    AnswerCheck(unanswered, needs=always, reports=_NO_ANSWER),
    AnswerCheck(stream_content_type, needs=answered, reports=("content_type",)),
    AnswerCheck(no_events, needs=answered, reports=("sse_framing",)),
    AnswerCheck(stream_errors, needs=an_event_stream, reports=("stream_error", "chunk_envelope")),
    AnswerCheck(quirks, needs=an_event_stream, reports=QUIRK_CHECKS),
    AnswerCheck(rejected_calls, needs=an_event_stream, reports=_REJECTIONS),
    AnswerCheck(cut_short, needs=an_event_stream, reports=("size", "progress", "connection")),
    AnswerCheck(finishes, needs=read_whole, reports=("finish_reason", "calls_made")),
    AnswerCheck(usage, needs=read_whole, reports=("usage",)),
    AnswerCheck(calls_made, needs=read_whole, reports=("calls_made",)),
)
"""The checks of the streamed answer."""

NONSTREAM_CHECKS: tuple[AnswerCheck[CompletionAnswer], ...] = (
    AnswerCheck(unanswered, needs=always, reports=_NO_ANSWER),
    AnswerCheck(too_large, needs=answered, reports=("size",)),
    AnswerCheck(completion_content_type, needs=within_size, reports=("content_type",)),
    AnswerCheck(not_a_completion, needs=within_size, reports=("stream_matches",)),
    AnswerCheck(
        completion_arguments, needs=a_completion, reports=("arguments_json", "finish_reason")
    ),
    AnswerCheck(same_calls, needs=comparable, reports=("stream_matches",)),
)
"""The checks of the non-streaming answer, compared with the streamed one."""


def check_probe(
    stream: Recording, nonstream: Recording | None, profile: Profile
) -> list[RouteFinding]:
    """Every finding of one run of a probe: its streamed answer and, if any, its
    non-streaming answer, judged under ``profile``."""
    asked = Asked.of(stream)
    streamed = read_streamed(stream, profile, asked)
    findings = _run(STREAM_CHECKS, streamed)
    if nonstream is not None:
        completion = read_completion(nonstream, profile, asked, twin_of(streamed))
        findings += _run(NONSTREAM_CHECKS, completion)
    return findings


def _run(checks: Sequence[AnswerCheck[A]], answer: A) -> list[RouteFinding]:
    return [
        finding for check in checks if check.needs(answer) for finding in check.function(answer)
    ]

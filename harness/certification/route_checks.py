"""The checks of a certification: what one run of a probe says about the route.

Theory of operation. :func:`check_probe` takes the recordings of one run of a probe (its
streamed answer and, when the probe compares, its non-streaming one) and a profile, and returns
:class:`RouteFinding` s. The streamed body is fed to the reference assembler line by line, so
each deviation it records (a quirk id of research/wire_formats.md §7) is located at the event
that caused it. A wire-level pass over the same events checks what an assembler does not: the
status and content type, in-band errors, the finish reasons against what the request asked for,
the usage chunk, whether the model answered the probe at all, and how long it all took. Each
finding names its check (``ROUTE_CHECKS``), its quirk id where there is one, a severity, and
where in the stream it was seen. Everything is a pure function of the recordings, so
``callstream replay`` re-checks a cassette offline and finds the same.

Severity. ``error``: under the profile, the route breaks the contract or loses calls (strict:
every deviation from OpenAI's documented behaviour; lenient: what a lenient assembler cannot
mend). ``warning``: a deviation the lenient profile mends, recorded. ``info``: nothing wrong
with the route, but something a person should know (a probe the model did not exercise).
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from callstream.reference import QUIRKS, Assembler, CallResult, Reason, SSEDecoder, SSELimitError
from callstream.reference.validate import closing_brackets

from ..core.case import line_spans
from ..core.tools import parse_tools
from ..corpus.cassette import Recording

__all__ = [
    "ROUTE_CHECKS",
    "RouteCheck",
    "RouteFinding",
    "Severity",
    "Timing",
    "check_probe",
    "timing_of",
]

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")


@dataclass(frozen=True, slots=True)
class RouteCheck:
    """A named check of a route and what it certifies."""

    name: str
    title: str


ROUTE_CHECKS = (
    RouteCheck("connection", "the route can be reached and the connection holds"),
    RouteCheck("http_status", "the route answers 2xx"),
    RouteCheck("content_type", "text/event-stream for a stream, application/json otherwise"),
    RouteCheck("content_encoding", "the body comes as asked, identity: never compressed"),
    RouteCheck("sse_framing", "the body is a well-formed UTF-8 event stream"),
    RouteCheck(
        "size",
        "each answer fits the byte cap, and its lines and events the SSE decoder's limits",
    ),
    RouteCheck(
        "chunk_envelope",
        "every event is a chat.completion.chunk with the same id, created and model; each "
        "choice has a delta; the role comes once",
    ),
    RouteCheck(
        "index_contract",
        "every call has an integer index; new calls take 0, 1, 2… and none reuses one",
    ),
    RouteCheck("identity_once", "a call's id, type and name come once, in its first delta"),
    RouteCheck("arguments_json", "each call's complete arguments are one JSON object"),
    RouteCheck(
        "arguments_schema", "the arguments match the tool's schema; only offered tools are called"
    ),
    RouteCheck(
        "finish_reason",
        "one honest finish_reason per choice: tool_calls with calls (stop only for a named "
        "tool_choice), length when the tokens ran out, never truncation reported as tool_calls",
    ),
    RouteCheck("terminator", "the stream ends with data: [DONE]"),
    RouteCheck("after_finish", "nothing after a choice's finish_reason or after [DONE]"),
    RouteCheck(
        "usage",
        "with include_usage, a usage chunk with empty choices before [DONE], integer token counts",
    ),
    RouteCheck("stream_error", "no error event and no in-band error payload"),
    RouteCheck(
        "calls_made",
        "the model answers the probe with structured calls: tool_choice honoured, as many calls "
        "as asked, no call markup in the text",
    ),
    RouteCheck(
        "stream_matches", "streaming and non-streaming answers to one request carry the same calls"
    ),
    RouteCheck(
        "progress",
        "the response starts and every data event follows within the timeout (keep-alive "
        "comments are not progress), the whole within the deadline",
    ),
)


@dataclass(frozen=True, slots=True)
class RouteFinding:
    """Something one check found in one answer of one run of a probe."""

    check: str
    severity: Severity
    title: str
    """What was found, in words that do not change between runs: findings of different runs
    are recognised as the same by (probe, stream, check, quirk, title)."""
    detail: str
    """This occurrence: which call, which value, how often."""
    probe: str
    repeat: int
    stream: bool
    """Found in the streamed answer (else in the non-streaming one)."""
    quirk: str | None = None
    """The quirk id of research/wire_formats.md §7, where there is one."""
    offset: int | None = None
    """The byte of the body where it was seen."""
    excerpt: str | None = None
    """The event (or argument text) it was seen in, clipped."""

    @property
    def key(self) -> tuple[str, bool, str, str | None, str]:
        """What identifies the same finding across repeats."""
        return (self.probe, self.stream, self.check, self.quirk, self.title)

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON-serialisable data."""
        return {
            "check": self.check,
            "severity": self.severity,
            "quirk": self.quirk,
            "title": self.title,
            "detail": self.detail,
            "probe": self.probe,
            "repeat": self.repeat,
            "answer": "stream" if self.stream else "non-stream",
            "offset": self.offset,
            "excerpt": self.excerpt,
        }


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
    events, comments = _events(recording) if recording.stream else ([], 0)
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


def check_probe(
    stream: Recording, nonstream: Recording | None, profile: Literal["strict", "lenient"]
) -> list[RouteFinding]:
    """Every finding of one run of a probe: its streamed answer and, if any, its
    non-streaming answer, judged under ``profile``."""
    judge = _Judge(stream, profile)
    judge.streamed()
    if nonstream is not None:
        judge.not_streamed(nonstream)
    return judge.findings


# -- reading a streamed body --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Event:
    offset: int
    """Where the event's first field line starts."""
    end: int
    """Where the line that dispatched it ends."""
    t: float
    """When the bytes that dispatched it arrived."""
    event: str
    data: str


def _events(recording: Recording) -> tuple[list[_Event], int]:
    """The data events of a streamed body, located in bytes and time, and the comment count."""
    if not recording.chunks:
        return [], 0
    decoder = SSEDecoder()
    ends = list(itertools.accumulate(len(chunk.data) for chunk in recording.chunks))
    times = [chunk.t for chunk in recording.chunks]
    events: list[_Event] = []
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
                _Event(start if first is None else first, stop, at, event.event, event.data)
            )
        if stop == len(body):
            break
        if blank:
            first = None
    decoder.close()
    return events, decoder.comments


class _Reading:
    """A streamed body fed to the reference line by line: every finding and release located,
    every event's payload parsed once."""

    def __init__(self, recording: Recording, profile: Literal["strict", "lenient"]) -> None:
        body = recording.body
        tools = parse_tools(recording.request.body.get("tools") or [])
        assembler = Assembler(tools, profile=profile)
        lenient = Assembler(tools) if profile == "strict" else None
        self.events, self.comments = _events(recording)
        self.payloads = [_json(event.data) for event in self.events]
        self.located: dict[tuple[str, int | None, int | None], tuple[int, str]] = {}
        self.released: dict[tuple[int, int], int] = {}
        self.results: list[CallResult] = []
        self.lenient_results: list[CallResult] = []
        dispatched = 0  # events dispatched by the lines fed so far
        for start, line in _lines(body):
            stop = start + len(line)
            while dispatched < len(self.events) and self.events[dispatched].end <= stop:
                dispatched += 1
            released = assembler.feed(line)
            for result in released:
                self.released[(result.choice, result.index)] = start
            self.results += released
            if lenient is not None:
                self.lenient_results += lenient.feed(line)
            if dispatched:
                last = self.events[dispatched - 1]
                self._locate(assembler, last.offset, last.data)
            else:
                self._locate(assembler, start, line.decode("utf-8", "replace"))
        self.results += assembler.close()
        self._locate(assembler, len(body), body[-120:].decode("utf-8", "replace"))
        self.lenient_results = (
            self.lenient_results + lenient.close() if lenient is not None else self.results
        )
        self.findings = assembler.findings
        self.failure = assembler.failure

    def _locate(self, assembler: Assembler, offset: int, excerpt: str) -> None:
        for finding in assembler.findings:
            self.located.setdefault(
                (finding.quirk, finding.choice, finding.index), (offset, excerpt)
            )


def _lines(body: bytes) -> Iterator[tuple[int, bytes]]:
    """Each line of ``body`` with its offset, line ending included."""
    for start, stop in line_spans(body):
        yield start, body[start:stop]


# -- judging ------------------------------------------------------------------------------------

_CHECK_OF_QUIRK = {
    **dict.fromkeys(
        ("openai-chat/T6", "openai-chat/T9", "openai-chat/T10", "openai-chat/T11"), "sse_framing"
    ),
    **dict.fromkeys(
        (
            "openai-chat/C21",
            "openai-chat/C22",
            "openai-chat/C27",
            "openai-chat/C28",
            "openai-chat/C29",
            "openai-chat/C30",
        ),
        "chunk_envelope",
    ),
    **dict.fromkeys(
        ("openai-chat/C1", "openai-chat/C2", "openai-chat/C3", "openai-chat/C14"), "index_contract"
    ),
    **dict.fromkeys(
        ("openai-chat/C4", "openai-chat/C5", "openai-chat/C6", "openai-chat/C7"), "identity_once"
    ),
    **dict.fromkeys(
        (
            "openai-chat/C10",
            "openai-chat/C11",
            "openai-chat/C12",
            "openai-chat/C13",
            "openai-chat/C32",
        ),
        "arguments_json",
    ),
    **dict.fromkeys(("openai-chat/C16", "openai-chat/C33"), "finish_reason"),
    "openai-chat/C20": "after_finish",
    "openai-chat/C23": "usage",
    "openai-chat/C24": "terminator",
    "openai-chat/C31": "calls_made",
}
"""Which check reports each quirk the reference records."""
_HARMLESS = frozenset({"openai-chat/C28"})
"""Quirks that are information, not deviations: provider extras kept with the call."""
_ABORTED = frozenset(
    {"idle", "deadline", "too-large", "encoded", "error", "no-connection", "no-response"}
)
_COMPLETING = frozenset({"tool_calls", "stop", "function_call"})
_QUIRK_REJECTION = re.compile(r"^[TC]\d+: ")
"""The detail of a call the strict profile rejected for a quirk, already reported as one."""


class _Judge:
    """Collects the findings of one run of a probe."""

    def __init__(self, recording: Recording, profile: Literal["strict", "lenient"]) -> None:
        self.recording = recording
        self.profile = profile
        self.strict = profile == "strict"
        self.findings: list[RouteFinding] = []
        body = recording.request.body
        choice = body.get("tool_choice")
        self.named: str | None = None
        if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
            self.named = choice["function"].get("name")
        self.required = choice == "required"
        self.limited = any(
            isinstance(body.get(field), int) for field in ("max_tokens", "max_completion_tokens")
        )
        options = body.get("stream_options")
        self.wants_usage = isinstance(options, dict) and options.get("include_usage") is True
        self.lenient_calls: list[CallResult] = []
        self.comparable = False
        """The streamed answer ended properly, so the non-streaming one can be compared."""

    def add(
        self,
        check: str,
        severity: Severity,
        title: str,
        detail: str,
        *,
        stream: bool = True,
        quirk: str | None = None,
        offset: int | None = None,
        excerpt: str | None = None,
    ) -> None:
        recording = self.recording
        self.findings.append(
            RouteFinding(
                check,
                severity,
                title,
                _writable(detail),
                recording.probe,
                recording.repeat,
                stream,
                quirk,
                offset,
                None if excerpt is None else _writable(_clip(excerpt)),
            )
        )

    def deviation(self) -> Severity:
        """A deviation from OpenAI's behaviour that a lenient assembler mends."""
        return "error" if self.strict else "warning"

    # -- the streamed answer ----------------------------------------------------------------

    def streamed(self) -> None:
        recording = self.recording
        if not self._answered(recording, stream=True):
            return
        content_type = _content_type(recording)
        reading = _Reading(recording, self.profile)
        self.lenient_calls = reading.lenient_results
        if not content_type.startswith("text/event-stream"):
            self.add(
                "content_type",
                self.deviation(),
                "a stream not sent as text/event-stream",
                f"content type {content_type or 'missing'!r}",
            )
        aborted = recording.ended.how in _ABORTED
        if not reading.events and not reading.comments and not aborted:
            body = recording.body
            self.add(
                "sse_framing",
                "error",
                "no event in the body: not an event stream",
                f"{len(body)} bytes without a single data event",
                offset=0,
                excerpt=body[:160].decode("utf-8", "replace"),
            )
            return
        broken = self._wire(reading)
        self._quirks(reading, aborted)
        self._rejections(reading, aborted)
        self._progress(recording, reading)
        if aborted or broken:
            return
        self._finishes(reading)
        self._usage(reading)
        self._calls_made(reading.lenient_results)
        self.comparable = True

    def _answered(self, recording: Recording, *, stream: bool) -> bool:
        """The connection and status checks; False when there is no answer to judge."""
        ended = recording.ended
        if recording.response is None:
            check, title = {
                "no-connection": ("connection", "the route cannot be reached"),
                "no-response": ("progress", "no response within the timeout"),
                "deadline": ("progress", "no response within the deadline"),
            }.get(ended.how, ("connection", "the connection broke before a response"))
            self.add(check, "error", title, ended.error or "", stream=stream)
            return False
        response = recording.response
        if not 200 <= response.status < 300:
            status = str(response.status)
            body = recording.body.decode("utf-8", "replace")
            self.add(
                "http_status",
                "error",
                f"the route answered {status}",
                _error_message(body) or "no body",
                stream=stream,
                offset=0,
                excerpt=body,
            )
            return False
        if ended.how == "encoded":
            self.add(
                "content_encoding",
                "error",
                "a compressed body although identity was asked for",
                ended.error or "",
                stream=stream,
            )
            return False
        return True

    def _wire(self, reading: _Reading) -> bool:
        """The stream's own errors, and what stopped the reference reading it; True when either
        did, so the answer is not whole and cannot be judged as one."""
        pairs = list(zip(reading.events, reading.payloads, strict=True))
        for number, (event, payload) in enumerate(pairs, 1):
            if event.event == "error" or (
                isinstance(payload, dict)
                and (payload.get("error") or payload.get("object") == "error")
            ):
                self._stream_error(reading, event, f"event {number}")
                return True
        if reading.failure is not None:
            # Not JSON, not a chunk, or past a limit: the reference said which, in its words.
            bad = next(
                (
                    e
                    for e, p in pairs
                    if e.data and e.data.strip() != "[DONE]" and not isinstance(p, dict)
                ),
                None,
            )
            self.add(
                "chunk_envelope",
                "error",
                "the stream could not be read to its end",
                reading.failure,
                offset=None if bad is None else bad.offset,
                excerpt=None if bad is None else bad.data,
            )
            return True
        return False

    def _stream_error(self, reading: _Reading, event: _Event, where: str) -> None:
        self.add(
            "stream_error",
            "error",
            "the stream carried an error",
            f"{where}: {reading.failure or event.data}",
            quirk="openai-chat/C26",
            offset=event.offset,
            excerpt=event.data,
        )

    def _quirks(self, reading: _Reading, aborted: bool) -> None:
        for finding in reading.findings:
            quirk = finding.quirk
            if quirk == "openai-chat/C16" and self.named is not None:
                continue  # OpenAI itself finishes a named tool_choice with stop
            if quirk == "openai-chat/T9" and aborted:
                continue  # we stopped reading inside an event, not the route
            if quirk == "openai-chat/C11":
                continue  # reported with the call it broke (arguments_json)
            if quirk in _HARMLESS:
                severity: Severity = "info"
            elif self.strict:
                severity = "error"
            else:
                severity = "info" if QUIRKS[quirk].severity == "S4" else "warning"
            offset, excerpt = reading.located.get(
                (quirk, finding.choice, finding.index), (None, None)
            )
            title = QUIRKS[quirk].title
            parts = [] if finding.index is None else [f"call {finding.index}"]
            if finding.detail != title:
                parts.append(finding.detail)
            if finding.count > 1:
                parts.append(f"{finding.count} times")
            self.add(
                _CHECK_OF_QUIRK.get(quirk, "chunk_envelope"),
                severity,
                title,
                ", ".join(parts),
                quirk=quirk,
                offset=offset,
                excerpt=excerpt,
            )

    def _rejections(self, reading: _Reading, aborted: bool) -> None:
        recorded = {(f.quirk, f.choice, f.index) for f in reading.findings}
        for result in reading.results:
            if result.ready:
                continue
            reason, detail = result.reason, result.detail or ""
            if detail == reading.failure:
                continue  # the whole stream failed: reported once, by _wire
            offset = reading.released.get((result.choice, result.index))
            excerpt = result.arguments_text
            call = f"call {result.index} ({result.name})"
            if reason in (Reason.INTERRUPTED, Reason.UNFINISHED):
                if not aborted:
                    self.add(
                        "finish_reason",
                        "error",
                        "a choice ended without a finish_reason",
                        f"{call}: {detail}",
                        quirk="openai-chat/C25",
                        offset=offset,
                    )
            elif reason is Reason.TRUNCATED:
                if not self.limited:
                    self.add(
                        "finish_reason",
                        "warning",
                        "finish_reason length on a request without a token limit",
                        f"{call}: the route's own limit cut the call",
                        offset=offset,
                        excerpt=excerpt,
                    )
            elif reason is Reason.FILTERED:
                self.add(
                    "calls_made", "warning", "a content filter stopped a call", call, offset=offset
                )
            elif reason is Reason.MALFORMED_JSON:
                repeated = ("openai-chat/C11", result.choice, result.index) in recorded
                self._malformed(result, call, repeated, offset)
            elif reason in (Reason.SCHEMA_VIOLATION, Reason.UNKNOWN_TOOL):
                title = (
                    "a call to a tool that was not offered"
                    if reason is Reason.UNKNOWN_TOOL
                    else "arguments that do not match the tool's schema"
                )
                self.add(
                    "arguments_schema",
                    "error",
                    title,
                    f"{call}: {detail}",
                    offset=offset,
                    excerpt=excerpt,
                )
            elif reason is Reason.MISSING_NAME:
                self.add("identity_once", "error", "a call without a name", call, offset=offset)
            elif reason is Reason.TOO_LARGE:
                self.add(
                    "arguments_json",
                    "error",
                    "a call past the size limit",
                    f"{call}: {detail}",
                    offset=offset,
                )
            elif reason is Reason.PROTOCOL_ERROR and not _QUIRK_REJECTION.match(detail):
                self.add(
                    "chunk_envelope",
                    "error",
                    "a call broke the stream's contract",
                    f"{call}: {detail}",
                    offset=offset,
                )
            # provider_finish was reported as C33, missing_id as C7.

    def _malformed(self, result: CallResult, call: str, repeated: bool, offset: int | None) -> None:
        text = result.arguments_text
        excerpt = text
        if repeated:
            self.add(
                "arguments_json",
                "error",
                "arguments are the same JSON text repeated (a duplicate summary chunk)",
                f"{call}: {result.detail}",
                quirk="openai-chat/C11",
                offset=offset,
                excerpt=excerpt,
            )
        elif _looks_cut(text) and self.limited:
            self.add(
                "finish_reason",
                "error",
                "truncation reported as a finished call",
                f"{call}: the token limit cut the arguments, yet the choice did not finish with "
                f"length ({result.detail})",
                quirk="openai-chat/C17",
                offset=offset,
                excerpt=excerpt,
            )
        elif _looks_cut(text):
            self.add(
                "arguments_json",
                "error",
                "arguments lost their closing brackets",
                f"{call}: {result.detail}",
                quirk="openai-chat/C12",
                offset=offset,
                excerpt=excerpt,
            )
        else:
            self.add(
                "arguments_json",
                "error",
                "arguments are not valid JSON",
                f"{call}: {result.detail}",
                offset=offset,
                excerpt=excerpt,
            )

    def _finishes(self, reading: _Reading) -> None:
        finishes: dict[int, str] = {}
        calls: dict[int, int] = {}
        for payload in reading.payloads:
            for entry in _choices(payload):
                reason = entry.get("finish_reason")
                number = entry.get("index", 0)
                if isinstance(reason, str) and reason and isinstance(number, int):
                    finishes.setdefault(number, reason)
        for result in reading.lenient_results:
            calls[result.choice] = calls.get(result.choice, 0) + 1
        for choice, reason in finishes.items():
            if reason == "tool_calls" and not calls.get(choice):
                self.add(
                    "finish_reason",
                    self.deviation(),
                    "finish_reason tool_calls without a call",
                    f"choice {choice}",
                )
            if self.limited and reason in _COMPLETING and all(r.ready for r in reading.results):
                self.add(
                    "calls_made",
                    "info",
                    "the token limit did not cut the answer: truncation was not exercised",
                    f"choice {choice} finished with {reason}",
                )

    def _usage(self, reading: _Reading) -> None:
        if not self.wants_usage:
            return
        usage = None
        for event, payload in zip(reading.events, reading.payloads, strict=True):
            if isinstance(payload, dict) and isinstance(payload.get("usage"), dict):
                usage = (event, payload["usage"])
        if usage is None:
            self.add(
                "usage",
                self.deviation(),
                "include_usage was asked for, but no usage came",
                "no chunk carries a usage object",
            )
            return
        event, counts = usage
        missing = [
            key
            for key in ("prompt_tokens", "completion_tokens", "total_tokens")
            if not isinstance(counts.get(key), int) or isinstance(counts.get(key), bool)
        ]
        if missing:
            self.add(
                "usage",
                self.deviation(),
                "usage without integer token counts",
                f"missing or not integers: {', '.join(missing)}",
                offset=event.offset,
                excerpt=event.data,
            )

    def _calls_made(self, calls: Sequence[CallResult], *, stream: bool = True) -> None:
        names = [call.name for call in calls]
        probe_calls = self.recording.calls
        if self.named is not None and any(name != self.named for name in names):
            self.add(
                "calls_made",
                "error",
                "tool_choice named a function the model did not call",
                f"asked for {self.named}, called {', '.join(map(str, names))}",
                stream=stream,
            )
        if not names and probe_calls:
            if self.required or self.named is not None:
                self.add(
                    "calls_made",
                    "error",
                    "tool_choice forced a call, but none came",
                    f"tool_choice {self.named or 'required'}",
                    stream=stream,
                )
            else:
                self.add(
                    "calls_made",
                    "warning",
                    "the model made no call: the probe checked no call",
                    "tool_choice auto",
                    stream=stream,
                )
        elif 0 < len(names) < probe_calls:
            self.add(
                "calls_made",
                "info",
                "fewer calls than the probe asks for: not exercised",
                f"{len(names)} of {probe_calls} calls",
                stream=stream,
            )

    def _too_large(self, recording: Recording, *, stream: bool) -> None:
        if recording.ended.how == "too-large":
            self.add(
                "size",
                "error",
                "the answer passed a size limit",
                f"after {len(recording.body)} bytes: {recording.ended.error}",
                stream=stream,
                offset=len(recording.body),
            )

    def _progress(self, recording: Recording, reading: _Reading) -> None:
        ended = recording.ended
        limit = recording.context.get("timeout")
        self._too_large(recording, stream=True)
        if ended.how == "idle":
            comments = reading.comments
            what = f"only {comments} keep-alive comments" if comments else "silence"
            self.add(
                "progress",
                "error",
                "no progress: no data event within the timeout",
                f"{what} after {len(reading.events)} data events; abandoned at {ended.t:.2f} s"
                + (f" (timeout {limit} s)" if limit else ""),
                offset=len(recording.body),
            )
        elif ended.how == "deadline":
            self.add(
                "progress",
                "error",
                "the response did not end within the deadline",
                f"{len(reading.events)} data events, {len(recording.body)} bytes; abandoned at "
                f"{ended.t:.2f} s",
                offset=len(recording.body),
            )
        elif ended.how == "error":
            self.add(
                "connection",
                "error",
                "the connection broke in the middle of the response",
                f"after {len(recording.body)} bytes: {ended.error}",
                offset=len(recording.body),
            )

    # -- the non-streaming answer -----------------------------------------------------------

    def not_streamed(self, recording: Recording) -> None:
        if not self._answered(recording, stream=False):
            return
        if recording.ended.how == "too-large":
            self._too_large(recording, stream=False)
            return
        content_type = _content_type(recording)
        if not content_type.startswith("application/json"):
            self.add(
                "content_type",
                self.deviation(),
                "a non-streaming answer not sent as application/json",
                f"content type {content_type or 'missing'!r}",
                stream=False,
            )
        completion = _json(recording.body.decode("utf-8", "replace"))
        message = _message(completion)
        if message is None:
            self.add(
                "stream_matches",
                "error",
                "the non-streaming answer is not a chat.completion",
                "no choices[0].message",
                stream=False,
                offset=0,
                excerpt=recording.body.decode("utf-8", "replace"),
            )
            return
        finish = completion["choices"][0].get("finish_reason")
        calls = [_plain_call(entry) for entry in message.get("tool_calls") or ()]
        for n, (_, text) in enumerate(calls):
            if _json(text, default=_BAD) is _BAD and finish in _COMPLETING:
                cut = _looks_cut(text)
                self.add(
                    "finish_reason" if cut and self.limited else "arguments_json",
                    "error",
                    "truncation reported as a finished call"
                    if cut and self.limited
                    else "arguments are not valid JSON",
                    f"call {n}: finish_reason {finish}",
                    stream=False,
                    quirk="openai-chat/C17"
                    if cut and self.limited
                    else ("openai-chat/C12" if cut else None),
                    excerpt=text,
                )
        if not self.comparable:
            return
        streamed = self.lenient_calls
        if len(streamed) != len(calls):
            self.add(
                "stream_matches",
                "error",
                "a different number of calls with and without streaming",
                f"{len(streamed)} streamed, {len(calls)} not streamed",
                stream=False,
            )
            return
        for n, (result, (name, text)) in enumerate(zip(streamed, calls, strict=True)):
            if result.name != name:
                self.add(
                    "stream_matches",
                    "error",
                    "a call named differently with and without streaming",
                    f"call {n}: {result.name!r} streamed, {name!r} not streamed",
                    stream=False,
                )
            elif result.ready and result.arguments != _json(text, default=_BAD):
                self.add(
                    "stream_matches",
                    "error",
                    "a call's arguments differ with and without streaming",
                    f"call {n}: {_clip(result.arguments_text, 60)} streamed, "
                    f"{_clip(text, 60)} not streamed",
                    stream=False,
                    excerpt=text,
                )


# -- small helpers ------------------------------------------------------------------------------

_BAD: Any = object()


def _json(text: str, default: Any = None) -> Any:
    """``text`` parsed, or ``default`` when it is not JSON or cannot be held (nested too deep,
    an integer too long to convert)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return default


def _choices(payload: Any) -> list[dict[str, Any]]:
    choices = payload.get("choices") if isinstance(payload, dict) else None
    return [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []


def _message(completion: Any) -> dict[str, Any] | None:
    choices = completion.get("choices") if isinstance(completion, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    return message if isinstance(message, dict) else None


def _plain_call(entry: Any) -> tuple[str | None, str]:
    function = entry.get("function") if isinstance(entry, dict) else None
    if not isinstance(function, dict):
        return None, ""
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    name = function.get("name")
    return (name if isinstance(name, str) else None), arguments


def _content_type(recording: Recording) -> str:
    response = recording.response
    return "" if response is None else response.headers.get("content-type", "").strip().lower()


def _looks_cut(text: str) -> bool:
    """True when ``text`` reads as JSON cut short: unclosed brackets, or a string left open."""
    try:
        json.loads(text)
    except RecursionError:
        return False
    except json.JSONDecodeError as exc:
        return (
            exc.pos >= len(text)
            or exc.msg.startswith("Unterminated string")
            or (closing_brackets(text) is not None)
        )
    return False


def _error_message(body: str) -> str:
    payload = _json(body)
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return _clip(body, 200) if body else ""


def _writable(text: str) -> str:
    """``text`` with any lone surrogate (a stream's ``\\ud800``, decoded) written as its
    escape: no UTF-8 writer could write it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _clip(text: str, limit: int = 240) -> str:
    if len(text) <= limit:
        return text
    head = limit // 3
    return f"{text[:head]} … {text[len(text) - (limit - head) :]}"

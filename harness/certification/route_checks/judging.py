"""The judge of one run of a probe (being replaced by route checks registered as functions)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from callstream.reference import QUIRKS, CallResult, Reason

from ...corpus.cassette import Recording
from ._text import (
    NOT_JSON,
    choices_of,
    clip,
    content_type_of,
    error_message,
    looks_cut,
    message_of,
    parse_json,
    plain_call,
    writable,
)
from .findings import RouteFinding, Severity
from .reading import DataEvent, StreamReading, read_stream

__all__ = ["check_probe"]


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
        self.lenient_calls: Sequence[CallResult] = ()
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
                writable(detail),
                recording.probe,
                recording.repeat,
                stream,
                quirk,
                offset,
                None if excerpt is None else writable(clip(excerpt)),
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
        content_type = content_type_of(recording)
        reading = read_stream(recording, self.profile)
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
                error_message(body) or "no body",
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

    def _wire(self, reading: StreamReading) -> bool:
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

    def _stream_error(self, reading: StreamReading, event: DataEvent, where: str) -> None:
        self.add(
            "stream_error",
            "error",
            "the stream carried an error",
            f"{where}: {reading.failure or event.data}",
            quirk="openai-chat/C26",
            offset=event.offset,
            excerpt=event.data,
        )

    def _quirks(self, reading: StreamReading, aborted: bool) -> None:
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

    def _rejections(self, reading: StreamReading, aborted: bool) -> None:
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
        elif looks_cut(text) and self.limited:
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
        elif looks_cut(text):
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

    def _finishes(self, reading: StreamReading) -> None:
        finishes: dict[int, str] = {}
        calls: dict[int, int] = {}
        for payload in reading.payloads:
            for entry in choices_of(payload):
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

    def _usage(self, reading: StreamReading) -> None:
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

    def _progress(self, recording: Recording, reading: StreamReading) -> None:
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
        content_type = content_type_of(recording)
        if not content_type.startswith("application/json"):
            self.add(
                "content_type",
                self.deviation(),
                "a non-streaming answer not sent as application/json",
                f"content type {content_type or 'missing'!r}",
                stream=False,
            )
        completion = parse_json(recording.body.decode("utf-8", "replace"))
        message = message_of(completion)
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
        calls = [plain_call(entry) for entry in message.get("tool_calls") or ()]
        for n, (_, text) in enumerate(calls):
            if parse_json(text, default=NOT_JSON) is NOT_JSON and finish in _COMPLETING:
                cut = looks_cut(text)
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
            elif result.ready and result.arguments != parse_json(text, default=NOT_JSON):
                self.add(
                    "stream_matches",
                    "error",
                    "a call's arguments differ with and without streaming",
                    f"call {n}: {clip(result.arguments_text, 60)} streamed, "
                    f"{clip(text, 60)} not streamed",
                    stream=False,
                    excerpt=text,
                )

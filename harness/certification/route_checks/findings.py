"""What a certification reports: the route checks a certificate lists, and the findings filed
under them, each with a severity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["ROUTE_CHECKS", "SEVERITIES", "Profile", "RouteCheck", "RouteFinding", "Severity"]

Profile = Literal["strict", "lenient"]
"""The profile a route is judged under: what is an error, and what only a warning."""
Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
"""Worst first: the order a certificate lists findings in."""


@dataclass(frozen=True, slots=True)
class RouteCheck:
    """A named check of a route and what it certifies: a row of the certificate."""

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
"""In the order a certificate lists them."""


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

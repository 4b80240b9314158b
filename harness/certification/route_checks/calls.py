"""The checks of the calls: each call the reference rejected, filed under what it breaks, and
whether the model answered the probe with the calls it asked for."""

from __future__ import annotations

import json
import re

from callstream.reference import CallResult, Reason

from ..wires import qualified
from ._text import looks_cut
from .answer import StreamAnswer, aborted
from .findings import RouteFinding
from .quirks import REPEATED

__all__ = ["calls_made", "rejected_calls"]

_QUIRK_REJECTION = re.compile(r"^[TCAR]\d+: ")
"""The detail of a call the strict profile rejected for a quirk, already reported as one."""


def rejected_calls(answer: StreamAnswer) -> list[RouteFinding]:
    """Each call the reference released rejected, at the line that released it, unless the
    rejection is already a finding: the whole stream failed, or a quirk explains it."""
    reading = answer.reading
    recorded = {(f.quirk, f.choice, f.index) for f in reading.findings}
    found = []
    for result in reading.results:
        if result.ready or (result.detail or "") == reading.failure:
            continue  # a failure of the whole stream is reported once, by stream_errors
        repeated = any((quirk, result.choice, result.index) in recorded for quirk in REPEATED)
        found += _rejection(answer, result, repeated or _repeats(result.arguments_text))
    return found


def _rejection(answer: StreamAnswer, result: CallResult, repeated: bool) -> list[RouteFinding]:
    reason, detail = result.reason, result.detail or ""
    offset = answer.reading.released.get((result.choice, result.index))
    excerpt = result.arguments_text
    call = f"call {result.index} ({result.name})"
    if reason in (Reason.INTERRUPTED, Reason.UNFINISHED):
        if aborted(answer):
            return []  # we stopped reading, not the route
        return [
            answer.finding(
                "finish_reason",
                "error",
                answer.wire.unfinished,
                f"{call}: {detail}",
                quirk=qualified(answer.wire, "C25"),
                offset=offset,
            )
        ]
    if reason is Reason.TRUNCATED:
        if answer.asked.limited:
            return []  # the probe's own token limit cut it: the truncation it asks for
        return [
            answer.finding(
                "finish_reason",
                "warning",
                "finish_reason length on a request without a token limit"
                if answer.wire.name == "openai-chat"
                else "the answer was cut on a request without a token limit",
                f"{call}: the route's own limit cut the call",
                offset=offset,
                excerpt=excerpt,
            )
        ]
    if reason is Reason.FILTERED:
        return [
            answer.finding(
                "calls_made", "warning", "a content filter stopped a call", call, offset=offset
            )
        ]
    if reason is Reason.MALFORMED_JSON:
        return [_malformed(answer, result, call, repeated, offset)]
    if reason in (Reason.SCHEMA_VIOLATION, Reason.UNKNOWN_TOOL):
        title = (
            "a call to a tool that was not offered"
            if reason is Reason.UNKNOWN_TOOL
            else "arguments that do not match the tool's schema"
        )
        return [
            answer.finding(
                "arguments_schema",
                "error",
                title,
                f"{call}: {detail}",
                offset=offset,
                excerpt=excerpt,
            )
        ]
    if reason is Reason.MISSING_NAME:
        return [
            answer.finding("identity_once", "error", "a call without a name", call, offset=offset)
        ]
    if reason is Reason.TOO_LARGE:
        return [
            answer.finding(
                "arguments_json",
                "error",
                "a call past the size limit",
                f"{call}: {detail}",
                offset=offset,
            )
        ]
    if reason is Reason.PROTOCOL_ERROR and not _QUIRK_REJECTION.match(detail):
        return [
            answer.finding(
                "chunk_envelope",
                "error",
                "a call broke the stream's contract",
                f"{call}: {detail}",
                offset=offset,
            )
        ]
    return []  # provider_finish was reported as C33, missing_id as C7


def _malformed(
    answer: StreamAnswer, result: CallResult, call: str, repeated: bool, offset: int | None
) -> RouteFinding:
    """A call whose arguments are not JSON: repeated, cut by the token limit, cut otherwise,
    or simply not JSON."""
    text = result.arguments_text
    wire = answer.wire
    if repeated:
        return answer.finding(
            "arguments_json",
            "error",
            "arguments are the same JSON text repeated"
            + (" (a duplicate summary chunk)" if wire.name == "openai-chat" else ""),
            f"{call}: {result.detail}",
            quirk=qualified(wire, "C11"),
            offset=offset,
            excerpt=text,
        )
    if looks_cut(text) and answer.asked.limited:
        return answer.finding(
            "finish_reason",
            "error",
            "truncation reported as a finished call",
            f"{call}: the token limit cut the arguments, yet the answer did not say it was cut "
            f"({result.detail})",
            quirk=qualified(wire, "C17"),
            offset=offset,
            excerpt=text,
        )
    if looks_cut(text):
        return answer.finding(
            "arguments_json",
            "error",
            "arguments lost their closing brackets",
            f"{call}: {result.detail}",
            quirk=qualified(wire, "C12"),
            offset=offset,
            excerpt=text,
        )
    return answer.finding(
        "arguments_json",
        "error",
        "arguments are not valid JSON",
        f"{call}: {result.detail}",
        quirk=qualified(wire, "A1"),
        offset=offset,
        excerpt=text,
    )


def calls_made(answer: StreamAnswer) -> list[RouteFinding]:
    """Whether the model answered the probe with calls: the named function when
    ``tool_choice`` names one, a call when it forces one, as many calls as the probe asks
    for (else the probe checked less than it meant to)."""
    asked = answer.asked
    names = [call.name for call in answer.reading.lenient_results]
    found = []
    if asked.named is not None and any(name != asked.named for name in names):
        found.append(
            answer.finding(
                "calls_made",
                "error",
                "tool_choice named a function the model did not call",
                f"asked for {asked.named}, called {', '.join(map(str, names))}",
            )
        )
    if not names and asked.calls:
        if asked.required or asked.named is not None:
            found.append(
                answer.finding(
                    "calls_made",
                    "error",
                    "tool_choice forced a call, but none came",
                    f"tool_choice {asked.named or 'required'}",
                )
            )
        else:
            found.append(
                answer.finding(
                    "calls_made",
                    "warning",
                    "the model made no call: the probe checked no call",
                    "tool_choice auto",
                )
            )
    elif 0 < len(names) < asked.calls:
        found.append(
            answer.finding(
                "calls_made",
                "info",
                "fewer calls than the probe asks for: not exercised",
                f"{len(names)} of {asked.calls} calls",
            )
        )
    return found


def _repeats(text: str) -> bool:
    """True when ``text`` is one JSON text written twice or more (``{…}{…}``)."""
    try:
        _, end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return False
    return 0 < end < len(text) and len(text) % end == 0 and text == text[:end] * (len(text) // end)

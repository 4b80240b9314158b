"""The checks of how a whole stream finished: each choice's finish reason against its calls and
the token limit, and the usage chunk that include_usage asks for."""

from __future__ import annotations

from ._text import choices_of
from .answer import StreamAnswer
from .findings import RouteFinding

__all__ = ["COMPLETING", "finishes", "usage"]

COMPLETING = frozenset({"tool_calls", "stop", "function_call"})
"""The finish reasons of a choice that was not cut."""
_TOKEN_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")


def finishes(answer: StreamAnswer) -> list[RouteFinding]:
    """Each choice's first finish reason: ``tool_calls`` without a call, and, when the probe
    set a token limit, a choice that finished all the same (the limit was not exercised)."""
    reading = answer.reading
    finished: dict[int, str] = {}
    calls: dict[int, int] = {}
    for payload in reading.payloads:
        for entry in choices_of(payload):
            reason = entry.get("finish_reason")
            number = entry.get("index", 0)
            if isinstance(reason, str) and reason and isinstance(number, int):
                finished.setdefault(number, reason)
    for result in reading.lenient_results:
        calls[result.choice] = calls.get(result.choice, 0) + 1
    found = []
    for choice, reason in finished.items():
        if reason == "tool_calls" and not calls.get(choice):
            found.append(
                answer.finding(
                    "finish_reason",
                    answer.deviation,
                    "finish_reason tool_calls without a call",
                    f"choice {choice}",
                )
            )
        if answer.asked.limited and reason in COMPLETING and all(r.ready for r in reading.results):
            found.append(
                answer.finding(
                    "calls_made",
                    "info",
                    "the token limit did not cut the answer: truncation was not exercised",
                    f"choice {choice} finished with {reason}",
                )
            )
    return found


def usage(answer: StreamAnswer) -> list[RouteFinding]:
    """With include_usage, the last usage object in the stream, with integer token counts."""
    if not answer.asked.wants_usage:
        return []
    reading = answer.reading
    last = None
    for event, payload in zip(reading.events, reading.payloads, strict=True):
        if isinstance(payload, dict) and isinstance(payload.get("usage"), dict):
            last = (event, payload["usage"])
    if last is None:
        return [
            answer.finding(
                "usage",
                answer.deviation,
                "include_usage was asked for, but no usage came",
                "no chunk carries a usage object",
            )
        ]
    event, counts = last
    missing = [
        key
        for key in _TOKEN_COUNTS
        if not isinstance(counts.get(key), int) or isinstance(counts.get(key), bool)
    ]
    if not missing:
        return []
    return [
        answer.finding(
            "usage",
            answer.deviation,
            "usage without integer token counts",
            f"missing or not integers: {', '.join(missing)}",
            offset=event.offset,
            excerpt=event.data,
        )
    ]

"""The checks of the non-streaming answer: a chat.completion, whose calls' arguments are JSON
unless the choice says it was cut, carrying the same calls as the streamed answer to the same
request."""

from __future__ import annotations

from ._text import NOT_JSON, clip, looks_cut, parse_json, plain_call
from .answer import CompletionAnswer
from .findings import RouteFinding
from .finishes import COMPLETING

__all__ = ["completion_arguments", "not_a_completion", "same_calls"]


def not_a_completion(answer: CompletionAnswer) -> list[RouteFinding]:
    """A non-streaming answer without ``choices[0].message``: nothing to compare."""
    if answer.message is not None:
        return []
    return [
        answer.finding(
            "stream_matches",
            "error",
            "the non-streaming answer is not a chat.completion",
            "no choices[0].message",
            offset=0,
            excerpt=answer.recording.body.decode("utf-8", "replace"),
        )
    ]


def completion_arguments(answer: CompletionAnswer) -> list[RouteFinding]:
    """Each call whose arguments are not JSON although its choice finished as complete:
    truncation reported as a finished call when the probe set a token limit and the text
    reads as cut, else arguments that are not valid JSON."""
    finish = answer.completion["choices"][0].get("finish_reason")
    limited = answer.asked.limited
    found = []
    for n, (_, text) in enumerate(_calls(answer)):
        if parse_json(text, default=NOT_JSON) is NOT_JSON and finish in COMPLETING:
            cut = looks_cut(text)
            found.append(
                answer.finding(
                    "finish_reason" if cut and limited else "arguments_json",
                    "error",
                    "truncation reported as a finished call"
                    if cut and limited
                    else "arguments are not valid JSON",
                    f"call {n}: finish_reason {finish}",
                    quirk="openai-chat/C17"
                    if cut and limited
                    else ("openai-chat/C12" if cut else None),
                    excerpt=text,
                )
            )
    return found


def same_calls(answer: CompletionAnswer) -> list[RouteFinding]:
    """The calls of the non-streaming answer against those of its streamed twin: as many,
    named the same, with the same arguments where the streamed call was ready."""
    streamed = answer.twin or ()
    calls = _calls(answer)
    if len(streamed) != len(calls):
        return [
            answer.finding(
                "stream_matches",
                "error",
                "a different number of calls with and without streaming",
                f"{len(streamed)} streamed, {len(calls)} not streamed",
            )
        ]
    found = []
    for n, (result, (name, text)) in enumerate(zip(streamed, calls, strict=True)):
        if result.name != name:
            found.append(
                answer.finding(
                    "stream_matches",
                    "error",
                    "a call named differently with and without streaming",
                    f"call {n}: {result.name!r} streamed, {name!r} not streamed",
                )
            )
        elif result.ready and result.arguments != parse_json(text, default=NOT_JSON):
            found.append(
                answer.finding(
                    "stream_matches",
                    "error",
                    "a call's arguments differ with and without streaming",
                    f"call {n}: {clip(result.arguments_text, 60)} streamed, "
                    f"{clip(text, 60)} not streamed",
                    excerpt=text,
                )
            )
    return found


def _calls(answer: CompletionAnswer) -> list[tuple[str | None, str]]:
    """The name and argument text of each of the message's ``tool_calls``."""
    message = answer.message or {}
    return [plain_call(entry) for entry in message.get("tool_calls") or ()]

"""The checks of the non-streaming answer: an answer of the dialect (a chat.completion, a
Message, a response object), whose calls' arguments are JSON unless it says it was cut,
carrying the same calls as the streamed answer to the same request."""

from __future__ import annotations

from ..wires import qualified
from ._text import NOT_JSON, clip, looks_cut, parse_json
from .answer import CompletionAnswer
from .findings import RouteFinding

__all__ = ["completion_arguments", "not_a_completion", "same_calls"]


def not_a_completion(answer: CompletionAnswer) -> list[RouteFinding]:
    """A non-streaming answer that is not one of the dialect (a chat.completion without
    ``choices[0].message``, a body that is no Message or response object): nothing to
    compare."""
    if answer.calls is not None:
        return []
    wire = answer.wire
    return [
        answer.finding(
            "stream_matches",
            "error",
            f"the non-streaming answer is not {wire.completion_noun}",
            "no choices[0].message" if wire.name == "openai-chat" else "nothing to compare",
            offset=0,
            excerpt=answer.recording.body.decode("utf-8", "replace"),
        )
    ]


def completion_arguments(answer: CompletionAnswer) -> list[RouteFinding]:
    """Each call whose arguments are not JSON although its choice finished as complete:
    truncation reported as a finished call when the probe set a token limit and the text
    reads as cut, else arguments that are not valid JSON."""
    finish = answer.finish
    wire = answer.wire
    limited = answer.asked.limited
    found = []
    for n, (_, text) in enumerate(_calls(answer)):
        if parse_json(text, default=NOT_JSON) is NOT_JSON and finish in wire.completing:
            cut = looks_cut(text)
            found.append(
                answer.finding(
                    "finish_reason" if cut and limited else "arguments_json",
                    "error",
                    "truncation reported as a finished call"
                    if cut and limited
                    else "arguments are not valid JSON",
                    f"call {n}: {wire.finish_field} {finish}",
                    quirk=qualified(wire, "C17")
                    if cut and limited
                    else (qualified(wire, "C12") if cut else None),
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
    """The name and argument text of each of the answer's calls."""
    return answer.calls or []

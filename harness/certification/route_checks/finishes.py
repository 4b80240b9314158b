"""The checks of how a whole stream finished: each choice's finish reason against its calls and
the token limit, and the usage chunk that include_usage asks for."""

from __future__ import annotations

from callstream.reference import Reason

from ..wires import qualified
from .answer import StreamAnswer
from .findings import RouteFinding

__all__ = ["finishes", "usage"]


def finishes(answer: StreamAnswer) -> list[RouteFinding]:
    """How the stream finished, against its calls and the token limit:

    - no finish at all (``finish_reason``, ``stop_reason``, a terminal event), when no open
      call already reports it;
    - a call whose own closing events never came (a Responses item's ``.done`` and
      ``output_item.done``, a ``tool_use`` block's ``content_block_stop``);
    - a final event that restates other calls than the stream made (a Responses terminal
      response whose ``output`` lost them);
    - the finish that promises calls (``tool_calls``, ``tool_use``) without a call, and a
      complete finish other than it with calls where the reference has no quirk for that
      (``end_turn``; openai-chat's ``stop`` is its C16);
    - when the probe set a token limit, a choice that finished all the same (the limit was
      not exercised)."""
    reading = answer.reading
    wire = answer.wire
    finished = wire.finishes(reading.payloads)
    calls: dict[int, int] = {}
    for result in reading.lenient_results:
        calls[result.choice] = calls.get(result.choice, 0) + 1
    found = []
    unsettled = (Reason.INTERRUPTED, Reason.UNFINISHED)
    if not finished and not any(r.reason in unsettled for r in reading.results):
        found.append(
            answer.finding(
                "finish_reason",
                "error",
                wire.unfinished,
                f"no event carries a {wire.finish_field}",
                quirk=qualified(wire, "C25"),
                offset=len(answer.recording.body),
            )
        )
    unclosed = wire.unclosed(reading.payloads)
    if unclosed:
        found.append(
            answer.finding(
                "finish_reason",
                answer.deviation,
                "a call's closing events never came",
                "; ".join(unclosed),
            )
        )
    restated = wire.restated(reading.payloads)
    streamed = [result.name for result in reading.lenient_results]
    if restated is not None and restated != streamed:
        found.append(
            answer.finding(
                "finish_reason",
                answer.deviation,
                "the final event restates other calls than the stream made",
                f"{len(streamed)} streamed ({', '.join(map(str, streamed))}), "
                f"{len(restated)} restated ({', '.join(map(str, restated))})",
            )
        )
    for choice, reason in finished.items():
        if reason == wire.calls_finish and not calls.get(choice):
            found.append(
                answer.finding(
                    "finish_reason",
                    answer.deviation,
                    f"{wire.finish_field} {reason} without a call",
                    f"choice {choice}",
                )
            )
        if (
            calls.get(choice)
            and wire.calls_finish is not None
            and reason != wire.calls_finish
            and reason in wire.completing
            and qualified(wire, "C16") is None
        ):
            found.append(
                answer.finding(
                    "finish_reason",
                    answer.deviation,
                    f"{wire.finish_field} {reason} with calls",
                    f"choice {choice}: {calls[choice]} calls, {wire.finish_field} {reason} "
                    f"where {wire.calls_finish} was due",
                )
            )
        completed = reason in wire.completing and all(r.ready for r in reading.results)
        if answer.asked.limited and completed:
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
    """When usage is due (include_usage; always in the other dialects), the last usage the
    stream reported, with integer token counts."""
    if not answer.asked.wants_usage:
        return []
    reading = answer.reading
    wire = answer.wire
    last = wire.usage(reading.payloads)
    if last is None:
        return [
            answer.finding(
                "usage",
                answer.deviation,
                wire.usage_missing,
                "no event carries a usage object",
            )
        ]
    number, counts = last
    event = reading.events[number]
    missing = [
        key
        for key in wire.token_counts
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

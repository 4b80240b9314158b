"""The deviations the reference assembler recorded in a stream (the quirk ids of
research/wire_formats.md §7), each filed under the route check it breaks."""

from __future__ import annotations

from callstream.reference import QUIRKS

from .answer import StreamAnswer, aborted
from .findings import RouteFinding, Severity

__all__ = ["CHECK_OF_QUIRK", "QUIRK_CHECKS", "quirks"]

CHECK_OF_QUIRK = {
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
"""Which check reports each quirk the reference records; any other, ``chunk_envelope``."""
QUIRK_CHECKS = tuple(dict.fromkeys(CHECK_OF_QUIRK.values()))
"""The checks that report quirks."""
_HARMLESS = frozenset({"openai-chat/C28"})
"""Quirks that are information, not deviations: provider extras kept with the call."""


def quirks(answer: StreamAnswer) -> list[RouteFinding]:
    """Each deviation the reference recorded, at the event where it first saw it: an error
    under the strict profile; under the lenient one a warning, or a note for what is merely
    unusual (severity S4)."""
    found = []
    reading = answer.reading
    for finding in reading.findings:
        quirk = finding.quirk
        if quirk == "openai-chat/C16" and answer.asked.named is not None:
            continue  # OpenAI itself finishes a named tool_choice with stop
        if quirk == "openai-chat/T9" and aborted(answer):
            continue  # we stopped reading inside an event, not the route
        if quirk == "openai-chat/C11":
            continue  # reported with the call it broke (arguments_json)
        if quirk in _HARMLESS:
            severity: Severity = "info"
        elif answer.strict:
            severity = "error"
        else:
            severity = "info" if QUIRKS[quirk].severity == "S4" else "warning"
        offset, excerpt = reading.located.get((quirk, finding.choice, finding.index), (None, None))
        title = QUIRKS[quirk].title
        parts = [] if finding.index is None else [f"call {finding.index}"]
        if finding.detail != title:
            parts.append(finding.detail)
        if finding.count > 1:
            parts.append(f"{finding.count} times")
        found.append(
            answer.finding(
                CHECK_OF_QUIRK.get(quirk, "chunk_envelope"),
                severity,
                title,
                ", ".join(parts),
                quirk=quirk,
                offset=offset,
                excerpt=excerpt,
            )
        )
    return found

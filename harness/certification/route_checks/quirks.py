"""The deviations the reference assembler recorded in a stream (the quirk ids of
research/wire_formats.md §7), each filed under the route check it breaks."""

from __future__ import annotations

from callstream.reference import QUIRKS

from ..wires import WIRES
from .answer import StreamAnswer, aborted
from .findings import RouteFinding, Severity

__all__ = ["QUIRK_CHECKS", "REPEATED", "quirks"]

REPEATED = frozenset({"openai-chat/C11", "openai-responses/R11"})
"""Arguments that are one JSON text repeated: reported with the call they broke
(``arguments_json``), not twice."""
QUIRK_CHECKS = tuple(
    dict.fromkeys(check for wire in WIRES.values() for check in wire.check_of_quirk.values())
)
"""The checks that report quirks, in any dialect."""
_HARMLESS = frozenset({"openai-chat/C28"})
"""Quirks that are information, not deviations: provider extras kept with the call."""


def quirks(answer: StreamAnswer) -> list[RouteFinding]:
    """Each deviation the reference recorded, at the event where it first saw it: an error
    under the strict profile; under the lenient one a warning, or a note for what is merely
    unusual (severity S4)."""
    found = []
    reading = answer.reading
    check_of_quirk = answer.wire.check_of_quirk
    for finding in reading.findings:
        quirk = finding.quirk
        if quirk == "openai-chat/C16" and answer.asked.named is not None:
            continue  # OpenAI itself finishes a named tool_choice with stop
        if quirk.endswith("/T9") and aborted(answer):
            continue  # we stopped reading inside an event, not the route
        if quirk in REPEATED:
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
                check_of_quirk.get(quirk, "chunk_envelope"),
                severity,
                title,
                ", ".join(parts),
                quirk=quirk,
                offset=offset,
                excerpt=excerpt,
            )
        )
    return found

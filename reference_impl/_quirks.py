"""The quirk table: every deviation from the strict profile the reference can detect.

Ids are qualified by the dialect whose streams show the quirk (``openai-chat/C3``), so a quirk
id never reads as a rule id (rule C3 is "Truncation is not success") and two dialects' quirks
never collide; the part after the slash and the severities are those of
research/wire_formats.md §7. ``strict`` says what the strict
profile does when it meets the quirk: ``"reject"`` the calls it touches (reason
``protocol_error`` unless the row names another) or only ``"record"`` it as a finding. The
lenient profile normalises every quirk and records it. Kept as data so the harness, the docs and
the code read the same table.

C34 extends the catalogue, next to the id quirks C2–C7: two distinct calls given one id, as
DeepSeek and GLM do (HKUDS/nanobot#3943) and Kimi's Anthropic-compatible route
(HKUDS/nanobot#4473). It is S1: a client that deduplicates by id (E3) drops the second call, and
one that answers by id (E2) answers the wrong one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ._anthropic_quirks import ANTHROPIC_ROWS
from ._model import Finding, Reason
from ._responses_quirks import RESPONSES_ROWS

__all__ = ["DEVIATIONS", "QUIRKS", "Deviation", "FindingLog", "Quirk"]


@dataclass(frozen=True, slots=True)
class Quirk:
    """One row of the quirk table."""

    id: str
    """Qualified by its dialect: ``openai-chat/C3``."""
    title: str
    severity: Literal["S1", "S2", "S3", "S4"]
    strict: Literal["reject", "record"]
    reason: Reason = Reason.PROTOCOL_ERROR
    """The rejection reason when the strict profile rejects."""

    @property
    def dialect(self) -> str:
        """The dialect whose streams show the quirk: ``openai-chat``."""
        return self.id.partition("/")[0]

    @property
    def code(self) -> str:
        """The id within its dialect, as research/wire_formats.md §7 numbers it: ``C3``."""
        return self.id.partition("/")[2]


_ROWS = [
    Quirk("openai-chat/T6", "event with empty data (not parsed as a chunk)", "S2", "record"),
    Quirk(
        "openai-chat/T9",
        "stream ended inside an event (no blank line after the last event)",
        "S1",
        "record",
    ),
    Quirk(
        "openai-chat/T10",
        "events separated by a single newline: joined data is not JSON",
        "S2",
        "record",
    ),
    Quirk("openai-chat/T11", "invalid UTF-8 replaced by U+FFFD", "S2", "record"),
    Quirk("openai-chat/C1", "tool_calls[].index missing or not an integer", "S2", "reject"),
    Quirk("openai-chat/C2", "index reused by a new call (new id with a name)", "S1", "reject"),
    Quirk("openai-chat/C3", "id changed without a name: same call continued", "S1", "reject"),
    Quirk("openai-chat/C4", "id or type repeated after the first delta", "S1", "record"),
    Quirk("openai-chat/C5", "function name repeated after the first delta", "S1", "record"),
    Quirk("openai-chat/C6", "call header without a name; name arrived later", "S2", "reject"),
    Quirk(
        "openai-chat/C7",
        "call id missing, empty or not a string",
        "S3",
        "reject",
        Reason.MISSING_ID,
    ),
    Quirk(
        "openai-chat/C10",
        "cumulative argument snapshots instead of deltas (repaired on request)",
        "S1",
        "record",
    ),
    Quirk("openai-chat/C11", "arguments are the same JSON text repeated", "S1", "record"),
    Quirk(
        "openai-chat/C12",
        "arguments lost their closing brackets (repaired on request)",
        "S1",
        "record",
    ),
    Quirk(
        "openai-chat/C13", "parameterless call sent no arguments: completed as {}", "S2", "record"
    ),
    Quirk("openai-chat/C14", "tool-call indices start above 0 or have gaps", "S2", "reject"),
    Quirk("openai-chat/C16", "finish_reason stop with tool calls", "S3", "record"),
    Quirk("openai-chat/C20", "chunks after finish_reason or after [DONE]", "S2", "record"),
    Quirk(
        "openai-chat/C21",
        "chunk with empty choices and no usage, or blank chunk metadata",
        "S2",
        "record",
    ),
    Quirk("openai-chat/C22", "choice without a delta", "S2", "record"),
    Quirk("openai-chat/C23", "usage outside the final usage chunk", "S3", "record"),
    Quirk(
        "openai-chat/C24", "stream ended without [DONE] after every choice finished", "S3", "record"
    ),
    Quirk("openai-chat/C27", "legacy delta.function_call", "S2", "record"),
    Quirk("openai-chat/C28", "provider extras on a tool call (extra_content kept)", "S3", "record"),
    Quirk("openai-chat/C29", "role repeated after the first delta, or empty role", "S4", "record"),
    Quirk("openai-chat/C30", "chunk id or created changed between chunks", "S4", "record"),
    Quirk("openai-chat/C31", "tool-call markup inside message content", "S3", "record"),
    Quirk("openai-chat/C32", "arguments sent as a JSON value instead of a string", "S4", "reject"),
    Quirk("openai-chat/C33", "finish_reason outside the OpenAI set", "S1", "record"),
    Quirk(
        "openai-chat/C34",
        "two distinct calls of one choice share an id",
        "S1",
        "reject",
        Reason.DUPLICATE_ID,
    ),
]

_ROWS += [Quirk(*row) for row in ANTHROPIC_ROWS]
_ROWS += [Quirk(*row) for row in RESPONSES_ROWS]

QUIRKS: dict[str, Quirk] = {row.id: row for row in _ROWS}

Deviation = Literal[
    "snapshots", "synthetic_id", "empty_parameterless", "repeated_arguments", "repaired_brackets"
]
"""What the call state itself can meet, whatever the dialect: cumulative argument snapshots, an
id made up for a call that had none, a parameterless call completed as ``{}`` from no
arguments, arguments that are one JSON value repeated, arguments repaired by closing brackets."""

DEVIATIONS: dict[str, dict[Deviation, str]] = {
    "openai-chat": {
        "snapshots": "C10",
        "synthetic_id": "C7",
        "empty_parameterless": "C13",
        "repeated_arguments": "C11",
        "repaired_brackets": "C12",
    },
    "anthropic-messages": {"synthetic_id": "C7"},
    "openai-responses": {
        "synthetic_id": "R9",
        "empty_parameterless": "R10",
        "repeated_arguments": "R11",
    },
}
"""Which quirk each deviation is in each dialect (by its code there); one a dialect does not
list is not recorded in it."""


class FindingLog:
    """Records the findings of one stream in one dialect, one entry per (quirk, choice, call)
    with a count, so memory stays bounded when a provider repeats the same deviation on every
    chunk. Quirks are named by their code within the dialect (``C3``) and recorded by their
    qualified id (``openai-chat/C3``)."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self._entries: dict[tuple[str, int | None, int | None], list[Any]] = {}

    def quirk(self, code: str) -> Quirk:
        """The row of the quirk ``code`` of this log's dialect."""
        return QUIRKS[f"{self.dialect}/{code}"]

    def met(self, deviation: Deviation, detail: str, choice: int | None, index: int | None) -> None:
        """Note a deviation of the call state, as the quirk it is in this log's dialect."""
        code = DEVIATIONS.get(self.dialect, {}).get(deviation)
        if code is not None:
            self.record(code, detail, choice, index)

    def record(
        self, code: str, detail: str, choice: int | None = None, index: int | None = None
    ) -> None:
        """Note one occurrence of the quirk ``code``; the first occurrence's detail is kept."""
        key = (self.quirk(code).id, choice, index)
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = [detail, 1]
        else:
            entry[1] += 1

    def __contains__(self, code: object) -> bool:
        return any(key[0] == f"{self.dialect}/{code}" for key in self._entries)

    def snapshot(self) -> tuple[Finding, ...]:
        """Every finding so far, in the order first seen."""
        return tuple(
            Finding(quirk, detail, QUIRKS[quirk].severity, choice, index, count)
            for (quirk, choice, index), (detail, count) in self._entries.items()
        )

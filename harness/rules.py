"""The rules callstream certifies (REQUIREMENTS.md) and the quirk ids of each dialect
(research/wire_formats.md §7) the corpus must cover, and the route opt-ins outside the
profiles (rule A2), kept in the repo so lint and reports need nothing outside it.

A rule id is plain (``C3``, "Truncation is not success"); a quirk id is qualified by the dialect
whose streams show it (``openai-chat/C3``, "id changed without a name"). Each is its own type,
so one never stands for the other and ``git grep -w C3`` finds the rule, ``git grep
openai-chat/C3`` the quirk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NewType

__all__ = [
    "ANTHROPIC_MESSAGES_QUIRKS",
    "BEYOND_THE_CONTRACT",
    "OPENAI_CHAT_QUIRKS",
    "OPENAI_RESPONSES_QUIRKS",
    "OPT_INS",
    "RULES",
    "RULE_TEXT",
    "QuirkId",
    "RuleId",
    "failure_pointer",
    "listed_opt_ins",
    "quirk_code",
    "quirk_dialect",
    "quirk_id",
    "rule_group",
    "rule_ids",
]

RuleId = NewType("RuleId", str)
"""A rule of REQUIREMENTS.md: ``A2``, ``C3``, ``R``."""
QuirkId = NewType("QuirkId", str)
"""A quirk of research/wire_formats.md §7, qualified by its dialect: ``openai-chat/C3``."""


def quirk_id(dialect: str, code: str) -> QuirkId:
    """The id of quirk ``code`` (``C3``) of ``dialect``: ``openai-chat/C3``."""
    return QuirkId(f"{dialect}/{code}")


def quirk_dialect(quirk: QuirkId) -> str:
    """The dialect a quirk id names: ``openai-chat``."""
    return quirk.partition("/")[0]


def quirk_code(quirk: QuirkId) -> str:
    """A quirk's code within its dialect, as §7 numbers it: ``C3``."""
    return quirk.partition("/")[2]


_RULE_TITLES = {
    "A1": "Buffer, don't parse per chunk",
    "A2": "Append arguments verbatim",
    "A3": "Set metadata, never concatenate it",
    "A4": "Absent means no update",
    "A5": "Route by position, not by arrival order",
    "A6": "Never key by function name",
    "A7": "Separate choices",
    "A8": "Preview is not the buffer",
    "C1": "Explicit signal first",
    "C2": "Stream end is a fallback flush",
    "C3": "Truncation is not success",
    "C4": "No premature execution",
    "C5": "Per-call boundaries",
    "C6": "Cancellation discards",
    "V1": "Parse once, completely",
    "V2": "Schema check",
    "V3": "Known tools only",
    "V4": "Identity required",
    "V5": "Bounded",
    "V6": "Errors are first-class",
    "T1": "Lines split anywhere",
    "T2": "Line endings",
    "T3": "Fields",
    "T4": "Sentinel and errors",
    "E1": "Three stages",
    "E2": "Original identity",
    "E3": "Idempotent dispatch",
    "E4": "Deterministic order",
    "R": "Route rules (certify)",
}

RULES: dict[RuleId, str] = {RuleId(rule): title for rule, title in _RULE_TITLES.items()}
"""Every rule of REQUIREMENTS.md, in its order, with its title."""

BEYOND_THE_CONTRACT: dict[RuleId, str] = {
    RuleId(rule): why
    for rule, why in {
        "A8": "a preview is not part of the feed/close contract (tested in the reference's own "
        "tests)",
        "C6": "the contract has no cancel step (tested in the reference's own tests)",
        "R": "route rules are certified against live routes, not scenarios",
    }.items()
}
"""Rules that no scenario of any dialect can certify through the implementation contract, and
why. Each dialect adds its own (``callstream.core.dialects``: openai-chat has no per-call
boundary, so C5)."""

OPENAI_CHAT_QUIRKS: tuple[QuirkId, ...] = tuple(
    quirk_id("openai-chat", code)
    for code in (*(f"T{n}" for n in range(1, 13)), *(f"C{n}" for n in range(1, 35)))
)
"""§7's T1–T12 and C1–C33, and C34 (two distinct calls of one choice share an id), which the
reference's quirk table adds with its sources (``callstream.reference.QUIRKS``)."""


ANTHROPIC_MESSAGES_QUIRKS: tuple[QuirkId, ...] = tuple(
    quirk_id("anthropic-messages", code)
    for code in (
        *(f"T{n}" for n in range(1, 13)),
        *("C1", "C7", "C14", "C24"),
        *(f"A{n}" for n in range(1, 7)),
    )
)
"""§7's transport quirks T1–T12, the id and index quirks C1, C7, C14 and C24 as Anthropic
streams show them (a missing block index, a tool_use without id, an index gap, no
message_stop), A1–A5, and A6 (a tool_use input sent whole in content_block_start), which the
reference's quirk table adds with its sources (docs/rules.md, Anthropic quirks)."""


OPENAI_RESPONSES_QUIRKS: tuple[QuirkId, ...] = tuple(
    quirk_id("openai-responses", code)
    for code in (*(f"T{n}" for n in range(1, 13)), *(f"R{n}" for n in range(1, 13)))
)
"""§7's T1–T12 and R1–R7 as the Responses stream shows them, and R8–R12, which the reference's
quirk table adds with their sources (``callstream.reference.QUIRKS``): an event whose
``item_id`` and ``output_index`` disagree or name no item, a call without a ``call_id``, a
parameterless call with no arguments, arguments that are one JSON text repeated, a stream that
does not open with ``response.created``."""


def rule_ids(*ids: str) -> tuple[RuleId, ...]:
    """``ids`` as rule ids, each checked to be a rule of REQUIREMENTS.md (a typo fails at
    import, not in a verdict)."""
    for rule in ids:
        if rule not in RULES:
            raise ValueError(f"{rule!r} is not a rule of REQUIREMENTS.md")
    return tuple(RuleId(rule) for rule in ids)


def rule_group(rule: RuleId) -> str:
    """The group letter of a rule: ``A``, ``C``, ``V``, ``T``, ``E`` or ``R``."""
    return rule[0]


def failure_pointer(rules: Sequence[RuleId]) -> str:
    """The rules a failure is filed under and the command that explains the first, as every
    failure line shows them in its parentheses: ``A2, T1; callstream explain A2``."""
    if not rules:
        return "callstream explain"
    return f"{', '.join(rules)}; callstream explain {rules[0]}"


RULE_TEXT: dict[str, str] = {
    "A1": "Argument text is buffered as it arrives; an implementation must not depend on "
    "mid-stream text parsing.",
    "A2": "Each arguments fragment is appended to its call's buffer in arrival order, byte for "
    "byte; the assembled text equals the concatenation of the fragments.",
    "A3": "id, type and function.name arrive whole; a repeat overwrites with the same value, "
    "concatenating them is a defect.",
    "A4": "A missing, null or empty field never erases a value seen earlier; empty argument "
    "fragments are no-ops.",
    "A5": "A fragment belongs to the call named by its (choice index, tool-call index), or by "
    "its id where no index is sent; fragments of several calls may interleave in any order.",
    "A6": "Two calls to the same function keep separate buffers and separate results.",
    "A7": "With n > 1, each choice has its own set of calls.",
    "A8": "A preview is a separate value: it never alters the execution buffer or makes a call "
    "executable.",
    "C1": "finish_reason tool_calls (or the dialect's per-call done event) marks calls complete.",
    "C2": "[DONE] or a closed connection ends assembly; what was not explicitly completed is "
    "reported, with how the stream ended.",
    "C3": "finish_reason length, content_filter, a stream cut off mid-call or an error event "
    "leaves the calls it touched incomplete, never executable.",
    "C4": "Nothing is executable before its completion signal, even when the text so far "
    "happens to parse.",
    "C5": "Where the dialect signals one call's arguments are final, that call is parsed and "
    "validated at once; a boundary never makes ready a call that would not be ready at the end.",
    "C6": "Cancelled or interrupted assembly discards unfinished state; it is never replayed.",
    "V1": "The complete text is parsed as JSON once; malformed JSON makes a failed call with the "
    "raw text kept, never a partial success.",
    "V2": "The parsed value is checked against the tool's JSON Schema.",
    "V3": "A name that is not among the exposed tools is rejected.",
    "V4": "A call without a name is rejected; a call without an id is rejected (strict) or given "
    "a unique synthesised id recorded as a finding (lenient).",
    "V5": "Buffer size, number of calls and line length are bounded; a runaway stream is "
    "rejected with a clear reason, without exhausting memory.",
    "V6": "Every rejection carries a machine-readable reason and enough context to retry or "
    "show the user.",
    "T1": "A chunk boundary may fall anywhere: inside data:, between CR and LF, inside a "
    "multi-byte UTF-8 character, inside an escape.",
    "T2": "LF, CRLF and lone CR all end lines.",
    "T3": "data: with or without one leading space; several data: lines are joined with a "
    "newline; comments and unknown fields are ignored; a leading BOM is skipped.",
    "T4": "data: [DONE] ends the stream; an error payload or event: error ends it as failed.",
    "E1": "Receiving, validating and executing are separate; the assembler never invokes tools.",
    "E2": "Results go back carrying the original call ids.",
    "E3": "Each call has a stable idempotency key; a retried turn does not run a call twice.",
    "E4": "Parallel calls are released in a documented order (by index).",
    "R": "A route follows its profile; each deviation is a named finding.",
}
"""Each rule's normative sentence (docs/rules.md has the rule, why it exists and the decisions)."""


OPT_INS: dict[str, str] = {
    "snapshots": "each argument fragment is read as a cumulative snapshot of the text so far "
    "(quirk openai-chat/C10)",
    "repair_json": "arguments that are one JSON value repeated, or that lost their closing "
    "brackets, are repaired (quirks openai-chat/C11, openai-chat/C12)",
}
"""The per-route opt-ins outside the profiles (rule A2), each with what it changes. A route
that opts in is its own configuration: it runs the scenarios written for exactly its opt-ins
(D74), under the lenient profile (D75)."""


def listed_opt_ins(opt_ins: frozenset[str]) -> list[str]:
    """``opt_ins`` in the order of :data:`OPT_INS`, the one order reports, declarations and
    the pipe protocol write them in."""
    return [name for name in OPT_INS if name in opt_ins]

"""The rules callstream certifies (REQUIREMENTS.md) and the openai-chat quirk ids
(research/wire_formats.md §7) the corpus must cover, kept in the repo so lint and reports need
nothing outside it."""

from __future__ import annotations

__all__ = ["NOT_CERTIFIABLE", "OPENAI_CHAT_QUIRKS", "RULES", "rule_group"]

RULES: dict[str, str] = {
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

NOT_CERTIFIABLE: dict[str, str] = {
    "A8": "a preview is not part of the feed/close contract (tested in the reference's own tests)",
    "C5": "openai-chat has no per-call done event (Responses and Anthropic have one)",
    "C6": "the contract has no cancel step (tested in the reference's own tests)",
    "R": "route rules are certified against live routes, not scenarios",
}
"""Rules that no openai-chat scenario can certify through the implementation contract, and why."""

OPENAI_CHAT_QUIRKS: tuple[str, ...] = (
    *(f"T{n}" for n in range(1, 13)),
    *(f"C{n}" for n in range(1, 35)),
)
"""§7's T1–T12 and C1–C33, and C34 (two distinct calls of one choice share an id), which the
reference's quirk table adds with its sources (``reference_impl._quirks``)."""


def rule_group(rule: str) -> str:
    """The group letter of a rule: ``A``, ``C``, ``V``, ``T``, ``E`` or ``R``."""
    return rule[0]

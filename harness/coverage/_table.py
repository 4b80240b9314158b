"""A wire feature, and the features every dialect shares: the SSE transport's and the argument
text's."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..rules import (
    ANTHROPIC_MESSAGES_QUIRKS,
    OPENAI_CHAT_QUIRKS,
    OPENAI_RESPONSES_QUIRKS,
    RULES,
    quirk_id,
)

__all__ = [
    "ARGUMENT_FEATURES",
    "CALL_FEATURES",
    "NAMED_EVENT_FEATURES",
    "TRANSPORT_FEATURES",
    "Feature",
    "feature",
    "table_of",
]

_QUIRKS = {
    "openai-chat": OPENAI_CHAT_QUIRKS,
    "anthropic-messages": ANTHROPIC_MESSAGES_QUIRKS,
    "openai-responses": OPENAI_RESPONSES_QUIRKS,
}


@dataclass(frozen=True, slots=True)
class Feature:
    """One thing a stream may do on the wire, named from the wire grammar and the rules (not
    from what a generator happens to draw), and the rules or quirks it serves."""

    id: str
    """Stable and dotted by layer: ``sse.crlf``, ``id.changed``, ``finish.length``."""
    description: str
    serves: tuple[str, ...]
    """Rule ids (``T2``) and quirk codes of the dialect (``C3``, ``A2``, ``R5``)."""


def feature(id: str, description: str, *serves: str) -> Feature:
    """A :class:`Feature`, its ``serves`` given inline."""
    return Feature(id, description, serves)


def table_of(dialect: str, features: Iterable[Feature]) -> tuple[Feature, ...]:
    """``features`` as ``dialect``'s table: each serving the rules it names and those of the
    quirk codes it names that are quirks of the dialect (a shared feature names openai-chat's
    codes, say ``C15``, which another dialect's catalogue may not have)."""
    quirks = set(_QUIRKS[dialect])
    return tuple(
        replace(
            item,
            serves=tuple(
                code for code in item.serves if code in RULES or quirk_id(dialect, code) in quirks
            ),
        )
        for item in features
    )


TRANSPORT_FEATURES: tuple[Feature, ...] = (
    feature("sse.lf", "lines end with LF", "T2"),
    feature("sse.crlf", "lines end with CRLF", "T2", "T1"),
    feature("sse.cr", "lines end with a lone CR", "T2", "T1"),
    feature("sse.mixed-newlines", "more than one kind of line ending in one stream", "T2", "T1"),
    feature("sse.data-space", "`data: x`, one space after the colon", "T3"),
    feature("sse.data-no-space", "`data:x`, no space after the colon", "T3"),
    feature("sse.comment", "comment lines (`: keep-alive`)", "T3", "T4"),
    feature("sse.multiline-data", "one event's data over several `data:` lines", "T3", "T5"),
    feature("sse.empty-data", "an event whose data is empty (`data:` alone)", "T3", "T6"),
    feature("sse.event-without-data", "an `event:` block with no `data:` line", "T3", "T6"),
    feature("sse.bom", "a leading UTF-8 byte order mark", "T3", "T2"),
    feature("sse.no-final-blank-line", "the last event is never dispatched", "C2", "T9"),
    feature("sse.invalid-utf8", "bytes that are not UTF-8", "T1", "T11"),
    feature("sse.multibyte-utf8", "multi-byte UTF-8 characters on the wire", "T1", "T11"),
    feature("sse.astral-utf8", "four-byte UTF-8 characters (astral plane) on the wire", "T11"),
    feature("sse.single-newline-events", "events separated by one newline only", "T10"),
    feature("sse.json-trailing-space", "JSON data with whitespace after it", "T12"),
    feature("sse.non-json-data", "data that is neither JSON nor `[DONE]`", "T4"),
    feature("sse.id-retry", "`id:` and `retry:` lines, which dispatch nothing", "T3"),
    feature("sse.unknown-field", "a field SSE does not name (`Event:`), ignored", "T3"),
    feature("sse.indented-field", "a field named `data` after a tab (`\\tdata:`), ignored", "T3"),
)
"""What the SSE layer does (research/wire_formats.md §1, quirks T1–T12)."""

CALL_FEATURES: tuple[Feature, ...] = (
    feature("calls.none", "no tool call on the wire", "C1"),
    feature("calls.one", "exactly one tool call", "A2"),
    feature("calls.two", "exactly two tool calls", "A5", "E4"),
    feature("calls.many", "three tool calls or more", "A5", "E4"),
    feature("calls.interleaved", "the fragments of two calls alternate", "A5", "C15"),
    feature("calls.whole", "a call's whole arguments in one delta", "A2", "C8"),
    feature("calls.many-fragments", "a call cut into ten fragments or more", "T1", "A2"),
    feature("calls.same-name", "two calls of the same function", "A6"),
    feature("calls.unknown-tool", "a call names a tool the request did not offer", "V3"),
    feature("calls.no-tools", "the request offered no tool at all", "V3"),
    feature("id.missing", "a call that never gets an id", "V4", "C7"),
    feature("id.empty", 'a call whose id is `""`', "V4", "C7"),
    feature("id.numeric", "a call whose id is a number", "A3", "C7"),
    feature("id.repeated", "a call's id sent again, unchanged", "A3", "C4"),
    feature("id.changed", "a call's id changes mid-call", "A3", "C3"),
    feature("id.late", "a call's id arrives after its first delta", "A4"),
    feature("id.shared", "two distinct calls with one id", "A3", "C34"),
    feature("name.missing", "a call that never gets a name", "V4"),
    feature("name.repeated", "a call's name sent again, unchanged", "A3", "C5"),
    feature("name.late", "a call's name arrives after its first delta", "A4", "C6"),
    feature("name.changed", "a call's name changes mid-call", "A3", "C5"),
    feature("index.missing", "a call's deltas without an index", "A5", "C1"),
    feature("index.gap", "call indices that skip a number or start past 0", "A5", "C14"),
    feature("index.reused", "a new call at an index an earlier call used", "A5", "C2"),
)
"""How calls and their metadata travel (rules A3–A6, V3–V4; quirks C1–C8, C14, C15)."""

NAMED_EVENT_FEATURES: tuple[Feature, ...] = (
    feature("sse.event-lines", "every event with its `event:` line", "T3"),
    feature("sse.no-event-lines", "events without an `event:` line", "T3", "T7"),
    feature("sse.event-mismatch", "an `event:` name that is not the data's `type`", "T8"),
)
"""How a dialect whose events are named (Anthropic's, Responses') sends the names."""

ARGUMENT_FEATURES: tuple[Feature, ...] = (
    feature("args.empty", "a call whose arguments are empty or never sent", "V1", "C13"),
    feature("args.empty-fragment", "an empty argument fragment among others", "A4"),
    feature("args.invalid-json", "arguments that are not one JSON text", "V1", "C12"),
    feature("args.not-object", "arguments that are JSON but not an object", "V1"),
    feature("args.deep-nesting", "arguments nested five levels deep or more", "V1", "V5"),
    feature("args.long-string", "a string of 200 characters or more in the arguments", "A2"),
    feature("args.large", "arguments of 2 KB or more", "V5"),
    feature("args.unicode-escape", "a `\\uXXXX` escape in the arguments", "A2", "V1"),
    feature("args.surrogate-pair-escape", "an escaped surrogate pair (`\\ud83d\\ude00`)", "A2"),
    feature("args.lone-surrogate-escape", "an escaped lone surrogate (`\\ud800`)", "A2", "V1"),
    feature("args.escape", 'a backslash escape other than `\\u` (`\\"`, `\\n`)', "A2"),
    feature("args.non-ascii", "non-ASCII characters written raw in the arguments", "A2", "T11"),
    feature("args.whitespace", "JSON whitespace outside strings in the arguments", "A2", "C32"),
    feature("args.cut-in-escape", "a fragment boundary inside a backslash escape", "A1", "T1"),
    feature("args.cut-in-surrogate-pair", "a fragment boundary between two escaped halves", "A1"),
    feature("args.cut-in-number", "a fragment boundary inside a number", "A1"),
    feature("args.cut-in-literal", "a fragment boundary inside true, false or null", "A1"),
    feature("args.prefix-parses", "a fragment boundary after a prefix that already parses", "C4"),
)
"""What the argument text holds and where it is cut (rules A1, A2, V1, V5; quirks C12, C13)."""

"""The ``anthropic-messages`` rows of the quirk table (research/wire_formats.md §4, §7 T, C and
A1–A5, profile P-C of §8), and A6, which extends the catalogue: a ``tool_use`` input sent whole
in ``content_block_start`` (the streamed input replaces it). Only the quirks the reference
records have a row; docs/rules.md has a section for every one.
"""

from __future__ import annotations

from typing import Any

from ._model import Reason

__all__ = ["ANTHROPIC_ROWS"]

ANTHROPIC_ROWS: list[tuple[Any, ...]] = [
    ("anthropic-messages/T6", "event with empty data (not parsed)", "S2", "record"),
    ("anthropic-messages/T7", "events without an event: line (routed by type)", "S1", "record"),
    ("anthropic-messages/T8", "event: name differs from the payload's type", "S3", "record"),
    (
        "anthropic-messages/T9",
        "stream ended inside an event (no blank line after the last event)",
        "S1",
        "record",
    ),
    (
        "anthropic-messages/T10",
        "events separated by a single newline: joined data is not JSON",
        "S2",
        "record",
    ),
    ("anthropic-messages/T11", "invalid UTF-8 replaced by U+FFFD", "S2", "record"),
    ("anthropic-messages/C1", "block index missing: routed to the open block", "S2", "reject"),
    (
        "anthropic-messages/C7",
        "tool_use block without an id",
        "S3",
        "reject",
        Reason.MISSING_ID,
    ),
    ("anthropic-messages/C14", "block index not the next one (gap or order)", "S2", "reject"),
    (
        "anthropic-messages/C24",
        "stream ended without message_stop after a stop_reason",
        "S3",
        "record",
    ),
    (
        "anthropic-messages/A3",
        "delta or stop for an index with no open block, or of the wrong type",
        "S1",
        "record",
    ),
    ("anthropic-messages/A4", "unknown event, block or delta type (ignored)", "S4", "record"),
    (
        "anthropic-messages/A6",
        "tool_use input sent whole in content_block_start (streamed input replaces it)",
        "S1",
        "record",
    ),
]

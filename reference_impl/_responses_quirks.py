"""The ``openai-responses`` rows of the quirk table (research/wire_formats.md §7 R1–R7, with the
transport quirks the Responses stream can show), and R8–R12, which extend the catalogue:

- R8: an event whose ``item_id`` and ``output_index`` disagree, or that names no item by its
  ``item_id`` (a gateway that numbers every item ``output_index: 0``, as Ollama reuses tool index
  0 in Chat Completions, ollama/ollama#15457; routing by ``output_index`` alone then merges
  calls);
- R9: a function or custom call item without a ``call_id`` (or with ``""``): a tool result must
  carry it (openai-python ``ResponseFunctionToolCall.call_id``), so strict refuses the call and
  lenient makes one up;
- R10: a parameterless call whose arguments never came, completed as ``{}``;
- R11: arguments that are one JSON text repeated: a proxy that appends ``.done`` to the deltas
  (Soju06/codex-lb#284) serves them so;
- R12: a stream that does not open with ``response.created`` (openai-python's
  ``ResponseStreamState`` raises on it).
"""

from __future__ import annotations

from typing import Any

from ._model import Reason

__all__ = ["RESPONSES_ROWS"]

_D = "openai-responses"

RESPONSES_ROWS: list[tuple[Any, ...]] = [
    (f"{_D}/T6", "event with empty data (not parsed as an event)", "S2", "record"),
    (f"{_D}/T8", "an event: name that does not match the payload's type", "S3", "record"),
    (
        f"{_D}/T9",
        "stream ended inside an event (no blank line after the last event)",
        "S1",
        "record",
    ),
    (f"{_D}/T10", "events separated by a single newline: joined data is not JSON", "S2", "record"),
    (f"{_D}/T11", "invalid UTF-8 replaced by U+FFFD", "S2", "record"),
    (
        f"{_D}/R1",
        "arguments restated by .done or output_item.done differ from the deltas",
        "S1",
        "reject",
    ),
    (
        f"{_D}/R2",
        "output_item.added already carries arguments (deltas restart them)",
        "S1",
        "reject",
    ),
    (f"{_D}/R4", "sequence_number with a gap, a duplicate or a decrease", "S3", "reject"),
    (
        f"{_D}/R5",
        "terminal event irregular: response.done, [DONE], events after the terminal",
        "S1",
        "reject",
    ),
    (f"{_D}/R7", "error event with a nested error object", "S2", "record"),
    (
        f"{_D}/R8",
        "item_id and output_index disagree, or item_id names no item",
        "S1",
        "reject",
    ),
    (f"{_D}/R9", "call item without a call_id", "S3", "reject", Reason.MISSING_ID),
    (f"{_D}/R10", "parameterless call sent no arguments: completed as {}", "S2", "record"),
    (f"{_D}/R11", "arguments are the same JSON text repeated", "S1", "record"),
    (f"{_D}/R12", "the stream did not open with response.created", "S4", "record"),
]
"""The quirks of the Responses stream the reference detects, as the fields of
:class:`~callstream.reference._quirks.Quirk` (id, title, severity, strict, reason)."""

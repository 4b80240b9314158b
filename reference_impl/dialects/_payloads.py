"""What every dialect does with an event's data before it reads it as its own: decode the JSON,
fail the stream when it is none, and quote values in messages without flooding them."""

from __future__ import annotations

import json
from typing import Any

from .._calls import CallBook, StreamFailure
from .._model import Reason

__all__ = ["DECODER", "clip", "describe_error", "not_json", "too_deep"]


class _Decoder(json.JSONDecoder):
    def decode(self, s: str, *args: Any) -> Any:
        """As ``json.JSONDecoder.decode``; a document that is one object with nothing around it
        (nearly every event) is read without the two whitespace scans around it."""
        if s[:1] == "{":
            value, end = self.raw_decode(s)
            if end == len(s):
                return value
        return super().decode(s, *args)


DECODER = _Decoder()


def too_deep(event: int) -> StreamFailure:
    """The failure of event number ``event``, whose JSON nests too deeply to parse."""
    return StreamFailure(Reason.PROTOCOL_ERROR, f"event {event}: JSON nested too deeply to parse")


def not_json(data: str, event: int, book: CallBook, error: ValueError) -> StreamFailure:
    """The failure of event number ``event``, whose ``data`` is not JSON; several documents
    joined by a newline (events separated by a single line break) are recorded as T10."""
    if "\n" in data:
        book.deviation("T10", f"event {event}: several JSON documents in one event", None)
    return StreamFailure(
        Reason.PROTOCOL_ERROR, f"event {event}: data is not JSON ({error}): {clip(data)}"
    )


def describe_error(error: Any) -> str:
    """A provider's error object as a message: its message, then its code and type."""
    if not isinstance(error, dict):
        return "provider error: no details" if error is None else f"provider error: {clip(error)}"
    parts = [f"provider error: {error.get('message') or 'no message'}"]
    for key in ("code", "type"):
        if error.get(key) is not None:
            parts.append(f"{key} {error[key]!r}")
    return ", ".join(parts)


def clip(value: Any, limit: int = 120) -> str:
    """``value`` quoted for a message, cut at ``limit`` characters."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (ValueError, RecursionError):
            text = f"<{type(value).__name__}>"
    return repr(text if len(text) <= limit else text[:limit] + "…")

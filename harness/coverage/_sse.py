"""The SSE layer of a stream's bytes, read for what it does rather than for its meaning: the
events a dialect's classifier walks, and the transport features (:data:`TRANSPORT_FEATURES`).

A reader of its own, not the reference's: it must see what a decoder would hide (which line
endings, a space after ``data:`` or not, a block never dispatched), and it must never refuse a
stream, whatever its bytes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["DONE", "WireEvent", "read_sse"]

DONE = "[DONE]"
_NOT_JSON: Any = object()
_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")


@dataclass(frozen=True, slots=True)
class WireEvent:
    """One dispatched event (or the last block, never dispatched): its ``event:`` name and its
    data, parsed."""

    name: str | None
    data: str
    payload: Any
    """The data as JSON, :data:`DONE`, or None when it is neither."""
    dispatched: bool = True

    def name_features(self, kind: Any) -> tuple[str, ...]:
        """How the event is named, in a dialect whose events are named after their payload's
        ``type`` (``kind``): with or without an ``event:`` line, and a name unlike the type.
        ``event: message`` is what no ``event:`` line means (SSE's default event type)."""
        if self.name in (None, "message"):
            return ("sse.no-event-lines",)
        if self.name != kind:
            return ("sse.event-lines", "sse.event-mismatch")
        return ("sse.event-lines",)


def read_sse(raw: bytes) -> tuple[list[WireEvent], set[str]]:
    """The events of ``raw`` and the transport features it shows."""
    features: set[str] = set()
    if raw.startswith(b"\xef\xbb\xbf"):
        features.add("sse.bom")
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        features.add("sse.invalid-utf8")
        text = raw.decode("utf-8", "replace")
    if not text.isascii():
        features.add("sse.multibyte-utf8")
        if any(ord(char) > 0xFFFF for char in text):
            features.add("sse.astral-utf8")
    endings: set[str] = set()
    events: list[WireEvent] = []
    name: str | None = None
    data: list[str] = []
    pending = False
    for match in _LINE.finditer(text):
        line, ending = match.group(1), match.group(2)
        if not ending and not line:
            break
        if ending:
            endings.add(ending)
        if not line:
            if data:
                events.append(_event(name, data, features))
            elif name is not None:
                features.add("sse.event-without-data")
            name, data, pending = None, [], False
            continue
        pending = True
        if line.startswith(":"):
            features.add("sse.comment")
            continue
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
            if field == "data":
                features.add("sse.data-space")
        elif field == "data" and value:
            features.add("sse.data-no-space")
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
        elif field in ("id", "retry"):
            features.add("sse.id-retry")
        elif colon and field:
            features.add("sse.unknown-field")
            if field != field.lstrip():
                features.add("sse.indented-field")
    if pending:
        features.add("sse.no-final-blank-line")
        if data:
            events.append(_event(name, data, features, dispatched=False))
    kinds = {"\n": "sse.lf", "\r\n": "sse.crlf", "\r": "sse.cr"}
    features.update(kinds[ending] for ending in endings)
    if len(endings) > 1:
        features.add("sse.mixed-newlines")
    return events, features


def _event(
    name: str | None, lines: list[str], features: set[str], *, dispatched: bool = True
) -> WireEvent:
    data = "\n".join(lines)
    if len(lines) > 1:
        features.add("sse.multiline-data")
        if _parse(data) is _NOT_JSON and all(_parse(line) is not _NOT_JSON for line in lines):
            features.add("sse.single-newline-events")
    if not data:
        features.add("sse.empty-data")
    payload = _parse(data)
    if payload is _NOT_JSON:
        if data.strip() == DONE:
            payload = DONE
        else:
            payload = None
            if data:
                features.add("sse.non-json-data")
    elif data != data.rstrip():
        features.add("sse.json-trailing-space")
    return WireEvent(name, data, payload, dispatched)


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON

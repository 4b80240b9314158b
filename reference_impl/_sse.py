"""An incremental, WHATWG-exact decoder for ``text/event-stream``.

Theory of operation. Bytes arrive in arbitrary pieces. An incremental UTF-8 decoder turns them
into text, carrying an incomplete multi-byte sequence to the next ``feed()`` and replacing
invalid bytes with U+FFFD (the spec's "UTF-8 decode"). The first character of the stream is
dropped if it is a BOM. Text is cut into lines at CRLF, LF or a lone CR; a CR that ends one
piece ends its line at once, and a LF that starts the next piece is then swallowed, so a CRLF
split across pieces is one line ending. Unfinished line text is kept as a list of pieces and
joined once, so a long line fed a byte at a time costs linear time. Lines are interpreted per
HTML §9.2.6: comments ignored, the first colon splits field from value, one leading space of the
value dropped, ``data`` lines joined with LF, ``event``/``id``/``retry`` understood, unknown
fields ignored, and a blank line dispatches the event if it has data. At ``close()`` whatever
was not dispatched is discarded, as the spec says; the decoder reports that it happened.

Limits on line length and event size are checked as text accumulates, so memory stays bounded
however the stream misbehaves; passing one raises :class:`SSELimitError`.
"""

from __future__ import annotations

import codecs
import re
from typing import NamedTuple

__all__ = ["SSEDecoder", "SSELimitError", "ServerSentEvent"]

_LINE_END = re.compile(r"\r\n|\r|\n")


class ServerSentEvent(NamedTuple):
    """One dispatched event (a named tuple: cheap to make, one per event)."""

    data: str
    event: str = "message"
    id: str = ""
    """The last event id in force when the event was dispatched (it persists across events)."""
    retry: int | None = None
    """The reconnection time in force, in milliseconds, if the stream set one."""


class SSELimitError(ValueError):
    """A line or an event grew past its limit. ``offset`` is the stream byte where it was seen;
    ``events`` are the events the same ``feed()`` completed before, which are not lost."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset
        self.events: list[ServerSentEvent] = []


class SSEDecoder:
    """Turns the bytes of an event stream, fed in any pieces, into :class:`ServerSentEvent`."""

    def __init__(self, *, max_line_length: int = 8 << 20, max_event_size: int = 8 << 20) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")("strict")
        self._started = False  # the first character (maybe a BOM) has been seen
        self._skip_lf = False  # the previous piece ended with CR
        self._partial: list[str] = []  # text of the unfinished line
        self._partial_len = 0
        self._data: list[str] = []
        self._data_len = 0
        self._event = ""
        self._last_id = ""
        self.retry: int | None = None
        self.max_line_length = max_line_length
        self.max_event_size = max_event_size
        self.bytes_seen = 0
        """Bytes fed so far: the stream offset of the next byte."""
        self.invalid_utf8 = 0
        """How many pieces contained invalid UTF-8 (replaced by U+FFFD)."""
        self.comments = 0
        """Comment lines seen (keep-alives). They never count as progress."""

    def feed(self, data: bytes | memoryview) -> list[ServerSentEvent]:
        """Decode ``data`` and return the events it completed, in order."""
        self.bytes_seen += len(data)
        try:
            text = self._utf8.decode(data)
        except UnicodeDecodeError:
            # The strict decoder keeps its state when it raises: decode the same bytes again
            # with replacement, as the spec demands, and note that the stream was damaged.
            self.invalid_utf8 += 1
            self._utf8.errors = "replace"
            text = self._utf8.decode(data)
            self._utf8.errors = "strict"
        return self._feed_text(text)

    def close(self) -> bool:
        """End of stream. Returns True if an undispatched event (or line) was discarded."""
        try:
            tail = self._utf8.decode(b"", final=True)
        except UnicodeDecodeError:
            self.invalid_utf8 += 1
            tail = "\ufffd"
        self._utf8.reset()
        discarded = bool(tail or self._partial_len or self._data)
        self._partial.clear()
        self._partial_len = 0
        self._data.clear()
        self._data_len = 0
        self._event = ""
        return discarded

    def _feed_text(self, text: str) -> list[ServerSentEvent]:
        if not text:
            return []
        if not self._started:
            self._started = True
            if text[0] == "\ufeff":
                text = text[1:]
        if self._skip_lf:
            self._skip_lf = False
            if text[:1] == "\n":
                text = text[1:]
        if "\r" in text:
            if text[-1] == "\r":
                self._skip_lf = True
            lines = _LINE_END.split(text)
        else:
            lines = text.split("\n")
        # The last element is the unfinished line ("" when text ended with a line ending).
        last = lines.pop()
        events: list[ServerSentEvent] = []
        if lines:
            if self._partial:
                self._partial.append(lines[0])
                lines[0] = "".join(self._partial)
                self._partial.clear()
                self._partial_len = 0
            try:
                self._lines(lines, events)
            except SSELimitError as exc:
                exc.events = events
                raise
        if last:
            self._partial.append(last)
            self._partial_len += len(last)
            if self._partial_len > self.max_line_length:
                error = self._line_too_long(self._partial_len)
                error.events = events
                raise error
        return events

    def _lines(self, lines: list[str], events: list[ServerSentEvent]) -> None:
        limit = self.max_line_length
        for line in lines:
            if not line:
                if self._data:
                    events.append(self._dispatch())
                else:
                    self._event = ""
                continue
            if len(line) > limit:
                raise self._line_too_long(len(line))
            if line[:6] == "data: ":  # the common case, kept off the general path
                self._append_data(line[6:])
            else:
                self._field(line)

    def _field(self, line: str) -> None:
        if line[0] == ":":
            self.comments += 1
            return
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._append_data(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self.retry = int(value)

    def _append_data(self, value: str) -> None:
        # The size of the data as dispatched: the lines joined with LF.
        self._data_len += len(value) + 1 if self._data else len(value)
        self._data.append(value)
        if self._data_len > self.max_event_size:
            raise SSELimitError(
                f"SSE event data passed {self.max_event_size} characters", self.bytes_seen
            )

    def _dispatch(self) -> ServerSentEvent:
        data = self._data[0] if len(self._data) == 1 else "\n".join(self._data)
        event = ServerSentEvent(data, self._event or "message", self._last_id, self.retry)
        self._data.clear()
        self._data_len = 0
        self._event = ""
        return event

    def _line_too_long(self, length: int) -> SSELimitError:
        return SSELimitError(
            f"SSE line passed {self.max_line_length} characters ({length} so far)", self.bytes_seen
        )

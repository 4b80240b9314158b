"""A stream on the wire: the events a dialect renders a plan into, and the SSE bytes they are
written as. SSE is every dialect's transport, so the bytes are written here, once: ``data:``
lines, ``event:`` lines (or none), the line endings, a BOM, keep-alive comments, an empty
event first, spaces after the JSON, a last event cut short (research/wire_formats.md §1).

``encode`` returns the bytes and, for each event, the offset at which it is dispatched, so the
oracle can say from which byte a call may be released (C4, C5).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import cycle
from typing import Any

from .spec import Transport

__all__ = [
    "INDENTED_FIELD",
    "NEWLINES",
    "UNKNOWN_FIELD",
    "Event",
    "Rendered",
    "data_lines",
    "data_size",
    "encode",
]

NEWLINES = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}


@dataclass(frozen=True, slots=True)
class Event:
    """One SSE event to write: a payload (dict or raw text) and its SSE event type."""

    data: Any
    event: str | None = None
    finishes: tuple[int, ...] = ()
    """The choices whose finish (the response's ending, for that choice) this event carries."""
    boundaries: tuple[int, ...] = ()
    """The calls (by their number in the plan) whose per-call boundary this event is: the
    dialect's signal that the call's arguments are final (C5)."""


@dataclass(frozen=True, slots=True)
class Rendered:
    """A spec on the wire."""

    data: bytes
    ends: tuple[int, ...]
    """For each event, the number of bytes that must arrive for it to be dispatched: up to its
    blank line's first character."""
    events: tuple[Event, ...]
    _finishes: dict[int, int] = field(init=False, repr=False, compare=False)
    _boundaries: dict[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Found once, in one pass: the oracle asks for every call (a stream may hold 258).
        finishes: dict[int, int] = {}
        boundaries: dict[int, int] = {}
        for event, end in zip(self.events, self.ends, strict=False):
            for choice in event.finishes:
                finishes.setdefault(choice, end)
            for call in event.boundaries:
                boundaries.setdefault(call, end)
        object.__setattr__(self, "_finishes", finishes)
        object.__setattr__(self, "_boundaries", boundaries)

    def finish_offset(self, choice: int) -> int | None:
        """Where the (first) event carrying ``choice``'s finish ends, if there is one."""
        return self._finishes.get(choice)

    def boundary_offset(self, call: int) -> int | None:
        """Where the (first) event carrying the per-call boundary of the plan's call number
        ``call`` ends, if there is one."""
        return self._boundaries.get(call)


UNKNOWN_FIELD = "Event: error"
"""The unknown field ``Transport.id_lines`` writes in the first event (T3: ignored)."""
INDENTED_FIELD = "\tdata: [DONE]"
"""The unknown field ``Transport.id_lines`` writes in every event: its name is ``\tdata`` (a
field's name is all before its colon, T3), so it is ignored. A reader that strips a line before
reading it takes it for ``data: [DONE]``, as does one that drops the first character of a chunk
after a lone CR as if it were the LF of a CRLF (a tab is below LF)."""


def encode(
    events: Sequence[Event], transport: Transport, *, keepalive: int = 0, cut: bool = False
) -> Rendered:
    """``events`` as SSE bytes: each preceded by ``keepalive`` comment lines, the last one
    without the blank line that would dispatch it when ``cut`` (quirk T9)."""
    # Mixed endings never put a lone CR right before a LF: the two would read as one CRLF.
    newlines = (
        cycle(["\n", "\r\n", "\r", "\r\n"])
        if transport.newline == "mixed"
        else cycle([NEWLINES[transport.newline]])
    )
    prefix = "data: " if transport.space else "data:"
    out = bytearray("\ufeff".encode() if transport.bom else b"")
    if transport.bare_event:
        out += f"event: ping{next(newlines)}{next(newlines)}".encode()
    if transport.invalid_utf8 and not cut:
        out += b": caf\xe9" + next(newlines).encode()
    if transport.empty_data:
        out += f"{prefix.rstrip()}{next(newlines)}{next(newlines)}".encode()
    ends: list[int] = []
    fixed = NEWLINES.get(transport.newline)
    for number, event in enumerate(events):
        text = _text(event, transport)
        name = None if transport.unnamed else event.event
        name = name or ("message" if transport.event_lines else None)
        lines = [] if name is None else [f"event: {name}"]
        if transport.id_lines:
            # After the event: line, so that a reader that takes any field for it is caught; the
            # first event also carries a field SSE does not name, ignored: ``Event:`` (names are
            # case-sensitive), naming an error, so a reader that takes it for ``event:`` fails;
            # and every event one whose name is ``data`` after a tab (INDENTED_FIELD).
            lines += [f"id: {number}", *(["retry: 3000", UNKNOWN_FIELD] if number == 0 else [])]
            lines.append(INDENTED_FIELD)
        if fixed is not None:  # one line ending throughout: the event is written in one go
            written = prefix + text.replace("\n", fixed + prefix) + fixed + fixed
            if lines:
                written = fixed.join(lines) + fixed + written
            if keepalive:
                written = (_comment(number) + fixed + fixed) * keepalive + written
            out += written.encode()
        else:
            for _ in range(keepalive):
                out += f"{_comment(number)}{next(newlines)}{next(newlines)}".encode()
            lines += [prefix + line for line in text.split("\n")]
            for line in lines:
                out += (line + next(newlines)).encode()
            out += next(newlines).encode()
        # The event is dispatched by the first character of its blank line (a CRLF's CR).
        ends.append(len(out) - 1 if out.endswith(b"\r\n") else len(out))
    if cut and events:
        # Drop the blank line that would dispatch the last event (quirk T9).
        while out and out[-1] in b"\r\n":
            del out[-1]
        ends[-1] = len(out) + 1
        if transport.invalid_utf8:
            out += "\u20ac".encode()[:2]  # the connection dropped inside a character (T11)
    return Rendered(bytes(out), tuple(ends), tuple(events))


def _comment(number: int) -> str:
    """The keep-alive comment line before event ``number``: a bare colon before the first (the
    shortest comment there is, as some gateways send it), ``: keep-alive`` before the others."""
    return ":" if number == 0 else ": keep-alive"


def data_size(event: Event, transport: Transport) -> int:
    """The characters of data ``event`` dispatches as ``encode`` writes it, its lines joined
    with LF (what ``Limits.max_event_size`` bounds, V5): a reader takes the one space after
    ``data:``, so without that space a line's own first space is not data."""
    text = _text(event, transport)
    if transport.space:
        return len(text)
    return len(text) - sum(line.startswith(" ") for line in text.split("\n"))


def data_lines(event: Event, transport: Transport) -> int:
    """How many ``data:`` lines ``encode`` writes ``event`` over."""
    return _text(event, transport).count("\n") + 1


def _text(event: Event, transport: Transport) -> str:
    """The event's data as written: raw text, or its payload as JSON (over several lines when
    ``multiline``, with spaces around it when ``trailing_space``)."""
    if isinstance(event.data, str):
        return event.data
    text = _json(event.data, transport.multiline)
    return " " + text + "  " if transport.trailing_space else text


def _json(payload: Any, multiline: bool) -> str:
    """The payload as JSON: compact, or over several lines when ``multiline``: indented (three
    lines or more), but where its compact text has an odd length, that text broken once after
    its opening bracket (two lines). So both shapes come up, and a reader that keeps one line
    of two is caught as well as one that loses the middle of many."""
    if not multiline:
        return _COMPACT(payload)
    compact = _COMPACT(payload)
    if len(compact) % 2 and len(compact) > 2 and compact[0] in "{[":
        return compact[0] + "\n" + compact[1:]
    return _MULTILINE(payload)


def _compact_encoder() -> Callable[[Any], str]:
    """``json.dumps(payload, separators=(",", ":"), ensure_ascii=False)``, built once: with any
    argument ``json.dumps`` builds an encoder for every payload, and ``JSONEncoder.encode``
    its C encoder for every payload too (a microsecond of the three an event costs)."""
    standard = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without the C encoder
        return standard.encode
    # Cycles and values JSON cannot hold are refused as json refuses them; its record of the
    # containers it is inside is empty after each payload, emptied when one is refused.
    markers: dict[int, Any] = {}
    encode = make(
        markers,
        standard.default,
        json.encoder.encode_basestring,
        None,
        ":",
        ",",
        False,
        False,
        True,
    )

    def compact(payload: Any) -> str:
        try:
            return "".join(encode(payload, 0))
        except BaseException:
            markers.clear()
            raise

    return compact


# Built once: a fuzzed stream's twenty-odd events are written every example.
_COMPACT = _compact_encoder()
_MULTILINE = json.JSONEncoder(indent=1, ensure_ascii=False).encode

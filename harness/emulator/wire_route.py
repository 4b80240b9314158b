"""What the emulated routes of the other dialects share: a route that reads a request in its
own dialect's shape, asks the fake model (:mod:`.model`, which thinks in Chat Completions
terms) and renders the answer as its dialect's named events (``event: X`` / ``data: {…}``).

:class:`WireRoute` is the base of :mod:`.anthropic_routes` and :mod:`.responses_routes`; each
well-behaved route there certifies clean under the strict profile, and each subclass bends it
the way a real route does (research/wire_formats.md §7).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from .model import Answer, think
from .reply import Reply

__all__ = ["NamedEvent", "WireRoute", "fragments", "named_event", "offered", "pauses", "u_escaped"]

_FRAGMENT_SIZES = (3, 7, 5, 4, 6)

NamedEvent = tuple[str, Mapping[str, Any]]
"""One event of a stream: its ``event:`` name and its payload."""


def fragments(text: str) -> list[str]:
    """``text`` in pieces of 3 to 7 characters, as a real model's tokens come (every emulated
    route cuts its text so)."""
    pieces: list[str] = []
    sizes = itertools.cycle(_FRAGMENT_SIZES)
    start = 0
    while start < len(text):
        size = next(sizes)
        pieces.append(text[start : start + size])
        start += size
    return pieces


def pauses(count: int, delay: float) -> tuple[float, ...]:
    """No pause before the first of ``count`` chunks, ``delay`` seconds before each other."""
    return tuple(0.0 if n == 0 else delay for n in range(count))


def u_escaped(c: str) -> str:
    """``c`` as JSON ``\\uXXXX`` escapes (a surrogate pair beyond the BMP)."""
    return json.dumps(c, ensure_ascii=True)[1:-1] if ord(c) > 0x7F else f"\\u{ord(c):04x}"


def named_event(name: str | None, payload: Any) -> bytes:
    """One SSE event: an ``event:`` line (none when ``name`` is None) and its data as compact
    JSON."""
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    head = "" if name is None else f"event: {name}\n"
    return f"{head}data: {data}\n\n".encode("utf-8", "surrogatepass")


class WireRoute:
    """A well-behaved route of one dialect; subclasses bend ``events`` or ``chunks``."""

    name = ""
    title = ""
    dialect = ""
    """The dialect it speaks: the app serves it on that dialect's path only."""
    quirks: tuple[str, ...] = ()
    """The quirk ids of research/wire_formats.md §7 the route reproduces."""

    def reply(
        self,
        request: Mapping[str, Any],
        delay: float = 0.0,
        *,
        credentials: Sequence[str] = (),
    ) -> Reply:
        """The route's answer to ``request``: its dialect's events, ``delay`` seconds apart,
        when it asks for ``stream: true``, else its non-streaming answer. ``credentials`` are
        ignored: an honest route does not echo them."""
        answer = think(self.chat_request(request))
        if request.get("stream") is not True:
            return Reply((), completion=self.completion(answer))
        chunks = self.chunks(answer)
        return Reply(tuple(chunks), pauses(len(chunks), delay))

    def chunks(self, answer: Answer) -> list[bytes]:
        """The stream's chunks, one event each."""
        return [named_event(name, payload) for name, payload in self.events(answer)]

    def chat_request(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The request as the fake model reads it (Chat Completions' fields)."""
        raise NotImplementedError

    def events(self, answer: Answer) -> list[NamedEvent]:
        """The stream's events in order."""
        raise NotImplementedError

    def completion(self, answer: Answer) -> dict[str, Any]:
        """The non-streaming answer."""
        raise NotImplementedError


def offered(tools: Any, parameters: str) -> list[dict[str, Any]]:
    """Tools of another dialect (each an object with ``name`` and the schema under
    ``parameters``) as Chat Completions tools; anything else is passed on for the fake model
    to refuse."""
    if not isinstance(tools, list):
        return tools  # type: ignore[no-any-return]
    return [
        {"type": "function", "function": {"name": t.get("name"), "parameters": t.get(parameters)}}
        if isinstance(t, dict)
        else t
        for t in tools
    ]

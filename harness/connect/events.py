"""The ``py+events:module:factory`` connectable: an event-level assembler behind callstream's SSE
decoder.

Many libraries do their own SSE and hand their assembler decoded JSON chunks, not bytes. Such an
assembler has ``feed_event(payload, *, event="message")`` and ``close()``, each returning the
results that became final, as the reference's :meth:`~callstream.reference.Assembler.feed_event`
does: ``payload`` is an event's data decoded to a JSON object, or the data's text when it is no
JSON object (``"[DONE]"``, empty data, an array, text that is not JSON); ``event`` is the SSE
event name, ``message`` when the event had no ``event:`` line.

:class:`EventFed` puts the reference's :class:`~callstream.reference.SSEDecoder` in front of one,
so that it meets the bytes contract of DESIGN.md: ``feed(bytes)`` decodes the events the bytes
complete and hands each to ``feed_event``; ``close()`` closes the decoder, then the object. It
does not claim the transport rules: its declaration reads ``events``
(:attr:`~callstream.core.declaration.Declaration.reads`), so the scenarios that prove only the
SSE framing (T1, T2, T3) or the decoder's limits are not applicable to it, and where the object
keeps findings, the SSE-level ones the decoder meets (T9, T11) are added to them, as the
reference records them.

An event past the decoder's limits (``Limits.max_line_length``, ``max_event_size``) cannot be
handed over, and the object, which never sees an event's size, cannot be made to reject its
calls ``too_large`` for it: the wrapper stops reading there and closes the object, so its open
calls come out as a stream that ended there, never ready from an event it did not see.
"""

from __future__ import annotations

import heapq
import inspect
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from callstream.reference import QUIRKS, Finding, Limits, ServerSentEvent, SSEDecoder, SSELimitError

from ..core.declaration import Implementation
from ..errors import UsageError
from .connectables import load_python

__all__ = ["EventFed", "EventFedFactory", "load_events", "payload_of"]

_JSON = json.JSONDecoder()
"""Decodes an event's data as the reference's dialects do (Python's JSON with its defaults:
``NaN`` and ``Infinity`` read, the last of duplicate keys kept, nesting too deep for the parser
raising ``RecursionError``), so that the object is handed what the reference would read."""


def payload_of(data: str) -> Mapping[str, Any] | str:
    """What ``feed_event`` is handed for an event's ``data``: the JSON object it decodes to, or
    else the text itself, unchanged (``"[DONE]"``, empty data, JSON that is no object, text
    that is no JSON, or nests too deeply to parse), for the object to judge as it would."""
    try:
        value = _JSON.decode(data)
    except (ValueError, RecursionError):
        return data
    return value if isinstance(value, dict) else data


class EventFed:
    """An event-level assembler fed bytes: the reference's SSE decoder reads them and hands it
    each event. Results, and anything else the object has (``findings``, ``usage``…), are the
    object's own, passed through; its findings gain the SSE-level ones the decoder met."""

    def __init__(self, assembler: Any, limits: Limits, dialect: str) -> None:
        """Wrap ``assembler`` (an object with ``feed_event`` and ``close``) for one stream of
        ``dialect``, decoding its bytes within ``limits``."""
        self._assembler = assembler
        self._feed_event: Callable[..., Any] = assembler.feed_event
        self._dialect = dialect
        self._sse = SSEDecoder(
            max_line_length=limits.max_line_length, max_event_size=limits.max_event_size
        )
        self._met: dict[str, Finding] = {}
        self._past_limit = False
        """An event passed a decoder limit: the object was closed there, nothing more is read."""

    def feed(self, data: bytes) -> Any:
        """Decode ``data`` and hand each event it completes to ``feed_event``; the results they
        made final, in order."""
        if self._past_limit:
            return []
        try:
            events = self._sse.feed(data)
        except SSELimitError as exc:
            # The events completed before the limit was passed are real: handed over first.
            self._past_limit = True
            return _joined([*self._handed(exc.events), self._assembler.close()])
        finally:
            # Looked at on every feed, as the reference does; noted once, however the bytes came.
            if self._sse.invalid_utf8:
                self._note("T11", "invalid UTF-8 replaced by U+FFFD")
        return _joined(self._handed(events))

    def close(self) -> Any:
        """The connection ended: close the decoder (an event it was still reading is discarded,
        T9), then the object; the results its ``close()`` returns, as they are."""
        if self._past_limit:
            return []
        if self._sse.close():
            self._note("T9", "the stream ended inside an event, which was discarded")
        if self._sse.invalid_utf8:
            self._note("T11", "invalid UTF-8 replaced by U+FFFD")
        return self._assembler.close()

    @property
    def findings(self) -> Any:
        """The object's findings, then the SSE-level ones the decoder met, each once. When the
        object keeps none (no ``findings``, or None), or keeps something that is no list of
        them, that is passed as it is: the findings check reads it as it would the object's."""
        found = getattr(self._assembler, "findings", None)
        if (
            not self._met
            or isinstance(found, str | bytes | Mapping)
            or not isinstance(found, Iterable)
        ):
            return found
        return (*found, *self._met.values())

    def __getattr__(self, name: str) -> Any:
        # What the object has beyond feed and close (usage, preview, cancel…) is its own; the
        # wrapper's own attributes, all set in __init__, never get here.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._assembler, name)

    def _handed(self, events: Sequence[ServerSentEvent]) -> list[Any]:
        """What ``feed_event`` answered for each of ``events``."""
        feed_event = self._feed_event
        return [feed_event(payload_of(sse.data), event=sse.event) for sse in events]

    def _note(self, code: str, detail: str) -> None:
        """Record the SSE-level quirk ``code`` of the stream's dialect, once, as the reference
        records it."""
        if code not in self._met:
            quirk = QUIRKS[f"{self._dialect}/{code}"]
            self._met[code] = Finding(quirk.id, detail, quirk.severity)


def _joined(answers: Sequence[Any]) -> Any:
    """The results of several ``feed_event`` (or ``close``) answers as one feed()'s answer.

    The contract hands back what one ``feed()`` made final in (choice, index) order (E4); an
    event-level object orders what each event made final, and the events of one ``feed()`` may
    finish calls in any order (a later block's stop before an earlier one's). So the answers
    are merged in that order, each answer's own order kept: a disorder inside one answer stays
    for the check to see. Results whose positions do not compare are joined as they came. An
    answer that is no list of results (a mapping, a string, a number) is handed back as it is,
    for the harness to judge its shape as it would a ``feed()``'s."""
    listed: list[list[Any]] = []
    for answer in answers:
        if not answer:
            continue  # None, or an empty list: nothing final
        if answer.__class__ is not list and (
            isinstance(answer, str | bytes | Mapping) or not isinstance(answer, Iterable)
        ):
            return answer
        listed.append(list(answer))
    if len(listed) < 2:
        return listed[0] if listed else []
    try:
        return list(heapq.merge(*listed, key=_position))
    except TypeError:
        return [result for results in listed for result in results]


def _position(result: Any) -> tuple[Any, Any]:
    """(choice, index) of a result, a mapping or an object."""
    if isinstance(result, Mapping):
        return result.get("choice"), result.get("index")
    return getattr(result, "choice", None), getattr(result, "index", None)


@dataclass(frozen=True, slots=True)
class EventFedFactory:
    """Makes an :class:`EventFed` per stream around what the event-level factory ``make``
    makes, called with the same arguments (``tools=``, ``limits=``, and ``dialect=`` when the
    implementation reads several dialects)."""

    make: Callable[..., Any]
    dialect: str
    """The dialect of a stream the factory is not told one of: the one the implementation
    reads."""

    def __call__(self, *, limits: Limits, dialect: str | None = None, **arguments: Any) -> EventFed:
        """An :class:`EventFed` for one stream."""
        if dialect is not None:
            arguments["dialect"] = dialect
        made = self.make(limits=limits, **arguments)
        return EventFed(made, limits, dialect or self.dialect)

    @property
    def __signature__(self) -> inspect.Signature:
        """The event-level factory's signature, which every call is made with: ``callstream
        check`` judges that one."""
        return inspect.signature(self.make)


def load_events(spec: str) -> Implementation:
    """A ``py+events:module:factory`` implementation: imported and declared as ``py:`` is
    (:func:`~callstream.connect.connectables.load_python`), its factory's objects fed through
    :class:`EventFed`, its declaration reading ``events``. A :class:`UsageError` when the
    factory's object, made once with no tools and the default limits, has no ``feed_event`` or
    ``close``."""
    loaded = load_python(spec)
    declaration = replace(loaded.declaration, reads="events")
    _refuse_without_feed_event(spec, loaded)
    factory = EventFedFactory(loaded.factory, declaration.dialects[0])
    return Implementation(spec, loaded.name, factory, declaration)


def _refuse_without_feed_event(spec: str, loaded: Implementation) -> None:
    """Make one object as a run would (no tools, the default limits, the first dialect) and
    raise a :class:`UsageError` naming ``spec`` when it has no ``feed_event`` or ``close``
    method. What the factory raises is left for the run to judge (``no_crash``)."""
    try:
        made = loaded.factory_for(loaded.declaration.dialects[0])(tools=[], limits=Limits())
    except Exception:
        return
    missing = [name for name in ("feed_event", "close") if not callable(getattr(made, name, None))]
    if not missing:
        return
    hint = (
        f"; it has feed(bytes): connect it as py:{loaded.name}"
        if callable(getattr(made, "feed", None))
        else ""
    )
    raise UsageError(
        f"{spec!r}: {loaded.name} made {_a(made)}, which has no {' or '.join(missing)}: an "
        "event-level assembler has feed_event(payload, *, event='message') and close() "
        f'(docs/contract.md, "Event-level assemblers"){hint}'
    )


def _a(value: Any) -> str:
    """``a Parser``, ``an int``: what a value is, for a message."""
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"

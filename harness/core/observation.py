"""Driving an implementation through one chunking, and recording what it did.

An implementation is anything that follows the contract of DESIGN.md: ``factory(tools=…,
limits=…)`` returns an object with ``feed(bytes)`` and ``close()``, each returning the results
that became final. Results may be objects or dicts; they are normalised to :class:`Observed`.
Whatever the implementation raises is recorded as its failure, never raised here; a
:class:`StreamTimeout` (raised by a connection that gave up waiting) is recorded as a hang.

:func:`record` takes down what one chunking did and builds nothing more: each result's values,
made plain as it comes out (so nothing the implementation changes afterwards shows). A case runs
a stream thousands of times (``pairs``) and most of its chunkings do what an earlier one did, so
the runner builds the :class:`Observation` the checks read (:meth:`Recording.observation`) only
for what it has not judged yet; :func:`observe` is both at once.
"""

from __future__ import annotations

import operator
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from callstream.reference import Limits, Tool

from ..errors import StreamTimeout
from ..rules import QuirkId, quirk_id

__all__ = ["Observation", "Observed", "Recording", "Release", "observe", "record"]

_FIELDS = ("choice", "index", "id", "name", "arguments_text", "arguments", "status", "reason")
_OPTIONAL = ("synthetic_id",)
"""Fields a result may carry or leave out (docs/contract.md); read as None when absent."""
_every_field = operator.attrgetter(*_FIELDS)


@dataclass(frozen=True, slots=True)
class Observed:
    """One result as the implementation gave it."""

    choice: Any
    index: Any
    id: Any
    name: Any
    arguments_text: Any
    arguments: Any
    status: Any
    reason: Any
    synthetic_id: Any = None
    """Whether the implementation says it made the id up; None when the result does not say."""

    @classmethod
    def from_result(cls, result: Any) -> Observed:
        """Normalise a mapping or an object with the contract's fields into plain JSON values.

        Raises TypeError for anything else, which ``observe`` records as the implementation's
        failure; values that are not JSON are kept as their ``repr``, so no check or report can
        trip over an implementation's objects.
        """
        return cls(*_plain_values(result))

    @property
    def key(self) -> tuple[Any, Any]:
        """(choice, index): which call this is."""
        return (self.choice, self.index)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields: the contract's, and each optional one the result carries."""
        fields = {name: getattr(self, name) for name in _FIELDS}
        return fields | {
            name: getattr(self, name) for name in _OPTIONAL if getattr(self, name) is not None
        }


def _plain_values(result: Any) -> list[Any]:
    """A result's values in :class:`Observed`'s field order, each plain (``_plain``); raises
    TypeError for what is neither a mapping nor an object with the contract's fields."""
    if isinstance(result, Mapping):
        values = [result.get(name) for name in (*_FIELDS, *_OPTIONAL)]
    elif hasattr(result, "status") and hasattr(result, "arguments_text"):
        try:
            values = list(_every_field(result))
        except AttributeError:  # a field the object leaves out reads as None
            values = [getattr(result, name, None) for name in _FIELDS]
        values += [getattr(result, name, None) for name in _OPTIONAL]
    else:
        got = "None" if result is None else type(result).__name__
        raise TypeError(
            f"a result must be a mapping or an object with the contract's fields "
            f"{', '.join(_FIELDS)}; got {got}"
        )
    # Enum members (StrEnum) compare equal to their value; keep plain strings for reports (a
    # plain string is its own value, and most are).
    for position in (6, 7):
        value = values[position]
        if value is not None and type(value) is not str:
            values[position] = str(getattr(value, "value", value))
    # _plain's own first test, made here: most values are plain already, and a call costs more.
    return [
        value if value is None or type(value) in _BUILTIN_SCALARS else _plain(value)
        for value in values
    ]


@dataclass(frozen=True, slots=True)
class Release:
    """A result and when it came out."""

    chunk: int
    """Index of the chunk whose ``feed()`` returned it; the number of chunks for ``close()``."""
    offset: int
    """Stream bytes fed when it came out."""
    result: Observed


@dataclass(frozen=True, slots=True)
class Observation:
    """What an implementation did with one chunking of one stream."""

    releases: tuple[Release, ...]
    error: str | None = None
    """The exception the implementation raised (with its traceback), if any."""
    timed_out: bool = False
    """The implementation did not answer in time (``error`` then says what it was doing)."""
    elapsed: float = 0.0
    findings: frozenset[QuirkId] | None = None
    """Quirk ids the implementation recorded, when it reports any (``.findings``)."""
    findings_unreadable: str | None = None
    """Why the implementation's ``.findings`` could not be read as quirk ids, when it has one
    that is not a collection of them (a method, a number…)."""

    @property
    def results(self) -> list[Observed]:
        """Every result, in release order."""
        return [release.result for release in self.releases]


class Recording(NamedTuple):
    """What an implementation did with one chunking, as :func:`record` took it down: the fields
    of an :class:`Observation`, each release as (chunk, offset, its result's plain values in
    :class:`Observed`'s field order)."""

    releases: tuple[tuple[int, int, list[Any]], ...]
    error: str | None
    timed_out: bool
    elapsed: float
    findings: frozenset[QuirkId] | None
    findings_unreadable: str | None

    def observation(self) -> Observation:
        """The recording as the checks read it."""
        return Observation(
            tuple(
                Release(chunk, offset, Observed(*values)) for chunk, offset, values in self.releases
            ),
            self.error,
            self.timed_out,
            self.elapsed,
            self.findings,
            self.findings_unreadable,
        )


def observe(
    factory: Callable[..., Any],
    tools: Sequence[Tool],
    limits: Limits,
    chunks: Sequence[bytes],
    dialect: str = "openai-chat",
) -> Observation:
    """Create an implementation, feed it ``chunks`` (a stream of ``dialect``) one by one, close
    it, and record it all."""
    return record(factory, tools, limits, chunks, dialect).observation()


def record(
    factory: Callable[..., Any],
    tools: Sequence[Tool],
    limits: Limits,
    chunks: Sequence[bytes],
    dialect: str = "openai-chat",
) -> Recording:
    """What :func:`observe` observes, taken down without building the observation."""
    releases: list[tuple[int, int, list[Any]]] = []
    started = time.perf_counter()
    offset = 0
    asm: Any = None
    try:
        asm = factory(tools=list(tools), limits=limits)
        for number, chunk in enumerate(chunks):
            offset += len(chunk)
            returned = asm.feed(chunk)
            if returned:  # most feeds return nothing: no list is built for them
                releases += [(number, offset, _plain_values(r)) for r in returned]
        returned = asm.close()
        if returned:
            releases += [(len(chunks), offset, _plain_values(r)) for r in returned]
    except Exception as exc:  # the implementation's failure, recorded as such
        return Recording(
            tuple(releases),
            traceback.format_exc(limit=-8),
            isinstance(exc, StreamTimeout),
            time.perf_counter() - started,
            *_findings(asm, dialect),
        )
    return Recording(
        tuple(releases), None, False, time.perf_counter() - started, *_findings(asm, dialect)
    )


def _plain(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON-shaped data, copied exactly: every string keeps each code point
    (two lone surrogate halves stay two, never one character), numbers keep their value and
    type (a huge integer, ``nan``), mappings keep their key order. What is not JSON-shaped is
    kept as its ``repr``, so no check or report can trip over an implementation's objects."""
    if value is None or type(value) in _BUILTIN_SCALARS:  # most values: already plain
        return value
    if isinstance(value, _BUILTIN_SCALARS):
        return _exact_scalar(value)
    # Below, each item's own first test is made in place (most items are plain already, and a
    # call costs more), and a dict is told a mapping without the slower check of the ABC.
    if depth < _DEPTH:
        if type(value) is dict or isinstance(value, Mapping):
            members = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    break
                members[str(key)] = (
                    item
                    if item is None or type(item) in _BUILTIN_SCALARS
                    else _plain(item, depth + 1)
                )
            else:
                return members
        elif isinstance(value, list | tuple):
            return [
                item if item is None or type(item) in _BUILTIN_SCALARS else _plain(item, depth + 1)
                for item in value
            ]
    try:
        return f"<not JSON: {value!r:.200}>"
    except Exception:
        return f"<not JSON: {type(value).__name__}>"


_BUILTIN_SCALARS = (str, int, bool, float)


def _exact_scalar(value: Any) -> Any:
    """A scalar of a subclass of a builtin as its plain builtin type (an ``int`` or ``str``
    subclass such as an enum member becomes the plain value, with the same code points or
    digits)."""
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str.__str__(value)


_DEPTH = 200
"""Nesting kept of a result's values; deeper values become their repr."""


def _findings(asm: Any, dialect: str) -> tuple[frozenset[QuirkId] | None, str | None]:
    """The quirk ids an implementation recorded (strings, or objects with a ``quirk``), each
    qualified by its dialect: a bare id (``C3``) is read as one of the stream's own dialect, as
    docs/contract.md allows; or why its ``findings`` cannot be read so (the findings check
    fails it: an implementation that has the attribute reports findings). Both None when it
    has no findings."""
    found = getattr(asm, "findings", None)
    if found is None:
        return None, None
    try:
        quirks = [str(getattr(item, "quirk", item)) for item in found]
    except Exception as exc:
        kind = type(found).__name__
        return None, f"its findings, a {kind}, is not a collection ({exc})"
    if not quirks:
        return _NOTHING_FOUND, None
    return (
        frozenset(QuirkId(quirk) if "/" in quirk else quirk_id(dialect, quirk) for quirk in quirks),
        None,
    )


_NOTHING_FOUND: frozenset[QuirkId] = frozenset()

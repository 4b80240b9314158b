"""Many small draws from few choices: a :class:`Tape` reads the generators' knobs from bytes
Hypothesis draws in one choice.

Hypothesis pays for every choice it makes: a span, the choice's constraints, its place in the
tree of examples already tried, its replay; about twenty microseconds each, whatever the value.
A stream and its splitting drawn a knob at a time took about sixty-four choices, and their
drawing cost three times the assembler's run. A tape takes one choice, a chunk of bytes as long
as its unit (a stream's knobs, a call, a splitting) needs nine times in ten, and reads every
knob it knows (:func:`readable`: the tables of :mod:`._knobs`, integers, floats, text, JSON
values) from it, a byte or a few each, drawing :data:`CHUNK` bytes more when a chunk runs out;
a strategy it does not know it leaves to Hypothesis, as a choice of its own. A stream and its
splitting take about five choices.

First chunks as long as what a unit reads most of the time keep the choices few (about four a
stream), and so the first test cases whole: Hypothesis ends them early when they make more
choices than five times what the simplest test case needs after the same start, and the
simplest (zero bytes: one call a stream) needs few.

Shrinking still leads somewhere readable: Hypothesis shrinks a chunk by zeroing its bytes and
lowering them one by one, and zero bytes read as the ordinary value of every knob (the first of
a table, the end of a range nearest zero, no cut). A knob takes as many bytes whatever its
value, so a byte made smaller changes its own knob and leaves the bytes of the knobs after it
where they were (unless the knob decides what else is drawn, as a choice would).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from inspect import Signature
from typing import Any, TypeVar, cast

from hypothesis import strategies as st

__all__ = ["CALL_BYTES", "CHUNK", "SPLITTING_BYTES", "STREAM_BYTES", "Tape", "readable", "tape"]

CHUNK = 32
"""Bytes a tape draws when its first chunk runs out."""
STREAM_BYTES = 32
CALL_BYTES = 48
SPLITTING_BYTES = 40
"""The first chunk of a stream's knobs, of one call's and of a splitting's: what each reads most
of the time, for every byte drawn costs (Hypothesis draws a chunk a byte at a time, about a
third of a microsecond each) and so does every chunk more (a choice, some five microseconds).
Measured over 3 000 derandomised examples: a stream reads a median 21 bytes (19 in 20 at most
32), a call 38 (seven in ten at most 48; long strings and many fields take more), a splitting
1 (whole, or byte by byte: half of them), 37 (a few cuts) or 73 (many). First chunks of 96, 96
and 80 bytes drew 360 bytes an example, of which 140 were read; these draw about 200."""


@cache
def _chunks(size: int) -> st.SearchStrategy[bytes]:
    return st.binary(min_size=size, max_size=size)


S = TypeVar("S", bound=st.SearchStrategy[Any])
Ex = TypeVar("Ex")

_READERS: dict[int, tuple[st.SearchStrategy[Any], Callable[[Tape], Any]]] = {}
"""How a tape reads each strategy it knows, by the strategy's identity (the strategy is kept
with its reader, so its identity is never another's)."""


def readable(strategy: S, read: Callable[[Tape], Any]) -> S:
    """``strategy``, which a tape draws with ``read`` (bytes from the tape) rather than as a
    choice of Hypothesis's. ``read`` must draw as the strategy does (the same values, the
    ordinary one from zero bytes): tests draw the strategy either way."""
    _READERS[id(strategy)] = (strategy, read)
    return strategy


class Tape:
    """A draw function (``st.DrawFn``) that reads the strategies it knows from bytes, and hands
    the others to the draw function it wraps. Make one per span the shrinker should treat as a
    unit (a call, a stream's knobs, a splitting) with :func:`tape`."""

    __slots__ = ("_at", "_chunk", "_draw", "_first", "_raw")
    __signature__ = Signature(parameters=[])  # as ``st.DrawFn`` has it

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any], size: int = CHUNK) -> None:
        self._draw = draw
        self._first = size
        self._chunk = b""
        self._at = 0
        # Within a composite strategy, ``draw`` is the ConjectureData's, whose bytes choice
        # takes no span. Drawn as a strategy, every chunk would be a span of one label, and
        # Hypothesis's mutator copies a span over another of its label: a call's bytes over a
        # splitting's read as nothing like a splitting (of another length, as zero bytes), and
        # a unit that then needs a chunk more ends the example (a fifth of the examples were
        # such copies, most of them cut short). Where ``draw`` is another's, a strategy.
        self._raw = getattr(getattr(draw, "__self__", None), "draw_bytes", None)

    def __call__(self, strategy: st.SearchStrategy[Ex], label: object = None) -> Ex:
        found = _READERS.get(id(strategy))
        if found is None:
            return cast(Ex, self._draw(strategy))
        return cast(Ex, found[1](self))

    def another(self, size: int = CHUNK) -> Tape:
        """A tape of its own over the same draw function, its first chunk ``size`` bytes, for
        the next unit (a stream's next call): whatever one unit reads, the next one's bytes
        stay where they were."""
        return Tape(self._draw, size)

    def byte(self) -> int:
        """The next byte (a chunk is drawn when the last one is used up)."""
        at = self._at
        if at >= len(self._chunk):
            self._chunk, at = self._next(CHUNK if self._chunk else self._first), 0
        self._at = at + 1
        return self._chunk[at]

    def _next(self, size: int) -> bytes:
        if self._raw is not None:
            try:
                chunk: bytes = self._raw(min_size=size, max_size=size)
                return chunk
            except TypeError:  # a Hypothesis whose ConjectureData draws bytes otherwise
                self._raw = None
        return cast(bytes, self._draw(_chunks(size)))

    def below(self, count: int) -> int:
        """An integer in ``range(count)``, each about as likely (within a 256th; ``count`` up to
        65 536), 0 from zero bytes: one byte for up to 256 outcomes, two beyond."""
        if count <= 1:
            return 0
        if count <= 256:
            return self.byte() * count >> 8
        if count <= 65536:
            return self.integer(2) * count >> 16
        raise ValueError(f"a tape reads at most 65536 outcomes, not {count}")

    def fraction(self, count: int) -> int:
        """An integer in ``range(count)`` from two bytes whatever ``count`` is (a position in a
        text or a stream whose length changes while the shrinker works), 0 from zero bytes."""
        return self.integer(2) * count >> 16

    def integer(self, size: int) -> int:
        """The next ``size`` bytes as one integer, the first the highest (0 from zero bytes)."""
        value = 0
        for _ in range(size):
            value = value << 8 | self.byte()
        return value


def tape(draw: Callable[[st.SearchStrategy[Any]], Any], size: int = CHUNK) -> Tape:
    """``draw`` as a tape: itself when it is one (a helper called within a unit reads on from
    the unit's bytes), else a new tape over it whose first chunk is ``size`` bytes."""
    return draw if isinstance(draw, Tape) else Tape(draw, size)

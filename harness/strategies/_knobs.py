"""How every generator draws: knobs that shrink to the ordinary value (``rarely``,
``sometimes``, ``mostly_one_of``, several at once with ``knobs``), and the labels and targets
that statistics and coverage-guided fuzzers steer by. Each knob is a Hypothesis strategy that a
:class:`~._tape.Tape` also reads from its bytes (``readable``): within a generator, where the
draw function is a tape, a knob costs a byte or two, not a choice."""

from __future__ import annotations

import itertools
import math
from bisect import bisect_right
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, TypeVar

from hypothesis import currently_in_test_context, event, target
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ._tape import Tape, readable

__all__ = [
    "BYTE",
    "COIN",
    "Json",
    "Knob",
    "Knobs",
    "Schema",
    "aim",
    "between",
    "flag",
    "knobs",
    "label_draw",
    "mostly_one_of",
    "one_in",
    "pick",
    "rarely",
    "sampled",
    "seen_events",
    "sometimes",
]


Json = Any
T = TypeVar("T")
Schema = dict[str, Any]


def sampled(options: tuple[T, ...]) -> st.SearchStrategy[T]:
    """One of ``options``, each about as often, shrinking to the first: ``st.sampled_from``,
    which a :class:`~._tape.Tape` reads from a byte or two. Build it once (module level)."""
    return readable(st.sampled_from(options), lambda tape: options[tape.below(len(options))])


@cache
def rarely(percent: int) -> st.SearchStrategy[bool]:
    """True about ``percent`` times in a hundred; shrinks to False. One choice (an index into a
    hundred outcomes), drawn without the extra span a ``.map`` would cost."""
    return sampled((False,) * (100 - percent) + (True,) * percent)


COIN = rarely(50)
"""True or False, as often: ``st.booleans()``, which a tape reads."""


_ODD = object()
"""Stands in a table of outcomes for "a draw from the odd strategy"."""


@st.composite
def _one_or_odd(draw: st.DrawFn, table: st.SearchStrategy[Any], odd: st.SearchStrategy[Any]) -> Any:
    value = draw(table)
    return draw(odd) if value is _ODD else value


def mostly_one_of(
    common: tuple[Any, ...], odd: st.SearchStrategy[Any], percent: int
) -> st.SearchStrategy[Any]:
    """One of ``common`` (each about as often), or about ``percent`` times in a hundred a draw
    from ``odd``, in one choice (a draw saying which kind, then one from it, would take two,
    and a span more); shrinks to ``common[0]``. Build it once (module level)."""
    share = max(100 - percent, len(common))
    table = tuple(common[k * len(common) // share] for k in range(share)) + (_ODD,) * percent

    def read(tape: Tape) -> Any:
        value = table[tape.below(len(table))]
        return tape(odd) if value is _ODD else value

    return readable(_one_or_odd(st.sampled_from(table), odd), read)


@cache
def sometimes(ordinary: Any, others: tuple[Any, ...], percent: int) -> st.SearchStrategy[Any]:
    """``ordinary``, or about ``percent`` times in a hundred one of ``others`` (each about as
    often as the next); shrinks to ``ordinary``, then to the earliest of ``others``. One choice,
    an index into a hundred outcomes, where a draw saying whether, then one saying which,
    would take two."""
    if not others:
        return st.just(ordinary)
    share = max(percent, len(others))
    outcomes = (ordinary,) * (100 - percent) + tuple(
        others[k * len(others) // share] for k in range(share)
    )
    return sampled(outcomes)


@cache
def between(low: int, high: int) -> st.SearchStrategy[int]:
    """``st.integers(low, high)``, built once per bounds: a strategy built per example costs
    Hypothesis its validation and the working out of its properties, every time. A tape reads
    a range of up to 65 536 integers, uniformly, shrinking (as Hypothesis's do) towards the
    integer nearest zero; a wider one is Hypothesis's to draw, small values more often."""
    strategy = st.integers(low, high)
    count = high - low + 1
    toward = min(max(low, 0), high)
    if count > 65536:
        return readable(strategy, partial(_read_wide, low, high, toward))
    return readable(strategy, lambda tape: low + (tape.below(count) + toward - low) % count)


_LANDMARKS = (0, -1, 1, 127, 128, 255, 256, 65535, 65536, 2**31 - 1, 2**31, 2**32, 2**53 - 1)


def _read_wide(low: int, high: int, toward: int, tape: Tape) -> int:
    """An integer of a wide range, read as Hypothesis draws one (small ones most often): eight
    bytes whatever it is, the first saying how large (up to 255 half the time, 65 535 a
    quarter, 2**56 most of the rest, else a landmark: a bound, 0, 2**31, 2**53 - 1…) and its
    sign, the others its magnitude; zero bytes read the integer nearest zero."""
    how, magnitude = tape.byte(), tape.integer(7)
    if how >= 240:
        value = (low, high, *_LANDMARKS)[(how - 240) % (len(_LANDMARKS) + 2)]
    else:
        magnitude &= 0xFF if how < 128 else 0xFFFF if how < 192 else (1 << 56) - 1
        value = toward - magnitude if how & 1 else toward + magnitude
    return value if low <= value <= high else low + (value - low) % (high - low + 1)


def pick(draw: st.DrawFn, options: Sequence[Any]) -> Any:
    """One of ``options`` (``st.sampled_from``'s distribution, shrinking to the first), without
    building a strategy for options that change from one example to the next."""
    return options[draw(between(0, len(options) - 1))] if len(options) > 1 else options[0]


Knob = Sequence[tuple[Any, int]]
"""One knob of :func:`knobs`: its values with their weights, the ordinary value first."""


BYTE = readable(st.integers(0, 255), Tape.byte)
"""Hypothesis draws an integer uniformly only within 256 or so of zero (wider ranges favour
small values, by design): knobs are drawn a byte at a time."""


@dataclass(frozen=True, slots=True)
class Knobs:
    """Several knobs drawn together (build with :func:`knobs`, once, at module level)."""

    outcomes: tuple[tuple[Any, ...], ...]
    """Every combination of the knobs' values, the ones with fewer unusual values first."""
    ends: tuple[int, ...]
    """Where each combination's share of ``[0, scale)`` ends (cumulative weights)."""
    scale: int
    """A power of 256: the index is drawn a byte at a time, the first byte the highest."""
    names: tuple[str, ...] = ()
    """Each knob's name, in order, where the knobs are the fields of one value (``fields``)."""
    width: int = 1
    """Bytes in an index: the scale is 256 to this power."""

    def draw(self, draw: st.DrawFn) -> tuple[Any, ...]:
        """Each knob's value: an index into the combinations, drawn a byte at a time until
        the bytes so far tell the combination (arithmetic decoding), so a common combination
        takes one choice and a rare one two or three. A tape reads every byte of the index
        (they cost it nothing), so the knobs take as many bytes whatever their values."""
        if isinstance(draw, Tape):
            return self.outcomes[bisect_right(self.ends, draw.integer(self.width))]
        low, width = 0, self.scale
        while True:
            width //= 256
            low += draw(BYTE) * width
            found = bisect_right(self.ends, low)
            if low + width <= self.ends[found]:
                return self.outcomes[found]

    def fields(self, draw: st.DrawFn) -> dict[str, Any]:
        """Each knob's value by its name (``knobs(..., names=...)``), for keyword arguments."""
        return dict(zip(self.names, self.draw(draw), strict=True))


def knobs(*options: Knob, percent: int = 100, names: str = "") -> Knobs:
    """Knobs drawn together, in one choice most of the time where a draw per knob takes a
    choice (and a span) each: an index into every combination of their values weighted as
    each knob is on its own. Combinations with fewer unusual values come first, so the choice
    shrinks towards the ordinary values, knob by knob. With ``percent``, every knob is
    ordinary but about ``percent`` times in a hundred (a gate folded into the same index).
    ``names`` names the knobs, in order and apart by spaces (as ``namedtuple``'s field names),
    for :meth:`Knobs.fields`."""
    named = tuple(names.split())
    if named and len(named) != len(options):
        raise ValueError(f"{len(named)} names for {len(options)} knobs")
    gate = math.gcd(percent, 100)
    on, off = percent // gate, (100 - percent) // gate
    weighted: list[tuple[int, tuple[Any, ...], int]] = []
    for picked in itertools.product(*(tuple(enumerate(knob)) for knob in options)):
        weight = on * math.prod(w for _, (_, w) in picked)
        odd = sum(position > 0 for position, _ in picked)
        weighted.append((odd, tuple(value for _, (value, _) in picked), weight))
    total_on = sum(weight for _, _, weight in weighted) // on
    weighted[0] = (0, weighted[0][1], weighted[0][2] + off * total_on)
    weighted.sort(key=lambda entry: entry[0])  # stable: within a count, in product order
    total = sum(weight for _, _, weight in weighted)
    scale, width = 256, 1
    while scale < total:
        scale, width = scale * 256, width + 1
    # Every combination keeps a share of at least one: the scale is at least the total.
    ends = tuple(end * scale // total for end in itertools.accumulate(w for _, _, w in weighted))
    return Knobs(tuple(v for _, v, _ in weighted), ends, scale, named, width)


def flag(percent: int) -> Knob:
    """A knob that is True about ``percent`` times in a hundred, as weights in lowest terms."""
    common = math.gcd(percent, 100)
    return ((False, (100 - percent) // common), (True, percent // common))


def one_in(ordinary: Any, others: Sequence[Any], percent: int) -> Knob:
    """A knob that is ``ordinary`` but about ``percent`` times in a hundred, then one of
    ``others`` (each about as often), as weights in lowest terms."""
    common = math.gcd((100 - percent) * len(others), percent)
    return (
        (ordinary, (100 - percent) * len(others) // common),
        *((other, percent // common) for other in others),
    )


_SEEN: set[str] = set()


def label_draw(text: str) -> None:
    """``hypothesis.event`` when a test is running (never from ``.example()`` or a script);
    every label is also remembered for :func:`seen_events`."""
    _SEEN.add(text)
    if currently_in_test_context():
        event(text)


def seen_events() -> frozenset[str]:
    """Every label the generators have attached to a draw in this process (what ``callstream
    fuzz`` shows as distinct events seen)."""
    return frozenset(_SEEN)


def forget_events() -> None:
    """Forget the labels seen so far: drawing that was no search's (warming a process up
    before it forks the search's workers) is not counted as the search's."""
    _SEEN.clear()


def aim(value: float, label: str) -> None:
    """``hypothesis.target``, once per label and test case, when a test is running."""
    if currently_in_test_context():
        with suppress(InvalidArgument):  # a second spec drawn in the same test case
            target(value, label=label)

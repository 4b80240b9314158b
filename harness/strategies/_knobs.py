"""How every generator draws: knobs that shrink to the ordinary value (``rarely``, ``mostly``,
``sometimes``), and the labels and targets that statistics and coverage-guided fuzzers steer by."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from functools import cache
from typing import Any

from hypothesis import currently_in_test_context, event, target
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

__all__ = [
    "Json",
    "Schema",
    "aim",
    "between",
    "label_draw",
    "mostly",
    "mostly_one_of",
    "pick",
    "rarely",
    "seen_events",
    "sometimes",
]


Json = Any
Schema = dict[str, Any]


@cache
def rarely(percent: int) -> st.SearchStrategy[bool]:
    """True about ``percent`` times in a hundred; shrinks to False. One choice (an index into a
    hundred outcomes), drawn without the extra span a ``.map`` would cost."""
    return st.sampled_from((False,) * (100 - percent) + (True,) * percent)


@st.composite
def mostly(
    draw: st.DrawFn, common: st.SearchStrategy[Any], odd: st.SearchStrategy[Any], percent: int
) -> Any:
    """A draw from ``common``, or about ``percent`` times in a hundred from ``odd`` (``one_of``
    would pick each half of the time); shrinks towards ``common``."""
    return draw(odd if draw(rarely(percent)) else common)


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
    from ``odd``: ``mostly(st.sampled_from(common), odd, percent)`` in one choice where that
    takes two, and a span fewer; shrinks to ``common[0]``. Build it once (module level)."""
    share = max(100 - percent, len(common))
    table = tuple(common[k * len(common) // share] for k in range(share)) + (_ODD,) * percent
    return _one_or_odd(st.sampled_from(table), odd)


@cache
def sometimes(ordinary: Any, others: tuple[Any, ...], percent: int) -> st.SearchStrategy[Any]:
    """``ordinary``, or about ``percent`` times in a hundred one of ``others`` (each about as
    often as the next); shrinks to ``ordinary``, then to the earliest of ``others``. One choice,
    an index into a hundred outcomes, where ``mostly`` would take three draws."""
    if not others:
        return st.just(ordinary)
    share = max(percent, len(others))
    outcomes = (ordinary,) * (100 - percent) + tuple(
        others[k * len(others) // share] for k in range(share)
    )
    return st.sampled_from(outcomes)


@cache
def between(low: int, high: int) -> st.SearchStrategy[int]:
    """``st.integers(low, high)``, built once per bounds: a strategy built per example costs
    Hypothesis its validation and the working out of its properties, every time."""
    return st.integers(low, high)


def pick(draw: st.DrawFn, options: Sequence[Any]) -> Any:
    """One of ``options`` (``st.sampled_from``'s distribution, shrinking to the first), without
    building a strategy for options that change from one example to the next."""
    return options[draw(between(0, len(options) - 1))] if len(options) > 1 else options[0]


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


def aim(value: float, label: str) -> None:
    """``hypothesis.target``, once per label and test case, when a test is running."""
    if currently_in_test_context():
        with suppress(InvalidArgument):  # a second spec drawn in the same test case
            target(value, label=label)

"""How every generator draws: knobs that shrink to the ordinary value (``rarely``, ``mostly``,
``sometimes``), and the labels and targets that statistics and coverage-guided fuzzers steer by."""

from __future__ import annotations

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
    "label_draw",
    "mostly",
    "rarely",
    "seen_events",
    "sometimes",
]


Json = Any
Schema = dict[str, Any]


@cache
def rarely(percent: int) -> st.SearchStrategy[bool]:
    """True about ``percent`` times in a hundred; shrinks to False."""
    return st.integers(0, 99).map(lambda n: n >= 100 - percent)


@st.composite
def mostly(
    draw: st.DrawFn, common: st.SearchStrategy[Any], odd: st.SearchStrategy[Any], percent: int
) -> Any:
    """A draw from ``common``, or about ``percent`` times in a hundred from ``odd`` (``one_of``
    would pick each half of the time); shrinks towards ``common``."""
    return draw(odd if draw(rarely(percent)) else common)


@cache
def sometimes(ordinary: Any, others: tuple[Any, ...], percent: int) -> st.SearchStrategy[Any]:
    """``ordinary``, or about ``percent`` times in a hundred one of ``others``; shrinks to
    ``ordinary``."""
    return mostly(st.just(ordinary), st.sampled_from(others), percent)


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

"""Fragments: argument text cut where cutting is dangerous (``dangerous_cuts``, ``fragments``)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import pairwise

from hypothesis import strategies as st

from ._invalid import strictly_parses
from ._knobs import between, label_draw, rarely, sampled
from ._tape import tape

__all__ = [
    "cut",
    "dangerous_cuts",
    "fragments",
    "kinds_of_cut",
]


_HEX = frozenset("0123456789abcdefABCDEF")
_NUMBER = frozenset("0123456789+-.eE")
_LITERALS = ("true", "false", "null")
_IN_STRING = re.compile(r'["\\\x80-\U0010ffff]')
"""What ends a run of characters in a string that are nothing to cut at."""
_JSON_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
"""A JSON number: its integer part, its fraction, its exponent."""
_OUTSIDE = re.compile(r'["{}\[\]\-0-9tfn]')
"""What ends a run of characters outside strings that are nothing to cut at: a string, a
bracket, a number or a literal begins."""


def dangerous_cuts(text: str) -> dict[str, tuple[int, ...]]:
    """Where cutting argument text is dangerous, by kind: positions ``p`` (``0 < p <
    len(text)``) such that ``text[:p]`` ends

    - ``after a backslash``: between ``\\`` and the rest of its escape;
    - ``inside a \\u escape``: after ``\\u`` or some of its hex digits;
    - ``between surrogate escapes``: between ``\\ud83d`` and ``\\ude00``;
    - ``next to a non-ASCII character`` (the bytes are the transport's business);
    - ``inside a number`` (``1`` before ``2``) or ``inside a literal`` (``t`` before ``rue``);
    - ``after a prefix that parses``: the text so far is JSON once its open brackets are
      closed (``{`` reads as ``{}``, ``{"a":1`` as ``{"a":1}``), or already is JSON (only
      whitespace follows), which fools anything that releases a call when its text parses.
    """
    return dict(_dangers(text))


@lru_cache(maxsize=1024)
def _dangers(text: str) -> dict[str, tuple[int, ...]]:
    """``dangerous_cuts``, kept for the texts seen last (the shrinker replays the same calls
    many times, and each costs a parse per prefix). Read only: the dict is shared."""
    found: dict[str, set[int]] = {}

    def add(kind: str, *positions: int) -> None:
        found.setdefault(kind, set()).update(positions)  # those out of the text dropped last

    closers: list[str] = []
    in_string = False
    i = 0
    while i < len(text):
        if in_string:
            # Straight to the string's next backslash, quote or non-ASCII character.
            stop = _IN_STRING.search(text, i)
            if stop is None:
                break
            i = stop.start()
            char = text[i]
            if char == "\\":
                add("after a backslash", i + 1)
                digits = text[i + 2 : i + 6]
                if text[i + 1 : i + 2] == "u" and len(digits) == 4 and set(digits) <= _HEX:
                    add("inside a \\u escape", *range(i + 2, i + 6))
                    after = text[i + 8 : i + 12]
                    if (
                        0xD800 <= int(digits, 16) < 0xDC00
                        and text[i + 6 : i + 8] == "\\u"
                        and len(after) == 4
                        and set(after) <= _HEX
                        and 0xDC00 <= int(after, 16) <= 0xDFFF
                    ):
                        add("between surrogate escapes", i + 6)
                    i += 6
                else:
                    i += 2
                continue
            if char == '"':
                in_string = False
                _parsing_prefix(text, i + 1, closers, add)
            elif ord(char) > 0x7F:
                add("next to a non-ASCII character", i, i + 1)
            i += 1
            continue
        # Straight to the next character that opens something (or ends the text).
        start = _OUTSIDE.search(text, i)
        if start is None:
            break
        i = start.start()
        char = text[i]
        if char == '"':
            in_string = True
        elif char in "{[":
            closers.append("}" if char == "{" else "]")
            _parsing_prefix(text, i + 1, closers, add)
        elif char in "}]":
            if closers:
                closers.pop()
            _parsing_prefix(text, i + 1, closers, add)
        elif char in "-0123456789":
            end = i
            while end < len(text) and text[end] in _NUMBER:
                end += 1
            add("inside a number", *range(i + 1, end))
            # The text so far parses where the number so far is a number and one in its place
            # would parse: one parse for the number, not one for each of its characters.
            fits = None
            for position in range(i + 1, min(end + 1, len(text))):
                if _is_number(text[i:position]):
                    if fits is None:
                        fits = strictly_parses(text[:i] + "0" + "".join(closers[::-1]))
                    if fits:
                        add("after a prefix that parses", position)
            i = end
            continue
        else:
            for literal in _LITERALS:
                if text.startswith(literal, i):
                    add("inside a literal", *range(i + 1, i + len(literal)))
                    _parsing_prefix(text, i + len(literal), closers, add)
                    i += len(literal) - 1
                    break
        i += 1
    size = len(text)
    return {
        kind: kept
        for kind, positions in sorted(found.items())
        if (kept := tuple(sorted(p for p in positions if 0 < p < size)))
    }


def _is_number(token: str) -> bool:
    """Whether ``token`` is a JSON number that ``json`` parses (an integer of more digits than
    the interpreter converts is not)."""
    match = _JSON_NUMBER.fullmatch(token)
    if match is None:
        return False
    limit = sys.get_int_max_str_digits()
    whole = match.group(2) is None and match.group(3) is None
    return not (limit and whole and len(match.group(1).lstrip("-")) > limit)


def _parsing_prefix(text: str, position: int, closers: list[str], add: Callable[..., None]) -> None:
    if 0 < position < len(text) and strictly_parses(text[:position] + "".join(closers[::-1])):
        add("after a prefix that parses", position)


def kinds_of_cut(danger: Mapping[str, Sequence[int]], points: Iterable[int]) -> set[str]:
    at = set(points)
    return {kind for kind, positions in danger.items() if at.intersection(positions)}


_CUT = 176
"""Instruction bytes below this (seven in ten) make no cut (zero bytes: the whole text in one
fragment)."""
_DANGEROUS = 202
"""From this on, a cut at a dangerous place, of the kind the byte says."""
_RUNS = 228
"""From this on, the end of a run of one-character fragments, as long as the byte says."""
_EVERY = 255
"""This byte (one instruction in 256, about one text in thirty) cuts a short text into single
characters."""
_NO_TEXT = sampled(((), ("",)))


def cut(draw: st.DrawFn, text: str, max_cuts: int = 8) -> tuple[str, ...]:
    """What ``fragments(text)`` draws, drawn in the caller's span: ``max_cuts`` instructions of
    three bytes each, read from a tape (:mod:`._tape`) whatever they say, so that the shrinker
    turns any one into no cut on its own. An instruction's first byte says how it cuts: not
    at all (under 176), at a position (176 to 201), at a dangerous place (202 to 227: the kind,
    by the byte; the place, by the next two), at the end of a run of up to six one-character
    fragments (228 to 254, the run's length in the byte) or, 255, into single characters
    (short texts only); its next two bytes say where, as a fraction of the text, or which
    place of the kind."""
    read = tape(draw)
    if len(text) < 2:
        if text:
            return (text,)
        return tuple(read(_NO_TEXT))
    danger: dict[str, tuple[int, ...]] = {}
    kinds: list[str] | None = None  # worked out at the first dangerous cut
    points: set[int] = set()
    for _ in range(max_cuts):
        how, at = read.byte(), read.fraction(len(text) - 1)
        if how < _CUT:
            continue
        if _RUNS > how >= _DANGEROUS and kinds is None:
            danger = _dangers(text)
            kinds = sorted(danger)
        if _RUNS > how >= _DANGEROUS and kinds:  # a dangerous cut: which kind, which place
            places = danger[kinds[how % len(kinds)]]
            points.add(places[at * len(places) // (len(text) - 1)])
        elif _EVERY > how >= _RUNS:  # a run of one-character fragments ending at ``at``
            points.update(p for p in range(at + 1 - how % 6, at + 2) if p > 0)
        elif how == _EVERY:
            if len(text) <= 48:  # every character its own fragment
                points.update(range(1, len(text)))
                label_draw("fragments: one character each")
        else:
            points.add(1 + at)
    for kind in kinds_of_cut(danger, points):
        label_draw(f"cut {kind}")
    bounds = [0, *sorted(points), len(text)]
    pieces = [text[a:b] for a, b in pairwise(bounds)]
    if read(rarely(5)):
        pieces.insert(read(between(0, len(pieces))), "")
        label_draw("fragments: an empty fragment")
    return tuple(pieces)


def fragments(text: str, *, max_cuts: int = 8) -> st.SearchStrategy[tuple[str, ...]]:
    """``text`` cut into fragments whose concatenation is ``text``: up to ``max_cuts`` cut
    instructions, each a uniform cut, a dangerous cut (``dangerous_cuts``) or a run of
    single-character fragments; now and then every character its own fragment, or an empty
    fragment among them (A4: a no-op). Empty text is no fragment at all or one empty one.
    Shrinks to the whole text in one fragment."""
    return _fragments(text, max_cuts)


@st.composite
def _fragments(draw: st.DrawFn, text: str, max_cuts: int) -> tuple[str, ...]:
    return cut(draw, text, max_cuts)

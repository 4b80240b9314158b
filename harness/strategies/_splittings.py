"""Transport splittings biased to dangerous byte offsets (``dangerous_offsets``, ``splittings``),
and a scenario drawn together with a splitting of its own bytes (``cases``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from hypothesis import strategies as st

from callstream.reference import Tool

from ..core.rendering import render
from ..core.spec import (
    Scenario,
    Splitting,
)
from ._fragments import kinds_of_cut
from ._knobs import label_draw, sampled
from ._scenarios import scenarios
from ._tape import SPLITTING_BYTES, tape

__all__ = [
    "cases",
    "dangerous_offsets",
    "draw_splitting",
    "splittings",
]


_BOM = "\ufeff".encode()
_U_ESCAPE = re.compile(rb"\\u[0-9a-fA-F]{4}")
_DATA = re.compile(rb"data: ?")
_DONE = re.compile(rb"\[DONE\]")
_CONTINUATION = re.compile(rb"[\x80-\xbf]")
_AFTER_CR = re.compile(rb"\r(?=(.))", re.DOTALL)
_BLANK = re.compile(rb"\n(?=[\r\n])")
_BACKSLASHES = re.compile(rb"\\")


@lru_cache(maxsize=256)
def _byte_dangers(data: bytes) -> dict[str, tuple[int, ...]]:
    """The dangerous offsets of ``data`` by kind (kept for the streams seen last: the shrinker
    replays the same stream many times). Read only: the dict is shared."""
    # Byte by byte, in the regular expressions' loops rather than in Python's; a pattern whose
    # first byte the stream lacks (most streams are ASCII, LF-ended) is not looked for at all.
    lone: list[int] = []
    crlf: list[int] = []
    for match in _AFTER_CR.finditer(data) if b"\r" in data else ():
        (crlf if match.group(1) == b"\n" else lone).append(match.end())
    escaped = b"\\" in data
    found = {
        "after a backslash": [match.end() for match in _BACKSLASHES.finditer(data)]
        if escaped
        else [],
        "after a lone CR": lone,
        "between CR and LF": crlf,
        "inside [DONE]": [
            at for match in _DONE.finditer(data) for at in range(match.start() + 1, match.end())
        ],
        "inside a UTF-8 character": []
        if data.isascii()
        else [match.start() for match in _CONTINUATION.finditer(data)],
        "inside a \\u escape": [
            at for match in _U_ESCAPE.finditer(data) for at in range(match.start() + 1, match.end())
        ]
        if escaped
        else [],
        "inside a blank line": [match.end() for match in _BLANK.finditer(data)],
        "inside or right after data:": [
            at for match in _DATA.finditer(data) for at in range(match.start() + 1, match.end() + 1)
        ],
        "inside the BOM": [1, 2, 3] if data.startswith(_BOM) else [],
    }
    # Each list is ascending and holds each offset once (the matches do not overlap).
    size = len(data)
    return {
        kind: kept
        for kind, offsets in found.items()
        if (kept := tuple(at for at in offsets if 0 < at < size))
    }


def dangerous_offsets(data: bytes) -> tuple[int, ...]:
    """Byte offsets where cutting ``data`` into two chunks is dangerous: inside a multi-byte
    UTF-8 character, between CR and LF (and after a lone CR), inside a blank line, after a
    backslash, inside a ``\\uXXXX`` escape, inside or right after ``data:``, inside
    ``[DONE]``, inside the BOM. Sorted, each once, all within ``0 < offset < len(data)``."""
    return tuple(sorted({o for offsets in _byte_dangers(data).values() for o in offsets}))


_SPLIT_KINDS = ("whole", "offsets", "many", "bytes")
"""Simplest first: a failure shrinks towards the whole stream in one chunk, then a few cuts."""
_SPLIT_KIND = sampled(_SPLIT_KINDS)
BYTE_BY_BYTE_MAX = 8192
"""The longest stream cut one byte at a time: a longer one (258 calls in a choice, 26 KB) is cut
at many places instead, where every byte its own chunk would cost a hundred ordinary examples
and cut nothing a stream of a few kilobytes does not."""


_BYTE_DANGER_KINDS = (
    "after a backslash",
    "after a lone CR",
    "between CR and LF",
    "inside [DONE]",
    "inside a UTF-8 character",
    "inside a \\u escape",
    "inside a blank line",
    "inside or right after data:",
    "inside the BOM",
)
"""Every kind ``_byte_dangers`` finds, in a fixed order, so a drawn cut names its kind the same
way whatever the stream holds (and keeps it while the shrinker makes the stream smaller)."""
_CUTS = {"offsets": 12, "many": 24}
"""Cut instructions per splitting: about half of them cut, so six cuts or twelve."""
_CUT = 128
"""Instruction bytes below this make no cut (zero bytes: no cut at all)."""


@st.composite
def _splittings(draw: st.DrawFn, data: bytes | None) -> Splitting:
    return draw_splitting(draw, data)


def draw_splitting(draw: st.DrawFn, data: bytes | None) -> Splitting:
    """What ``splittings(data)`` draws, drawn in the caller's composite (no strategy built for
    each stream's bytes)."""
    read = tape(draw, SPLITTING_BYTES)
    kind = read(_SPLIT_KIND)
    size = len(data) if data is not None else 4096
    if kind == "bytes" and size > BYTE_BY_BYTE_MAX:
        kind = "many"
    if kind in ("whole", "bytes") or size < 2:
        whole = Splitting("bytes" if kind == "bytes" and size >= 2 else "whole")
        label_draw(f"splitting: {whole.kind}")
        return whole
    danger = _byte_dangers(data) if data is not None else {}
    offsets = set()
    # Each cut is three bytes of a tape, read whatever they say, so the shrinker can turn any
    # one into no cut on its own: a byte for whether and where (an offset as often as each
    # kind of dangerous place), two for the offset (a fraction of the stream, so the same
    # bytes serve streams of every size) or which place of the kind.
    for _ in range(_CUTS[kind]):
        how, at = read.byte(), read.fraction(size - 1)
        if how < _CUT:
            continue
        dangerous = (how - _CUT) * (len(_BYTE_DANGER_KINDS) + 1) // (256 - _CUT)
        places = danger.get(_BYTE_DANGER_KINDS[dangerous - 1]) if dangerous else None
        offsets.add(places[at * len(places) // (size - 1)] if places else 1 + at)
    if not offsets:
        label_draw("splitting: whole")
        return Splitting("whole")
    label_draw(f"splitting: {kind}")
    for kind_of_cut in kinds_of_cut(danger, offsets):
        label_draw(f"split {kind_of_cut}")
    return Splitting("offsets", offsets=tuple(sorted(offsets)))


def splittings(data: bytes | None = None) -> st.SearchStrategy[Splitting]:
    """Transport splittings: the whole stream at once, a few cuts, many cuts, or every single
    byte (never ``pairs``, which runs once per byte; never past ``BYTE_BY_BYTE_MAX``). Cuts
    are explicit offsets, so a failure shrinks cut by cut. Given the stream's ``data``, cuts
    come from ``dangerous_offsets(data)`` as often as uniformly; without it, offsets are uniform
    up to 4096 (those past the end are dropped)."""
    return _splittings(data)


@st.composite
def _cases(
    draw: st.DrawFn,
    tool_set: Sequence[Tool] | None,
    dialect: str,
    max_calls: int,
    max_choices: int,
    lone_surrogates: bool,
) -> tuple[Scenario, Splitting]:
    scenario = draw(
        scenarios(
            tool_set,
            dialect=dialect,
            max_calls=max_calls,
            max_choices=max_choices,
            lone_surrogates=lone_surrogates,
        )
    )
    return scenario, draw_splitting(draw, render(scenario.spec).data)


def cases(
    tools: Sequence[Tool] | None = None,
    *,
    dialect: str = "openai-chat",
    max_calls: int = 3,
    max_choices: int = 2,
    lone_surrogates: bool = True,
) -> st.SearchStrategy[tuple[Scenario, Splitting]]:
    """A scenario (``scenarios``) and a splitting of its own rendered bytes (``splittings``),
    ready for ``callstream.run_case``."""
    return _cases(
        None if tools is None else tuple(tools), dialect, max_calls, max_choices, lone_surrogates
    )

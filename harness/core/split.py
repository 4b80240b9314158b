"""Cutting SSE bytes into transport chunks: whole, every byte, every two-way split, seeded
random splits, or explicit offsets. A splitting may yield several chunkings (``pairs`` yields one
per cut), each a list of chunks."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

from ..errors import UsageError
from .spec import Splitting

__all__ = ["DEFAULT_SPLITTINGS", "chunkings", "cut", "parse_splitting"]

DEFAULT_SPLITTINGS = (
    Splitting("whole"),
    Splitting("bytes"),
    Splitting("pairs"),
    *(Splitting("random", seed=seed) for seed in range(1, 6)),
)


def cut(data: bytes, offsets: list[int] | tuple[int, ...]) -> list[bytes]:
    """``data`` cut at ``offsets`` (sorted, deduplicated, out-of-range ones dropped)."""
    points = sorted({o for o in offsets if 0 < o < len(data)})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def chunkings(data: bytes, splitting: Splitting) -> Iterator[list[bytes]]:
    """Every chunking a splitting stands for."""
    if splitting.kind == "whole":
        yield [data]
    elif splitting.kind == "bytes":
        yield [data[i : i + 1] for i in range(len(data))]
    elif splitting.kind == "pairs":
        for point in range(1, len(data)):
            yield [data[:point], data[point:]]
    elif splitting.kind == "random":
        rng = random.Random(splitting.seed)
        count = rng.randint(1, max(1, len(data) // 8))
        yield cut(data, [rng.randrange(1, max(2, len(data))) for _ in range(count)])
    else:
        yield cut(data, splitting.offsets)


def parse_splitting(label: str) -> Splitting:
    """The splitting a label names, the inverse of ``Splitting.label``: ``whole``, ``bytes``,
    ``pairs``, ``random-3``, ``at-5,9``. Raises UsageError for anything else."""
    simple = {kind: Splitting(kind) for kind in ("whole", "bytes", "pairs")}
    if label in simple:
        return simple[label]
    kind, _, rest = label.partition("-")
    try:
        if kind == "random" and rest:
            return Splitting("random", seed=int(rest))
        if kind == "at" and rest:
            return Splitting("offsets", offsets=tuple(int(o) for o in rest.split(",")))
    except ValueError:
        pass
    raise UsageError(
        f"{label!r} is not a splitting: whole, bytes, pairs, random-<seed> or at-<offset>,<offset>…"
    )

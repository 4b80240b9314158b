"""Wire features: what a stream does on the wire, named from the wire grammar and the rules, and
how often a set of streams shows each (``callstream fuzz --coverage``, ``callstream lint
--features``, ``tests/quality/test_generator_coverage.py``).

A feature is read from a scenario's rendered bytes (and, for the tools the request offered, its
spec), never from the knobs that planned it, so a stream drawn by a generator and a corpus
scenario written as literal bytes are classified alike. Each dialect has its table
(:data:`FEATURES`): every optional field present, absent, null, empty or repeated; every SSE
form; every ending; the limits; ids, names and indices sent late, changed or missing; each with
the rules and quirks it serves. A feature no generator draws is a gap in the generators, made
visible.

The modules:

- ``_table`` — :class:`Feature`, and the transport, call and argument features every dialect
  shares;
- ``_sse`` — the SSE layer read for what it does (line endings, ``data:`` spacing, comments…);
- ``_calls`` — the calls traced on the wire, their metadata and their argument text;
- ``_openai_chat``, ``_anthropic``, ``_openai_responses`` — each dialect's table and classifier.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..core.rendering import render
from ..core.spec import StreamSpec
from . import _anthropic, _openai_chat, _openai_responses
from ._sse import WireEvent, read_sse
from ._table import Feature

__all__ = ["FEATURES", "Feature", "FeatureTally", "features_of"]

_CLASSIFIERS: dict[str, Callable[[Sequence[WireEvent], StreamSpec], set[str]]] = {
    "openai-chat": _openai_chat.classify,
    "anthropic-messages": _anthropic.classify,
    "openai-responses": _openai_responses.classify,
}

FEATURES: Mapping[str, tuple[Feature, ...]] = {
    "openai-chat": _openai_chat.FEATURES,
    "anthropic-messages": _anthropic.FEATURES,
    "openai-responses": _openai_responses.FEATURES,
}
"""Each dialect's features, in table order (transport, calls, arguments, the dialect's own)."""


def features_of(spec: StreamSpec, raw: bytes | None = None) -> frozenset[str]:
    """The features ``spec``'s stream shows on the wire: read from ``raw`` (its rendered bytes,
    rendered here when not given), in its dialect's terms."""
    data = render(spec).data if raw is None else raw
    events, features = read_sse(data)
    features |= _CLASSIFIERS[spec.dialect](events, spec)
    known = {item.id for item in FEATURES[spec.dialect]}
    return frozenset(features & known)


@dataclass
class FeatureTally:
    """How many streams of each dialect showed each feature."""

    streams: Counter[str] = field(default_factory=Counter)
    """Streams seen, by dialect."""
    counts: dict[str, Counter[str]] = field(default_factory=dict)
    """Per dialect, streams that showed each feature."""

    def add(self, dialect: str, features: Iterable[str]) -> None:
        """Count one stream of ``dialect`` showing ``features``."""
        self.streams[dialect] += 1
        self.counts.setdefault(dialect, Counter()).update(features)

    def merge(self, other: FeatureTally) -> None:
        """Add ``other``'s counts (another worker's) to these."""
        self.streams.update(other.streams)
        for dialect, counts in other.counts.items():
            self.counts.setdefault(dialect, Counter()).update(counts)

    def share(self, dialect: str, feature: str) -> float:
        """The fraction of ``dialect``'s streams that showed ``feature`` (0 with no streams)."""
        seen = self.streams[dialect]
        return self.counts.get(dialect, Counter())[feature] / seen if seen else 0.0

    def rows(self, dialect: str) -> list[tuple[Feature, int, float]]:
        """Every feature of ``dialect``'s table with its count and share, in table order."""
        counts = self.counts.get(dialect, Counter())
        return [(item, counts[item.id], self.share(dialect, item.id)) for item in FEATURES[dialect]]

    def to_dict(self) -> dict[str, object]:
        """For a JSON report: per dialect, streams seen and the count of every feature."""
        return {
            dialect: {
                "streams": self.streams[dialect],
                "features": {item.id: count for item, count, _ in self.rows(dialect)},
            }
            for dialect in FEATURES
            if self.streams[dialect]
        }

    def table(self, *, floor: float = 0.01) -> str:
        """A table for people: per dialect, each feature's count and share, those under
        ``floor`` marked ``<`` and those never seen ``-``, then how many of each."""
        lines: list[str] = []
        for dialect in FEATURES:
            seen = self.streams[dialect]
            if not seen:
                continue
            rows = self.rows(dialect)
            width = max(len(item.id) for item, _, _ in rows)
            lines.append(f"{dialect}: {seen} streams")
            for item, count, share in rows:
                mark = "  -" if not count else "  <" if share < floor else ""
                serves = ", ".join(item.serves)
                lines.append(f"  {item.id:<{width}} {count:>6} {share:>7.1%}  [{serves}]{mark}")
            unseen = sum(not count for _, count, _ in rows)
            under = sum(share < floor for _, count, share in rows if count)
            lines.append(
                f"  {len(rows)} features: {unseen} never seen (-), {under} more under "
                f"{floor:.0%} (<)"
            )
        return "\n".join(lines)

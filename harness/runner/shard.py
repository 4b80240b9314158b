"""Shards: one run split across CI jobs (``callstream run --shard K/N``), put back together by
``callstream report merge`` (:mod:`callstream.reports.merge`).

Theory of operation: shard K of N runs the K-th of N contiguous slices of the selected
scenarios, in corpus order, cut so that each slice holds about as many cases as the others. A
scenario is never cut: all its splittings run in one shard, so its failures are grouped in one
report as a single run groups them. The cut depends only on the scenarios and their splittings,
in the order the corpus loads them (files sorted by path), never on a hash seed or the machine,
so every job of a CI matrix computes the same slices; and because the slices are contiguous,
the shards' results put end to end, shard 1 first, are the results of a single run, in its
order. A shard's report header records which shard it is, how many scenarios and cases the
whole run has, and a fingerprint of the whole selection, so a merge can tell shards of one run
from shards of another.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.case import splittings_of
from ..core.spec import Scenario
from ..errors import UsageError

__all__ = ["Shard", "corpus_fingerprint"]

_SHAPE = re.compile(r"(\d+)/(\d+)")


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` of ``count`` (both from 1): which slice of a run this job runs."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 1 <= self.index <= self.count:
            raise UsageError(
                f"--shard {self.index}/{self.count}: K must be between 1 and N, as in 1/3"
            )

    @classmethod
    def parse(cls, text: str) -> Shard:
        """The shard ``K/N`` names; a ``UsageError`` naming ``--shard`` for anything else."""
        match = _SHAPE.fullmatch(text.strip())
        if match is None:
            raise UsageError(f"--shard {text!r}: give K/N, shard K of N, as in 2/3")
        return cls(int(match[1]), int(match[2]))

    @property
    def label(self) -> str:
        """``K/N``, as given on the command line."""
        return f"{self.index}/{self.count}"

    def select(self, scenarios: Sequence[Scenario]) -> list[Scenario]:
        """The scenarios this shard runs: its slice of ``scenarios``, in their order."""
        return [
            scenario
            for scenario, shard in zip(scenarios, _assign(scenarios, self.count), strict=True)
            if shard == self.index
        ]

    def describe(self, scenarios: Sequence[Scenario]) -> dict[str, Any]:
        """The report header's ``shard`` field, for a shard of the run of ``scenarios``: its
        index and count, the whole run's scenario and case counts, and its fingerprint."""
        return {
            "index": self.index,
            "count": self.count,
            "scenarios": len(scenarios),
            "cases": sum(len(splittings_of(scenario)) for scenario in scenarios),
            "corpus": corpus_fingerprint(scenarios),
        }


def corpus_fingerprint(scenarios: Sequence[Scenario]) -> str:
    """``sha256:…`` of the scenario ids and their splittings, in order: equal for two jobs
    exactly when they plan the same cases."""
    plan = [[scenario.id, [s.label for s in splittings_of(scenario)]] for scenario in scenarios]
    digest = hashlib.sha256(json.dumps(plan, ensure_ascii=False).encode("utf-8"))
    return f"sha256:{digest.hexdigest()}"


def _assign(scenarios: Sequence[Scenario], count: int) -> list[int]:
    """The shard (from 1) of each scenario: the one its middle case falls in, when the run's
    cases are cut into ``count`` equal stretches. Never decreasing, so each shard is a
    contiguous slice; integer arithmetic, so every machine agrees."""
    weights = [len(splittings_of(scenario)) for scenario in scenarios]
    total = sum(weights)
    shards = []
    before = 0
    for weight in weights:
        shards.append(min(count, count * (2 * before + weight) // (2 * total) + 1))
        before += weight
    return shards

"""Known bugs: the third-party matrix's failures grouped by cause, as a person reviewed them.

A library's failing cases are many; its bugs are few. ``bugs.yaml`` (beside ``matrix.json``)
lists, per adapter, each distinct bug a reviewer traced: a title, the rules it breaks, where in
the library it comes from, and the scenarios it makes fail::

    openai:
      - title: A repeated id, name or type is concatenated
        rules: [A3]
        cause: openai/lib/streaming/_deltas.py accumulate_delta adds every string field
        scenarios: [oc-q-id-repeated-every-delta, oc-q-name-repeated-every-delta]

:func:`triage` matches a report's failures to those bugs: each bug gets its failing scenarios
and its minimal repro (the shortest one among them); a failing scenario no bug names is left
*untriaged*, and a scenario a bug names that no longer fails is *stale*, so the list cannot
silently drift from what the matrix shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import UsageError
from ..rules import RULES

__all__ = ["BUGS", "KnownBug", "Triage", "TriagedBug", "load_bugs", "triage"]

BUGS = "bugs.yaml"
"""The reviewed list of known bugs, beside ``matrix.json``."""
_FIELDS = {"title", "rules", "cause", "scenarios"}


@dataclass(frozen=True, slots=True)
class KnownBug:
    """One distinct bug of a library, as a reviewer traced it."""

    title: str
    rules: tuple[str, ...]
    cause: str
    """Where in the library it comes from (file and function or line)."""
    scenarios: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TriagedBug:
    """A known bug and what the matrix shows of it."""

    bug: KnownBug
    failing: tuple[str, ...]
    """Its scenarios that failed in this run."""
    stale: tuple[str, ...]
    """Its scenarios that did not fail (fixed, or wrongly attributed)."""
    repro: Mapping[str, Any] | None
    """The failing case with the shortest repro, or None when none failed."""


@dataclass(frozen=True, slots=True)
class Triage:
    """A library's failures, grouped by cause."""

    bugs: tuple[TriagedBug, ...]
    untriaged: tuple[str, ...]
    """Failing scenarios that no known bug names."""


def load_bugs(path: Path) -> dict[str, tuple[KnownBug, ...]]:
    """The known bugs of each adapter in ``path``; none when the file does not exist. A
    :class:`UsageError` names the file and the entry that is wrong."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it: {exc.strerror}") from None
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise UsageError(f"{where}: not YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(raw, Mapping):
        raise UsageError(f"{path}: expected a mapping of adapter names to lists of bugs")
    return {
        str(adapter): tuple(_bug(path, str(adapter), n, entry) for n, entry in enumerate(entries))
        for adapter, entries in raw.items()
        if _is_list(path, str(adapter), entries)
    }


def triage(results: Sequence[Mapping[str, Any]], bugs: Sequence[KnownBug]) -> Triage:
    """Match the failed cases of ``results`` (one library's report) to ``bugs``."""
    failing: dict[str, list[Mapping[str, Any]]] = {}
    for result in results:
        if result["outcome"] == "failed":
            failing.setdefault(result["scenario"], []).append(result)
    named: set[str] = set()
    triaged = []
    for bug in bugs:
        named.update(bug.scenarios)
        cases = [case for scenario in bug.scenarios for case in failing.get(scenario, ())]
        triaged.append(
            TriagedBug(
                bug,
                tuple(s for s in bug.scenarios if s in failing),
                tuple(s for s in bug.scenarios if s not in failing),
                min(cases, key=lambda case: len(case["repro"] or ""), default=None),
            )
        )
    return Triage(tuple(triaged), tuple(s for s in failing if s not in named))


def _is_list(path: Path, adapter: str, entries: Any) -> bool:
    if not isinstance(entries, list):
        raise UsageError(f"{path}: {adapter}: expected a list of bugs")
    return True


def _bug(path: Path, adapter: str, number: int, entry: Any) -> KnownBug:
    where = f"{path}: {adapter}[{number}]"
    if not isinstance(entry, Mapping) or set(entry) != _FIELDS:
        raise UsageError(f"{where}: a bug has exactly the keys {', '.join(sorted(_FIELDS))}")
    rules = entry["rules"]
    if not isinstance(rules, list) or not rules or any(rule not in RULES for rule in rules):
        raise UsageError(f"{where}: rules must be a list of rule ids such as [A3, C3]")
    scenarios = entry["scenarios"]
    if not isinstance(scenarios, list) or not all(isinstance(s, str) for s in scenarios):
        raise UsageError(f"{where}: scenarios must be a list of scenario ids")
    if not isinstance(entry["title"], str) or not isinstance(entry["cause"], str):
        raise UsageError(f"{where}: title and cause are text")
    return KnownBug(entry["title"], tuple(rules), entry["cause"], tuple(scenarios))

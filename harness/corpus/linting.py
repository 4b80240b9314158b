"""Linting the scenario corpus: everything the loader refuses, plus coverage.

The loader already reports each file's problems (schema, YAML, unknown tools and rules, plans
the oracle cannot predict, ids used twice). Lint adds what only the corpus as a whole can show:
every rule of REQUIREMENTS.md (except R, which ``certify`` checks on live routes) is cited by
some scenario of each dialect (except those the dialect cannot certify), and every quirk of the
dialect is reproduced by some scenario's ``quirks``. A dialect is checked when the corpus, or
the files linted, hold a scenario of it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.dialects import DEFAULT_DIALECT, DIALECTS
from ..core.spec import Scenario
from ..coverage import FeatureTally, features_of
from ..rules import RULES
from .scenario import corpus_root, default_corpus, load_scenarios

__all__ = ["Coverage", "LintReport", "coverage", "lint"]


@dataclass(frozen=True, slots=True)
class Coverage:
    """Which scenarios of one dialect cite each rule and reproduce each quirk."""

    dialect: str
    rules: Mapping[str, tuple[str, ...]]
    """Every rule a scenario of the dialect can cover, with the ids of those that cite it."""
    quirks: Mapping[str, tuple[str, ...]]
    """Every quirk of the dialect, with the ids of the scenarios that list it."""

    @property
    def uncovered_rules(self) -> tuple[str, ...]:
        """The rules no scenario cites, in the order of REQUIREMENTS.md."""
        return tuple(rule for rule, ids in self.rules.items() if not ids)

    @property
    def uncovered_quirks(self) -> tuple[str, ...]:
        """The quirks no scenario lists, in the order of the quirk catalogue."""
        return tuple(quirk for quirk, ids in self.quirks.items() if not ids)


def coverage(scenarios: Iterable[Scenario], dialect: str = DEFAULT_DIALECT) -> Coverage:
    """For each rule and quirk of ``dialect``, the scenarios of that dialect that cover it."""
    speaker = DIALECTS[dialect]
    rules: dict[str, list[str]] = {
        rule: [] for rule in RULES if rule not in speaker.not_certifiable
    }
    quirks: dict[str, list[str]] = {quirk: [] for quirk in speaker.quirks}
    for scenario in scenarios:
        if scenario.spec.dialect != dialect:
            continue
        for rule in scenario.rules:
            if rule in rules:
                rules[rule].append(scenario.id)
        for quirk in scenario.quirks:
            if quirk in quirks:
                quirks[quirk].append(scenario.id)
    return Coverage(
        dialect,
        {rule: tuple(ids) for rule, ids in rules.items()},
        {quirk: tuple(ids) for quirk, ids in quirks.items()},
    )


@dataclass(frozen=True, slots=True)
class LintReport:
    """What lint found, and what it looked at."""

    problems: tuple[str, ...]
    """Each as ``path:line: message`` (``folder: message`` for coverage)."""
    scenarios: int
    files: int
    coverage: tuple[Coverage, ...] | None
    """Each dialect's, for the dialects linted; None when coverage was not checked."""
    features: FeatureTally | None = None
    """How many scenarios of each dialect show each wire feature, when counted."""

    @property
    def summary(self) -> str:
        """One line for a clean corpus: how much there is and what was checked."""
        counted = f"{_count(self.scenarios, 'scenario')} in {_count(self.files, 'file')}"
        if self.coverage is None:
            return f"{counted}, coverage not checked"
        return f"{counted}, every rule and quirk covered"


def lint(
    paths: Sequence[Path] = (), *, check_coverage: bool = True, count_features: bool = False
) -> LintReport:
    """Lint scenario files or folders (none: the corpus), with coverage unless switched off.
    Coverage gaps are reported against the folder linted (``scenarios/<dialect>`` for the
    corpus), per dialect. With ``count_features``, the wire features of every scenario
    loaded are counted (``callstream.coverage``)."""
    files = list(paths) or default_corpus()
    result = load_scenarios(files)
    problems = [str(error) for error in result.errors]
    covered = None
    if check_coverage:
        linted = {scenario.spec.dialect for scenario in result.scenarios}
        dialects = [name for name in DIALECTS if name in linted or not paths]
        covered = tuple(coverage(result.scenarios, name) for name in dialects)
        for found in covered:
            if paths:
                folder = os.path.commonpath([str(path) for path in paths])
                of = f"{found.dialect} scenario" if len(covered) > 1 else "scenario"
            else:
                folder, of = str(corpus_root() / found.dialect), "scenario"
            problems += [
                f"{folder}: rule {rule} is covered by no {of}" for rule in found.uncovered_rules
            ]
            problems += [
                f"{folder}: quirk {quirk} is covered by no {of}" for quirk in found.uncovered_quirks
            ]
    features = None
    if count_features:
        features = FeatureTally()
        for scenario in result.scenarios:
            features.add(scenario.spec.dialect, features_of(scenario.spec))
    return LintReport(tuple(problems), len(result.scenarios), len(result.files), covered, features)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"

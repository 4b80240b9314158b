"""Linting the scenario corpus: everything the loader refuses, plus coverage.

The loader already reports each file's problems (schema, YAML, unknown tools and rules, plans
the oracle cannot predict, ids used twice). Lint adds what only the corpus as a whole can show:
every rule of REQUIREMENTS.md (except R, which ``certify`` checks on live routes) is cited by
some scenario, and every openai-chat quirk is reproduced by some scenario's ``quirks``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.spec import Scenario
from ..rules import NOT_CERTIFIABLE, OPENAI_CHAT_QUIRKS, RULES
from .scenario import corpus_root, default_corpus, load_scenarios

__all__ = ["Coverage", "LintReport", "coverage", "lint"]


@dataclass(frozen=True, slots=True)
class Coverage:
    """Which scenarios cite each rule and reproduce each quirk."""

    rules: Mapping[str, tuple[str, ...]]
    """Every rule a scenario can cover, with the ids of the scenarios that cite it."""
    quirks: Mapping[str, tuple[str, ...]]
    """Every openai-chat quirk, with the ids of the scenarios that list it."""

    @property
    def uncovered_rules(self) -> tuple[str, ...]:
        """The rules no scenario cites, in the order of REQUIREMENTS.md."""
        return tuple(rule for rule, ids in self.rules.items() if not ids)

    @property
    def uncovered_quirks(self) -> tuple[str, ...]:
        """The quirks no scenario lists, in the order of the quirk catalogue."""
        return tuple(quirk for quirk, ids in self.quirks.items() if not ids)


def coverage(scenarios: Iterable[Scenario]) -> Coverage:
    """For each rule and quirk, the scenarios that cover it."""
    rules: dict[str, list[str]] = {rule: [] for rule in RULES if rule not in NOT_CERTIFIABLE}
    quirks: dict[str, list[str]] = {quirk: [] for quirk in OPENAI_CHAT_QUIRKS}
    for scenario in scenarios:
        for rule in scenario.rules:
            if rule in rules:
                rules[rule].append(scenario.id)
        for quirk in scenario.quirks:
            if quirk in quirks:
                quirks[quirk].append(scenario.id)
    return Coverage(
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
    coverage: Coverage | None
    """None when coverage was not checked."""

    @property
    def summary(self) -> str:
        """One line for a clean corpus: how much there is and what was checked."""
        counted = f"{_count(self.scenarios, 'scenario')} in {_count(self.files, 'file')}"
        if self.coverage is None:
            return f"{counted}, coverage not checked"
        return f"{counted}, every rule and quirk covered"


def lint(paths: Sequence[Path] = (), *, check_coverage: bool = True) -> LintReport:
    """Lint scenario files or folders (none: the corpus), with coverage unless switched off.
    Coverage gaps are reported against the folder linted (``scenarios/openai-chat`` for the
    corpus)."""
    if paths:
        files = list(paths)
        folder = os.path.commonpath([str(path) for path in paths])
    else:
        files = default_corpus()
        folder = str(corpus_root() / "openai-chat")
    result = load_scenarios(files)
    problems = [str(error) for error in result.errors]
    covered = None
    if check_coverage:
        covered = coverage(result.scenarios)
        problems += [
            f"{folder}: rule {rule} is covered by no scenario" for rule in covered.uncovered_rules
        ]
        problems += [
            f"{folder}: quirk {quirk} is covered by no scenario"
            for quirk in covered.uncovered_quirks
        ]
    return LintReport(tuple(problems), len(result.scenarios), len(result.files), covered)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"

"""What checks are made of and what they return: a :class:`Check` (a named function, the rules
it can prove, what it reads), the :class:`Problem` s it finds, the :class:`Failure` s they are
filed as and the :class:`Judgement` on one chunking; and how a message shows a call and its
values. The checks themselves are in :mod:`.checks`."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from ..rules import RuleId, failure_pointer
from .observation import Observation, Observed
from .spec import Expected, ExpectedCall

__all__ = [
    "Check",
    "CheckFunction",
    "Failure",
    "Judgement",
    "Problem",
    "call_name",
    "expected_for",
    "field_shown",
    "json_shown",
    "pairs",
    "shown",
]


@dataclass(frozen=True, slots=True)
class Failure:
    """A check that failed, with what it saw and the rules the failure proves."""

    check: str
    rules: tuple[RuleId, ...]
    message: str

    @property
    def pointer(self) -> str:
        """Its rules and where to read about them: ``A3; callstream explain A3``."""
        return failure_pointer(self.rules)


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing a check found wrong, and the rules it may prove (narrowed by the scenario)."""

    message: str
    rules: tuple[str, ...]


CheckFunction = Callable[[Expected, Observation, Collection[str]], list[Problem]]


@dataclass(frozen=True, slots=True)
class Check:
    """A named check: the rules it can prove and what it reads."""

    name: str
    rules: tuple[RuleId, ...]
    function: CheckFunction
    safety: bool = False
    """Applies to every expectation kind: a failure here means an unsafe outcome."""
    observes: tuple[str, ...] = ()
    """The observables it reads; where one is not exposed, the check is not observable."""

    def applies_to(self, kind: str) -> bool:
        """True when the check judges a scenario whose expectation is of ``kind``."""
        if kind == "must-not":
            return self.safety or self.name == "nothing_ready"
        if kind == "impl-defined":
            return self.safety
        return self.name != "nothing_ready"


@dataclass(frozen=True, slots=True)
class Judgement:
    """The checks' verdict on one chunking."""

    failures: tuple[Failure, ...]
    not_observable: tuple[str, ...]
    """Checks that applied but read something the implementation does not expose."""


def pairs(expected: Expected, seen: Observation) -> list[tuple[ExpectedCall, Observed]]:
    """Each result handed back, with the expected call of its (choice, index), where one is
    expected."""
    pairs = []
    for result in seen.results:
        call = expected_for(expected, result)
        if call is not None:
            pairs.append((call, result))
    return pairs


def expected_for(expected: Expected, result: Observed) -> ExpectedCall | None:
    """The expected call at ``result``'s (choice, index), if any."""
    return expected.call_at(result.key)


def call_name(key: tuple[Any, Any]) -> str:
    """A result as a message names it by its (choice, index): ``call 1 of choice 0``, or
    ``call with no index of choice 0`` where the implementation left a field out."""
    choice, index = key
    number = "with no index" if index is None else str(index)
    if choice is None:
        return f"call {number} {'and' if index is None else 'with'} no choice"
    return f"call {number} of choice {choice}"


def field_shown(name: str, value: Any) -> str:
    """``arguments_text '{}'`` as a message shows a result's field, or ``no arguments_text``
    where it has none."""
    return f"no {name}" if value is None else f"{name} {shown(value)}"


def json_shown(value: Any) -> str:
    """An expected value as a message shows it, ``null`` for JSON null."""
    return "null" if value is None else shown(value)


def shown(value: Any, limit: int = 80) -> str:
    """``value``'s repr, cut at ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"

"""What one result of ``feed()`` or ``close()`` must look like: the contract's fields
(docs/contract.md), each of its type and, for ``status`` and ``reason``, spelt as the contract
spells them; a field the declaration does not expose is not checked. What is wrong is said
as a person fixing the implementation needs it, with the spelling meant where one is close.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from callstream.reference import Reason

from ..core.checks import STATUSES

__all__ = ["FIELDS", "REASONS", "Problem", "checked_fields", "summarise_returned"]

FIELDS = ("choice", "index", "id", "name", "arguments_text", "arguments", "status", "reason")
"""The fields of a result, in the contract's order (docs/contract.md)."""
REASONS = tuple(reason.value for reason in Reason)
"""The contract's reasons, as ``callstream.reference.Reason`` spells them."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an implementation's shape: where it was seen, and what it is."""

    where: str
    """``load``, ``factory``, or ``<stream>, feed() of chunk 2 of 3: result 0``."""
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


_ABSENT: Any = object()


def summarise_returned(
    returned: Any, stream: str, doing: str, exposed: Collection[str], problems: list[Problem]
) -> list[str]:
    """Each result of what ``feed()`` or ``close()`` returned (``doing``), summarised; its shape
    problems go to ``problems``."""
    where = f"{stream}, {doing}"
    if not returned:
        return []  # the harness reads None, or anything empty, as nothing released
    if isinstance(returned, str | bytes | Mapping) or not isinstance(returned, Iterable):
        kind = "a mapping (one result?)" if isinstance(returned, Mapping) else _a(returned)
        problems.append(
            Problem(
                where,
                f"returned {kind}, not a list of results (return [result], or [] when nothing "
                "is final)",
            )
        )
        return [f"not a list at {doing}"]
    summaries = []
    for number, result in enumerate(list(returned)):
        found = _result_problems(result, exposed)
        problems += [Problem(f"{where}: result {number}", message) for message in found]
        if found:
            summaries.append(f"a result of the wrong shape at {doing}")
            continue
        fields = _fields(result)
        status, reason = _value(fields["status"]), _value(fields["reason"])
        state = status if reason in (None, _ABSENT) else f"{status} {reason}"
        summaries.append(f"{state} at {doing}")
    return summaries


def _result_problems(result: Any, exposed: Collection[str]) -> list[str]:
    """What is wrong with one result's shape, each a sentence; empty when it is right."""
    if not isinstance(result, Mapping) and not all(
        hasattr(result, name) for name in ("status", "arguments_text")
    ):
        if not any(hasattr(result, name) for name in FIELDS):
            return [
                f"is {_a(result)}, not a mapping or an object with the contract's fields "
                f"({', '.join(FIELDS)})"
            ]
        missing = [name for name in ("status", "arguments_text") if not hasattr(result, name)]
        return [f"{_a(result)} has no attribute {name!r}" for name in missing]
    fields = _fields(result)
    # Without 'status' exposed, a result handed back with none is ready (docs/contract.md).
    ready_by_default = "status" not in exposed and _value(fields["status"]) in (None, _ABSENT)
    problems = [
        message
        for name, rule in _RULES.items()
        if rule.observable is None or rule.observable in exposed
        if not (name == "status" and ready_by_default)
        if (message := rule.problem(name, fields[name])) is not None
    ]
    status, reason = _value(fields["status"]), _value(fields["reason"])
    if "reason" in exposed and status == "rejected" and reason is None:
        problems.append(
            "a rejected result carries no reason, though the declaration exposes 'reason' "
            "(leave it out of 'observables' if rejected results carry none)"
        )
    if (
        "arguments" in exposed
        and status == "ready"
        and not isinstance(fields["arguments"], Mapping)
    ):
        problems.append(
            f"a ready function call's arguments are the parsed JSON object, not "
            f"{_shown(fields['arguments'])} (leave 'arguments' out of 'observables' if results "
            "carry the text only)"
        )
    return problems


def _fields(result: Any) -> dict[str, Any]:
    """The contract's fields of a mapping or an object, :data:`_ABSENT` where one is missing."""
    if isinstance(result, Mapping):
        return {name: result.get(name, _ABSENT) for name in FIELDS}
    return {name: getattr(result, name, _ABSENT) for name in FIELDS}


@dataclass(frozen=True, slots=True)
class _Rule:
    """What one field must hold; ``observable``, when set, decides whether it is checked."""

    types: tuple[type, ...]
    what: str
    observable: str | None = None
    allows_none: bool = False
    spellings: tuple[str, ...] = ()

    def problem(self, name: str, value: Any) -> str | None:
        """What is wrong with ``value`` as field ``name``, or None."""
        if value is _ABSENT:
            return None if self.allows_none else f"has no field {name!r} ({self.what})"
        value = _value(value)
        if value is None:
            return None if self.allows_none else f"field {name!r} is None, not {self.what}"
        if not isinstance(value, self.types) or isinstance(value, bool):
            return f"field {name!r} is {_shown(value)}, not {self.what}"
        if self.spellings and value not in self.spellings:
            close = difflib.get_close_matches(str(value), self.spellings, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            return f"{name} {value!r} is not one of {', '.join(self.spellings)}{hint}"
        return None


_RULES = {
    "choice": _Rule((int,), "an int (0 unless the response has several choices)"),
    "index": _Rule((int,), "an int (the call's position in its choice: 0, 1, 2…)"),
    "id": _Rule((str,), "a str (the call id)", "ids", allows_none=True),
    "name": _Rule((str,), "a str (the function name)", allows_none=True),
    "arguments_text": _Rule((str,), "a str (the argument fragments joined)", "arguments_text"),
    "status": _Rule((str,), "a str (ready or rejected)", spellings=STATUSES),
    "reason": _Rule(
        (str,), "a str (why it was rejected)", "reason", allows_none=True, spellings=REASONS
    ),
}
"""What each field must hold (``arguments`` is any JSON value, checked on ready calls only)."""


def checked_fields(exposed: Collection[str]) -> list[str]:
    """The fields whose shape is checked, given what the implementation exposes."""
    rules = {name: rule.observable for name, rule in _RULES.items()} | {"arguments": "arguments"}
    return [name for name in FIELDS if rules[name] is None or rules[name] in exposed]


def _value(value: Any) -> Any:
    """An enum member as its value (a ``StrEnum`` status is its string), anything else as is."""
    return value.value if isinstance(value, Enum) else value


def _a(value: Any) -> str:
    """``a str``, ``an int``, ``a CallResult``."""
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _shown(value: Any, limit: int = 60) -> str:
    """A value as a person reads it in a problem: ``None``, ``'0'`` (a str)."""
    if value is None:
        return "None"
    text = repr(value)
    text = text if len(text) <= limit else text[:limit] + "…"
    return f"{text} ({_a(value)})"

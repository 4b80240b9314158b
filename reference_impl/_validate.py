"""Parsing and checking complete argument text (V1, V2).

Both are peer data meeting configuration, and neither may raise or run away: integers of any
length parse (Python refuses to convert more than 4300 digits by default, and changing that
limit would change it for the whole host application), and schema evaluation is bounded (see
``_schema``).
"""

from __future__ import annotations

import json
import marshal
import sys
import threading
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator

from ._errors import ToolSchemaError
from ._model import Reason
from ._schema import OverBudget, bounded, compile_schema, spend, stop_spending

__all__ = [
    "ArgumentsError",
    "LongInt",
    "SchemaProblem",
    "closing_brackets",
    "outside_strings",
    "parse_arguments",
    "parse_int",
    "remembered_problem",
    "repeated_unit",
    "schema_problem",
    "validator_for",
]


class _ConstantError(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _no_constant(name: str) -> Any:
    raise _ConstantError(name)


class LongInt(int):
    """An integer with more digits than Python converts to or from text by default.

    It is an ``int`` in every way (arithmetic, comparison, JSON Schema's ``integer``) except its
    ``repr``, which abbreviates, so that messages and debug output about it never fail.
    Serialising it with ``json.dumps`` fails as for any such ``int`` unless the host lifts
    ``sys.set_int_max_str_digits``.
    """

    digits: int

    def __repr__(self) -> str:
        return f"{'-' if self < 0 else ''}<integer of {self.digits} digits>"


def parse_int(text: str) -> int:
    """A JSON integer literal as an int, whatever its length (a LongInt past 640 digits);
    for ``json.loads(..., parse_int=parse_int)``."""
    if len(text) <= _SAFE_DIGITS:
        return int(text)
    negative = text.startswith("-")
    digits = text[1:] if negative else text
    value = LongInt(-_digits_to_int(digits) if negative else _digits_to_int(digits))
    value.digits = len(digits)
    return value


def _digits_to_int(digits: str) -> int:
    # Divide and conquer, so each int() call stays under the interpreter's conversion limit
    # (which the host may lower to 640, never below) and the whole costs O(M(n) log n).
    if len(digits) <= _SAFE_DIGITS:
        return int(digits)
    low = len(digits) // 2
    scale: int = 10**low
    return _digits_to_int(digits[:-low]) * scale + _digits_to_int(digits[-low:])


def _raw_decode(text: str, pos: int) -> tuple[Any, int]:
    try:
        return _strict_json.raw_decode(text, pos)
    except (json.JSONDecodeError, _ConstantError):
        raise
    except ValueError:  # an integer past the interpreter's conversion limit: parse it apart
        return _long_json.raw_decode(text, pos)


_SAFE_DIGITS = sys.int_info.str_digits_check_threshold
_strict_json = json.JSONDecoder(parse_constant=_no_constant)
_long_json = json.JSONDecoder(parse_constant=_no_constant, parse_int=parse_int)


class ArgumentsError(ValueError):
    """Complete argument text that is not a JSON value; the message says where."""


def parse_arguments(text: str) -> Any:
    """Parse ``text`` as exactly one JSON value (no NaN or Infinity), or raise ArgumentsError."""
    try:
        value, end = _raw_decode(text, _skip_ws(text, 0))
    except json.JSONDecodeError as exc:
        raise ArgumentsError(f"{exc.msg} at character {exc.pos}{_near(text, exc.pos)}") from None
    except _ConstantError as exc:
        at = _token_position(text, exc.name)
        raise ArgumentsError(f"{exc.name} is not JSON at character {at}{_near(text, at)}") from None
    except RecursionError:
        raise ArgumentsError("nested too deeply to parse") from None
    end = _skip_ws(text, end)
    if end != len(text):
        raise ArgumentsError(
            f"extra data after the JSON value at character {end}{_near(text, end)}"
        )
    return value


def repeated_unit(text: str) -> tuple[Any, int] | None:
    """If ``text`` is one JSON value written k ≥ 2 times back to back, return (value, k)."""
    try:
        value, end = _raw_decode(text, _skip_ws(text, 0))
    except (ValueError, RecursionError):
        return None
    unit = text[:end]
    if end == 0 or len(text) % end:
        return None
    times = len(text) // end
    if times < 2 or unit * times != text:
        return None
    return value, times


def closing_brackets(text: str) -> str | None:
    """The brackets that would close ``text`` if it is JSON cut off between tokens, else None."""
    stack: list[str] = []
    for _, char in outside_strings(text):
        if char is None:
            return None  # cut inside a string
        if char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]":
            if not stack or stack.pop() != char:
                return None
    if not stack:
        return None
    return "".join(reversed(stack))


def outside_strings(text: str) -> Iterator[tuple[int, str | None]]:
    """Each position and character of ``text`` outside JSON strings (quotes excluded); then
    ``(len(text), None)`` if the text ends inside a string."""
    in_string = escaped = False
    for i, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        else:
            yield i, char
    if in_string:
        yield len(text), None


_CANONICAL = json.JSONEncoder(sort_keys=True)
"""``json.dumps(schema, sort_keys=True)``, without making an encoder per call."""


@lru_cache(maxsize=512)
def _compiled(name: str, schema_json: str) -> Validator:
    return compile_schema(name, json.loads(schema_json))


def validator_for(name: str, schema: Mapping[str, Any] | None) -> Validator | None:
    """A compiled validator for a tool's schema (cached across assemblers), or None for none.

    Raises ToolSchemaError naming the tool when the schema is not usable: invalid, a ``$ref``
    that does not resolve inside it (SchemaRefError: nothing is ever fetched), or a pattern
    that cannot be matched in linear time.
    """
    if schema is None:
        return None
    # A schema is read afresh each time: one changed in place since is seen as it is now. Its
    # marshal bytes name its content exactly (marshal takes only the builtin types themselves,
    # and equal bytes load as equal values) for a fraction of what its canonical JSON costs.
    given: Any = schema  # any object at all: marshal refuses what it cannot take
    try:
        content: bytes | None = marshal.dumps(given)
    except ValueError:  # not made of builtins only: its canonical JSON alone names it
        content = None
    if content is not None:
        known = _by_content.get((name, content))
        if known is not None:
            return known
    try:
        canonical = _CANONICAL.encode(schema)
    except (TypeError, ValueError) as exc:
        raise ToolSchemaError(f"tool {name!r}: parameters are not JSON: {exc}") from None
    except RecursionError:
        raise ToolSchemaError(f"tool {name!r}: parameters nested too deeply") from None
    validator = _compiled(name, canonical)
    if content is not None:
        with _by_content_lock:
            if len(_by_content) >= _BY_CONTENT:
                del _by_content[next(iter(_by_content))]
            _by_content[(name, content)] = validator
    return validator


_BY_CONTENT = 512
_by_content: dict[tuple[str, bytes], Validator] = {}
_by_content_lock = threading.Lock()


class SchemaProblem(NamedTuple):
    """Why arguments may not run: a schema violation, or a schema too costly to evaluate."""

    reason: Reason
    detail: str


def schema_problem(validator: Validator, value: Any) -> SchemaProblem | None:
    """None if ``value`` is valid, else the most relevant violation with its JSON path.

    Evaluation may take ``STEPS_PER_VALUE`` keyword evaluations per value in the arguments
    (at least ``STEPS_MIN``, at most ``STEPS_MAX``); past that the arguments are rejected
    ``too_large`` rather than checked for hours.
    """
    try:
        instance, values = bounded(value)
        steps = min(STEPS_MAX, max(STEPS_MIN, STEPS_PER_VALUE * values))
        budget = spend(steps)
        try:
            error = best_match(validator.iter_errors(instance))
        finally:
            stop_spending(budget)
    except RecursionError:
        return SchemaProblem(Reason.SCHEMA_VIOLATION, "at $: nested too deeply to validate")
    except OverBudget:
        return SchemaProblem(
            Reason.TOO_LARGE,
            f"at $: not validated: the schema took more than {steps} steps on {values} values",
        )
    if error is None:
        return None
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{_clip(p)}" for p in error.absolute_path)
    return SchemaProblem(Reason.SCHEMA_VIOLATION, "at $" + path + f": {error.message}")


def remembered_problem(validator: Validator, text: str, value: Any) -> SchemaProblem | None:
    """``schema_problem(validator, value)``, where ``value`` is what the argument text ``text``
    became (parsed, or repaired when the assembler was asked to: either way a function of the
    text alone), remembered for the texts of up to ``VERDICT_TEXT`` characters last checked.

    The verdict is a pure function of the schema and the text, and a stream assembled again
    (another response with the same call, the same bytes split otherwise) checks the same text
    again; a schema check costs far more than a look-up. At most ``VERDICTS`` verdicts are kept,
    oldest dropped first, so memory stays bounded however many calls are checked.
    """
    if len(text) > VERDICT_TEXT:
        return schema_problem(validator, value)
    # The entry holds the validator, so its id names no other object while the entry lives.
    key = (id(validator), text)
    known = _verdicts.get(key)
    if known is not None:
        return known[1]
    problem = schema_problem(validator, value)
    with _verdicts_lock:
        if len(_verdicts) >= VERDICTS:
            del _verdicts[next(iter(_verdicts))]
        _verdicts[key] = (validator, problem)
    return problem


VERDICTS = 1024
VERDICT_TEXT = 2048
_verdicts: dict[tuple[int, str], tuple[Validator, SchemaProblem | None]] = {}
_verdicts_lock = threading.Lock()

STEPS_PER_VALUE = 32
STEPS_MIN = 20_000
STEPS_MAX = 1_000_000


def _clip(key: str) -> str:
    return key if len(key) <= 40 else key[:40] + "…"


def _token_position(text: str, token: str) -> int:
    """Where ``token`` first occurs in ``text`` outside a JSON string (-1 if nowhere)."""
    return next((i for i, char in outside_strings(text) if char and text.startswith(token, i)), -1)


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def _near(text: str, pos: int) -> str:
    return f" near {text[max(0, pos - 20) : pos + 20]!r}" if text else ""

"""Parsing and checking complete argument text (V1, V2)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, best_match

from ._errors import ToolSchemaError

__all__ = [
    "ArgumentsError",
    "closing_brackets",
    "parse_arguments",
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


_strict_json = json.JSONDecoder(parse_constant=_no_constant)


class ArgumentsError(ValueError):
    """Complete argument text that is not a JSON value; the message says where."""


def parse_arguments(text: str) -> Any:
    """Parse ``text`` as exactly one JSON value (no NaN or Infinity), or raise ArgumentsError."""
    try:
        value, end = _strict_json.raw_decode(text, _skip_ws(text, 0))
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
        value, end = _strict_json.raw_decode(text, _skip_ws(text, 0))
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
    for _, char in _outside_strings(text):
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


def _outside_strings(text: str) -> Iterator[tuple[int, str | None]]:
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


@lru_cache(maxsize=512)
def _compiled(schema_json: str) -> Draft202012Validator:
    schema = json.loads(schema_json)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ToolSchemaError(exc.message) from None
    return Draft202012Validator(schema)


def validator_for(name: str, schema: Mapping[str, Any] | None) -> Draft202012Validator | None:
    """A compiled validator for a tool's schema (cached across assemblers), or None for none."""
    if schema is None:
        return None
    try:
        canonical = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise ToolSchemaError(f"tool {name!r}: parameters are not JSON: {exc}") from None
    try:
        return _compiled(canonical)
    except ToolSchemaError as exc:
        raise ToolSchemaError(f"tool {name!r}: invalid JSON Schema: {exc}") from None


def schema_problem(validator: Draft202012Validator, value: Any) -> str | None:
    """None if ``value`` is valid, else the most relevant violation with its JSON path."""
    try:
        error = best_match(validator.iter_errors(value))
    except RecursionError:
        return "at $: nested too deeply to validate"
    if error is None:
        return None
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return "at $" + path + f": {error.message}"


def _token_position(text: str, token: str) -> int:
    """Where ``token`` first occurs in ``text`` outside a JSON string (-1 if nowhere)."""
    return next((i for i, char in _outside_strings(text) if char and text.startswith(token, i)), -1)


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def _near(text: str, pos: int) -> str:
    return f" near {text[max(0, pos - 20) : pos + 20]!r}" if text else ""

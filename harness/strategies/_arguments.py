"""Arguments valid against a tool's schema (``arguments_for``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from hypothesis import strategies as st

from callstream.reference import Tool

from ._json_text import strings
from ._knobs import Json, between, label_draw, pick, rarely
from ._schemas import KEYS, fresh_key

__all__ = [
    "arguments_for",
    "draw_valid",
    "draw_value",
    "json_scalars",
    "valid_arguments",
    "values_of",
]


_INTEGERS = st.integers(-(2**53), 2**53)
"""Integers every JSON reader keeps exactly (JavaScript's safe range)."""


@cache
def json_scalars(lone: bool) -> st.SearchStrategy[Json]:
    return st.one_of(
        st.none(),
        st.booleans(),
        _INTEGERS,
        st.floats(allow_nan=False, allow_infinity=False),
        strings(lone_surrogates=lone),
    )


@cache
def _json_values(lone: bool) -> st.SearchStrategy[Json]:
    return st.recursive(
        json_scalars(lone),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
        max_leaves=6,
    )


@cache
def _any_objects(lone: bool) -> st.SearchStrategy[dict[str, Json]]:
    return st.dictionaries(KEYS, _json_values(lone), max_size=3)


def values_of(schema: Mapping[str, Any] | None, lone: bool) -> st.SearchStrategy[Json]:
    """Values valid against ``schema`` (the subset ``tools()`` generates)."""
    if not schema or schema.get("type") != "object":
        # No schema, ``{}``: any object (arguments are always an object).
        return _any_objects(lone)
    return _value_for(schema, lone)


def draw_value(draw: st.DrawFn, schema: Mapping[str, Any] | None, lone: bool) -> Json:
    """What ``values_of(schema, lone)`` draws, drawn in the caller's span."""
    if not schema or schema.get("type") != "object":
        return draw(_any_objects(lone))
    return _value(draw, schema, lone)


@st.composite
def _value_for(draw: st.DrawFn, schema: Mapping[str, Any], lone: bool) -> Json:
    return _value(draw, schema, lone)


def _value(draw: st.DrawFn, schema: Mapping[str, Any], lone: bool) -> Json:
    """A value valid against ``schema``, drawn directly (a strategy built per schema costs
    several times as much: Hypothesis works out each new strategy's properties)."""
    if "enum" in schema:
        return pick(draw, schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = pick(draw, kind)
    if kind == "string":
        return draw(strings(min_size=schema.get("minLength", 0), lone_surrogates=lone))
    if kind == "integer":
        return draw(between(schema.get("minimum", -(2**53)), schema.get("maximum", 2**53)))
    if kind == "number":
        return draw(_NUMBERS)
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "null":
        return None
    if kind == "array":
        items: list[Json] = []
        least = schema.get("minItems", 0)
        while len(items) < least or (len(items) < 3 and draw(st.booleans())):
            items.append(_value(draw, schema["items"], lone))
        return items
    if kind == "object":
        return _object(draw, schema, lone)
    return draw(_json_values(lone))


def _present(draw: st.DrawFn, properties: Mapping[str, Any], required: Sequence[str]) -> set[str]:
    """The properties an object has: the required ones, and which optional ones, a bit each
    in one choice (every bit as likely as a coin, shrinking to none) where a draw per property
    takes a choice each."""
    optional = [key for key in properties if key not in required]
    bits = draw(between(0, 2 ** len(optional) - 1)) if optional else 0
    return {*required, *(key for bit, key in enumerate(optional) if bits >> bit & 1)}


_NUMBERS = st.one_of(st.floats(allow_nan=False, allow_infinity=False), _INTEGERS)


def _object(draw: st.DrawFn, schema: Mapping[str, Any], lone: bool) -> dict[str, Json]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    present = _present(draw, properties, schema.get("required", ()))
    value: dict[str, Json] = {}
    for key, sub in properties.items():
        if key in present:
            value[key] = _value(draw, sub, lone)
    if schema.get("additionalProperties") is not False and draw(rarely(15)):
        for _ in range(draw(between(1, 2))):
            value.setdefault(fresh_key(draw(KEYS), properties), draw(json_scalars(lone)))
    return value


def draw_valid(draw: st.DrawFn, tool: Tool, lone_surrogates: bool) -> dict[str, Json]:
    """What ``arguments_for(tool)`` draws, drawn in the caller's span."""
    lone = lone_surrogates and draw(rarely(10))
    if lone:
        label_draw("arguments: lone surrogates allowed")
    value: dict[str, Json] = draw_value(draw, tool.parameters, lone)
    return value


@st.composite
def valid_arguments(draw: st.DrawFn, tool: Tool, lone_surrogates: bool) -> dict[str, Json]:
    return draw_valid(draw, tool, lone_surrogates)


def arguments_for(tool: Tool, *, lone_surrogates: bool = True) -> st.SearchStrategy[dict[str, Any]]:
    """JSON objects valid against ``tool``'s schema, their strings full of quotes, backslashes,
    control characters, non-ASCII and non-BMP characters and, when ``lone_surrogates`` (now and
    then), unpaired surrogates, which JSON can carry only as ``\\uXXXX`` escapes (RFC 8259
    leaves their meaning to the reader: turn it off to test a reader that refuses them)."""
    return valid_arguments(tool, lone_surrogates)

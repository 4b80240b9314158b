"""Arguments valid against a tool's schema (``arguments_for``)."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from hypothesis import strategies as st

from callstream.reference import Tool

from ._json_text import strings
from ._knobs import COIN, Json, between, label_draw, pick, rarely
from ._schemas import KEYS, fresh_key
from ._tape import Tape, readable

__all__ = [
    "arguments_for",
    "draw_valid",
    "draw_value",
    "json_scalars",
    "valid_arguments",
    "values_of",
]


_INTEGERS = between(-(2**53), 2**53)
"""Integers every JSON reader keeps exactly (JavaScript's safe range)."""
_LANDMARKS = (
    0.0,
    -0.0,
    0.1,
    0.5,
    1.5,
    -1.0,
    1e23,
    6.02e23,
    1e16,
    1e21,
    1e-7,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    9007199254740993.0,
    3.141592653589793,
)
"""Floats whose text trips writers and readers: exponents, the smallest and largest doubles,
negative zero, integers past 2**53."""


def _read_float(tape: Tape) -> float:
    """A finite float, read from eight bytes whatever it is: the first says what kind (a whole
    number, a decimal fraction, any double, a landmark) and its sign, the others its digits or
    bits; zero bytes read ``0.0``."""
    how, bits = tape.byte(), tape.integer(7)
    sign = -1.0 if how & 1 else 1.0
    if how < 64:
        return sign * float(bits & 0xFFFF)
    if how < 128:
        return sign * (bits & 0xFFFFFF) / 10.0 ** (how >> 1 & 7)
    if how < 192:
        exponent = min(bits >> 45, 0x7FE)  # not infinity, not NaN
        double = (how & 1) << 63 | exponent << 52 | (bits & (1 << 52) - 1)
        value: float = struct.unpack(">d", double.to_bytes(8, "big"))[0]
        return value
    return _LANDMARKS[how & 15]


_FLOATS = readable(st.floats(allow_nan=False, allow_infinity=False), _read_float)
_NUMBERS = readable(
    st.one_of(_FLOATS, _INTEGERS),
    lambda tape: tape(_FLOATS) if tape.byte() < 128 else tape(_INTEGERS),
)


_NONE = readable(st.none(), lambda tape: None)


@cache
def json_scalars(lone: bool) -> st.SearchStrategy[Json]:
    """JSON's scalars: null, booleans, integers, floats, strings (lone surrogates with
    ``lone``)."""
    options = (_NONE, COIN, _INTEGERS, _FLOATS, strings(lone_surrogates=lone))
    return readable(st.one_of(*options), lambda tape: tape(options[tape.below(len(options))]))


def _read_json(lone: bool, leaves: list[int], tape: Tape) -> Json:
    """Any JSON value, read from ``tape``: a scalar, or a list or an object of up to three
    values, with at most ``leaves[0]`` scalars in all (``st.recursive``'s ``max_leaves``)."""
    shape = tape.below(8) if leaves[0] > 1 else 0
    if shape < 6:
        leaves[0] -= 1
        return tape(json_scalars(lone))
    if shape == 6:
        return [_read_json(lone, leaves, tape) for _ in range(tape.below(4)) if leaves[0] > 0]
    return _read_object(lone, leaves, tape)


def _read_object(lone: bool, leaves: list[int], tape: Tape) -> dict[str, Json]:
    value: dict[str, Json] = {}
    for _ in range(tape.below(4)):
        key = tape(KEYS)
        if leaves[0] > 0:
            value[key] = _read_json(lone, leaves, tape)
    return value


@cache
def _json_values(lone: bool) -> st.SearchStrategy[Json]:
    return readable(
        st.recursive(
            json_scalars(lone),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
            max_leaves=6,
        ),
        lambda tape: _read_json(lone, [6], tape),
    )


@cache
def _any_objects(lone: bool) -> st.SearchStrategy[dict[str, Json]]:
    return readable(
        st.dictionaries(KEYS, _json_values(lone), max_size=3),
        lambda tape: _read_object(lone, [6], tape),
    )


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
        return draw(COIN)
    if kind == "null":
        return None
    if kind == "array":
        items: list[Json] = []
        least = schema.get("minItems", 0)
        while len(items) < least or (len(items) < 3 and draw(COIN)):
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

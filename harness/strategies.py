"""Hypothesis strategies for what callstream tests: tools, their arguments, argument text,
fragments, whole StreamSpecs, transport splittings and Scenarios.

Public strategies are built from smaller private ones, in layers:

- ``tools()`` draws tools with JSON Schemas; ``arguments_for(tool)`` draws objects valid against
  a tool's schema and ``invalid_arguments(tool)`` argument text it must refuse, with the reason;
  ``argument_text(value)`` spells a value in one of many equivalent ways; ``fragments(text)``
  cuts text where cutting is dangerous (``dangerous_cuts``).
- ``call_plans(tools)`` draws the calls of one stream, ``stream_specs()`` whole plans (calls,
  metadata policies, noise, ending, transport, limits), ``scenarios()`` wraps them as
  Scenarios (``scenario_for``, with rules from ``rules_for``).
- ``splittings(data)`` draws transport cuts, biased to ``dangerous_offsets(data)``; ``cases()``
  draws a scenario together with a splitting of its own bytes.

Every spec drawn is one the oracle predicts under both profiles and the renderer renders, so the
reference assembler passes every case. Knobs are ordered so that shrinking leads somewhere
readable: every list of choices starts with the ordinary value, every unusual knob is drawn
"rarely" and shrinks to off, lists shrink to their fewest items, so a failure shrinks to one or
two calls cut into a handful of fragments. Draws are labelled with ``hypothesis.event``
(``schedule: interleaved``, ``cut inside a \\u escape``) and ``stream_specs`` calls
``hypothesis.target`` on its fragment count and argument size, so statistics and coverage-guided
fuzzers have something to steer by.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from functools import cache
from itertools import pairwise
from typing import Any, Literal

from hypothesis import currently_in_test_context, event, reject, target
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from jsonschema import Draft202012Validator

from callstream.reference import Limits, Tool

from .oracle import PROFILES, PlanError, expect
from .render import render
from .rules import OPENAI_CHAT_QUIRKS, RULES
from .spec import (
    CallPlan,
    Ending,
    IdPolicy,
    NamePolicy,
    Noise,
    Scenario,
    Schedule,
    Splitting,
    StreamSpec,
    Transport,
)

__all__ = [
    "InvalidArguments",
    "argument_text",
    "arguments_for",
    "call_plans",
    "cases",
    "dangerous_cuts",
    "dangerous_offsets",
    "fragments",
    "invalid_arguments",
    "predictable",
    "rules_for",
    "scenario_for",
    "scenarios",
    "seen_events",
    "splittings",
    "stream_specs",
    "tools",
]

Json = Any
Schema = dict[str, Any]


# -- knobs ------------------------------------------------------------------------------------


@cache
def _rarely(percent: int) -> st.SearchStrategy[bool]:
    """True about ``percent`` times in a hundred; shrinks to False."""
    return st.integers(0, 99).map(lambda n: n >= 100 - percent)


@st.composite
def _mostly(
    draw: st.DrawFn, common: st.SearchStrategy[Any], odd: st.SearchStrategy[Any], percent: int
) -> Any:
    """A draw from ``common``, or about ``percent`` times in a hundred from ``odd`` (``one_of``
    would pick each half of the time); shrinks towards ``common``."""
    return draw(odd if draw(_rarely(percent)) else common)


@cache
def _sometimes(ordinary: Any, others: tuple[Any, ...], percent: int) -> st.SearchStrategy[Any]:
    """``ordinary``, or about ``percent`` times in a hundred one of ``others``; shrinks to
    ``ordinary``."""
    return _mostly(st.just(ordinary), st.sampled_from(others), percent)


_SEEN: set[str] = set()


def _label(text: str) -> None:
    """``hypothesis.event`` when a test is running (never from ``.example()`` or a script);
    every label is also remembered for :func:`seen_events`."""
    _SEEN.add(text)
    if currently_in_test_context():
        event(text)


def seen_events() -> frozenset[str]:
    """Every label the generators have attached to a draw in this process (what ``callstream
    fuzz`` shows as distinct events seen)."""
    return frozenset(_SEEN)


def _aim(value: float, label: str) -> None:
    """``hypothesis.target``, once per label and test case, when a test is running."""
    if currently_in_test_context():
        with suppress(InvalidArgument):  # a second spec drawn in the same test case
            target(value, label=label)


# -- JSON text: strings and spellings ---------------------------------------------------------

_NASTY = tuple('"\\/\n\r\t\b\f\x00\x1f\x7féß中\u2028\u2029\ufeff😀🎉𝄞\U0010fffd')
"""Characters that break naive escaping, framing or UTF-8 handling."""
_SURROGATES = ("\ud800", "\udbff", "\udc00", "\udfff", "\ud83d")
_CHARACTERS = st.one_of(st.characters(codec="utf-8"), st.sampled_from(_NASTY))
_CHARACTERS_WITH_SURROGATES = st.one_of(
    st.characters(codec="utf-8"), st.sampled_from(_NASTY + _SURROGATES)
)
_PAIRED = re.compile("(?<=[\ud800-\udbff])[\udc00-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


@cache
def _strings(
    min_size: int = 0, max_size: int = 10, lone_surrogates: bool = False
) -> st.SearchStrategy[str]:
    """Text full of quotes, backslashes, control and non-ASCII characters; with
    ``lone_surrogates``, also unpaired surrogates (JSON can only carry them as escapes)."""
    if not lone_surrogates:
        return st.text(_CHARACTERS, min_size=min_size, max_size=max_size)
    # A high surrogate right before a low one would read back as one character: keep them apart.
    return st.text(_CHARACTERS_WITH_SURROGATES, min_size=min_size, max_size=max_size).map(
        lambda text: _PAIRED.sub("?", text)
    )


_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


@dataclass(frozen=True, slots=True)
class _Spelling:
    """How one JSON text is written. Every choice keeps the value it stands for."""

    layout: str = "compact"
    item: str = ","
    key: str = ":"
    inner: str = ""
    """Whitespace after an opening and before a closing bracket."""
    indent: str | None = None
    escape: Literal["raw", "ascii", "every", "alternate"] = "raw"
    """Which characters of strings become ``\\uXXXX``: only those that must (raw), every
    non-ASCII one (``ensure_ascii``), every one, or every other one."""
    slash: bool = False
    """``/`` written as ``\\/``."""
    upper_hex: bool = False
    short: bool = True
    """``\\n`` rather than ``\\u000a``."""
    exponent: Literal["e+", "E", "e"] = "e+"
    reverse_keys: bool = False
    pad: tuple[str, str] = ("", "")
    """Whitespace before and after the whole text."""


_LAYOUTS = (
    _Spelling("compact"),
    _Spelling("spaced", item=", ", key=": "),
    _Spelling("indented", key=": ", indent="  "),
    _Spelling("tabs", key=": ", indent="\t"),
    _Spelling("loose", item=" ,\r\n", key=" :\t", inner=" "),
)
_PADS = ((" ", ""), ("", "\n"), ("\r\n\t ", " \n"))


@cache
def _spellings() -> st.SearchStrategy[_Spelling]:
    return st.builds(
        replace,
        st.sampled_from(_LAYOUTS),
        escape=st.sampled_from(("raw", "ascii", "every", "alternate")),
        slash=_rarely(20),
        upper_hex=_rarely(30),
        short=st.integers(0, 99).map(lambda n: n < 80),
        exponent=st.sampled_from(("e+", "E", "e")),
        reverse_keys=_rarely(20),
        pad=_sometimes(("", ""), _PADS, 20),
    )


def _write(value: Json, spelling: _Spelling, depth: int = 0) -> str:
    """``value`` as JSON text, spelled as ``spelling`` says."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        if spelling.exponent == "E":
            return text.replace("e", "E")
        return text.replace("e+", "e") if spelling.exponent == "e" else text
    if isinstance(value, str):
        return _quote(value, spelling)
    if isinstance(value, list):
        items = [_write(item, spelling, depth + 1) for item in value]
        return _container("[", "]", items, spelling, depth)
    if isinstance(value, dict):
        keys = list(value)[::-1] if spelling.reverse_keys else list(value)
        members = [
            _quote(key, spelling) + spelling.key + _write(value[key], spelling, depth + 1)
            for key in keys
        ]
        return _container("{", "}", members, spelling, depth)
    raise TypeError(f"not a JSON value: {value!r}")


def _container(
    opening: str, closing: str, items: list[str], spelling: _Spelling, depth: int
) -> str:
    if not items:
        return opening + closing
    if spelling.indent is not None:
        pad = "\n" + spelling.indent * (depth + 1)
        return opening + pad + ("," + pad).join(items) + "\n" + spelling.indent * depth + closing
    return opening + spelling.inner + spelling.item.join(items) + spelling.inner + closing


def _quote(text: str, spelling: _Spelling) -> str:
    out = ['"']
    for position, char in enumerate(text):
        code = ord(char)
        if (
            char in '"\\'
            or code < 0x20
            or 0xD800 <= code <= 0xDFFF
            or spelling.escape == "every"
            or (spelling.escape == "ascii" and code > 0x7F)
            or (spelling.escape == "alternate" and position % 2 == 1)
        ):
            out.append(_escape(char, spelling))
        elif char == "/" and spelling.slash:
            out.append("\\/")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _escape(char: str, spelling: _Spelling) -> str:
    if spelling.short and char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    if code > 0xFFFF:
        code -= 0x10000
        return _hex(0xD800 + (code >> 10), spelling) + _hex(0xDC00 + (code & 0x3FF), spelling)
    return _hex(code, spelling)


def _hex(code: int, spelling: _Spelling) -> str:
    return f"\\u{code:04X}" if spelling.upper_hex else f"\\u{code:04x}"


@st.composite
def _argument_text(draw: st.DrawFn, value: Json) -> str:
    spelling = draw(_spellings())
    _label(f"spelling: {spelling.layout}, escapes {spelling.escape}")
    if spelling.slash:
        _label("spelling: escaped slashes")
    pad = spelling.pad
    return pad[0] + _write(value, spelling) + pad[1]


def argument_text(value: Json) -> st.SearchStrategy[str]:
    """``value`` written as JSON text in one of many valid ways, all parsing back to ``value``:
    compact, spaced, indented or loosely spaced; strings raw, ``ensure_ascii``-style or with
    any character as a ``\\uXXXX`` escape (non-BMP ones as surrogate pairs, upper or lower
    case hex); ``\\/`` for slashes; exponent spellings; key order; leading and trailing
    whitespace. Lone surrogates are always escaped, so the text is always UTF-8-encodable."""
    return _argument_text(value)


# -- tools and their schemas ------------------------------------------------------------------

_NAME_CHARACTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
_TOOL_NAMES = _mostly(
    st.sampled_from(("get_weather", "search", "lookup", "send_email", "read_file")),
    st.builds(
        str.__add__,
        st.sampled_from(_NAME_CHARACTERS[:52] + "_"),
        st.text(_NAME_CHARACTERS, max_size=24),
    ),
    20,
)
"""Within OpenAI's rule for function names, ``^[a-zA-Z0-9_-]{1,64}$``."""
_KEY_NAMES = ("a", "b", "city", "query", "path", "limit", "units", "tags", "options", "body")
_KEYS = _mostly(
    st.sampled_from(_KEY_NAMES),
    st.text(st.one_of(st.sampled_from("abxyz_"), _CHARACTERS), min_size=1, max_size=6),
    25,
)
_SIMPLE_SCHEMAS: tuple[Schema, ...] = (
    {"type": "string"},
    {"type": "integer"},
    {"type": "boolean"},
    {"type": "number"},
    {"type": "null"},
    {"type": ["string", "null"]},
    {"type": "string", "minLength": 1},
)


_ENUM, _BOUNDED = "enum", "bounded"


@st.composite
def _scalar_schema(draw: st.DrawFn) -> Schema:
    kinds: tuple[Schema | str, ...] = (*_SIMPLE_SCHEMAS, _ENUM, _BOUNDED)
    kind = draw(st.sampled_from(kinds))
    if isinstance(kind, dict):
        return copy.deepcopy(kind)
    if kind == _ENUM:
        values = draw(st.lists(_strings(max_size=6), min_size=1, max_size=4, unique=True))
        return {"type": "string", "enum": values}
    low, high = draw(st.integers(-100, 0)), draw(st.integers(0, 100))
    return {"type": "integer", "minimum": low, "maximum": high}


@st.composite
def _schema(draw: st.DrawFn, leaves: int) -> Schema:
    """A schema with at most ``leaves`` scalar schemas in it: drawn directly rather than with
    ``st.recursive``, which costs several times as much per draw."""
    shape = draw(_sometimes("scalar", ("array", "object"), 40)) if leaves > 1 else "scalar"
    if shape == "scalar":
        return draw(_scalar_schema())
    if shape == "array":
        schema: Schema = {"type": "array", "items": draw(_schema(leaves - 1))}
        if draw(_rarely(30)):
            schema["minItems"] = 1
        return schema
    return draw(_object_schema_of(0, min(3, leaves), leaves))


@st.composite
def _object_schema_of(draw: st.DrawFn, min_size: int, max_size: int, leaves: int) -> Schema:
    """An object schema of ``min_size`` to ``max_size`` properties sharing ``leaves``."""
    properties: dict[str, Schema] = {}
    while len(properties) < min_size or (len(properties) < max_size and draw(st.booleans())):
        share = max(1, leaves // max(1, max_size))
        properties[_fresh_key(draw(_KEYS), properties)] = draw(_schema(share))
    schema: Schema = {"type": "object", "properties": properties}
    required = [key for key in properties if draw(st.booleans())]
    if required:
        schema["required"] = required
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    return schema


def _schemas() -> st.SearchStrategy[Schema]:
    return _schema(4)


_PARAMETERLESS: tuple[Schema | None, ...] = (
    {"type": "object", "properties": {}},
    {"type": "object"},
    None,
    {},
)


@cache
def _parameters() -> st.SearchStrategy[Schema | None]:
    parameterless = st.sampled_from(_PARAMETERLESS).map(copy.deepcopy)
    declared = _object_schema_of(1, 3, 4)
    return _mostly(declared, parameterless, 20)


@st.composite
def _tools(draw: st.DrawFn, min_size: int, max_size: int) -> tuple[Tool, ...]:
    names = draw(st.lists(_TOOL_NAMES, min_size=min_size, max_size=max_size, unique=True))
    return tuple(Tool(name, draw(_parameters())) for name in names)


def tools(min_size: int = 1, max_size: int = 3) -> st.SearchStrategy[tuple[Tool, ...]]:
    """Tools with unique names and JSON Schemas: nested objects and arrays, enums, required and
    optional fields, strings, integers (sometimes bounded), numbers, booleans, null, nullable
    strings; now and then a tool that takes no parameters (``properties: {}``, a bare
    ``{"type": "object"}``, ``{}`` or no schema at all)."""
    return _tools(min_size, max_size)


# -- arguments valid against a schema ---------------------------------------------------------

_INTEGERS = st.integers(-(2**53), 2**53)
"""Integers every JSON reader keeps exactly (JavaScript's safe range)."""


def _fresh_key(key: str, taken: Iterable[str]) -> str:
    """``key``, or ``key`` with underscores appended until it is not among ``taken``."""
    taken = set(taken)
    while key in taken:
        key += "_"
    return key


@cache
def _json_scalars(lone: bool) -> st.SearchStrategy[Json]:
    return st.one_of(
        st.none(),
        st.booleans(),
        _INTEGERS,
        st.floats(allow_nan=False, allow_infinity=False),
        _strings(lone_surrogates=lone),
    )


@cache
def _json_values(lone: bool) -> st.SearchStrategy[Json]:
    return st.recursive(
        _json_scalars(lone),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
        max_leaves=6,
    )


def _values(schema: Mapping[str, Any] | None, lone: bool) -> st.SearchStrategy[Json]:
    """Values valid against ``schema`` (the subset ``tools()`` generates)."""
    if not schema or schema.get("type") != "object":
        # No schema, ``{}``: any object (arguments are always an object).
        return st.dictionaries(_KEYS, _json_values(lone), max_size=3)
    return _value_for(schema, lone)


@st.composite
def _value_for(draw: st.DrawFn, schema: Mapping[str, Any], lone: bool) -> Json:
    """A value valid against ``schema``, drawn directly (a strategy built per schema costs
    several times as much: Hypothesis works out each new strategy's properties)."""
    if "enum" in schema:
        return draw(st.sampled_from(list(schema["enum"])))
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = draw(st.sampled_from(kind))
    if kind == "string":
        return draw(_strings(min_size=schema.get("minLength", 0), lone_surrogates=lone))
    if kind == "integer":
        return draw(st.integers(schema.get("minimum", -(2**53)), schema.get("maximum", 2**53)))
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
            items.append(draw(_value_for(schema["items"], lone)))
        return items
    if kind == "object":
        return draw(_object_for(schema, lone))
    return draw(_json_values(lone))


_NUMBERS = st.one_of(st.floats(allow_nan=False, allow_infinity=False), _INTEGERS)


@st.composite
def _object_for(draw: st.DrawFn, schema: Mapping[str, Any], lone: bool) -> dict[str, Json]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    value: dict[str, Json] = {}
    for key, sub in properties.items():
        if key in required or draw(st.booleans()):
            value[key] = draw(_value_for(sub, lone))
    if schema.get("additionalProperties") is not False and draw(_rarely(15)):
        for _ in range(draw(st.integers(1, 2))):
            value.setdefault(_fresh_key(draw(_KEYS), properties), draw(_json_scalars(lone)))
    return value


@st.composite
def _arguments_for(draw: st.DrawFn, tool: Tool, lone_surrogates: bool) -> dict[str, Json]:
    lone = lone_surrogates and draw(_rarely(10))
    if lone:
        _label("arguments: lone surrogates allowed")
    value: dict[str, Json] = draw(_values(tool.parameters, lone))
    return value


def arguments_for(tool: Tool, *, lone_surrogates: bool = True) -> st.SearchStrategy[dict[str, Any]]:
    """JSON objects valid against ``tool``'s schema, their strings full of quotes, backslashes,
    control characters, non-ASCII and non-BMP characters and, when ``lone_surrogates`` (now and
    then), unpaired surrogates, which JSON can carry only as ``\\uXXXX`` escapes (RFC 8259
    leaves their meaning to the reader: turn it off to test a reader that refuses them)."""
    return _arguments_for(tool, lone_surrogates)


# -- arguments a tool must refuse -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InvalidArguments:
    """Argument text a tool must refuse once complete, and why."""

    text: str
    reason: Literal["malformed_json", "schema_violation"]
    """The rejection the oracle expects of a completed call (V1, V2)."""
    kind: str
    """What is wrong, in a few words: ``truncated``, ``trailing comma``, ``wrong type``…"""


_CONSTANTS = ("NaN", "Infinity", "-Infinity")
_NOT_OBJECTS = ("[]", "null", "0", '"{}"', "true", "[{}]", "12")
_MALFORMED = (
    "truncated",
    "trailing comma",
    "NaN",
    "not an object",
    "single quotes",
    "repeated",
    "trailing garbage",
    "control character in a string",
    "unclosed string",
    "comment",
    "blank",
)
_WRONG_TYPED: tuple[Json, ...] = (0, "0", 1.5, True, None, [], {}, "x", -1)


def _strictly_parses(text: str) -> bool:
    try:
        json.loads(text, parse_constant=_refuse)
    except (ValueError, RecursionError):
        return False
    return True


def _refuse(name: str) -> Any:
    raise ValueError(name)


@st.composite
def _malformed(draw: st.DrawFn, tool: Tool, lone_surrogates: bool) -> InvalidArguments:
    kind = draw(st.sampled_from(_MALFORMED))
    value = draw(_arguments_for(tool, lone_surrogates))
    text = draw(argument_text(value)).strip(" \t\r\n")
    key = _quote(_fresh_key(draw(_KEYS), value), _Spelling())
    if kind == "truncated":
        text = text[: draw(st.integers(1, len(text) - 1))]
    elif kind == "trailing comma":
        text = text[:-1] + ",}"
    elif kind == "NaN":
        constant = draw(st.sampled_from(_CONSTANTS))
        text = "{" + key + ":" + constant + ("," + text[1:] if value else "}")
    elif kind == "not an object":
        text = draw(st.sampled_from((*_NOT_OBJECTS, "[" + text + "]")))
    elif kind == "single quotes":
        text = text.replace('"', "'") if '"' in text else "{'a': 1}"
    elif kind == "repeated":
        text = text + text
    elif kind == "trailing garbage":
        text = text + draw(st.sampled_from(("x", "}", "]", ",", "{")))
    elif kind == "control character in a string":
        text = "{" + key + ':"a' + draw(st.sampled_from(("\n", "\x01", "\t"))) + 'b"}'
    elif kind == "unclosed string":
        text = "{" + key + ':"abc}'
    elif kind == "comment":
        text = "/* arguments */" + text
    else:
        text = draw(st.sampled_from((" ", "\n", "\r\n\t")))
    if _strictly_parses(text) and isinstance(json.loads(text), dict):
        reject()  # never expected: each damage above breaks JSON or the object
    return InvalidArguments(text, "malformed_json", kind)


def _violations(schema: Mapping[str, Any] | None) -> list[tuple[str, str | None]]:
    """The ways an object can break ``schema`` at its top level: (what, which key)."""
    if not schema:
        return []
    properties: Mapping[str, Any] = schema.get("properties", {})
    ways: list[tuple[str, str | None]] = [
        ("missing required field", key) for key in schema.get("required", ())
    ]
    ways += [("wrong type", key) for key in properties]
    if schema.get("additionalProperties") is False:
        ways.append(("unexpected field", None))
    return ways


@st.composite
def _schema_violation(draw: st.DrawFn, tool: Tool, lone_surrogates: bool) -> InvalidArguments:
    schema = tool.parameters or {}
    kind, key = draw(st.sampled_from(_violations(schema)))
    value = dict(draw(_arguments_for(tool, lone_surrogates)))
    properties: Mapping[str, Any] = schema.get("properties", {})
    if kind == "missing required field" and key is not None:
        value.pop(key, None)
    elif kind == "unexpected field":
        value[_fresh_key(draw(_KEYS), properties)] = draw(_json_scalars(False))
    else:
        assert key is not None
        sub = Draft202012Validator(properties[key])
        wrong = [item for item in _WRONG_TYPED if not sub.is_valid(item)]
        if not wrong:
            reject()
        value[key] = draw(st.sampled_from(wrong))
    if Draft202012Validator(dict(schema)).is_valid(value):
        reject()
    return InvalidArguments(draw(argument_text(value)), "schema_violation", kind)


@st.composite
def _invalid_arguments(draw: st.DrawFn, tool: Tool, lone_surrogates: bool) -> InvalidArguments:
    violable = bool(_violations(tool.parameters))
    if violable and draw(st.booleans()):
        invalid = draw(_schema_violation(tool, lone_surrogates))
    else:
        invalid = draw(_malformed(tool, lone_surrogates))
    _label(f"invalid arguments: {invalid.kind}")
    return invalid


def invalid_arguments(
    tool: Tool, *, lone_surrogates: bool = True
) -> st.SearchStrategy[InvalidArguments]:
    """Argument text ``tool`` must refuse, with the reason the oracle gives: malformed JSON
    (truncated, a trailing comma, NaN or Infinity, single quotes, a repeated object, garbage
    after it, a raw control character in a string, an unclosed string, a comment, only
    whitespace, or a JSON value that is not an object) or, where the schema allows it, a schema
    violation (a missing required field, a field of the wrong type, an unexpected field)."""
    return _invalid_arguments(tool, lone_surrogates)


# -- fragments --------------------------------------------------------------------------------

_HEX = frozenset("0123456789abcdefABCDEF")
_NUMBER = frozenset("0123456789+-.eE")
_LITERALS = ("true", "false", "null")


def dangerous_cuts(text: str) -> dict[str, tuple[int, ...]]:
    """Where cutting argument text is dangerous, by kind: positions ``p`` (``0 < p <
    len(text)``) such that ``text[:p]`` ends

    - ``after a backslash``: between ``\\`` and the rest of its escape;
    - ``inside a \\u escape``: after ``\\u`` or some of its hex digits;
    - ``between surrogate escapes``: between ``\\ud83d`` and ``\\ude00``;
    - ``next to a non-ASCII character`` (the bytes are the transport's business);
    - ``inside a number`` (``1`` before ``2``) or ``inside a literal`` (``t`` before ``rue``);
    - ``after a prefix that parses``: the text so far is JSON once its open brackets are
      closed (``{`` reads as ``{}``, ``{"a":1`` as ``{"a":1}``), or already is JSON (only
      whitespace follows), which fools anything that releases a call when its text parses.
    """
    found: dict[str, set[int]] = {}

    def add(kind: str, *positions: int) -> None:
        found.setdefault(kind, set()).update(p for p in positions if 0 < p < len(text))

    closers: list[str] = []
    in_string = False
    i = 0
    while i < len(text):
        char = text[i]
        if in_string:
            if char == "\\":
                add("after a backslash", i + 1)
                digits = text[i + 2 : i + 6]
                if text[i + 1 : i + 2] == "u" and len(digits) == 4 and set(digits) <= _HEX:
                    add("inside a \\u escape", *range(i + 2, i + 6))
                    after = text[i + 8 : i + 12]
                    if (
                        0xD800 <= int(digits, 16) < 0xDC00
                        and text[i + 6 : i + 8] == "\\u"
                        and len(after) == 4
                        and set(after) <= _HEX
                        and 0xDC00 <= int(after, 16) <= 0xDFFF
                    ):
                        add("between surrogate escapes", i + 6)
                    i += 6
                else:
                    i += 2
                continue
            if char == '"':
                in_string = False
                _parsing_prefix(text, i + 1, closers, add)
            elif ord(char) > 0x7F:
                add("next to a non-ASCII character", i, i + 1)
            i += 1
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            closers.append("}" if char == "{" else "]")
            _parsing_prefix(text, i + 1, closers, add)
        elif char in "}]":
            if closers:
                closers.pop()
            _parsing_prefix(text, i + 1, closers, add)
        elif char in "-0123456789":
            end = i
            while end < len(text) and text[end] in _NUMBER:
                end += 1
            add("inside a number", *range(i + 1, end))
            for position in range(i + 1, end + 1):
                _parsing_prefix(text, position, closers, add)
            i = end
            continue
        else:
            for literal in _LITERALS:
                if text.startswith(literal, i):
                    add("inside a literal", *range(i + 1, i + len(literal)))
                    _parsing_prefix(text, i + len(literal), closers, add)
                    i += len(literal) - 1
                    break
        i += 1
    return {
        kind: tuple(sorted(positions)) for kind, positions in sorted(found.items()) if positions
    }


def _parsing_prefix(text: str, position: int, closers: list[str], add: Callable[..., None]) -> None:
    if 0 < position < len(text) and _strictly_parses(text[:position] + "".join(closers[::-1])):
        add("after a prefix that parses", position)


def _kinds_of_cut(danger: Mapping[str, Sequence[int]], points: Iterable[int]) -> set[str]:
    at = set(points)
    return {kind for kind, positions in danger.items() if at.intersection(positions)}


@cache
def _cut_instructions(length: int, max_cuts: int) -> st.SearchStrategy[list[tuple[int, int, int]]]:
    """Cut instructions for a text of ``length``: (mode, position, which). Mode 0 cuts at the
    position, 1 at a dangerous place, 2 ends a run of one-character fragments there."""
    return st.lists(
        st.tuples(st.integers(0, 2), st.integers(1, length - 1), st.integers(0, 255)),
        max_size=max_cuts,
    )


@st.composite
def _fragments(draw: st.DrawFn, text: str, max_cuts: int) -> tuple[str, ...]:
    if len(text) < 2:
        if text:
            return (text,)
        return tuple(draw(st.sampled_from(((), ("",)))))
    danger = dangerous_cuts(text)
    kinds = sorted(danger)
    points: set[int] = set()
    one_each = draw(_rarely(5))
    if one_each and len(text) <= 48:
        points.update(range(1, len(text)))
        _label("fragments: one character each")
    else:
        for mode, at, which in draw(_cut_instructions(len(text), max_cuts)):
            if mode == 1 and kinds:  # a dangerous cut: ``at`` picks the kind, ``which`` the place
                places = danger[kinds[at % len(kinds)]]
                points.add(places[which % len(places)])
            elif mode == 2:  # a run of one-character fragments ending at ``at``
                points.update(p for p in range(at - which % 6, at + 1) if p > 0)
            else:
                points.add(at)
    for kind in _kinds_of_cut(danger, points):
        _label(f"cut {kind}")
    bounds = [0, *sorted(points), len(text)]
    pieces = [text[a:b] for a, b in pairwise(bounds)]
    if draw(_rarely(5)):
        pieces.insert(draw(st.integers(0, len(pieces))), "")
        _label("fragments: an empty fragment")
    return tuple(pieces)


def fragments(text: str, *, max_cuts: int = 8) -> st.SearchStrategy[tuple[str, ...]]:
    """``text`` cut into fragments whose concatenation is ``text``: up to ``max_cuts`` cut
    instructions, each a uniform cut, a dangerous cut (``dangerous_cuts``) or a run of
    single-character fragments; now and then every character its own fragment, or an empty
    fragment among them (A4: a no-op). Empty text is no fragment at all or one empty one.
    Shrinks to the whole text in one fragment."""
    return _fragments(text, max_cuts)


# -- calls ------------------------------------------------------------------------------------

_OUTCOMES = ("malformed_json", "schema_violation", "unknown_tool", "missing_name", "no_arguments")
_UNKNOWN_NAMES = ("unknown_tool", "Search", "get_weather ", "tool.name", "функция")
_ID_SUFFIXES = ("_a1B2c3", "-Ωμέγα", "_😀")
_EXTRA_CONTENT = {"google": {"thought_signature": "CiQBjz1rX2Z0ZXN0LXNpZ25hdHVyZQ=="}}


@dataclass(frozen=True, slots=True)
class _Draft:
    """A call before its metadata: who it names and its argument text."""

    name: str | None
    arguments: str
    outcome: str
    value: Json = None
    """The parsed arguments when the text is a JSON object (valid or not)."""
    lone: bool = False
    """The value may hold lone surrogates (which a JSON value on the wire cannot)."""


@st.composite
def _drafts(draw: st.DrawFn, tools: Sequence[Tool], lone_surrogates: bool) -> _Draft:
    tool = draw(st.sampled_from(tools))
    outcome = draw(_sometimes("valid", _OUTCOMES, 20))
    if outcome == "schema_violation" and not _violations(tool.parameters):
        outcome = "malformed_json"
    _label(f"call: {outcome}")
    lone = lone_surrogates and draw(_rarely(10))
    if outcome == "no_arguments":
        return _Draft(tool.name, "", outcome, lone=lone)
    if outcome in ("malformed_json", "schema_violation"):
        invalid = draw(
            _schema_violation(tool, lone)
            if outcome == "schema_violation"
            else _malformed(tool, lone)
        )
        _label(f"invalid arguments: {invalid.kind}")
        value = json.loads(invalid.text) if invalid.reason == "schema_violation" else None
        return _Draft(tool.name, invalid.text, outcome, value, lone)
    value = draw(_values(tool.parameters, lone))
    text = draw(argument_text(value))
    name: str | None = tool.name
    if outcome == "unknown_tool":
        known = {tool.name for tool in tools}
        name = draw(st.sampled_from([n for n in _UNKNOWN_NAMES if n not in known] or ["x"]))
    elif outcome == "missing_name":
        name = None
    return _Draft(name, text, outcome, value, lone)


def _deltas(plan: CallPlan, schedule: Schedule) -> int:
    """How many deltas carry a call (as the renderer sends it)."""
    if schedule in ("whole", "together") or plan.arguments_as_value:
        count = 1
    elif plan.legacy:
        count = 1 + len(plan.fragments)
    else:
        count = len(plan.fragments) + (0 if plan.header_arguments else 1)
    if plan.name_policy == "late" and count == 1:
        count = 2
    return max(count, 1)


def _bare(plan: CallPlan, schedule: Schedule) -> bool:
    """Whether some delta of a call carries neither index, id nor name."""
    return (
        plan.omit_index
        and plan.id_policy not in ("every", "changing")
        and plan.name_policy != "every"
        and _deltas(plan, schedule) > 1
    )


@dataclass
class _Wires:
    """The tool-call indices used so far in one choice, and by which calls."""

    used: dict[int, CallPlan]
    position: int = 0


def _reusable(plan: CallPlan) -> bool:
    """Whether a call's index may be taken over by a new call (quirk C2): both must carry a
    string id from their first delta and never send a name late, or the reader cannot tell."""
    return (
        not plan.legacy
        and not plan.omit_index
        and plan.id_policy in ("once", "every")
        and plan.name_policy != "late"
    )


@dataclass
class _Stream:
    """What the calls drawn so far decided for the ones still to come."""

    tools: Sequence[Tool]
    schedule: Schedule
    lone_surrogates: bool
    quirky: bool
    no_index: set[int]
    zero: set[int]
    wires: dict[int, _Wires]
    legacy_in: set[int]
    ambiguous: set[int]
    count: int = 0


@st.composite
def _call_plans(
    draw: st.DrawFn,
    tools: Sequence[Tool],
    choices: int,
    schedule: Schedule,
    max_calls: int,
    lone_surrogates: bool,
) -> tuple[CallPlan, ...]:
    quirky = draw(_rarely(30))
    if quirky:
        _label("calls: metadata quirks")
    # Per choice: indices as OpenAI sends them, none at all (Gemini), or every call at index 0
    # told apart by a new id and name (Ollama), which cannot be interleaved.
    modes = [draw(_sometimes("next", ("none", "zero"), 30)) for _ in range(choices)]
    stream = _Stream(
        tools,
        schedule,
        lone_surrogates,
        quirky,
        no_index={choice for choice, mode in enumerate(modes) if quirky and mode == "none"},
        zero={
            choice
            for choice, mode in enumerate(modes)
            if quirky and mode == "zero" and schedule != "interleaved"
        },
        wires={choice: _Wires({}) for choice in range(choices)},
        legacy_in=set(),
        ambiguous=set(),
    )
    # A list, each call one element: the shrinker deletes any call, the first included, as
    # one span. The calls are drawn in order, each seeing what the earlier ones decided.
    plans = draw(st.lists(_call(stream, choices), min_size=1, max_size=max_calls))
    if len({plan.name for plan in plans if plan.name is not None}) < len(plans):
        _label("calls: the same function twice")
    return tuple(plans)


@st.composite
def _call(draw: st.DrawFn, stream: _Stream, choices: int) -> CallPlan:
    """One more call of ``stream``."""
    choice = draw(st.integers(0, choices - 1))
    draft = draw(_drafts(stream.tools, stream.lone_surrogates))
    schedule = stream.schedule
    if schedule in ("whole", "together"):
        pieces: tuple[str, ...] = (draft.arguments,) if draft.arguments else ()
    else:
        pieces = draw(fragments(draft.arguments))
    plan = CallPlan(draft.name, draft.arguments, pieces, id=f"call_{stream.count}", choice=choice)
    stream.count += 1
    if stream.quirky:
        plan = draw(
            _metadata(
                plan,
                draft,
                schedule,
                omit_index=choice in stream.no_index,
                zero_index=choice in stream.zero,
                legacy_in=stream.legacy_in,
            )
        )
    if plan.legacy:
        stream.legacy_in.add(choice)
    wires = stream.wires[choice]
    if choice in stream.no_index and schedule == "sequential":
        # A bare fragment (no index, id or name) while several calls are open rejects the
        # calls open then; the oracle rejects the whole choice, so no call may open later
        # unless it is bare too (and so rejected in its turn).
        if choice in stream.ambiguous and not _bare(plan, schedule):
            reject()
        if wires.position > 0 and _bare(plan, schedule):
            stream.ambiguous.add(choice)
    return draw(_wire_index(plan, wires, schedule, stream.quirky, choice in stream.zero))


_ID_POLICIES: tuple[IdPolicy, ...] = ("every", "omit", "empty", "numeric", "changing")
_NAME_POLICIES: tuple[NamePolicy, ...] = ("every", "omit", "late")


@st.composite
def _metadata(
    draw: st.DrawFn,
    plan: CallPlan,
    draft: _Draft,
    schedule: Schedule,
    *,
    omit_index: bool,
    zero_index: bool,
    legacy_in: set[int],
) -> CallPlan:
    """How one call's metadata travels, among the combinations the oracle can predict. Every
    knob is drawn, then the combinations the oracle cannot predict are turned back to the
    ordinary value, so a call's draws stay aligned while the shrinker simplifies."""
    legacy = draw(_rarely(10))
    id_policy: IdPolicy = draw(_sometimes("once", _ID_POLICIES, 40))
    name_policy: NamePolicy = draw(_sometimes("once", _NAME_POLICIES, 40))
    suffix = draw(_sometimes("", _ID_SUFFIXES, 15))
    as_value = draw(_rarely(10))
    snapshots = draw(_rarely(5))
    extra = draw(_rarely(10))
    type_every = draw(_rarely(20))
    header_arguments = draw(_rarely(20))
    if zero_index:
        # Each call at index 0 must come with an id and a name to be told from the last one.
        legacy = False
        id_policy = id_policy if id_policy in ("once", "every") else "once"
        name_policy = name_policy if name_policy in ("once", "every") else "once"
    if legacy and not omit_index and schedule != "together" and plan.choice not in legacy_in:
        _label("call: legacy function_call")
        return replace(plan, id=None, legacy=True)
    if id_policy == "changing" and (omit_index or name_policy in ("every", "late")):
        # A changed id that comes with a name is a new call, not the same one continued; and
        # without an index, a changed id is a new call too.
        id_policy = "once"
    if omit_index:
        # Without an index a fragment is routed by its id: one that only repeats the name
        # reads as a new call, a header with neither id nor name as the old one, and a name
        # that comes late as a new call.
        if name_policy == "late" or (name_policy == "every" and id_policy != "every"):
            name_policy = "once"
        if name_policy == "omit" or (plan.name is None and id_policy not in ("once", "every")):
            id_policy = "every" if id_policy == "every" else "once"
            name_policy = "once"
        # An entry the reader cannot route is dropped, with the repeated type it carries.
        type_every = False
    name = plan.name
    if name_policy == "omit":
        # The same bytes as a call without a name; the oracle expects the plan's name for a
        # call it rejects before completion even when the policy never sends it.
        name, name_policy = None, "once"
        _label("call: name omit")
    call_id = f"{int(plan.id[5:]):04d}" if id_policy == "numeric" and plan.id else plan.id
    as_value = (
        as_value
        and name_policy != "late"
        and isinstance(draft.value, dict)
        and not draft.lone
        and not _SURROGATE.search(json.dumps(draft.value, ensure_ascii=False))
    )
    snapshots = snapshots and not as_value and schedule in ("sequential", "interleaved")
    for knob, on in (
        (f"id {id_policy}", id_policy != "once"),
        (f"name {name_policy}", name_policy != "once"),
        ("arguments as a value", as_value),
        ("cumulative snapshots", snapshots),
        ("extra_content", extra),
        ("no index", omit_index),
    ):
        if on:
            _label(f"call: {knob}")
    return replace(
        plan,
        name=name,
        id=None if call_id is None else call_id + suffix,
        omit_index=omit_index,
        id_policy=id_policy,
        name_policy=name_policy,
        type_every=type_every,
        header_arguments=header_arguments,
        arguments_as_value=as_value,
        snapshots=snapshots,
        extra_content=copy.deepcopy(_EXTRA_CONTENT) if extra else None,
    )


@st.composite
def _wire_index(
    draw: st.DrawFn, plan: CallPlan, wires: _Wires, schedule: Schedule, quirky: bool, zero: bool
) -> CallPlan:
    """The call's tool-call index on the wire: the next one, or (rarely) past a gap (C14) or
    one an earlier call of the choice already uses (C2); with ``zero``, index 0 whenever the
    reader can tell the calls there apart."""
    position = wires.position
    wires.position += 1
    if plan.legacy or plan.omit_index:
        return plan
    following = len(wires.used)
    wire = following if following not in wires.used else max(wires.used) + 1
    if plan.name_policy == "late" and wire != following:
        # The strict profile rejects a call at a header whose index deviates (C14), before a
        # late name arrives; the oracle expects the name all the same.
        plan = replace(plan, name_policy="once")
    owners = [w for w, owner in wires.used.items() if _reusable(owner)]
    how = "next"
    takes_over = plan.name is not None and _reusable(plan) and plan.name_policy in ("once", "every")
    if zero and 0 in owners and takes_over:
        how = "zero"
    elif quirky and draw(_rarely(15)) and plan.name_policy != "late":
        options = ["gap"]
        if owners and schedule != "interleaved" and takes_over:
            options.append("reuse")
        how = draw(st.sampled_from(options))
    if how == "gap":
        wire = max([wire - 1, *wires.used]) + draw(st.integers(2, 4))
        _label("call: index gap")
    elif how == "reuse":
        wire = draw(st.sampled_from(owners))
        _label("call: index reused")
    elif how == "zero":
        wire = 0
        _label("call: index 0 reused (every call at index 0)")
    wires.used[wire] = plan
    return plan if wire == position else replace(plan, index=wire)


def call_plans(
    tools: Sequence[Tool],
    *,
    choices: int = 1,
    schedule: Schedule = "sequential",
    max_calls: int = 3,
    lone_surrogates: bool = True,
) -> st.SearchStrategy[tuple[CallPlan, ...]]:
    """The calls of one stream (1 to ``max_calls``, spread over ``choices``), each naming one of
    ``tools`` (often the same one twice) with arguments valid for it, or now and then a call
    that must be refused: malformed JSON, a schema violation, an unknown or missing name, no
    arguments at all. Each is cut by ``fragments`` (whole under the ``whole`` and ``together``
    schedules). Now and then the calls' metadata travels the way real servers send it: ids
    repeated, changing, missing, empty or numeric; names repeated, late or missing; ``type``
    repeated; arguments in the header, as a JSON value or as cumulative snapshots; the legacy
    ``function_call``; ``extra_content``; no index, an index past a gap, or one reused by a new
    call. Only combinations whose outcome the oracle predicts are drawn."""
    if not tools:
        raise InvalidArgument("call_plans needs at least one tool")
    return _call_plans(tuple(tools), choices, schedule, max_calls, lone_surrogates)


# -- the stream around the calls --------------------------------------------------------------

_CONTENTS = (
    "Let me check.",
    "",
    "Sure — I'll look that up 😀\n",
    '<tool_call>{"name": "search"}</tool_call>',
    "[TOOL_CALLS]",
    "<|tool_call|>",
)
_FINISHES = (
    "tool_calls",
    "stop",
    "length",
    None,
    "function_call",
    "content_filter",
    "length",
    None,
    "error",
    "MALFORMED_FUNCTION_CALL",
    None,
    "eos",
    "tool_use",
)
"""Finish reasons, the ones that matter most (truncation, none at all) more than once."""
_SCHEDULES: tuple[Schedule, ...] = ("sequential", "interleaved", "whole", "together")
_ERRORS: tuple[Literal["nested", "flat", "openrouter", "event"], ...] = (
    "nested",
    "flat",
    "openrouter",
    "event",
)
_NEWLINES: tuple[Literal["lf", "crlf", "cr", "mixed"], ...] = ("lf", "crlf", "cr", "mixed")
_AFTER_FINISH = (
    ("usage_chunk",),
    ("duplicate_finish",),
    ("late_delta",),
    ("duplicate_finish", "late_delta"),
    ("usage_chunk", "duplicate_finish"),
)


@st.composite
def _noises(draw: st.DrawFn) -> Noise:
    if not draw(_rarely(35)):
        return Noise()
    role = not draw(_rarely(15))
    noise = Noise(
        role=role,
        # A repeated role is only a repeat after a role chunk.
        role_every=draw(_rarely(15)) and role,
        content=draw(_sometimes(None, _CONTENTS, 30)),
        usage=draw(_rarely(25)),
        usage_every=draw(_rarely(15)),
        empty_first=draw(_rarely(15)),
        keepalive=draw(_sometimes(0, (1, 2), 20)),
    )
    for knob in ("role_every", "usage", "usage_every", "empty_first", "keepalive"):
        if getattr(noise, knob):
            _label(f"noise: {knob}")
    if not role:
        _label("noise: no role chunk")
    if noise.content is not None:
        _label("noise: content")
    return noise


@st.composite
def _endings(draw: st.DrawFn, choices: int) -> Ending:
    if not draw(_rarely(45)):
        _label("finish: tool_calls")
        return Ending()
    finish = draw(st.sampled_from(_FINISHES))
    error = draw(_sometimes(None, _ERRORS, 10))
    after: tuple[str, ...] = draw(_sometimes((), _AFTER_FINISH, 15))
    if finish is None or error is not None:
        after = ()  # nothing comes after a finish that never came
    done = not draw(_rarely(30))
    with_last = draw(_rarely(25))
    cut = draw(_rarely(15))
    # A cut stream must lose an event the oracle can account for: [DONE], the usage chunk or
    # the finish chunk itself; never a delta, an error or a chunk after the finish.
    cuttable = (
        choices == 1
        and error is None
        and (done or (finish is not None and not after and not with_last))
    )
    ending = Ending(
        finish=finish,
        finish_with_last=with_last,
        after_finish=after,
        error=error,
        done=done,
        cut=cut and cuttable,
    )
    _label(f"finish: {finish}" if error is None else f"error: {error}")
    for knob in ("finish_with_last", "after_finish", "cut"):
        if getattr(ending, knob):
            _label(f"ending: {knob}")
    if not done:
        _label("ending: no [DONE]")
    return ending


@st.composite
def _transports(draw: st.DrawFn) -> Transport:
    if not draw(_rarely(30)):
        return Transport()
    transport = Transport(
        newline=draw(st.sampled_from(_NEWLINES)),
        space=not draw(_rarely(30)),
        bom=draw(_rarely(30)),
        event_lines=draw(_rarely(20)),
        multiline=draw(_rarely(20)),
    )
    _label(f"transport: newline {transport.newline}")
    for knob in ("bom", "event_lines", "multiline"):
        if getattr(transport, knob):
            _label(f"transport: {knob}")
    if not transport.space:
        _label("transport: data: without a space")
    return transport


def _strictly_rejected(plan: CallPlan) -> bool:
    """Whether the strict profile rejects the call mid-stream for how it was sent."""
    return (
        plan.omit_index
        or plan.index is not None
        or plan.id_policy == "changing"
        or plan.name_policy == "late"
        or plan.arguments_as_value
    )


@st.composite
def _limits(draw: st.DrawFn, calls: Sequence[CallPlan]) -> Limits:
    # A call past the limit is rejected at the fragment that passes it, so the oracle can
    # predict it only when no other rejection could come first mid-stream.
    small = draw(_rarely(8))
    if not small or any(_strictly_rejected(plan) for plan in calls):
        return Limits()
    largest = max(len(plan.arguments.encode("utf-8", "surrogatepass")) for plan in calls)
    _label("limits: small max_argument_bytes")
    return Limits(max_argument_bytes=draw(st.integers(1, max(1, largest))))


def predictable(spec: StreamSpec) -> bool:
    """Whether the oracle predicts ``spec`` under every profile (it refuses plans it cannot
    predict with ``PlanError``); every spec the strategies draw is."""
    rendered = render(spec)
    try:
        for profile in PROFILES:
            expect(spec, rendered, profile)
    except PlanError:
        return False
    return True


@st.composite
def _stream_specs(
    draw: st.DrawFn,
    tool_set: Sequence[Tool] | None,
    max_calls: int,
    max_choices: int,
    lone_surrogates: bool,
) -> StreamSpec:
    exposed = tuple(tool_set) if tool_set is not None else draw(tools())
    choices = draw(_sometimes(1, tuple(range(2, max_choices + 1)) or (1,), 15))
    schedule = draw(_sometimes("sequential", _SCHEDULES[1:], 35))
    calls = draw(
        call_plans(
            exposed,
            choices=choices,
            schedule=schedule,
            max_calls=max_calls,
            lone_surrogates=lone_surrogates,
        )
    )
    if draw(_rarely(5)):
        # The call names a tool the request did not offer: no tool at all is exposed.
        exposed = ()
        _label("tools: none exposed")
    spec = StreamSpec(
        tools=exposed,
        calls=calls,
        choices=choices,
        schedule=schedule,
        noise=draw(_noises()),
        ending=draw(_endings(choices)),
        transport=draw(_transports()),
        limits=draw(_limits(calls)),
    )
    if not predictable(spec):
        reject()
    _label(f"schedule: {schedule}")
    _label(f"calls: {len(calls)}")
    if choices > 1:
        _label(f"choices: {choices}")
    _aim(float(sum(len(plan.fragments) for plan in calls)), "fragments")
    _aim(
        float(sum(len(plan.arguments.encode("utf-8", "surrogatepass")) for plan in calls)),
        "argument bytes",
    )
    return spec


def stream_specs(
    tools: Sequence[Tool] | None = None,
    *,
    max_calls: int = 3,
    max_choices: int = 2,
    lone_surrogates: bool = True,
) -> st.SearchStrategy[StreamSpec]:
    """Planned streams the oracle predicts under both profiles: ``call_plans`` over ``tools``
    (drawn with ``tools()`` when None) in 1 to ``max_choices`` choices, scheduled sequentially,
    interleaved, each call whole or all calls together; noise (no role chunk or a repeated one,
    content with or without tool-call markup, usage chunks, Azure's empty first chunk,
    keep-alive comments); endings (every finish reason, with the last delta or on its own,
    chunks after it, in-band errors of each shape, with or without ``[DONE]``, cut inside the
    last event); transport (LF, CRLF, CR or mixed line endings, ``data:`` without a space, a
    BOM, ``event:`` lines, payloads over several ``data:`` lines); sometimes a small
    ``max_argument_bytes``. Ordinary streams dominate: each group of knobs is rarely on."""
    return _stream_specs(
        None if tools is None else tuple(tools), max_calls, max_choices, lone_surrogates
    )


# -- rules and scenarios ----------------------------------------------------------------------


def rules_for(spec: StreamSpec) -> tuple[str, ...]:
    """The rules of REQUIREMENTS.md a planned spec exercises, from the knobs it uses."""
    rules = {"A1", "A2", "C4"}
    calls, ending, transport, noise = spec.calls, spec.ending, spec.transport, spec.noise
    completing = ending.finish in ("tool_calls", "stop", "function_call")
    if completing and ending.error is None:
        rules.add("C1")
    if any(len(plan.fragments) > 1 for plan in calls):
        rules.add("T1")
    if spec.schedule == "interleaved" or any(
        plan.omit_index or plan.index is not None for plan in calls
    ):
        rules.add("A5")
    names = [plan.name for plan in calls if plan.name is not None]
    if len(set(names)) < len(names):
        rules.add("A6")
    if spec.choices > 1:
        rules.add("A7")
    if any(
        plan.id_policy in ("every", "changing", "numeric")
        or plan.name_policy == "every"
        or plan.type_every
        for plan in calls
    ):
        rules.add("A3")
    if any(
        plan.id_policy in ("omit", "empty")
        or plan.name_policy in ("late", "omit")
        or plan.header_arguments
        or "" in plan.fragments
        for plan in calls
    ):
        rules.add("A4")
    if ending.finish is None or not ending.done or ending.cut:
        rules.add("C2")
    if not completing or ending.cut or ending.error:
        rules.add("C3")
    tools = {tool.name: tool for tool in spec.tools}
    for plan in calls:
        if plan.name is None or plan.name_policy == "omit" or plan.id_policy in ("omit", "empty"):
            rules.add("V4")
        elif plan.name not in tools:
            rules.add("V3")
        elif not (_strictly_parses(plan.arguments) and plan.arguments.lstrip()[:1] == "{"):
            rules.add("V1")
        elif tools[plan.name].parameters:
            rules.add("V2")
    if spec.limits != Limits():
        rules.add("V5")
    if transport.newline != "lf":
        rules.add("T2")
    if transport != Transport(newline=transport.newline) or noise.keepalive:
        rules.add("T3")
    if ending.error is not None or ending.done:
        rules.add("T4")
    if len(calls) > 1:
        rules.add("E4")
    return tuple(rule for rule in RULES if rule in rules)


def _tags(spec: StreamSpec) -> tuple[str, ...]:
    tags = {"delta", "json", "lifecycle"}
    if spec.transport != Transport() or spec.noise.keepalive:
        tags.add("sse")
    if spec.transport.bom or any(not plan.arguments.isascii() for plan in spec.calls):
        tags.add("bytes")
    return tuple(tag for tag in ("bytes", "sse", "delta", "json", "lifecycle") if tag in tags)


def _title(spec: StreamSpec) -> str:
    calls = spec.calls
    names = ", ".join(str(plan.name) for plan in calls)
    parts = [f"{len(calls)} call{'s' if len(calls) != 1 else ''} ({names})"]
    pieces = sum(len(plan.fragments) for plan in calls)
    parts.append(f"{pieces} fragment{'s' if pieces != 1 else ''}")
    if spec.choices > 1:
        parts.append(f"{spec.choices} choices")
    if spec.schedule != "sequential":
        parts.append(spec.schedule)
    ending = spec.ending
    parts.append(f"error {ending.error}" if ending.error else f"finish {ending.finish}")
    if not ending.done:
        parts.append("no [DONE]")
    if ending.cut:
        parts.append("cut")
    if spec.transport.newline != "lf":
        parts.append(spec.transport.newline)
    return "fuzz: " + ", ".join(parts)


def scenario_for(spec: StreamSpec, splittings: Sequence[Splitting] = ()) -> Scenario:
    """A ``must`` scenario for a planned spec, under both profiles: its id (``fuzz-`` and a
    hash of the spec, so the same spec always gets the same id), a title naming what it does,
    the rules from ``rules_for``, layer tags, and the quirks the oracle expects a finding for."""
    digest = hashlib.sha256(repr(spec).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    findings = expect(spec, render(spec), "lenient").findings
    return Scenario(
        id=f"fuzz-{digest}",
        title=_title(spec),
        rules=rules_for(spec),
        spec=spec,
        tags=_tags(spec),
        quirks=tuple(quirk for quirk in OPENAI_CHAT_QUIRKS if quirk in findings),
        kind="must",
        profiles=PROFILES,
        splittings=tuple(splittings),
    )


def scenarios(
    tools: Sequence[Tool] | None = None,
    *,
    max_calls: int = 3,
    max_choices: int = 2,
    lone_surrogates: bool = True,
) -> st.SearchStrategy[Scenario]:
    """``stream_specs`` wrapped as Scenarios by ``scenario_for`` (default splittings)."""
    return stream_specs(
        tools, max_calls=max_calls, max_choices=max_choices, lone_surrogates=lone_surrogates
    ).map(scenario_for)


# -- transport splittings ---------------------------------------------------------------------

_CR, _LF, _BACKSLASH = 0x0D, 0x0A, 0x5C
_BOM = "\ufeff".encode()
_U_ESCAPE = re.compile(rb"\\u[0-9a-fA-F]{4}")
_DATA = re.compile(rb"data: ?")
_DONE = re.compile(rb"\[DONE\]")


def _byte_dangers(data: bytes) -> dict[str, tuple[int, ...]]:
    found: dict[str, set[int]] = {}

    def add(kind: str, *offsets: int) -> None:
        found.setdefault(kind, set()).update(o for o in offsets if 0 < o < len(data))

    for offset in range(1, len(data)):
        byte, before = data[offset], data[offset - 1]
        if 0x80 <= byte < 0xC0:
            add("inside a UTF-8 character", offset)
        if before == _CR:
            add("between CR and LF" if byte == _LF else "after a lone CR", offset)
        if before == _LF and byte in (_CR, _LF):
            add("inside a blank line", offset)
        if before == _BACKSLASH:
            add("after a backslash", offset)
    for match in _U_ESCAPE.finditer(data):
        add("inside a \\u escape", *range(match.start() + 1, match.end()))
    for match in _DATA.finditer(data):
        add("inside or right after data:", *range(match.start() + 1, match.end() + 1))
    for match in _DONE.finditer(data):
        add("inside [DONE]", *range(match.start() + 1, match.end()))
    if data.startswith(_BOM):
        add("inside the BOM", 1, 2, 3)
    return {kind: tuple(sorted(offsets)) for kind, offsets in sorted(found.items()) if offsets}


def dangerous_offsets(data: bytes) -> tuple[int, ...]:
    """Byte offsets where cutting ``data`` into two chunks is dangerous: inside a multi-byte
    UTF-8 character, between CR and LF (and after a lone CR), inside a blank line, after a
    backslash, inside a ``\\uXXXX`` escape, inside or right after ``data:``, inside
    ``[DONE]``, inside the BOM. Sorted, each once, all within ``0 < offset < len(data)``."""
    return tuple(sorted({o for offsets in _byte_dangers(data).values() for o in offsets}))


_SPLIT_KINDS = ("whole", "offsets", "many", "bytes")
"""Simplest first: a failure shrinks towards the whole stream in one chunk, then a few cuts."""


_BYTE_DANGER_KINDS = (
    "after a backslash",
    "after a lone CR",
    "between CR and LF",
    "inside [DONE]",
    "inside a UTF-8 character",
    "inside a \\u escape",
    "inside a blank line",
    "inside or right after data:",
    "inside the BOM",
)
"""Every kind ``_byte_dangers`` finds, in a fixed order, so a drawn cut names its kind the same
way whatever the stream holds (and keeps it while the shrinker makes the stream smaller)."""


@cache
def _offset_instructions(size: int, max_cuts: int) -> st.SearchStrategy[list[tuple[int, int, int]]]:
    """Cuts into ``size`` bytes: (kind, offset, which), kind 0 a cut at the offset, ``n`` the
    ``which``-th place of ``_BYTE_DANGER_KINDS[n - 1]`` (the offset when the stream has none).
    A list, so the shrinker can delete any cut on its own."""
    return st.lists(
        st.tuples(
            st.integers(0, len(_BYTE_DANGER_KINDS)), st.integers(1, size - 1), st.integers(0, 255)
        ),
        min_size=1,
        max_size=max_cuts,
    )


@st.composite
def _splittings(draw: st.DrawFn, data: bytes | None) -> Splitting:
    kind = draw(st.sampled_from(_SPLIT_KINDS))
    _label(f"splitting: {kind}")
    size = len(data) if data is not None else 4096
    if kind in ("whole", "bytes") or size < 2:
        return Splitting("bytes" if kind == "bytes" and size >= 2 else "whole")
    danger = _byte_dangers(data) if data is not None else {}
    offsets = set()
    # A few cuts, or many (each cut is three choices, which the shrinker pays for).
    most = 12 if kind == "offsets" else 40
    for dangerous, at, which in draw(_offset_instructions(size, most)):
        places = danger.get(_BYTE_DANGER_KINDS[dangerous - 1]) if dangerous else None
        offsets.add(places[which % len(places)] if places else at)
    for kind_of_cut in _kinds_of_cut(danger, offsets):
        _label(f"split {kind_of_cut}")
    return Splitting("offsets", offsets=tuple(sorted(offsets)))


def splittings(data: bytes | None = None) -> st.SearchStrategy[Splitting]:
    """Transport splittings: the whole stream at once, a few cuts, many cuts, or every single
    byte (never ``pairs``, which runs once per byte). Cuts are explicit offsets, so a failure
    shrinks cut by cut. Given the stream's ``data``, cuts come from ``dangerous_offsets(data)``
    as often as uniformly; without it, offsets are uniform up to 4096 (those past the end are
    dropped)."""
    return _splittings(data)


@st.composite
def _cases(
    draw: st.DrawFn,
    tool_set: Sequence[Tool] | None,
    max_calls: int,
    max_choices: int,
    lone_surrogates: bool,
) -> tuple[Scenario, Splitting]:
    scenario = draw(
        scenarios(
            tool_set, max_calls=max_calls, max_choices=max_choices, lone_surrogates=lone_surrogates
        )
    )
    return scenario, draw(splittings(render(scenario.spec).data))


def cases(
    tools: Sequence[Tool] | None = None,
    *,
    max_calls: int = 3,
    max_choices: int = 2,
    lone_surrogates: bool = True,
) -> st.SearchStrategy[tuple[Scenario, Splitting]]:
    """A scenario (``scenarios``) and a splitting of its own rendered bytes (``splittings``),
    ready for ``callstream.run_case``."""
    return _cases(None if tools is None else tuple(tools), max_calls, max_choices, lone_surrogates)

"""Argument text a tool must refuse, with the reason it must give (``invalid_arguments``):
malformed JSON, JSON that is not an object, schema violations."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import reject
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from callstream.reference import Tool

from ._arguments import draw_valid, json_scalars
from ._json_text import Spelling, quote, spell
from ._knobs import COIN, Json, between, label_draw, pick, sampled
from ._schemas import KEYS, fresh_key

__all__ = [
    "InvalidArguments",
    "draw_malformed",
    "draw_schema_violation",
    "invalid_arguments",
    "malformed",
    "schema_violation",
    "strictly_parses",
    "violations",
]


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
_MALFORMED_KINDS = sampled((*_MALFORMED, *("not an object",) * 4))
"""Each kind alike, but a value that is not an object, five times as often: it takes many
shapes."""
_WRONG_TYPED: tuple[Json, ...] = (0, "0", 1.5, True, None, [], {}, "x", -1)


def strictly_parses(text: str) -> bool:
    """Whether ``text`` is JSON without ``NaN`` or ``Infinity`` (which ``json.loads`` takes)."""
    try:
        _STRICT(text)
    except (ValueError, RecursionError):
        return False
    return True


def _refuse(name: str) -> Any:
    raise ValueError(name)


_STRICT = json.JSONDecoder(parse_constant=_refuse).decode
"""Built once: ``json.loads`` with any argument builds a decoder a call."""


@st.composite
def malformed(draw: st.DrawFn, tool: Tool, lone_surrogates: bool) -> InvalidArguments:
    return draw_malformed(draw, tool, lone_surrogates)


def draw_malformed(draw: st.DrawFn, tool: Tool, lone_surrogates: bool) -> InvalidArguments:
    """What ``malformed(tool, lone_surrogates)`` draws, drawn in the caller's span."""
    kind = draw(_MALFORMED_KINDS)
    value = draw_valid(draw, tool, lone_surrogates)
    text = spell(draw, value).strip(" \t\r\n")
    key = quote(fresh_key(draw(KEYS), value), Spelling())
    if kind == "truncated":
        text = text[: draw(between(1, len(text) - 1))]
    elif kind == "trailing comma":
        text = text[:-1] + ",}"
    elif kind == "NaN":
        constant = pick(draw, _CONSTANTS)
        text = "{" + key + ":" + constant + ("," + text[1:] if value else "}")
    elif kind == "not an object":
        text = pick(draw, (*_NOT_OBJECTS, "[" + text + "]"))
    elif kind == "single quotes":
        text = text.replace('"', "'") if '"' in text else "{'a': 1}"
    elif kind == "repeated":
        text = text + text
    elif kind == "trailing garbage":
        text = text + pick(draw, ("x", "}", "]", ",", "{"))
    elif kind == "control character in a string":
        text = "{" + key + ':"a' + pick(draw, ("\n", "\x01", "\t")) + 'b"}'
    elif kind == "unclosed string":
        text = "{" + key + ':"abc}'
    elif kind == "comment":
        text = "/* arguments */" + text
    else:
        text = pick(draw, (" ", "\n", "\r\n\t"))
    if strictly_parses(text) and isinstance(json.loads(text), dict):
        reject()  # never expected: each damage above breaks JSON or the object
    return InvalidArguments(text, "malformed_json", kind)


def violations(schema: Mapping[str, Any] | None) -> list[tuple[str, str | None]]:
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
def schema_violation(draw: st.DrawFn, tool: Tool, lone_surrogates: bool) -> InvalidArguments:
    return draw_schema_violation(draw, tool, lone_surrogates)


def draw_schema_violation(draw: st.DrawFn, tool: Tool, lone_surrogates: bool) -> InvalidArguments:
    """What ``schema_violation(tool, lone_surrogates)`` draws, drawn in the caller's span."""
    schema = tool.parameters or {}
    kind, key = pick(draw, violations(schema))
    value = dict(draw_valid(draw, tool, lone_surrogates))
    properties: Mapping[str, Any] = schema.get("properties", {})
    if kind == "missing required field" and key is not None:
        value.pop(key, None)
    elif kind == "unexpected field":
        value[fresh_key(draw(KEYS), properties)] = draw(json_scalars(False))
    else:
        assert key is not None
        sub = Draft202012Validator(properties[key])
        wrong = [item for item in _WRONG_TYPED if not sub.is_valid(item)]
        if not wrong:
            reject()
        value[key] = pick(draw, wrong)
    if Draft202012Validator(dict(schema)).is_valid(value):
        reject()
    return InvalidArguments(spell(draw, value), "schema_violation", kind)


@st.composite
def _invalid_arguments(draw: st.DrawFn, tool: Tool, lone_surrogates: bool) -> InvalidArguments:
    violable = bool(violations(tool.parameters))
    if violable and draw(COIN):
        invalid = draw(schema_violation(tool, lone_surrogates))
    else:
        invalid = draw(malformed(tool, lone_surrogates))
    label_draw(f"invalid arguments: {invalid.kind}")
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

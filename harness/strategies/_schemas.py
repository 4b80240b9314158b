"""Tools and their JSON Schemas (``tools()``), with names and keys that shrink to plain ones."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from hypothesis import strategies as st

from callstream.reference import Tool

from ._json_text import CHARACTERS, read_text, strings
from ._knobs import (
    COIN,
    Knob,
    Schema,
    between,
    label_draw,
    mostly_one_of,
    one_in,
    rarely,
    sampled,
    sometimes,
)
from ._tape import Tape, readable, tape

__all__ = [
    "CUSTOM_KNOB",
    "CUSTOM_TOOLS",
    "KEYS",
    "CustomTool",
    "draw_tools",
    "fresh_key",
    "tools",
    "with_custom_tool",
]


def fresh_key(key: str, taken: Iterable[str]) -> str:
    """``key``, or ``key`` with underscores appended until it is not among ``taken``."""
    taken = set(taken)
    while key in taken:
        key += "_"
    return key


_NAME_CHARACTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"


_FIRST_CHARACTERS = _NAME_CHARACTERS[:52] + "_"


def _read_name(tape: Tape) -> str:
    """A tool name drawn afresh, read from ``tape``: a letter or ``_``, then up to 24 more
    characters (all 24 read whatever the length, so the bytes after stay where they were)."""
    first = _FIRST_CHARACTERS[tape.below(len(_FIRST_CHARACTERS))]
    rest = (tape.below(len(_NAME_CHARACTERS)) for _ in range(24))  # read whatever the length
    return first + "".join(_NAME_CHARACTERS[at] for at in rest)[: tape.below(25)]


_TOOL_NAMES = mostly_one_of(
    ("get_weather", "search", "lookup", "send_email", "read_file"),
    readable(
        st.builds(
            str.__add__,
            st.sampled_from(_FIRST_CHARACTERS),
            st.text(_NAME_CHARACTERS, max_size=24),
        ),
        _read_name,
    ),
    20,
)
"""Within OpenAI's rule for function names, ``^[a-zA-Z0-9_-]{1,64}$``."""
_KEY_NAMES = ("a", "b", "city", "query", "path", "limit", "units", "tags", "options", "body")
KEYS = mostly_one_of(
    _KEY_NAMES,
    readable(
        st.text(st.one_of(st.sampled_from("abxyz_"), CHARACTERS), min_size=1, max_size=6),
        lambda tape: read_text(1, 6, False, tape, alphabet="abxyz_"),
    ),
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
_SCALAR_KINDS = sampled((*_SIMPLE_SCHEMAS, _ENUM, _BOUNDED))
_ENUM_VALUES = readable(
    st.lists(strings(max_size=6), min_size=1, max_size=4, unique=True),
    lambda tape: list(dict.fromkeys(tape(strings(max_size=6)) for _ in range(1 + tape.below(4)))),
)


def _scalar_schema(draw: st.DrawFn) -> Schema:
    kind = draw(_SCALAR_KINDS)
    if isinstance(kind, dict):
        return copy.deepcopy(kind)
    if kind == _ENUM:
        return {"type": "string", "enum": draw(_ENUM_VALUES)}
    low, high = draw(between(-100, 0)), draw(between(0, 100))
    return {"type": "integer", "minimum": low, "maximum": high}


def _schema(draw: st.DrawFn, leaves: int) -> Schema:
    """A schema with at most ``leaves`` scalar schemas in it: drawn directly rather than with
    ``st.recursive``, which costs several times as much per draw, and in the caller's span
    (no strategy is built per schema)."""
    shape = draw(sometimes("scalar", ("array", "object"), 40)) if leaves > 1 else "scalar"
    if shape == "scalar":
        return _scalar_schema(draw)
    if shape == "array":
        schema: Schema = {"type": "array", "items": _schema(draw, leaves - 1)}
        if draw(rarely(30)):
            schema["minItems"] = 1
        return schema
    return _object_schema(draw, 0, min(3, leaves), leaves)


def _object_schema(draw: st.DrawFn, min_size: int, max_size: int, leaves: int) -> Schema:
    """An object schema of ``min_size`` to ``max_size`` properties sharing ``leaves``."""
    properties: dict[str, Schema] = {}
    while len(properties) < min_size or (len(properties) < max_size and draw(COIN)):
        share = max(1, leaves // max(1, max_size))
        properties[fresh_key(draw(KEYS), properties)] = _schema(draw, share)
    # Which properties are required and whether others are refused: a bit each, in one
    # choice (every bit as likely as a coin, shrinking to none required, others allowed).
    bits = draw(between(0, 2 ** (len(properties) + 1) - 1))
    schema: Schema = {"type": "object", "properties": properties}
    required = [key for bit, key in enumerate(properties, start=1) if bits >> bit & 1]
    if required:
        schema["required"] = required
    if bits & 1:
        schema["additionalProperties"] = False
    return schema


_PARAMETERLESS: tuple[Schema | None, ...] = (
    {"type": "object", "properties": {}},
    {"type": "object"},
    None,
    {},
)


_PARAMETERLESS_SCHEMAS = sampled(_PARAMETERLESS)


def _parameters(draw: st.DrawFn) -> Schema | None:
    """A tool's parameters: an object schema, or (one tool in five) none to speak of."""
    if draw(rarely(20)):
        return copy.deepcopy(draw(_PARAMETERLESS_SCHEMAS))
    return _object_schema(draw, 1, 3, 4)


def _string(**more: object) -> Schema:
    return {"type": "string", **more}


def _object(properties: Schema, *required: str, closed: bool = False) -> Schema:
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    if closed:
        schema["additionalProperties"] = False
    return schema


_DEEP = _object(
    {
        "a": _object(
            {
                "b": {
                    "type": "array",
                    "items": _object(
                        {"c": {"type": "array", "items": _object({"d": _string()}, "d")}}, "c"
                    ),
                    "minItems": 1,
                }
            },
            "b",
        )
    },
    "a",
)
"""Arguments nested five levels deep or more, every level required."""

POOLED_TOOLS: tuple[Tool, ...] = (
    Tool("get_weather", _object({"city": _string(), "units": _string(enum=["c", "f"])}, "city")),
    Tool(
        "search",
        _object(
            {
                "query": _string(minLength=1),
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            },
            "query",
            closed=True,
        ),
    ),
    Tool("lookup", _object({"a": {"type": "integer"}, "b": {"type": "number"}})),
    Tool(
        "send_email",
        _object(
            {
                "to": {"type": "array", "items": _string(), "minItems": 1},
                "subject": _string(),
                "body": {"type": ["string", "null"]},
            },
            "to",
            "body",
        ),
    ),
    Tool(
        "read_file",
        _object({"path": _string(), "binary": {"type": "boolean"}}, "path", closed=True),
    ),
    Tool("list_tasks", {"type": "object", "properties": {}}),
    Tool("now", {"type": "object"}),
    Tool("ping", None),
    Tool("noop", {}),
    Tool(
        "set_options",
        _object(
            {
                "options": _object(
                    {
                        "verbose": {"type": "boolean"},
                        "level": {"type": "integer", "minimum": 0, "maximum": 9},
                        "tags": {"type": "array", "items": _string()},
                    },
                    "level",
                )
            }
        ),
    ),
    Tool("walk", _DEEP),
    Tool("tag", _object({"tags": {"type": "array", "items": _string(enum=["red", "✓", "😀"])}})),
    Tool(
        "x",
        _object(
            {
                "é": _string(),
                "😀": {"type": "integer"},
                'a"b': {"type": "boolean"},
                "\\": {"type": "null"},
                "\n": _string(),
            }
        ),
    ),
    Tool(
        "nullables",
        _object(
            {"x": {"type": "null"}, "y": {"type": ["string", "null"]}, "z": {"type": "number"}},
            closed=True,
        ),
    ),
    Tool(
        "matrix",
        _object(
            {"rows": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}},
            "rows",
        ),
    ),
    Tool("A-b_9", _object({"body": _string()})),
    Tool("a" * 64, _object({"query": _string()}, "query")),
    Tool("count", _object({"limit": {"type": "integer", "minimum": -100, "maximum": 0}}, "limit")),
    Tool(
        "flags",
        _object(
            {"a": {"type": "boolean"}, "b": {"type": "boolean"}, "c": {"type": "boolean"}},
            "a",
            "b",
            "c",
            closed=True,
        ),
    ),
    Tool("note", _object({"text": _string()}, "text")),
)
"""Twenty tools most streams take theirs from: a tool's validator is compiled once per process
rather than once per example (a fresh schema costs the implementation a compile, and the
generators about fifteen draws), and together they hold every schema feature ``tools()`` has:
required and optional properties, closed objects, enums, bounded integers, nullable strings,
arrays (of arrays, of at least one item), nesting five levels deep, keys that need escaping or
lie outside the BMP, the four ways to take no parameters, names at OpenAI's limits. Shared
by every example: nothing may change them."""


def _draw_fresh_tool(draw: st.DrawFn) -> Tool:
    return Tool(draw(_TOOL_NAMES), _parameters(draw))


@st.composite
def _fresh_tool(draw: st.DrawFn) -> Tool:
    return _draw_fresh_tool(tape(draw))


FRESH_PERCENT = 5
"""How often a tool is drawn afresh, in a hundred. A fresh schema is compiled (its validation
against the metaschema, about 3 ms) by the oracle, then by the implementation; at one tool in
seven that was a fifth of the time spent drawing a stream. The pool holds every schema feature
a fresh tool can have."""
_TOOL_CHOICES = mostly_one_of(
    POOLED_TOOLS, readable(_fresh_tool(), _draw_fresh_tool), FRESH_PERCENT
)
"""A pooled tool, or one time in twenty a tool drawn afresh (a name and a schema of its own)."""


def _tool_name(tool: Tool, taken: set[str]) -> Tool:
    """``tool``, renamed apart from the names ``taken`` where it shares one (within 64
    characters)."""
    name = fresh_key(tool.name[:63], taken) if tool.name in taken else tool.name
    return tool if name == tool.name else Tool(name, tool.parameters)


def draw_tools(draw: st.DrawFn, min_size: int = 1, max_size: int = 3) -> tuple[Tool, ...]:
    """What ``tools(min_size, max_size)`` draws, drawn in the caller's span (from its tape)."""
    drawn: list[Tool] = []
    for _ in range(draw(between(min_size, max_size))):
        drawn.append(_tool_name(draw(_TOOL_CHOICES), {tool.name for tool in drawn}))
    return tuple(drawn)


@st.composite
def _tools(draw: st.DrawFn, min_size: int, max_size: int) -> tuple[Tool, ...]:
    return draw_tools(tape(draw), min_size, max_size)


@cache
def tools(min_size: int = 1, max_size: int = 3) -> st.SearchStrategy[tuple[Tool, ...]]:
    """Tools with unique names and JSON Schemas: nested objects and arrays, enums, required and
    optional fields, strings, integers (sometimes bounded), numbers, booleans, null, nullable
    strings; now and then a tool that takes no parameters (``properties: {}``, a bare
    ``{"type": "object"}``, ``{}`` or no schema at all). Most come from a table of twenty, the
    rest (one in twenty, ``FRESH_PERCENT``) are drawn afresh."""
    return _tools(min_size, max_size)


@dataclass(frozen=True, slots=True)
class CustomTool:
    """A custom tool (free input text in a declared format), with inputs its format takes and
    inputs it refuses."""

    tool: Tool
    fits: tuple[str, ...]
    """Inputs the format takes (any text, for unconstrained text and a lark grammar, which the
    rules leave unchecked)."""
    refused: tuple[str, ...] = ()
    """Inputs the format refuses: a regex the whole input does not match (V2)."""


CUSTOM_TOOLS: tuple[CustomTool, ...] = (
    CustomTool(
        Tool.custom("apply_patch", {"type": "text"}),
        (
            "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch",
            '{"looks": "like JSON", "but": "is text"}',
            "naïve café 😀 \\u0041\r\nsecond line",
        ),
    ),
    CustomTool(
        Tool.custom(
            "set_date",
            {
                "type": "grammar",
                "grammar": {
                    "syntax": "regex",
                    "definition": r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])",
                },
            },
        ),
        ("2026-12-02", "1999-01-31"),
        ("2026-13-01", "tomorrow", " 2026-12-02", "2026-12-0"),
    ),
    CustomTool(
        Tool.custom(
            "run_sql",
            {
                "type": "grammar",
                "grammar": {
                    "syntax": "lark",
                    "definition": (
                        'start: "SELECT " COLUMNS " FROM " NAME ";"\n'
                        "COLUMNS: /[a-z_, *]+/\nNAME: /[a-z_]+/\n"
                    ),
                },
            },
        ),
        ("SELECT city, units FROM weather;", "SELECT * FROM t;"),
    ),
)
"""The custom tools a stream of a dialect that has them may offer besides its function tools
(the corpus's ``apply_patch``, ``set_date`` and ``run_sql``): one of unconstrained text, one of
a regex, one of a lark grammar."""

CUSTOM_KNOB: Knob = one_in(None, tuple(range(len(CUSTOM_TOOLS))), 25)
"""Which of :data:`CUSTOM_TOOLS` a stream offers besides its function tools, by position (None
but one stream in four): a knob to fold into a dialect's :func:`knobs`."""


def with_custom_tool(exposed: tuple[Tool, ...], which: int | None) -> tuple[Tool, ...]:
    """``exposed``, and the custom tool ``which`` (a draw of :data:`CUSTOM_KNOB`) besides, for
    the dialects that have custom tools (Chat Completions and Responses)."""
    if which is None or any(tool.name == CUSTOM_TOOLS[which].tool.name for tool in exposed):
        return exposed
    label_draw(f"tools: custom {CUSTOM_TOOLS[which].tool.name}")
    return (*exposed, CUSTOM_TOOLS[which].tool)

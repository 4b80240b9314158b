"""Reading the tools a request offered, from the files users already have."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from callstream.reference import Tool, ToolSchemaError
from callstream.reference.validate import input_format, outside_strings, validator_for

from ..errors import UsageError

__all__ = ["load_tools", "parse_tools"]


MAX_TOOLS_BYTES = 16 << 20
"""The largest tools file read."""
MAX_DEPTH = 100
"""The deepest nesting of a tools file (Python's JSON decoder recurses once per level)."""


def load_tools(path: str | Path) -> list[Tool]:
    """Tools from a JSON file: a list of ``{"name", "parameters"}`` objects, a list of OpenAI
    request tools (``{"type": "function", "function": {...}}`` or ``{"type": "custom",
    "custom": {"name", "format"}}``; the flat Responses shapes too), or a whole request body
    with a ``tools`` key. Raises UsageError naming the file, and the line and column for bad
    JSON; the file's size and nesting are bounded (``MAX_TOOLS_BYTES``, ``MAX_DEPTH``)."""
    path = Path(path)
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_TOOLS_BYTES + 1)  # bounded: /dev/zero is a "file" too
    except OSError as exc:
        raise UsageError(f"{path}: cannot read tools: {exc.strerror or exc}") from None
    if len(raw) > MAX_TOOLS_BYTES:
        raise UsageError(f"{path}: the tools file is larger than {MAX_TOOLS_BYTES >> 20} MB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UsageError(f"{path}:{line}: byte {exc.start} is not UTF-8") from None
    return parse_tools(_json(text, path), source=str(path))


def _json(text: str, path: Path) -> Any:
    """The JSON value of a tools file, every way it can be wrong named with its line."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}:{exc.colno}: {exc.msg}") from None
    except RecursionError:
        data = None
    except ValueError:  # an integer too long for Python to convert
        digits = sys.get_int_max_str_digits()
        long = re.search(rf"\d{{{digits + 1},}}", text)
        line = _line(text, long.start()) if long else 1
        raise UsageError(f"{path}:{line}: an integer of more than {digits} digits") from None
    if data is None or _depth(data) > MAX_DEPTH:
        raise UsageError(
            f"{path}:{_line(text, _too_deep(text))}: nested deeper than {MAX_DEPTH} levels"
        )
    return data


def _depth(data: Any) -> int:
    """How deep the lists and objects of ``data`` nest (without recursing)."""
    deepest = 0
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        children = (
            value.values()
            if isinstance(value, dict)
            else value
            if isinstance(value, list)
            else None
        )
        if children is not None:
            deepest = max(deepest, depth)
            stack += [(child, depth + 1) for child in children]
    return deepest


def _too_deep(text: str) -> int:
    """Where the text's nesting (outside strings) first passes ``MAX_DEPTH``."""
    depth = 0
    for at, char in outside_strings(text):
        if char in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                return at
        elif char in ("]", "}"):
            depth -= 1
    return 0


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def parse_tools(data: Any, source: str = "tools") -> list[Tool]:
    """Tools from already-parsed JSON (see ``load_tools`` for the accepted shapes)."""
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    if not isinstance(data, list):
        raise UsageError(f"{source}: expected a list of tools or an object with a 'tools' list")
    tools: list[Tool] = []
    seen: set[str] = set()
    for number, entry in enumerate(data):
        where = f"{source}: tools[{number}]"
        if not isinstance(entry, dict):
            raise UsageError(f"{where}: expected an object, not {type(entry).__name__}")
        kind = entry.get("type")
        spec = entry.get(kind, entry) if kind in ("function", "custom") else entry
        if not isinstance(spec, dict):
            raise UsageError(f"{where}: {kind!r} must be an object")
        name = spec.get("name")
        if not isinstance(name, str) or not name:
            raise UsageError(f"{where}: missing a non-empty string 'name'")
        if name in seen:
            raise UsageError(f"{where}: tool {name!r} is defined twice")
        seen.add(name)
        if kind == "custom":
            tools.append(_custom_tool(where, name, spec.get("format")))
            continue
        parameters = spec.get("parameters", spec.get("input_schema"))  # Anthropic's name
        if parameters is not None and not isinstance(parameters, dict):
            raise UsageError(f"{where}: 'parameters' must be a JSON Schema object")
        try:
            validator_for(name, parameters)
        except ToolSchemaError as exc:
            raise UsageError(f"{where}: {exc}") from None
        tools.append(Tool(name, parameters))
    return tools


def _custom_tool(where: str, name: str, fmt: Any) -> Tool:
    if fmt is not None and not isinstance(fmt, dict):
        raise UsageError(f"{where}: 'format' must be an object")
    try:
        input_format(name, fmt)
    except ToolSchemaError as exc:
        raise UsageError(f"{where}: {exc}") from None
    return Tool.custom(name, fmt)

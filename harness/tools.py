"""Reading the tools a request offered, from the files users already have."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reference_impl import Tool, ToolSchemaError
from reference_impl._custom import input_format
from reference_impl._validate import validator_for

from .errors import UsageError

__all__ = ["load_tools", "parse_tools"]


def load_tools(path: str | Path) -> list[Tool]:
    """Tools from a JSON file: a list of ``{"name", "parameters"}`` objects, a list of OpenAI
    request tools (``{"type": "function", "function": {...}}`` or ``{"type": "custom",
    "custom": {"name", "format"}}``; the flat Responses shapes too), or a whole request body
    with a ``tools`` key. Raises UsageError naming the file, and the line and column for bad
    JSON."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read tools: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: byte {exc.start}: not UTF-8") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}:{exc.colno}: {exc.msg}") from None
    return parse_tools(data, source=str(path))


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
        parameters = spec.get("parameters")
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

"""The pipe protocol's messages: its version, its JSON Schema, and how a message becomes a line
and a line a message.

Requests are written as compact JSON, one a line. Answers are read whole, however long their
integers and however deep their nesting, so that what a program hands back is judged, not the
decoder's limits.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource

from callstream.reference import Tool
from callstream.reference.validate import outside_strings

__all__ = [
    "PROTOCOL_VERSION",
    "QUOTED",
    "encode",
    "loads",
    "pipe_schema",
    "protocol_problem",
    "quote",
    "tool_message",
]

PROTOCOL_VERSION = 1
QUOTED = 300
"""Characters of a program's line quoted in an error."""
_DEPTH = 500
"""Nesting kept when an answer is too deep for Python's JSON decoder."""


# -- the schema ---------------------------------------------------------------------------------


@cache
def pipe_schema() -> dict[str, Any]:
    """The protocol's JSON Schema (``harness/schemas/pipe.schema.json``)."""
    text = resources.files("callstream").joinpath("schemas/pipe.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator(definition: str) -> Draft202012Validator:
    schema = pipe_schema()
    registry: Registry[Any] = Registry().with_resource(
        schema["$id"], Resource.from_contents(schema)
    )
    return Draft202012Validator({"$ref": f"{schema['$id']}#/$defs/{definition}"}, registry=registry)


def protocol_problem(message: Any, kind: str) -> str | None:
    """What is wrong with ``message`` by the protocol's schema, or None. ``kind`` is
    ``request``, or the command an answer answers (``start``, ``run``, ``feed``, ``close``)."""
    definition = "request" if kind == "request" else f"answers/{kind}"
    error = best_match(_validator(definition).iter_errors(message))
    if error is None:
        return None
    return f"at {error.json_path}: {error.message}"


# -- requests -----------------------------------------------------------------------------------


def tool_message(tool: Tool) -> dict[str, Any]:
    """A tool as the ``run`` request offers it; a custom tool also says so, with its format
    (only then, so a function tool's message is what it always was)."""
    if tool.kind == "custom":
        return {"name": tool.name, "parameters": None, "type": "custom", "format": tool.format}
    return {"name": tool.name, "parameters": tool.parameters}


def _plain(value: Any) -> Any:
    """JSON for the mappings and sequences tool schemas may be made of."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


_ENCODER = json.JSONEncoder(separators=(",", ":"), default=_plain)


def encode(message: Mapping[str, Any]) -> bytes:
    """The line that carries ``message``: compact JSON, newline included."""
    return _ENCODER.encode(message).encode() + b"\n"


# -- answers ------------------------------------------------------------------------------------


def _int(digits: str) -> int:
    """An integer of any length: CPython refuses to convert more than 4300 digits by default,
    and a program may hand back arguments holding such a number."""
    try:
        return int(digits)
    except ValueError:
        limit = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            return int(digits)
        finally:
            sys.set_int_max_str_digits(limit)


def loads(text: str) -> Any:
    """The JSON value of ``text``, every integer read whole; values nested deeper than Python's
    decoder can go (it recurses) are replaced by a string that says so, keeping the rest of the
    answer."""
    try:
        return json.loads(text, parse_int=_int)
    except RecursionError:
        pass
    out: list[str] = []
    depth = start = 0
    cut: int | None = None
    for at, char in outside_strings(text):
        if char is None:
            break
        if char in "[{":
            depth += 1
            if depth == _DEPTH and cut is None:
                cut = at
        elif char in "]}":
            if depth == _DEPTH and cut is not None:
                out += [text[start:cut], f'"<nested deeper than {_DEPTH} levels>"']
                start, cut = at + 1, None
            depth -= 1
    out.append(text[start:])
    return json.loads("".join(out), parse_int=_int)


def quote(line: bytes) -> str:
    """A program's ``line`` as an error quotes it: its text, cut after :data:`QUOTED`
    characters."""
    text = line.decode("utf-8", "backslashreplace")
    return repr(text if len(text) <= QUOTED else text[:QUOTED] + "…")

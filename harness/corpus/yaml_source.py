"""A YAML scenario or catalogue file, read for a person to fix: the line of every node kept,
its size, nesting and expanded aliases bounded, every schema violation turned into a sentence
located as ``path:line``, against ``schemas/scenario.schema.json`` (the format's source of truth,
which editors use too)."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_VALUES",
    "ScenarioError",
    "Where",
    "YamlSource",
    "inner",
    "said",
    "scenario_of",
    "scenario_schema",
    "schema_validator",
]

MAX_FILE_BYTES = 8 << 20
"""The largest scenario or catalogue file read (the corpus's largest is about 100 KB)."""
MAX_DEPTH = 64
"""The deepest nesting of a YAML file (the corpus's deepest is 13 levels)."""
MAX_VALUES = 100_000
"""The most values a YAML file may hold once its aliases are expanded (a billion laughs would
expand 100 nodes into 10⁹); the corpus's largest file holds about 4,000."""

Where = tuple[str | int, ...]
"""A node's path in a YAML document: mapping keys and list positions."""


@dataclass(frozen=True, slots=True)
class ScenarioError:
    """A problem in a scenario file, for a person to fix: ``path:line: what is wrong``."""

    path: Path
    line: int | None
    """1-based; None when the problem is the whole file (it cannot be read)."""
    message: str

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}: {self.message}"


@cache
def scenario_schema() -> dict[str, Any]:
    """The scenario file format: a Draft 2020-12 JSON Schema shipped with the package."""
    text = resources.files("callstream").joinpath("schemas/scenario.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


# -- YAML with the line of every node ---------------------------------------------------------


class YamlSource:
    """One YAML file being loaded: its data, the line of each node, the problems found."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.errors: list[ScenarioError] = []
        self.lines: dict[Where, int] = {}
        self.bad: set[Where] = set()
        """The scenarios (by where) with a problem; ``()`` when it is the file's."""
        self.data: Any = None
        self._values = 0

    def at(self, where: Where, message: str, line: int | None = None) -> None:
        """A problem with the node at ``where``, on its line (or its nearest ancestor's)."""
        self.bad.add(scenario_of(where))
        if line is None:
            found = where
            while found and found not in self.lines:
                found = found[:-1]
            line = self.lines.get(found)
        self.errors.append(ScenarioError(self.path, line, message))

    def read(self) -> bool:
        """Parse the file; False (with the problem recorded) when it cannot be. The file's
        size, its nesting and what its aliases expand to are bounded (``MAX_FILE_BYTES``,
        ``MAX_DEPTH``, ``MAX_VALUES``)."""
        try:
            with self.path.open("rb") as file:
                raw = file.read(MAX_FILE_BYTES + 1)  # a bounded read: /dev/zero is a "file" too
        except OSError as exc:
            self.at((), f"cannot read: {exc.strerror or exc}")
            return False
        if len(raw) > MAX_FILE_BYTES:
            self.at((), f"the file is larger than {MAX_FILE_BYTES >> 20} MB")
            return False
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            self.at((), f"byte {exc.start} is not UTF-8", line)
            return False
        try:
            loader, node = _compose(text)
        except yaml.reader.ReaderError as exc:
            line = text.count("\n", 0, exc.position) + 1
            self.at((), f"YAML: the character U+{exc.character:04X} is not allowed", line)
            return False
        except yaml.MarkedYAMLError as exc:
            self._yaml_problem(exc)
            return False
        try:
            if node is None:
                self.at((), "the file is empty", 1)
                return False
            self._values = 0
            self.data = self._convert(loader, node, (), set())
        except yaml.MarkedYAMLError as exc:
            self._yaml_problem(exc)
            return False
        return True

    def _yaml_problem(self, exc: yaml.MarkedYAMLError) -> None:
        mark = exc.problem_mark or exc.context_mark
        self.at((), f"YAML: {exc.problem}", None if mark is None else mark.line + 1)

    def _convert(
        self, loader: SafeConstructor, node: yaml.Node, where: Where, within: set[int]
    ) -> Any:
        """The node as JSON-like data, recording lines; keys must be unique strings."""
        self._values += 1
        if self._values > MAX_VALUES:
            raise _too_much(node, f"the file holds more than {MAX_VALUES:,} values")
        self.lines.setdefault(where, node.start_mark.line + 1)
        if id(node) in within:
            self.at(where, said(where, "an alias refers to a node that contains it"))
            return None
        if isinstance(node, yaml.ScalarNode):
            value = _scalar(loader, node)
            if not isinstance(value, str | int | float | bool | None):
                read = f"{node.value} is read as a {type(value).__name__}, not a JSON value"
                self.at(where, said(where, f"{read}: quote it"))
                return node.value  # its text, so the schema does not complain about it too
            if isinstance(value, str) and _on_the_wire(where) and _lone_surrogate(value):
                self.at(where, said(where, _SURROGATE))
            return value
        within.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [
                    self._convert(loader, item, (*where, n), within)
                    for n, item in enumerate(node.value)
                ]
            assert isinstance(node, yaml.MappingNode)
            return self._mapping(loader, node, where, within)
        finally:
            within.discard(id(node))

    def _mapping(
        self, loader: SafeConstructor, node: yaml.MappingNode, where: Where, within: set[int]
    ) -> dict[str, Any]:
        own = {id(key_node) for key_node, _ in node.value}
        loader.flatten_mapping(node)  # merged keys (<<: *anchor) come first; own keys override
        out: dict[str, Any] = {}
        owned: set[str] = set()
        for key_node, value_node in node.value:
            key = _scalar(loader, key_node) if isinstance(key_node, yaml.ScalarNode) else None
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                shown = repr(key) if isinstance(key_node, yaml.ScalarNode) else "a collection"
                self.at(where, said(where, f"key {shown} is not a string: quote it"), line)
                continue
            here = (*where, key)
            if key in owned:
                first = self.lines[here]
                self.at(where, said(where, f"duplicate key {key!r} (first at line {first})"), line)
                continue
            if id(key_node) in own:
                owned.add(key)
            self.lines[here] = line
            out[key] = self._convert(loader, value_node, here, within)
        return out

    def validate(self, validator: Draft202012Validator) -> None:
        """Record every schema violation."""
        for error in validator.iter_errors(self.data):
            for where, message in _explain(error):
                self.at(where, message)


class _DepthBound(Composer):
    """PyYAML's composer, refusing nesting deeper than ``MAX_DEPTH`` (it recurses once per
    level, so a deep file would otherwise end in a RecursionError)."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[attr-defined]
                raise yaml.composer.ComposerError(
                    None, None, f"nested deeper than {MAX_DEPTH} levels", mark
                )
            node: yaml.Node | None = super().compose_node(parent, index)
            return node
        finally:
            self._depth -= 1


class _BoundedLoader(_DepthBound, yaml.SafeLoader):
    """PyYAML's safe loader, all in Python, depth bounded: the one that tells what is wrong
    with a file that cannot be read."""


if yaml.__with_libyaml__:  # as PyYAML's wheels are built
    from yaml._yaml import CParser

    class _LibyamlLoader(_DepthBound, CParser, SafeConstructor, Resolver):
        """The same loader on libyaml's scanner and parser (about eight times faster on the
        corpus: 0.2 s where PyYAML's own take 1.4), composing and constructing in Python as
        ``_BoundedLoader`` does, so the nodes, their lines and the values are the same."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)


def _compose(text: str) -> tuple[SafeConstructor, yaml.Node | None]:
    """The document's node, every node with its line, and the loader that constructs its
    scalars. libyaml reads it when PyYAML was built with it, except where the two parsers
    differ: libyaml takes a tab between tokens for a space where PyYAML refuses it, so a file
    with a tab is read by PyYAML's parser. A document libyaml finds a problem in is read again
    by PyYAML's, which raises the problem in the words and at the line it always did."""
    if yaml.__with_libyaml__ and "\t" not in text:
        fast = _LibyamlLoader(text)
        try:
            return fast, fast.get_single_node()
        except yaml.YAMLError:
            pass  # read again below
        finally:
            fast.dispose()
    loader = _BoundedLoader(text)
    try:
        return loader, loader.get_single_node()
    finally:
        loader.dispose()


def _scalar(loader: SafeConstructor, node: yaml.ScalarNode) -> Any:
    """The value of a scalar; one Python cannot convert (an integer of thousands of digits, a
    date that does not exist) is a YAML problem at its line."""
    try:
        return loader.construct_object(node)
    except ValueError as exc:
        if node.tag == "tag:yaml.org,2002:int":
            problem = f"an integer of {len(node.value)} characters is too long: quote it"
        else:
            problem = f"{node.value[:40]!r} cannot be read: {exc}"
        raise _too_much(node, problem) from None


def _too_much(node: yaml.Node, problem: str) -> yaml.MarkedYAMLError:
    return yaml.constructor.ConstructorError(None, None, problem, node.start_mark)


_SURROGATE = (
    "contains a lone surrogate: a YAML double-quoted string turns \\uD800-\\uDFFF escapes into"
    " characters; write JSON text in single quotes or a block scalar"
)


def _on_the_wire(where: Where) -> bool:
    """False under a scenario's ``expect``, where parsed values may hold lone surrogates."""
    inner = where[2:] if where[:1] == ("scenarios",) else where
    return inner[:1] != ("expect",)


def _lone_surrogate(text: str) -> bool:
    return _SURROGATES.search(text) is not None


_SURROGATES = re.compile("[\ud800-\udfff]")


def scenario_of(where: Where) -> Where:
    """The where of the scenario a node belongs to; () for the file as a whole."""
    if len(where) >= 2 and where[0] == "scenarios" and isinstance(where[1], int):
        return where[:2]
    return ()


def inner(where: Where) -> Where:
    return where[len(scenario_of(where)) :]


def _dotted(where: Where) -> str:
    return "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in where).lstrip(".")


# -- schema errors as sentences ---------------------------------------------------------------

_TYPE_NAMES = {
    "array": "a list",
    "object": "a mapping",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}
_JSON_TYPES = {
    list: "array",
    dict: "object",
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


@cache
def schema_validator(definition: str | None) -> Draft202012Validator:
    """The validator for a whole file, or for one definition of the schema (``catalogue``)."""
    schema = scenario_schema()
    if definition is None:
        return Draft202012Validator(schema)
    registry: Registry[Any] = Registry().with_resource(
        schema["$id"], Resource.from_contents(schema)
    )
    return Draft202012Validator({"$ref": f"{schema['$id']}#/$defs/{definition}"}, registry=registry)


def _explain(error: ValidationError) -> list[tuple[Where, str]]:
    """One schema violation as (where, sentence) pairs, using the schema's own messages."""
    where: Where = tuple(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    instance: Any = error.instance
    if error.validator == "additionalProperties":
        allowed = list(schema.get("properties", {}))
        out = []
        for key in instance:
            if key in allowed:
                continue
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            out.append(((*where, key), said(where, f"unknown key {key!r}{hint}")))
        return out
    if error.validator == "pattern" and "patternErrorMessage" in schema:
        message = f"{instance!r}: {schema['patternErrorMessage']}"
    elif "errorMessage" in schema:
        message = schema["errorMessage"]
    elif error.validator == "type":
        wanted: Any = error.validator_value
        names = [_TYPE_NAMES[name] for name in ([wanted] if isinstance(wanted, str) else wanted)]
        message = f"expected {' or '.join(names)}, not {_TYPE_NAMES[_JSON_TYPES[type(instance)]]}"
    else:
        message = error.message
        if len(message) > 200:
            message = message[:200] + "…"
    return [(where, said(where, message))]


def said(where: Where, message: str) -> str:
    label = _dotted(inner(where))
    return f"{label}: {message}" if label else message

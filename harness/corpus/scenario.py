"""Loading YAML scenario files into Scenarios, every problem located as ``path:line``.

A file holds one scenario mapping or ``{scenarios: [...]}``. Each file is parsed with the line of
every node kept, validated against ``schemas/scenario.schema.json`` (the format's source of
truth, which editors use too), then built into the values of ``callstream.core.spec``. Each stream
is then rendered and given to the oracle under each of its profiles, so a plan the oracle cannot
predict is refused here, with the scenario's line, rather than in the middle of a run.

Nothing stops at the first problem: every problem of every file is collected, and the scenarios
that have none are returned. Tools are named from the shared catalogue ``scenarios/tools.yaml``
or written inline.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource

from callstream.reference import Limits, Tool, ToolSchemaError
from callstream.reference.validate import input_format, validator_for

from ..core.declaration import PROFILES
from ..core.dialects import DEFAULT_DIALECT, DIALECTS
from ..core.oracle import expect
from ..core.rendering import render
from ..core.spec import (
    CallPlan,
    Ending,
    Expected,
    ExpectedCall,
    Noise,
    Scenario,
    Splitting,
    StreamSpec,
    Transport,
)
from ..errors import NotAStream, PlanError, UsageError
from ..rules import RULES, quirk_code
from .cassette import cassette_scenario, is_cassette

__all__ = [
    "CORPUS_FOLDERS",
    "LoadResult",
    "ScenarioError",
    "corpus_paths",
    "corpus_root",
    "default_corpus",
    "load_scenarios",
    "scenario_schema",
]

CORPUS_FOLDERS = ("openai-chat", "regressions")
"""The folders of ``scenarios/`` that make up the default corpus."""
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


@dataclass(frozen=True, slots=True)
class LoadResult:
    """The scenarios that loaded, in a deterministic order, and every problem found."""

    scenarios: tuple[Scenario, ...]
    """Files sorted by path, scenarios in file order; those with a problem are left out."""
    errors: tuple[ScenarioError, ...]
    files: tuple[Path, ...]
    """Every file read, sorted by path."""


@cache
def scenario_schema() -> dict[str, Any]:
    """The scenario file format: a Draft 2020-12 JSON Schema shipped with the package."""
    text = resources.files("callstream").joinpath("schemas/scenario.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def corpus_root() -> Path:
    """The built-in corpus: the package data ``callstream.scenarios`` (in a checkout, its
    ``scenarios/`` folder), wherever callstream is installed."""
    return _shown(Path(str(resources.files("callstream.scenarios"))))


def default_corpus(root: Path | None = None) -> list[Path]:
    """Every ``*.yaml``, ``*.yml`` and ``*.cassette.jsonl`` file under the corpus folders of
    ``root`` (default: the checkout's ``scenarios/``), sorted by path."""
    root = corpus_root() if root is None else root
    return _expand([root / folder for folder in CORPUS_FOLDERS if (root / folder).is_dir()])


def corpus_paths(
    paths: Iterable[str | Path] = (), scenarios: Iterable[str | Path] = ()
) -> list[Path]:
    """What a command runs: the files and folders it was given (``paths``), or the built-in
    corpus when none were, and then the user's own ``scenarios`` (``--scenarios PATH``) beside
    them."""
    chosen = [Path(path) for path in paths] or default_corpus()
    return chosen + [Path(path) for path in scenarios]


def load_scenarios(paths: Iterable[Path], catalogue: Path | None = None) -> LoadResult:
    """Load scenario files (a folder stands for every ``*.yaml``/``*.yml`` under it, and every
    streamed cassette, ``*.cassette.jsonl``), naming tools from ``catalogue`` (default:
    ``scenarios/tools.yaml`` of the checkout). A cassette becomes a literal scenario
    (``callstream.corpus.cassette.cassette_scenario``). An id used twice is a problem of its second
    use, which is left out."""
    paths = list(paths)
    files = _expand(paths)
    named = {path for path in paths if not path.is_dir()}
    tools = _load_catalogue(corpus_root() / "tools.yaml" if catalogue is None else catalogue)
    errors = list(tools.errors)
    scenarios: list[Scenario] = []
    first: dict[str, _Located] = {}
    for path in files:
        if is_cassette(path):
            located = _cassette(path, path in named, errors)
        else:
            source = _File(path)
            located = source.scenarios(tools.tools)
            errors += sorted(source.errors, key=lambda error: error.line or 0)
        for here in located:
            scenario = here.scenario
            if scenario.id in first:
                there = first[scenario.id]
                message = f"id {scenario.id!r} is already used at {there.path}:{there.line}"
                errors.append(ScenarioError(here.path, here.line, message))
            else:
                first[scenario.id] = here
                scenarios.append(scenario)
    return LoadResult(tuple(scenarios), tuple(errors), tuple(files))


# -- files and folders ----------------------------------------------------------------------


def _expand(paths: Iterable[Path]) -> list[Path]:
    files: set[Path] = set()
    for path in paths:
        if path.is_dir():
            files.update(
                found
                for found in path.rglob("*")
                if found.suffix in (".yaml", ".yml") or is_cassette(found)
            )
        else:
            files.add(path)
    return sorted(files)


def _cassette(path: Path, named: bool, errors: list[ScenarioError]) -> list[_Located]:
    """A cassette's scenario. A cassette that holds no stream is a problem when it was named,
    and skipped when a folder was (its streamed twin is the scenario)."""
    try:
        return [_Located(cassette_scenario(path), path, 1)]
    except NotAStream as exc:
        if named:
            errors.append(ScenarioError(path, None, exc.reason))
    except UsageError as exc:
        errors.append(ScenarioError(path, None, str(exc).removeprefix(f"{path}: ")))
    return []


def _shown(path: Path) -> Path:
    """``path`` relative to the working directory when it is under it, for shorter messages."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


# -- YAML with the line of every node ---------------------------------------------------------


class _File:
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
        self.bad.add(_scenario_of(where))
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
            loader = _BoundedLoader(text)
        except yaml.reader.ReaderError as exc:
            line = text.count("\n", 0, exc.position) + 1
            self.at((), f"YAML: the character U+{exc.character:04X} is not allowed", line)
            return False
        try:
            node = loader.get_single_node()
            if node is None:
                self.at((), "the file is empty", 1)
                return False
            self._values = 0
            self.data = self._convert(loader, node, (), set())
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            self.at((), f"YAML: {exc.problem}", None if mark is None else mark.line + 1)
            return False
        finally:
            loader.dispose()
        return True

    def _convert(
        self, loader: yaml.SafeLoader, node: yaml.Node, where: Where, within: set[int]
    ) -> Any:
        """The node as JSON-like data, recording lines; keys must be unique strings."""
        self._values += 1
        if self._values > MAX_VALUES:
            raise _too_much(node, f"the file holds more than {MAX_VALUES:,} values")
        self.lines.setdefault(where, node.start_mark.line + 1)
        if id(node) in within:
            self.at(where, _said(where, "an alias refers to a node that contains it"))
            return None
        if isinstance(node, yaml.ScalarNode):
            value = _scalar(loader, node)
            if not isinstance(value, str | int | float | bool | None):
                read = f"{node.value} is read as a {type(value).__name__}, not a JSON value"
                self.at(where, _said(where, f"{read}: quote it"))
                return node.value  # its text, so the schema does not complain about it too
            if isinstance(value, str) and _on_the_wire(where) and _lone_surrogate(value):
                self.at(where, _said(where, _SURROGATE))
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
        self, loader: yaml.SafeLoader, node: yaml.MappingNode, where: Where, within: set[int]
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
                self.at(where, _said(where, f"key {shown} is not a string: quote it"), line)
                continue
            here = (*where, key)
            if key in owned:
                first = self.lines[here]
                self.at(where, _said(where, f"duplicate key {key!r} (first at line {first})"), line)
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

    def scenarios(self, catalogue: Mapping[str, Tool]) -> list[_Located]:
        """Read, validate and build the file's scenarios, each with its line."""
        if not self.read():
            return []
        self.validate(_validator(None))
        if () in self.bad:
            return []
        raws: list[tuple[Where, Any]]
        if "scenarios" in self.data:
            raws = [(("scenarios", n), raw) for n, raw in enumerate(self.data["scenarios"])]
        else:
            raws = [((), self.data)]
        dialect = self.data.get("dialect") if "scenarios" in self.data else None
        dialect = dialect or _folder_dialect(self.path)
        out = []
        for base, raw in raws:
            if base not in self.bad:
                scenario = _Builder(self, base, catalogue, dialect).build(raw)
                if scenario is not None:
                    out.append(_Located(scenario, self.path, self.lines[base]))
        return out


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing nesting deeper than ``MAX_DEPTH`` (its composer recurses
    once per level, so a deep file would otherwise end in a RecursionError)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(
                    None, None, f"nested deeper than {MAX_DEPTH} levels", mark
                )
            node: yaml.Node | None = super().compose_node(parent, index)
            return node
        finally:
            self._depth -= 1


def _scalar(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
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


@dataclass(frozen=True, slots=True)
class _Located:
    scenario: Scenario
    path: Path
    line: int


_SURROGATE = (
    "contains a lone surrogate: a YAML double-quoted string turns \\uD800-\\uDFFF escapes into"
    " characters; write JSON text in single quotes or a block scalar"
)


def _on_the_wire(where: Where) -> bool:
    """False under a scenario's ``expect``, where parsed values may hold lone surrogates."""
    inner = where[2:] if where[:1] == ("scenarios",) else where
    return inner[:1] != ("expect",)


def _lone_surrogate(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)


def _scenario_of(where: Where) -> Where:
    """The where of the scenario a node belongs to; () for the file as a whole."""
    if len(where) >= 2 and where[0] == "scenarios" and isinstance(where[1], int):
        return where[:2]
    return ()


def _inner(where: Where) -> Where:
    return where[len(_scenario_of(where)) :]


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
def _validator(definition: str | None) -> Draft202012Validator:
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
            out.append(((*where, key), _said(where, f"unknown key {key!r}{hint}")))
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
    return [(where, _said(where, message))]


def _said(where: Where, message: str) -> str:
    label = _dotted(_inner(where))
    return f"{label}: {message}" if label else message


# -- the tool catalogue -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Catalogue:
    tools: Mapping[str, Tool]
    errors: Sequence[ScenarioError]


def _load_catalogue(path: Path) -> _Catalogue:
    source = _File(path)
    tools: dict[str, Tool] = {}
    if source.read():
        source.validate(_validator("catalogue"))
    if not source.errors:
        for n, raw in enumerate(source.data["tools"]):
            tool = _tool(source, ("tools", n), raw)
            if tool is not None and tool.name in tools:
                where = ("tools", n)
                source.at(where, _said(where, f"tool {tool.name!r} is defined twice"))
            elif tool is not None:
                tools[tool.name] = tool
    return _Catalogue(tools, source.errors)


def _tool(source: _File, where: Where, raw: Mapping[str, Any]) -> Tool | None:
    """An inline or catalogue tool: a function tool, its parameters checked as a JSON Schema,
    or a custom tool (``type: custom``), its format checked as the reference reads it."""
    if raw.get("type") == "custom":
        try:
            input_format(raw["name"], raw.get("format"))
        except ToolSchemaError as exc:
            source.at((*where, "format"), _said((*where, "format"), str(exc)))
            return None
        return Tool.custom(raw["name"], raw.get("format"))
    parameters = raw.get("parameters")
    try:
        validator_for(raw["name"], parameters)
    except ToolSchemaError as exc:
        source.at((*where, "parameters"), _said((*where, "parameters"), str(exc)))
        return None
    return Tool(raw["name"], parameters)


# -- building a scenario ----------------------------------------------------------------------


class _Builder:
    """Builds one schema-valid scenario mapping into a Scenario, recording what is wrong."""

    def __init__(
        self, source: _File, base: Where, catalogue: Mapping[str, Tool], dialect: str
    ) -> None:
        self.source = source
        self.base = base
        self.catalogue = catalogue
        self.dialect = dialect
        """The file's dialect, which the scenario's own ``dialect`` overrides."""
        self.known_errors = len(source.errors)

    def problem(self, where: Where, message: str) -> None:
        here = (*self.base, *where)
        self.source.at(here, _said(here, message))

    @property
    def failed(self) -> bool:
        return len(self.source.errors) > self.known_errors

    def build(self, raw: Mapping[str, Any]) -> Scenario | None:
        """The scenario, or None when it has a problem (recorded)."""
        self._known(("rules",), raw["rules"], RULES, "rule {!r} is not in REQUIREMENTS.md")
        dialect = raw.get("dialect", self.dialect)
        if dialect not in DIALECTS:
            where = ("dialect",) if "dialect" in raw else ()
            self.problem(where, f"unknown dialect {dialect!r}; known: {', '.join(DIALECTS)}")
            return None
        self.dialect = dialect
        quirks = DIALECTS[dialect].quirks
        self._known(("quirks",), raw.get("quirks", ()), quirks, _not_a_quirk(dialect))
        profiles = tuple(raw.get("profiles", PROFILES))
        choices = raw.get("choices", 1)
        calls = raw.get("calls", ())
        spec = StreamSpec(
            tools=self._tools(raw["tools"]),
            calls=tuple(self._call(n, call, choices) for n, call in enumerate(calls)),
            choices=choices,
            schedule=raw.get("schedule", "sequential"),
            noise=Noise(**raw.get("noise", {})),
            ending=_ending(raw.get("ending", {})),
            transport=Transport(**raw.get("transport", {})),
            limits=Limits(**raw.get("limits", {})),
            literal_events=tuple(raw["events"]) if "events" in raw else None,
            literal_sse=self._sse(raw),
            expected=self._expected(raw, profiles),
            dialect=dialect,
        )
        scenario = Scenario(
            id=raw["id"],
            title=raw["title"],
            rules=tuple(raw["rules"]),
            spec=spec,
            tags=tuple(raw.get("tags", ())),
            quirks=tuple(raw.get("quirks", ())),
            provenance=tuple(raw.get("provenance", ())),
            kind=raw.get("kind", "must"),
            profiles=profiles,
            splittings=_splittings(raw.get("splittings", ())),
            source=f"{self.source.path}:{self.source.lines[self.base]}",
        )
        if not self.failed:
            self._predict(scenario, raw.get("splittings", ()))
        return None if self.failed else scenario

    def _known(self, where: Where, ids: Sequence[str], known: Iterable[str], message: str) -> None:
        valid = set(known)
        for n, item in enumerate(ids):
            if item not in valid:
                self.problem((*where, n), message.format(item))

    def _tools(self, raws: Sequence[Any]) -> tuple[Tool, ...]:
        tools: dict[str, Tool] = {}
        for n, raw in enumerate(raws):
            if isinstance(raw, str):
                tool = self.catalogue.get(raw)
                if tool is None:
                    known = ", ".join(sorted(self.catalogue)) or "no tools"
                    self.problem(("tools", n), f"unknown tool {raw!r}; the catalogue has {known}")
            else:
                tool = _tool(self.source, (*self.base, "tools", n), raw)
            if tool is not None and tool.name in tools:
                self.problem(("tools", n), f"tool {tool.name!r} is listed twice")
            elif tool is not None:
                tools[tool.name] = tool
        return tuple(tools.values())

    def _call(self, n: int, raw: Mapping[str, Any], choices: int) -> CallPlan:
        where: Where = ("calls", n)
        arguments: str = raw["arguments"]
        if raw.get("choice", 0) >= choices:
            message = f"choice {raw['choice']} is out of range: the stream has {choices} choice(s)"
            self.problem((*where, "choice"), message)
        if raw.get("arguments_as_value"):
            try:
                json.loads(arguments)
            except ValueError as exc:
                self.problem((*where, "arguments"), f"arguments_as_value needs JSON: {exc}")
        if raw.get("kind") == "custom":
            for option in _FUNCTION_ONLY:
                if raw.get(option):
                    message = f"{option} is for function calls: a custom call's input is text"
                    self.problem((*where, option), message)
        options = {key: value for key, value in raw.items() if key not in _CUTS}
        return CallPlan(fragments=self._fragments(where, raw, arguments), **options)

    def _fragments(self, where: Where, raw: Mapping[str, Any], arguments: str) -> tuple[str, ...]:
        if "fragments" in raw:
            fragments = tuple(raw["fragments"])
            joined = "".join(fragments)
            if joined != arguments:
                at = _first_difference(joined, arguments)
                self.problem(
                    (*where, "fragments"),
                    f"the fragments do not concatenate to the arguments: from character {at} "
                    f"they give {joined[at : at + 12]!r}, the arguments "
                    f"{arguments[at : at + 12]!r}",
                )
            return fragments
        if "chunk" in raw:
            size = raw["chunk"]
            return tuple(arguments[i : i + size] for i in range(0, len(arguments), size))
        if "split" not in raw:
            return (arguments,) if arguments else ()
        offsets: list[int] = raw["split"]
        previous = 0
        for k, offset in enumerate(offsets):
            if offset >= len(arguments):
                self.problem(
                    (*where, "split", k),
                    f"offset {offset} is out of range: the arguments are {len(arguments)} "
                    f"characters long, so a cut goes from 1 to {len(arguments) - 1}",
                )
            elif offset <= previous:
                message = f"offsets must increase: {offset} follows {previous}"
                self.problem((*where, "split", k), message)
            previous = max(previous, offset)
        bounds = [0, *offsets, len(arguments)]
        return tuple(arguments[a:b] for a, b in itertools.pairwise(bounds))

    def _sse(self, raw: Mapping[str, Any]) -> bytes | None:
        if "sse" in raw:
            text: str = raw["sse"]
            return text.encode("utf-8")
        if "sse_base64" not in raw:
            return None
        try:
            return base64.b64decode("".join(raw["sse_base64"].split()), validate=True)
        except binascii.Error as exc:
            self.problem(("sse_base64",), f"not base64: {exc}")
            return None

    def _expected(
        self, raw: Mapping[str, Any], profiles: tuple[str, ...]
    ) -> dict[str, Expected] | None:
        given: Mapping[str, Any] = raw.get("expect", {})
        for profile in given:
            if profile not in profiles:
                message = f"the scenario does not run under {profile}: add it to profiles"
                self.problem(("expect", profile), message)
        if any(key in raw for key in _LITERALS):
            for profile in profiles:
                if profile not in given:
                    self.problem(
                        ("expect",),
                        f"a literal stream needs its expectation under each of its profiles: "
                        f"{profile} is missing",
                    )
        expected: dict[str, Expected] = {}
        for profile, outcome in given.items():
            findings = outcome.get("findings", ())
            where = ("expect", profile, "findings")
            self._known(where, findings, DIALECTS[self.dialect].quirks, _not_a_quirk(self.dialect))
            calls = tuple(
                ExpectedCall(check_arguments="arguments" in call, **call)
                for call in outcome["calls"]
            )
            expected[profile] = Expected(calls, frozenset(findings))
        return expected or None

    def _predict(self, scenario: Scenario, splittings: Sequence[Any]) -> None:
        """Render the stream and ask the oracle under each profile, as a run would."""
        rendered = render(scenario.spec)
        refused: dict[str, list[str]] = {}
        for profile in scenario.profiles:
            try:
                expect(scenario.spec, rendered, profile)
            except PlanError as exc:
                refused.setdefault(str(exc), []).append(profile)
        for reason, profiles in refused.items():
            self.problem(
                (), f"the oracle cannot predict this plan ({', '.join(profiles)}): {reason}"
            )
        size = len(rendered.data)
        for n, splitting in enumerate(splittings):
            offsets = splitting.get("offsets", ()) if isinstance(splitting, dict) else ()
            for k, offset in enumerate(offsets):
                if offset >= size:
                    message = f"offset {offset} is past the end of the stream ({size} bytes)"
                    self.problem(("splittings", n, "offsets", k), message)


_CUTS = ("split", "fragments", "chunk")
_FUNCTION_ONLY = ("arguments_as_value", "snapshots", "legacy")
_LITERALS = ("events", "sse", "sse_base64")


def _folder_dialect(path: Path) -> str:
    """The dialect a file's folder names (``scenarios/<dialect>/…``, the nearest such folder),
    else the default dialect."""
    for folder in path.resolve().parents:
        if folder.name in DIALECTS:
            return folder.name
    return DEFAULT_DIALECT


def _not_a_quirk(dialect: str) -> str:
    """The message for an id that is not one of ``dialect``'s quirks, naming its quirks by
    range: ``openai-chat/T1-T12, C1-C34``."""
    ranges: dict[str, list[int]] = {}
    for quirk in DIALECTS[dialect].quirks:
        code = quirk_code(quirk)
        ranges.setdefault(code[0], []).append(int(code[1:]))
    known = ", ".join(f"{letter}{min(ns)}-{letter}{max(ns)}" for letter, ns in ranges.items())
    return f"{{!r}} is not a quirk of {dialect} ({dialect}/{known})"


def _first_difference(one: str, other: str) -> int:
    for at, (a, b) in enumerate(zip(one, other, strict=False)):
        if a != b:
            return at
    return min(len(one), len(other))


def _ending(raw: Mapping[str, Any]) -> Ending:
    options = dict(raw)
    if "after_finish" in options:
        options["after_finish"] = tuple(options["after_finish"])
    return Ending(**options)


_NAMED_SPLITTINGS = {kind: Splitting(kind) for kind in ("whole", "bytes", "pairs")}


def _splittings(raws: Sequence[Any]) -> tuple[Splitting, ...]:
    out: list[Splitting] = []
    for raw in raws:
        if isinstance(raw, str):
            out.append(_NAMED_SPLITTINGS[raw])
        elif "random" in raw:
            out += [Splitting("random", seed=seed) for seed in range(1, raw["random"] + 1)]
        else:
            out.append(Splitting("offsets", offsets=tuple(raw["offsets"])))
    return tuple(out)

"""Loading YAML scenario files into Scenarios, every problem located as ``path:line``.

A file holds one scenario mapping or ``{scenarios: [...]}``. Each file is parsed with the line of
every node kept and validated against ``schemas/scenario.schema.json``
(:mod:`~callstream.corpus.yaml_source`), then built into the values of ``callstream.core.spec``.
Each stream is then rendered and given to the oracle under each of its profiles, so a plan the
oracle cannot predict is refused here, with the scenario's line, rather than in the middle of a run.

Nothing stops at the first problem: every problem of every file is collected, and the scenarios
that have none are returned. Tools are named from the shared catalogue ``scenarios/tools.yaml``
or written inline.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

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
from .yaml_source import (
    ScenarioError,
    Where,
    YamlSource,
    said,
    scenario_schema,
    schema_validator,
)

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

CORPUS_FOLDERS = (*DIALECTS, "regressions")
"""The folders of ``scenarios/`` that make up the default corpus: one per dialect, and the
shrunk fuzz finds."""


@dataclass(frozen=True, slots=True)
class LoadResult:
    """The scenarios that loaded, in a deterministic order, and every problem found."""

    scenarios: tuple[Scenario, ...]
    """Files sorted by path, scenarios in file order; those with a problem are left out."""
    errors: tuple[ScenarioError, ...]
    files: tuple[Path, ...]
    """Every file read, sorted by path."""

    def refuse(self, stream: TextIO) -> bool:
        """When any file had a problem, write every problem and the count to ``stream`` and
        return True: a command runs nothing then."""
        for error in self.errors:
            print(error, file=stream)
        if self.errors:
            print(f"callstream: {len(self.errors)} scenario error(s); nothing was run", file=stream)
        return bool(self.errors)


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
            source = YamlSource(path)
            located = _file_scenarios(source, tools.tools)
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


@dataclass(frozen=True, slots=True)
class _Located:
    scenario: Scenario
    path: Path
    line: int


def _file_scenarios(source: YamlSource, catalogue: Mapping[str, Tool]) -> list[_Located]:
    """Read, validate and build the file's scenarios, each with its line."""
    if not source.read():
        return []
    source.validate(schema_validator(None))
    if () in source.bad:
        return []
    raws: list[tuple[Where, Any]]
    if "scenarios" in source.data:
        raws = [(("scenarios", n), raw) for n, raw in enumerate(source.data["scenarios"])]
    else:
        raws = [((), source.data)]
    dialect = source.data.get("dialect") if "scenarios" in source.data else None
    dialect = dialect or _folder_dialect(source.path)
    out = []
    for base, raw in raws:
        if base not in source.bad:
            scenario = _Builder(source, base, catalogue, dialect).build(raw)
            if scenario is not None:
                out.append(_Located(scenario, source.path, source.lines[base]))
    return out


# -- the tool catalogue -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Catalogue:
    tools: Mapping[str, Tool]
    errors: Sequence[ScenarioError]


def _load_catalogue(path: Path) -> _Catalogue:
    source = YamlSource(path)
    tools: dict[str, Tool] = {}
    if source.read():
        source.validate(schema_validator("catalogue"))
    if not source.errors:
        for n, raw in enumerate(source.data["tools"]):
            tool = _tool(source, ("tools", n), raw)
            if tool is not None and tool.name in tools:
                where = ("tools", n)
                source.at(where, said(where, f"tool {tool.name!r} is defined twice"))
            elif tool is not None:
                tools[tool.name] = tool
    return _Catalogue(tools, source.errors)


def _tool(source: YamlSource, where: Where, raw: Mapping[str, Any]) -> Tool | None:
    """An inline or catalogue tool: a function tool, its parameters checked as a JSON Schema,
    or a custom tool (``type: custom``), its format checked as the reference reads it."""
    if raw.get("type") == "custom":
        try:
            input_format(raw["name"], raw.get("format"))
        except ToolSchemaError as exc:
            source.at((*where, "format"), said((*where, "format"), str(exc)))
            return None
        return Tool.custom(raw["name"], raw.get("format"))
    parameters = raw.get("parameters")
    try:
        validator_for(raw["name"], parameters)
    except ToolSchemaError as exc:
        source.at((*where, "parameters"), said((*where, "parameters"), str(exc)))
        return None
    return Tool(raw["name"], parameters)


# -- building a scenario ----------------------------------------------------------------------


class _Builder:
    """Builds one schema-valid scenario mapping into a Scenario, recording what is wrong."""

    def __init__(
        self, source: YamlSource, base: Where, catalogue: Mapping[str, Tool], dialect: str
    ) -> None:
        self.source = source
        self.base = base
        self.catalogue = catalogue
        self.dialect = dialect
        """The file's dialect, which the scenario's own ``dialect`` overrides."""
        self.known_errors = len(source.errors)

    def problem(self, where: Where, message: str) -> None:
        here = (*self.base, *where)
        self.source.at(here, said(here, message))

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
        opt_ins = frozenset(raw.get("opt_ins", ()))
        if opt_ins:
            self._opted_in(raw, profiles)
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
            oddity=raw.get("oddity"),
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
            opt_ins=opt_ins,
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

    def _opted_in(self, raw: Mapping[str, Any], profiles: tuple[str, ...]) -> None:
        """A route that opts in is certified under the lenient profile only (D75); its
        expectation is written out, but where the oracle predicts the route (an openai-chat
        plan read as snapshots, D76: ``_predict`` says where it cannot)."""
        if profiles != ("lenient",):
            self.problem(
                ("profiles",) if "profiles" in raw else ("opt_ins",),
                "a scenario with route opt-ins runs under the lenient profile only (D75): "
                "write profiles: [lenient]",
            )

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
                expect(scenario.spec, rendered, profile, scenario.opt_ins)
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

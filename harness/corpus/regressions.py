"""Shrunk failures promoted to YAML scenarios, so the corpus keeps what the fuzzer finds.

Hypothesis's example database is a cache, not a corpus: upgrades may drop its entries and a
``@reproduce_failure`` blob is tied to one version. So a shrunk find is written as a scenario
file under ``scenarios/regressions/``, which ``callstream run`` reproduces with no Hypothesis at
all. The file is written for ``callstream.corpus.scenario`` to load back into an equal Scenario:
tools inline with their full parameters (generated tools are not in the catalogue), each call's
fragments listed exactly, every knob that is not at its default, the splittings exactly. What
the format cannot hold is refused with ValueError rather than written approximately.

Strings are written so that YAML gives back the very same characters: JSON escapes such as
``\\u00e9`` or ``\\ud800`` stay six characters, and text with control characters, CR, BOM or
Unicode line separators goes in a double-quoted YAML string where each is an escape. A lone
surrogate *character* cannot be written outside ``expect``: no UTF-8 file can hold it, and the
loader refuses one that comes from a double-quoted escape (it could never reach the wire).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import shlex
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from callstream.reference import Tool

from ..core.dialects import DEFAULT_DIALECT
from ..core.spec import CallPlan, Expected, ExpectedCall, Scenario, Splitting, StreamSpec
from ..rules import listed_opt_ins
from .scenario import load_scenarios, scenario_schema

__all__ = [
    "REGRESSIONS",
    "non_defaults",
    "regression_id",
    "reproduce_command",
    "scenario_to_yaml",
    "write_regression",
]

REGRESSIONS = Path("scenarios/regressions")
"""Where shrunk finds are kept, relative to the checkout (part of the default corpus)."""

_LINKS = ("http://", "https://")


def regression_id(spec: StreamSpec, implementation: str) -> str:
    """A stable id for a find: ``fuzz-`` and 8 hex digits of a hash of the canonical spec and
    the implementation's connectable, so the same shrunk find always gets the same id. Knobs at
    their defaults are left out of the hash, so adding a knob does not change existing ids."""
    canonical = json.dumps(
        {"implementation": implementation, "spec": _stream(spec)},
        sort_keys=True,
        ensure_ascii=True,
        separators=(",", ":"),
    )
    return "fuzz-" + hashlib.sha256(canonical.encode("ascii")).hexdigest()[:8]


def scenario_to_yaml(
    scenario: Scenario, *, implementation: str | None = None, path: Path | None = None
) -> str:
    """The scenario as a scenario file (``scenarios: [...]``) that loads back into an equal
    Scenario, under a comment header saying how it was found and how to reproduce it
    (``callstream run <path> --impl <implementation>``; ``path`` defaults to
    ``scenarios/regressions/<id>.yaml``).

    ``provenance`` entries that are http(s) links are written as ``provenance``; the others
    (such as the fuzz command that found it) go to the header, since the format's provenance
    holds links only. Raises ValueError, naming every field, when the format cannot hold the
    scenario exactly."""
    notes = [entry for entry in scenario.provenance if not entry.startswith(_LINKS)]
    data = _scenario(_as_written(scenario))
    problems = [*_inexact(scenario, data), *_schema_problems(data)]
    if problems:
        raise ValueError(
            f"scenario {scenario.id!r} cannot be written as YAML exactly:\n  "
            + "\n  ".join(problems)
        )
    shown = path if path is not None else REGRESSIONS / f"{scenario.id}.yaml"
    header = [
        f"Regression {scenario.id}: a shrunk failure kept as a scenario (the Hypothesis example",
        "database is a cache that upgrades may drop; this file is the record).",
        *(f"Found by: {note}" for note in notes),
        f"Reproduce: {reproduce_command(shown, implementation or 'CONNECTABLE')}",
        "Keep the stream as it is; the title and rules may be edited, the id is never reused.",
    ]
    comment = "".join(f"# {_visible(line)}\n" for line in header)
    body: str = yaml.dump(
        {"scenarios": [data]},
        Dumper=_Dumper,
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=None,
        width=1 << 30,
    )
    return comment + body


def reproduce_command(path: Path, implementation: str) -> str:
    """The shell command that runs the regression at ``path`` on ``implementation`` (a
    connectable), quoted for a POSIX shell: what a saved file's header and ``callstream fuzz``
    both print."""
    return shlex.join(["callstream", "run", str(path), "--impl", implementation])


def write_regression(
    scenario: Scenario, folder: Path = REGRESSIONS, *, implementation: str | None = None
) -> Path:
    """Write the scenario to ``<folder>/<id>.yaml`` (creating the folder) and return the path.

    The file is first loaded back, as ``callstream run`` would, and kept only if it gives back
    an equal scenario (ValueError otherwise, with the loader's messages). An existing file is
    never overwritten: if it is identical, or holds this scenario's stream with a title or rules
    a person has since edited, its path is returned; otherwise FileExistsError, since an id is
    never reused."""
    path = folder / f"{scenario.id}.yaml"
    text = scenario_to_yaml(scenario, implementation=implementation, path=path)
    if path.exists():
        if path.read_bytes() == text.encode("utf-8") or _holds(path, scenario):
            return path
        raise FileExistsError(
            f"{path} holds another scenario: regression ids are never reused, so it is left as "
            "it is (move it away to write this one)"
        )
    _check_loads_back(text, scenario)
    folder.mkdir(parents=True, exist_ok=True)
    with path.open("xb") as file:  # exclusive: a file written meanwhile is never replaced
        file.write(text.encode("utf-8"))
    return path


# -- the scenario as file data ----------------------------------------------------------------


def _scenario(scenario: Scenario) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": scenario.id,
        "title": scenario.title,
        "rules": list(scenario.rules),
        "kind": scenario.kind,
        "profiles": list(scenario.profiles),
    }
    for key in ("tags", "quirks", "provenance"):  # written when not empty
        if getattr(scenario, key):
            out[key] = list(getattr(scenario, key))
    if scenario.opt_ins:
        out["opt_ins"] = listed_opt_ins(scenario.opt_ins)
    if scenario.splittings:
        out["splittings"] = list(_splittings(scenario.splittings))
    return {**out, **_stream(scenario.spec)}


def _stream(spec: StreamSpec) -> dict[str, Any]:
    """The keys of a scenario that describe its stream; knobs at their defaults are left out."""
    out: dict[str, Any] = {"tools": [_tool(tool) for tool in spec.tools]}
    if spec.dialect != DEFAULT_DIALECT:
        out = {"dialect": spec.dialect, **out}
    if limits := non_defaults(spec.limits):
        out["limits"] = limits
    if spec.choices != 1:
        out["choices"] = spec.choices
    if spec.schedule != "sequential":
        out["schedule"] = spec.schedule
    if spec.calls or not spec.literal:
        out["calls"] = [_call(call) for call in spec.calls]
    if spec.literal_events is not None:
        out["events"] = _plain(spec.literal_events)
    if spec.literal_sse is not None:
        try:
            out["sse"] = spec.literal_sse.decode("utf-8")
        except UnicodeDecodeError:
            encoded = base64.b64encode(spec.literal_sse).decode("ascii")
            out["sse_base64"] = "".join(
                encoded[at : at + 76] + "\n" for at in range(0, len(encoded), 76)
            )
    for key in ("noise", "ending", "transport"):
        if knobs := non_defaults(getattr(spec, key)):
            out[key] = knobs
    if spec.oddity is not None:
        out["oddity"] = spec.oddity
    if spec.expected:
        out["expect"] = {
            profile: _expected(expected) for profile, expected in spec.expected.items()
        }
    return out


def _tool(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.kind == "custom":
        out["type"] = "custom"
        if tool.format is not None:
            out["format"] = _plain(tool.format)
        return out
    if tool.parameters is not None:
        out["parameters"] = _plain(tool.parameters)
    return out


def _call(call: CallPlan) -> dict[str, Any]:
    head = ("name", "id", "arguments")
    return {
        **{key: getattr(call, key) for key in head},
        "fragments": list(call.fragments),
        **non_defaults(call, skip=(*head, "fragments")),
    }


def _expected(expected: Expected) -> dict[str, Any]:
    out: dict[str, Any] = {"calls": [_expected_call(call) for call in expected.calls]}
    if expected.findings:
        out["findings"] = sorted(expected.findings)
    return out


def _expected_call(call: ExpectedCall) -> dict[str, Any]:
    # ``check_arguments`` is not written: the loader sets it when ``arguments`` is given.
    out = non_defaults(call, skip=("arguments", "check_arguments"))
    if call.check_arguments:
        out["arguments"] = _plain(call.arguments)
    return out


def non_defaults(value: Any, skip: Sequence[str] = ()) -> dict[str, Any]:
    """A dataclass's fields that are not at their defaults (those without a default always)."""
    out: dict[str, Any] = {}
    for field in dataclasses.fields(value):
        if field.name in skip:
            continue
        current = getattr(value, field.name)
        if field.default is not dataclasses.MISSING:
            default: Any = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            out[field.name] = _plain(current)
            continue
        if current != default:
            out[field.name] = _plain(current)
    return out


def _plain(value: Any) -> Any:
    """JSON-like data: mappings as dicts, sequences (but strings) as lists."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _splittings(splittings: Sequence[Splitting]) -> Iterator[Any]:
    """The splittings as the format writes them: a run of random seeds 1..N is ``{random: N}``.
    A random seed that starts no such run has no form and is left out (``_inexact`` says so)."""
    at = 0
    while at < len(splittings):
        splitting = splittings[at]
        at += 1
        if splitting.kind == "random":
            if splitting.seed == 1:
                run = 1
                while at < len(splittings) and splittings[at] == Splitting("random", seed=run + 1):
                    run += 1
                    at += 1
                yield {"random": run}
        elif splitting.kind == "offsets":
            yield {"offsets": list(splitting.offsets)}
        else:
            yield splitting.kind


# -- what the format cannot hold --------------------------------------------------------------


def _inexact(scenario: Scenario, data: Mapping[str, Any]) -> Iterator[str]:
    """What would not load back as it is, beyond what the schema says."""
    follows = 1
    for n, splitting in enumerate(scenario.splittings):
        if splitting.kind == "random":
            if splitting.seed not in (1, follows):
                yield (
                    f"splittings[{n}]: random seed {splitting.seed} cannot be written: "
                    "{random: N} stands for seeds 1 to N (use offsets for one chunking)"
                )
            follows = splitting.seed + 1
        else:
            follows = 1
            offsets = splitting.offsets if splitting.kind == "offsets" else ()
            if splitting != Splitting(splitting.kind, offsets=offsets):
                yield f"splittings[{n}]: {splitting} has a field its kind does not use"
    for n, call in enumerate(scenario.spec.calls):
        if "".join(call.fragments) != call.arguments:
            yield (
                f"calls[{n}].fragments: they do not concatenate to the arguments, which the "
                "loader requires"
            )
    for profile, expected in (scenario.spec.expected or {}).items():
        for n, wanted in enumerate(expected.calls):
            if not wanted.check_arguments and wanted.arguments is not None:
                yield (
                    f"expect.{profile}.calls[{n}].arguments: given but not checked; the loader "
                    "checks arguments exactly when they are written"
                )
    for where, text in _strings(data, ""):
        if not where.startswith("expect") and any("\ud800" <= c <= "\udfff" for c in text):
            yield (
                f"{where}: contains a lone surrogate character, which no UTF-8 file holds and "
                "the loader refuses outside expect (write the JSON escape \\udXXX instead)"
            )


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string value in file data, with its dotted place."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from _strings(item, f"{where}[{n}]")


def _schema_problems(data: Mapping[str, Any]) -> Iterator[str]:
    validator = Draft202012Validator(scenario_schema())
    for error in validator.iter_errors({"scenarios": [data]}):
        where = "".join(
            f"[{key}]" if isinstance(key, int) else f".{key}"
            for key in list(error.absolute_path)[2:]
        ).lstrip(".")
        schema = error.schema if isinstance(error.schema, dict) else {}
        message = schema.get("errorMessage") or error.message
        if error.validator == "pattern":
            message = f"{error.instance!r}: {schema.get('patternErrorMessage', message)}"
        if len(message) > 200:
            message = message[:200] + "…"
        yield f"{where or 'scenario'}: {message}"


# -- loading back -----------------------------------------------------------------------------


def _load(path: Path) -> tuple[tuple[Scenario, ...], list[str]]:
    """Load one file as ``callstream run`` would, with an empty tool catalogue: a regression's
    tools are all inline, so it never depends on ``scenarios/tools.yaml``."""
    with tempfile.TemporaryDirectory(prefix="callstream-regression-") as scratch:
        catalogue = Path(scratch) / "tools.yaml"
        catalogue.write_text("tools: []\n", encoding="utf-8")
        loaded = load_scenarios([path], catalogue=catalogue)
    return loaded.scenarios, [f"line {error.line}: {error.message}" for error in loaded.errors]


def _check_loads_back(text: str, scenario: Scenario) -> None:
    """Raise ValueError unless ``text``, loaded from a scratch file, gives back ``scenario``."""
    with tempfile.TemporaryDirectory(prefix="callstream-regression-") as scratch:
        path = Path(scratch) / f"{scenario.id}.yaml"
        path.write_bytes(text.encode("utf-8"))
        scenarios, errors = _load(path)
    if errors:
        raise ValueError(f"scenario {scenario.id!r} does not load back:\n  " + "\n  ".join(errors))
    wanted = _as_written(scenario)
    differ = [name for name in _fields_of(wanted) if _get(wanted, name) != _get(scenarios[0], name)]
    if differ:
        raise ValueError(f"scenario {scenario.id!r} loads back different in: {', '.join(differ)}")


def _holds(path: Path, scenario: Scenario) -> bool:
    """Whether the file at ``path`` holds ``scenario``'s id with the same stream, splittings,
    profiles, route opt-ins and kind (a person may have edited its title, rules or tags
    since)."""
    scenarios, _ = _load(path)
    return any(
        found.id == scenario.id
        and found.spec == scenario.spec
        and found.splittings == scenario.splittings
        and found.profiles == scenario.profiles
        and found.opt_ins == scenario.opt_ins
        and found.kind == scenario.kind
        for found in scenarios
    )


def _as_written(scenario: Scenario) -> Scenario:
    """The scenario as the loader gives it back: provenance links only, no source."""
    links = tuple(entry for entry in scenario.provenance if entry.startswith(_LINKS))
    return dataclasses.replace(scenario, provenance=links, source="")


def _fields_of(scenario: Scenario) -> list[str]:
    """The fields to compare, the spec's one by one: ``title``, ``spec.calls``…"""
    names = [f.name for f in dataclasses.fields(scenario) if f.name not in ("spec", "source")]
    return names + [f"spec.{f.name}" for f in dataclasses.fields(scenario.spec)]


def _get(scenario: Scenario, name: str) -> Any:
    owner: Any = scenario
    for part in name.split("."):
        owner = getattr(owner, part)
    return owner


# -- YAML that gives back the same characters -------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Block sequences indented under their key, as in the corpus; no anchors or aliases."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def ignore_aliases(self, data: Any) -> bool:
        return True


_ESCAPED = frozenset("\x85\u2028\u2029\ufeff")
"""Characters YAML reads as line breaks or strips (a BOM) unless escaped in double quotes."""


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    """Double quotes, where PyYAML escapes them, for text with control characters, CR, a BOM,
    Unicode line breaks or surrogates; a literal block for other multi-line text; else whatever
    PyYAML finds clearest (plain or single-quoted, where backslashes are literal)."""
    style: str | None = None
    if any(char in _ESCAPED or not (char.isprintable() or char == "\n") for char in text):
        style = '"'
    elif "\n" in text:
        style = "|"
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)


def _visible(text: str) -> str:
    """Text for a comment line: unprintable characters (line breaks too) as escapes."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)

"""Probes: the requests ``callstream certify`` sends to a route, loaded from data files.

The shipped probes live in ``probes.yaml`` beside this module (package data, so an installed
callstream has them); ``--probes-file`` adds files of the same shape, checked against
``schemas/probes.schema.json``. A file's probes may offer the tools of any file loaded before
it; names of tools and probes must be new.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from callstream.reference import ToolSchemaError
from callstream.reference.validate import validator_for

from ..corpus.cassette import remote_reference
from ..errors import UsageError

__all__ = ["Probe", "load_probes", "select_probes"]


@dataclass(frozen=True, slots=True)
class Probe:
    """One request to send to the route under test."""

    name: str
    title: str
    tools: tuple[Mapping[str, Any], ...]
    """The tools offered, as the request's ``tools`` entries."""
    messages: tuple[Mapping[str, Any], ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    """More request fields: ``tool_choice``, ``max_tokens``, ``stream_options``…"""
    calls: int = 1
    """How many tool calls the probe asks the model for."""
    compare: bool = False
    """Also ask without streaming, and compare the two answers."""

    def body(self, model: str, *, stream: bool) -> dict[str, Any]:
        """The JSON request body, streaming or not (``stream_options`` only when streaming)."""
        body: dict[str, Any] = {
            "model": model,
            "messages": [dict(message) for message in self.messages],
            "tools": [dict(tool) for tool in self.tools],
            **self.options,
            "stream": stream,
        }
        if not stream:
            body.pop("stream_options", None)
        return body


def load_probes(files: Iterable[str | PathLike[str]] = ()) -> list[Probe]:
    """The shipped probes, then those of ``files``, in order. Raises UsageError naming the
    file and the place of any problem."""
    shipped = resources.files("callstream").joinpath("probes.yaml")
    sources: list[tuple[str, str]] = [("harness/probes.yaml", shipped.read_text("utf-8"))]
    for name in files:
        try:
            sources.append((str(name), Path(name).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else exc
            raise UsageError(f"{name}: cannot read the probes: {reason}") from None
    tools: dict[str, dict[str, Any]] = {}
    probes: dict[str, Probe] = {}
    for source, text in sources:
        data = _parse(source, text)
        for name, tool in data.get("tools", {}).items():
            if name in tools:
                raise UsageError(f"{source}: tools.{name}: a tool of that name is already defined")
            reference = remote_reference(tool)
            if reference is not None:
                raise UsageError(
                    f"{source}: tools.{name}: $ref {reference!r} points outside the schema: "
                    "a probe's tools must be self-contained, callstream fetches nothing"
                )
            try:
                validator_for(name, tool["parameters"])
            except ToolSchemaError as exc:
                raise UsageError(f"{source}: tools.{name}: {exc}") from None
            tools[name] = {"type": "function", "function": {"name": name, **tool}}
        for number, raw in enumerate(data.get("probes", [])):
            where = f"{source}: probes[{number}] ({raw['name']})"
            if raw["name"] in probes:
                raise UsageError(f"{where}: a probe of that name is already defined")
            unknown = [name for name in raw["tools"] if name not in tools]
            if unknown:
                raise UsageError(f"{where}: unknown tools {', '.join(unknown)}")
            probes[raw["name"]] = Probe(
                name=raw["name"],
                title=raw["title"],
                tools=tuple(tools[name] for name in raw["tools"]),
                messages=tuple(raw["messages"]),
                options=raw.get("request", {}),
                calls=raw.get("calls", 1),
                compare=raw.get("compare", False),
            )
    return list(probes.values())


def select_probes(probes: Sequence[Probe], selection: str) -> list[Probe]:
    """The probes ``--probes`` names: ``all``, or comma-separated names (in the given order)."""
    if selection == "all":
        return list(probes)
    by_name = {probe.name: probe for probe in probes}
    names = [name.strip() for name in selection.split(",")]
    unknown = [name for name in names if name not in by_name]
    if unknown or not names:
        raise UsageError(
            f"--probes: unknown probe {', '.join(map(repr, unknown)) or 'name'}; "
            f"known: all, {', '.join(by_name)}"
        )
    return [by_name[name] for name in dict.fromkeys(names)]


@cache
def _validator() -> Draft202012Validator:
    text = resources.files("callstream").joinpath("schemas/probes.schema.json").read_text("utf-8")
    return Draft202012Validator(json.loads(text))


def _parse(source: str, text: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"{source}: not YAML: {exc}") from None
    error = best_match(_validator().iter_errors(data))
    if error is not None:
        place = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path
        ).lstrip(".")
        raise UsageError(f"{source}: {place or 'the file'}: {error.message}")
    result: dict[str, Any] = data
    return result

"""Connectables: how an implementation reaches the harness, and what it claims.

A connectable is a string naming an implementation of the contract in DESIGN.md (after Bowtie):

- ``py:module:factory`` — imported in process. ``factory(tools=[Tool, …], limits=Limits)`` is
  called once per stream and returns an object with ``feed(bytes)`` and ``close()``.
- ``cmd:PROGRAM ARGS`` — any program speaking the JSON-lines pipe protocol on its stdin and
  stdout: see ``harness.pipe`` and ``docs/pipe-protocol.md``. ``cmd+validate:…`` also checks
  every message against the protocol's schema. Its claims come from its ``start`` answer.
- ``http:<library>`` — a client library run against the provider emulator: see
  ``harness.adapters``.

A ``py:`` implementation declares what it claims in a ``CLAIMS`` mapping, on the factory or else
in its module::

    CLAIMS = {"rules": ["A", "C", "V", "T", "E"], "profile": "lenient", "dialect": "openai-chat"}

Without one it claims every rule group under the lenient profile. A case that needs something
unclaimed is reported "not claimed", never run and never passed.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .errors import UsageError
from .rules import RULES, rule_group
from .spec import Scenario

__all__ = ["DIALECTS", "GROUPS", "PROFILES", "Claims", "Implementation", "load_implementation"]

GROUPS: tuple[str, ...] = tuple(sorted({rule_group(rule) for rule in RULES}))
"""The rule groups an implementation may claim."""
PROFILES = ("lenient", "strict")
DIALECTS = ("openai-chat", "openai-responses", "anthropic-messages")
"""The dialects of DESIGN.md an implementation may claim."""
SCENARIO_DIALECT = "openai-chat"
"""The dialect every scenario is rendered in (the only one ``harness.render`` speaks)."""


@dataclass(frozen=True, slots=True)
class Claims:
    """What an implementation says it does: rule groups, one profile, one dialect."""

    groups: frozenset[str] = frozenset(GROUPS)
    profile: str = "lenient"
    dialect: str = "openai-chat"

    def unclaimed(self, scenario: Scenario) -> str | None:
        """Why ``scenario`` is outside these claims, or None when it is claimed."""
        if self.dialect != SCENARIO_DIALECT:
            return (
                f"the implementation claims the {self.dialect} dialect; "
                f"the scenario is in {SCENARIO_DIALECT}"
            )
        if self.profile not in scenario.profiles:
            listed = ", ".join(scenario.profiles) or "none"
            return (
                f"the implementation claims the {self.profile} profile; "
                f"the scenario runs under {listed}"
            )
        missing = [rule for rule in scenario.rules if rule_group(rule) not in self.groups]
        if missing:
            groups = sorted({rule_group(rule) for rule in missing})
            which = (
                f"rule group {groups[0]} is"
                if len(groups) == 1
                else f"rule groups {', '.join(groups)} are"
            )
            return f"{which} not claimed (the scenario cites {', '.join(missing)})"
        return None

    def to_dict(self) -> dict[str, Any]:
        """The claims in the shape an implementation writes them."""
        return {"rules": sorted(self.groups), "profile": self.profile, "dialect": self.dialect}


@dataclass(frozen=True, slots=True)
class Implementation:
    """An implementation loaded from its connectable."""

    connectable: str
    """The string it was loaded from; worker processes load it again from this."""
    name: str
    """``module:factory``, for titles."""
    factory: Callable[..., Any]
    claims: Claims


def load_implementation(spec: str) -> Implementation:
    """Load the implementation ``spec`` names; a :class:`UsageError` says what is wrong. As with
    ``python -m``, modules in the working directory can be loaded."""
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    kind, colon, rest = spec.partition(":")
    if kind == "http":
        from .adapters import load_adapter  # client libraries load only for http:

        return load_adapter(spec)
    if kind in ("cmd", "cmd+validate") and colon:
        from .pipe import load_command  # the subprocess machinery loads only for programs

        return load_command(spec)
    if kind != "py" or not colon:
        raise UsageError(
            f"{spec!r} is not a connectable: expected py:module:factory or cmd:PROGRAM ARGS"
        )
    module_name, colon, attribute = rest.partition(":")
    if not module_name or not colon or not attribute:
        raise UsageError(f"{spec!r}: a py: connectable is py:module:factory, e.g. py:pkg.mod:make")
    module = _import(spec, module_name)
    factory: Any = module
    for part in attribute.split("."):
        try:
            factory = getattr(factory, part)
        except AttributeError:
            raise UsageError(
                f"{spec!r}: module {module_name} has no attribute {attribute}"
            ) from None
    if not callable(factory):
        raise UsageError(
            f"{spec!r}: {module_name}:{attribute} is a {type(factory).__name__}, not a factory "
            "(a callable taking tools= and limits=)"
        )
    claims = getattr(factory, "CLAIMS", None)
    if claims is None:
        claims = getattr(module, "CLAIMS", None)
    return Implementation(spec, f"{module_name}:{attribute}", factory, _claims(spec, claims))


def _import(spec: str, module_name: str) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
            raise UsageError(f"{spec!r}: no module named {module_name}") from None
        raise UsageError(f"{spec!r}: importing {module_name} failed: {exc}") from None
    except Exception as exc:
        raise UsageError(
            f"{spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}"
        ) from None


def _claims(spec: str, raw: Any) -> Claims:
    if raw is None:
        return Claims()
    where = f"{spec!r}: CLAIMS"
    if not isinstance(raw, Mapping):
        raise UsageError(f"{where} must be a mapping, not {type(raw).__name__}")
    unknown = sorted(set(raw) - {"rules", "profile", "dialect"})
    if unknown:
        raise UsageError(f"{where} has unknown keys {unknown}; known: rules, profile, dialect")
    groups = raw.get("rules", GROUPS)
    if not isinstance(groups, list | tuple) or not all(isinstance(g, str) for g in groups):
        raise UsageError(f"{where}['rules'] must be a list of rule groups such as ['A', 'C']")
    if bad := [group for group in groups if group not in GROUPS]:
        raise UsageError(
            f"{where}['rules'] names {', '.join(map(repr, bad))}; "
            f"rule groups are {', '.join(GROUPS)}"
        )
    profile = raw.get("profile", "lenient")
    if profile not in PROFILES:
        raise UsageError(f"{where}['profile'] is {profile!r}; expected one of {PROFILES}")
    dialect = raw.get("dialect", "openai-chat")
    if dialect not in DIALECTS:
        raise UsageError(f"{where}['dialect'] is {dialect!r}; expected one of {DIALECTS}")
    return Claims(frozenset(groups), profile, dialect)

"""Connectables: how an implementation reaches the harness, and what it exposes.

A connectable is a string naming an implementation of the contract in DESIGN.md (after Bowtie):

- ``py:module:factory`` — imported in process. ``factory(tools=[Tool, …], limits=Limits)`` is
  called once per stream and returns an object with ``feed(bytes)`` and ``close()``.
- ``cmd:PROGRAM ARGS`` — any program speaking the JSON-lines pipe protocol on its stdin and
  stdout: see ``callstream.pipe`` and ``docs/pipe-protocol.md``. ``cmd+validate:…`` also checks
  every message against the protocol's schema. Its declaration comes from its ``start`` answer.
- ``http:<library>`` — a client library run against the provider emulator: see
  ``callstream.adapters``.

An implementation is judged on every rule whose effect it exposes, whatever it intends. It
declares only what it *exposes* (:data:`OBSERVABLES`), the profile it follows and the dialect
it reads. A ``py:`` implementation does so in a ``CALLSTREAM`` mapping, on the factory or else
in its module::

    CALLSTREAM = {"profile": "lenient", "dialect": "openai-chat",
                  "observables": ["incremental", "status", "reason", "arguments_text",
                                  "arguments", "ids", "choices", "findings"]}

Every key is optional: without one, everything is observable under the lenient profile. A check
whose observable is missing is reported *not observable* for the case, never passed; a scenario
with several choices, run on an implementation that does not expose ``choices``, is reported
*unsupported* (a declared non-feature, visible in every report); a scenario written for another
profile or dialect is *not applicable*.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from .errors import UsageError
from .spec import Scenario

__all__ = [
    "DIALECTS",
    "OBSERVABLES",
    "PROFILES",
    "Applicability",
    "Declaration",
    "Implementation",
    "choice_count",
    "declaration_from",
    "declaration_problems",
    "load_implementation",
]

PROFILES = ("lenient", "strict")
DIALECTS = ("openai-chat", "openai-responses", "anthropic-messages")
"""The dialects of DESIGN.md an implementation may read."""
SCENARIO_DIALECT = "openai-chat"
"""The dialect every scenario is rendered in (the only one ``callstream.render`` speaks)."""

OBSERVABLES: dict[str, str] = {
    "incremental": "feed() may release a result before close(), so release timing is observable",
    "status": "results say ready or rejected; without it every result handed back is ready, "
    "and a call not handed back was refused",
    "reason": "a rejected result carries a machine-readable reason",
    "arguments_text": "the argument text is handed back as it was assembled",
    "arguments": "the parsed arguments are handed back",
    "ids": "each call's id is handed back",
    "choices": "several choices of one response are assembled apart",
    "findings": "the quirks met in the stream are recorded (a findings list)",
}
"""What an implementation can expose, each with what it means. A check runs where the
observables it reads are exposed."""

Applicability = Literal["unsupported", "not_applicable"]


@dataclass(frozen=True, slots=True)
class Declaration:
    """What an implementation exposes, the profile it follows and the dialect it reads."""

    profile: str = "lenient"
    dialect: str = "openai-chat"
    observables: frozenset[str] = frozenset(OBSERVABLES)

    def exposes(self, observable: str) -> bool:
        """True when ``observable`` (a key of :data:`OBSERVABLES`) is exposed."""
        return observable in self.observables

    def skips(self, scenario: Scenario) -> tuple[Applicability, str] | None:
        """Why ``scenario`` is not run on this implementation, or None when it is: another
        dialect or profile (``not_applicable``), or several choices where the implementation
        assembles one (``unsupported``, a declared non-feature)."""
        if self.dialect != SCENARIO_DIALECT:
            return "not_applicable", (
                f"the implementation reads the {self.dialect} dialect; "
                f"the scenario is in {SCENARIO_DIALECT}"
            )
        if self.profile not in scenario.profiles:
            listed = ", ".join(scenario.profiles) or "none"
            return "not_applicable", (
                f"the implementation follows the {self.profile} profile; "
                f"the scenario runs under {listed}"
            )
        if not self.exposes("choices") and (count := choice_count(scenario)) > 1:
            return "unsupported", (
                f"the implementation assembles a single choice; the stream has {count}"
            )
        return None

    def to_dict(self) -> dict[str, Any]:
        """The declaration as reports show it (and as an implementation writes it)."""
        return {
            "profile": self.profile,
            "dialect": self.dialect,
            "observables": [name for name in OBSERVABLES if name in self.observables],
        }


def choice_count(scenario: Scenario) -> int:
    """How many choices the scenario's stream carries: its plan's or, for a literal stream, up
    to the highest choice index its payloads or its expectations name."""
    spec = scenario.spec
    seen: set[Any] = {
        call.choice for expected in (spec.expected or {}).values() for call in expected.calls
    }
    for payload in spec.literal_events or ():
        data = payload.get("data", payload) if isinstance(payload, dict) else payload
        if isinstance(data, dict) and isinstance(data.get("choices"), list):
            seen |= {c.get("index") for c in data["choices"] if isinstance(c, dict)}
    return max(spec.choices, 1 + max((c for c in seen if isinstance(c, int)), default=0))


@dataclass(frozen=True, slots=True)
class Implementation:
    """An implementation loaded from its connectable."""

    connectable: str
    """The string it was loaded from; worker processes load it again from this."""
    name: str
    """``module:factory``, for titles."""
    factory: Callable[..., Any]
    declaration: Declaration


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
    for owner in (factory, module):
        if hasattr(owner, "CLAIMS"):
            raise UsageError(
                f"{spec!r}: CLAIMS is no longer read: an implementation is judged on every rule "
                "whose effect it exposes. Rename it CALLSTREAM and keep 'profile' and 'dialect'; "
                "list what you cannot expose by leaving it out of 'observables' (see "
                "docs/contract.md)"
            )
    raw = getattr(factory, "CALLSTREAM", None)
    if raw is None:
        raw = getattr(module, "CALLSTREAM", None)
    declaration = declaration_from(raw, f"{spec!r}: CALLSTREAM")
    return Implementation(spec, f"{module_name}:{attribute}", factory, declaration)


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


def declaration_from(raw: Any, where: str) -> Declaration:
    """The :class:`Declaration` a ``CALLSTREAM`` mapping (or a pipe program's ``start`` answer)
    spells out; None means every default. A :class:`UsageError` names ``where`` and each
    mistake, one a line."""
    if problems := declaration_problems(raw, where):
        raise UsageError("\n".join(problems))
    if raw is None:
        return Declaration()
    return Declaration(
        raw.get("profile", "lenient"),
        raw.get("dialect", "openai-chat"),
        frozenset(raw.get("observables", OBSERVABLES)),
    )


def declaration_problems(raw: Any, where: str) -> list[str]:
    """Every mistake in a ``CALLSTREAM`` mapping, each a sentence naming ``where`` and the key
    (with the closest spelling, where one is close); empty when it reads."""
    if raw is None:
        return []
    if not isinstance(raw, Mapping):
        return [f"{where} must be a mapping, not {type(raw).__name__}"]
    if "rules" in raw:
        return [
            f"{where} names 'rules': claims of intent are gone, every implementation is judged "
            "on every rule whose effect it exposes; declare 'observables' instead"
        ]
    problems = []
    keys = ("profile", "dialect", "observables")
    if unknown := sorted(set(raw) - set(keys)):
        hint = _did_you_mean(unknown, keys)
        problems.append(f"{where} has unknown keys {unknown}; known: {', '.join(keys)}{hint}")
    profile = raw.get("profile", "lenient")
    if profile not in PROFILES:
        problems.append(
            f"{where}['profile'] is {profile!r}; expected one of {PROFILES}"
            + _did_you_mean([profile], PROFILES)
        )
    dialect = raw.get("dialect", "openai-chat")
    if dialect not in DIALECTS:
        problems.append(
            f"{where}['dialect'] is {dialect!r}; expected one of {DIALECTS}"
            + _did_you_mean([dialect], DIALECTS)
        )
    observables = raw.get("observables", list(OBSERVABLES))
    if not isinstance(observables, list | tuple) or not all(
        isinstance(name, str) for name in observables
    ):
        problems.append(f"{where}['observables'] must be a list such as ['status', 'ids']")
    elif bad := [name for name in observables if name not in OBSERVABLES]:
        hint = _did_you_mean(bad, OBSERVABLES)
        problems.append(
            f"{where}['observables'] names {', '.join(map(repr, bad))}; "
            f"observables are {', '.join(OBSERVABLES)}{hint}"
        )
    return problems


def _did_you_mean(words: Sequence[Any], known: Iterable[str]) -> str:
    """`` (did you mean 'lenient'?)`` for the ``words`` that one of ``known`` is close to (with
    the word, when there are several), else ``""``."""
    close = {
        word: match[0]
        for word in words
        if isinstance(word, str) and (match := difflib.get_close_matches(word, list(known), n=1))
    }
    if not close:
        return ""
    if len(words) == 1:
        return f" (did you mean {next(iter(close.values()))!r}?)"
    return " (did you mean " + ", ".join(f"{m!r} for {w!r}" for w, m in close.items()) + "?)"

"""What an implementation exposes: its :class:`Declaration` (observables, profile, dialect,
route opt-ins, whether it reads bytes or decoded events) and the :class:`Implementation` a
connectable loads into. The bottom of the
connect layer: ``callstream.connect.connectables`` (which loads connectables),
``callstream.connect.pipe`` and ``callstream.connect.adapters`` all build on it."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from callstream.reference import PROFILES as REFERENCE_PROFILES
from callstream.reference import Limits

from ..errors import UsageError
from ..rules import OPT_INS, listed_opt_ins
from .dialects import DIALECTS
from .spec import Scenario

__all__ = [
    "DECODER_LIMITS",
    "FRAMING_RULES",
    "OBSERVABLES",
    "PROFILES",
    "Applicability",
    "Declaration",
    "Implementation",
    "Reads",
    "choice_count",
    "declaration_from",
    "declaration_problems",
]

PROFILES: tuple[str, ...] = tuple(sorted(REFERENCE_PROFILES))
"""The profiles of the reference (research/wire_formats.md §8), lenient first: the order a
scenario runs them in and reports list them."""

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

Reads = Literal["bytes", "events"]
"""What an implementation is fed: the stream's ``bytes`` (the contract), or its decoded
``events``, with callstream's SSE decoder in front (a ``py+events:`` connectable)."""

FRAMING_RULES: frozenset[str] = frozenset({"T1", "T2", "T3"})
"""The SSE framing rules (lines split anywhere, line endings, fields): an implementation that
reads decoded events does not claim them, the decoder in front of it does. T4 (the sentinel and
error events) is judged on what the events say, so it stays the implementation's."""

DECODER_LIMITS: tuple[str, ...] = ("max_line_length", "max_event_size")
"""The :class:`Limits` the SSE decoder keeps, not the implementation: one that reads decoded
events never sees a line or an event's size, so it cannot reject its calls ``too_large`` for
them."""


@dataclass(frozen=True, slots=True)
class Declaration:
    """What an implementation exposes, the profile it follows, the dialects it reads, the
    route opt-ins it reads them with, and whether it is fed bytes or decoded events."""

    profile: str = "lenient"
    dialects: tuple[str, ...] = ("openai-chat",)
    observables: frozenset[str] = frozenset(OBSERVABLES)
    opt_ins: frozenset[str] = frozenset()
    """The per-route opt-ins (keys of :data:`OPT_INS`) it runs with; empty for a plain route."""
    reads: Reads = "bytes"
    """``events`` when it is fed decoded events by callstream's SSE decoder (``py+events:``),
    which then answers for the SSE framing rules and limits (:meth:`skips`)."""

    def exposes(self, observable: str) -> bool:
        """True when ``observable`` (a key of :data:`OBSERVABLES`) is exposed."""
        return observable in self.observables

    def skips(self, scenario: Scenario) -> tuple[Applicability, str] | None:
        """Why ``scenario`` is not run on this implementation, or None when it is: another
        dialect, other route opt-ins or another profile, or, for an implementation that reads
        decoded events, a scenario that proves only the SSE framing or the decoder's limits
        (``not_applicable``); or several choices where the implementation assembles one
        (``unsupported``, a declared non-feature)."""
        if scenario.spec.dialect not in self.dialects:
            read = " and ".join(self.dialects)
            return "not_applicable", (
                f"the implementation reads the {read} dialect; "
                f"the scenario is in {scenario.spec.dialect}"
            )
        if scenario.opt_ins != self.opt_ins:
            return "not_applicable", _other_route(self.opt_ins, scenario.opt_ins)
        if self.profile not in scenario.profiles:
            listed = ", ".join(scenario.profiles) or "none"
            return "not_applicable", (
                f"the implementation follows the {self.profile} profile; "
                f"the scenario runs under {listed}"
            )
        if self.reads == "events" and (why := _the_decoders(scenario)) is not None:
            return "not_applicable", why
        if not self.exposes("choices") and (count := choice_count(scenario)) > 1:
            return "unsupported", (
                f"the implementation assembles a single choice; the stream has {count}"
            )
        return None

    def to_dict(self) -> dict[str, Any]:
        """The declaration as reports show it (and as an implementation writes it); a plain
        route's has no ``opt_ins``, and one fed bytes no ``reads``."""
        written: dict[str, Any] = {
            "profile": self.profile,
            "dialects": list(self.dialects),
            "observables": [name for name in OBSERVABLES if name in self.observables],
        }
        if self.opt_ins:
            written["opt_ins"] = listed_opt_ins(self.opt_ins)
        if self.reads == "events":
            written["reads"] = "events"
        return written


def _the_decoders(scenario: Scenario) -> str | None:
    """Why ``scenario`` proves what callstream's SSE decoder does rather than what an
    implementation fed decoded events does: every rule it cites is a framing rule
    (:data:`FRAMING_RULES`), or it sets a limit the decoder keeps (:data:`DECODER_LIMITS`);
    None when it proves more."""
    if scenario.rules and set(scenario.rules) <= FRAMING_RULES:
        framing = ", ".join(sorted(FRAMING_RULES))
        return (
            "the implementation reads decoded events: callstream's SSE decoder reads the bytes "
            f"for it, so the SSE framing rules ({framing}) are the decoder's"
        )
    limits = scenario.spec.limits
    if kept := [
        f"{name} {getattr(limits, name)}"
        for name in DECODER_LIMITS
        if getattr(limits, name) != getattr(_DEFAULT_LIMITS, name)
    ]:
        return (
            f"the implementation reads decoded events; the scenario sets {' and '.join(kept)}, "
            "a limit of callstream's SSE decoder, which reads the bytes for it: the "
            "implementation never sees a line or an event's size"
        )
    return None


_DEFAULT_LIMITS = Limits()


def _other_route(declared: frozenset[str], wanted: frozenset[str]) -> str:
    """Why a scenario written for the route opt-ins ``wanted`` does not run on an
    implementation that declares ``declared`` (D74)."""
    if not wanted:
        return (
            f"the implementation's route opts in to {_listed(declared)}, a configuration of its "
            "own; the scenario is for a route without opt-ins (D74)"
        )
    route = "declares no route opt-in" if not declared else f"opts in to {_listed(declared)} only"
    return (
        f"the scenario is for a route that opts in to {_listed(wanted)}; "
        f"the implementation {route} (D74)"
    )


def _listed(opt_ins: frozenset[str]) -> str:
    """``snapshots and repair_json``, in the order of :data:`OPT_INS`."""
    return " and ".join(listed_opt_ins(opt_ins))


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

    def factory_for(self, dialect: str) -> Callable[..., Any]:
        """The factory of streams in ``dialect``: an implementation that reads several
        dialects is told which one each stream is in (``dialect=``, docs/contract.md)."""
        if len(self.declaration.dialects) > 1:
            return functools.partial(self.factory, dialect=dialect)
        return self.factory


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
        _dialects(raw),
        frozenset(raw.get("observables", OBSERVABLES)),
        frozenset(raw.get("opt_ins", ())),
    )


def _dialects(raw: Mapping[str, Any]) -> tuple[str, ...]:
    """The dialects a mapping declares: ``dialects`` (a list) or ``dialect`` (one)."""
    if "dialects" in raw:
        return tuple(raw["dialects"])
    return (raw.get("dialect", "openai-chat"),)


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
    keys = ("profile", "dialect", "dialects", "observables", "opt_ins")
    if unknown := sorted(set(raw) - set(keys)):
        hint = _did_you_mean(unknown, keys)
        problems.append(f"{where} has unknown keys {unknown}; known: {', '.join(keys)}{hint}")
    profile = raw.get("profile", "lenient")
    if profile not in PROFILES:
        problems.append(
            f"{where}['profile'] is {profile!r}; expected one of {PROFILES}"
            + _did_you_mean([profile], PROFILES)
        )
    if "dialect" in raw and "dialects" in raw:
        problems.append(f"{where} names both 'dialect' and 'dialects': keep one")
    elif "dialects" in raw:
        dialects = raw["dialects"]
        if (
            not isinstance(dialects, list | tuple)
            or not dialects
            or not all(isinstance(name, str) for name in dialects)
        ):
            problems.append(f"{where}['dialects'] must be a list such as ['openai-chat']")
        elif bad := [name for name in dialects if name not in DIALECTS]:
            problems.append(
                f"{where}['dialects'] names {', '.join(map(repr, bad))}; expected some of "
                f"{tuple(DIALECTS)}" + _did_you_mean(bad, DIALECTS)
            )
    else:
        dialect = raw.get("dialect", "openai-chat")
        if dialect not in DIALECTS:
            problems.append(
                f"{where}['dialect'] is {dialect!r}; expected one of {tuple(DIALECTS)}"
                + _did_you_mean([dialect], DIALECTS)
            )
    problems += _names_problems(
        raw, where, "observables", OBSERVABLES, "['status', 'ids']", "observables"
    )
    problems += _names_problems(raw, where, "opt_ins", OPT_INS, "['snapshots']", "route opt-ins")
    return problems


def _names_problems(
    raw: Mapping[str, Any], where: str, key: str, known: Collection[str], example: str, what: str
) -> list[str]:
    """What is wrong with ``raw[key]``, an optional list of names, each one of ``known`` (an
    absent key is no problem: the caller's default applies)."""
    names = raw.get(key, [])
    if not isinstance(names, list | tuple) or not all(isinstance(name, str) for name in names):
        return [f"{where}[{key!r}] must be a list such as {example}"]
    if bad := [name for name in names if name not in known]:
        hint = _did_you_mean(bad, known)
        listed = ", ".join(known)
        return [f"{where}[{key!r}] names {', '.join(map(repr, bad))}; {what} are {listed}{hint}"]
    return []


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

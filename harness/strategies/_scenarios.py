"""Scenarios from specs: the rules a spec exercises (``rules_for``), its tags and title
(``scenario_for``, ``scenarios``)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from functools import partial

from hypothesis import strategies as st

from callstream.reference import Limits, Tool

from ..core.declaration import PROFILES
from ..core.dialects import DIALECTS
from ..core.oracle import expect
from ..core.rendering import render
from ..core.spec import (
    Scenario,
    Splitting,
    StreamSpec,
    Transport,
)
from ..rules import RULES, RuleId
from ._invalid import strictly_parses
from ._predictable import predictable
from ._streams import stream_specs

__all__ = [
    "rules_for",
    "scenario_for",
    "scenarios",
]


_ODDITY_RULES: dict[str, tuple[str, ...]] = {
    "created_late": ("A5",),
    "choice_not_object": ("A7", "V6"),
    "kind_changes": ("A3", "V2"),
    "name_changes": ("A3",),
    "string_data": ("T4", "V6"),
    "text_data": ("T4", "V6"),
    "string_error": ("T4", "V6"),
    "null_message": ("A4", "V6"),
    "null_fields": ("A4",),
    "server_tool": ("E1", "V3"),
    "empty_item_id": ("A4",),
}
"""The rules an oddity proves beyond those of the knobs (docs/rules.md: C30, D90, D12, T4, A4,
D21)."""


def rules_for(spec: StreamSpec) -> tuple[RuleId, ...]:
    """The rules of REQUIREMENTS.md a planned spec exercises, from the knobs it uses."""
    rules = {"A1", "A2", "C4", *_ODDITY_RULES.get(spec.oddity or "", ())}
    calls, ending, transport, noise = spec.calls, spec.ending, spec.transport, spec.noise
    completing = ending.finish in ("tool_calls", "stop", "function_call")
    if completing and ending.error is None:
        rules.add("C1")
    if any(len(plan.fragments) > 1 for plan in calls):
        rules.add("T1")
    if spec.schedule == "interleaved" or any(
        plan.omit_index or plan.index is not None for plan in calls
    ):
        rules.add("A5")
    names = [plan.name for plan in calls if plan.name is not None]
    if len(set(names)) < len(names):
        rules.add("A6")
    if spec.choices > 1:
        rules.add("A7")
    if any(
        plan.id_policy in ("every", "changing", "numeric")
        or plan.name_policy == "every"
        or plan.type_every
        for plan in calls
    ):
        rules.add("A3")
    if any(
        plan.id_policy in ("omit", "empty")
        or plan.name_policy in ("late", "omit")
        or plan.header_arguments
        or "" in plan.fragments
        for plan in calls
    ):
        rules.add("A4")
    if ending.finish is None or not ending.done or ending.cut:
        rules.add("C2")
    if not completing or ending.cut or ending.error:
        rules.add("C3")
    tools = {tool.name: tool for tool in spec.tools}
    for plan in calls:
        if plan.name is None or plan.name_policy == "omit" or plan.id_policy in ("omit", "empty"):
            rules.add("V4")
        elif plan.name not in tools:
            rules.add("V3")
        elif not (strictly_parses(plan.arguments) and plan.arguments.lstrip()[:1] == "{"):
            rules.add("V1")
        elif tools[plan.name].parameters:
            rules.add("V2")
    if spec.limits != Limits():
        rules.add("V5")
    if transport.newline != "lf":
        rules.add("T2")
    if transport.invalid_utf8:
        rules.add("T1")
    if transport != Transport(newline=transport.newline) or noise.keepalive:
        rules.add("T3")
    if ending.error is not None or ending.done:
        rules.add("T4")
    if len(calls) > 1:
        rules.add("E4")
    return tuple(rule for rule in RULES if rule in rules)


def _tags(spec: StreamSpec) -> tuple[str, ...]:
    tags = {"delta", "json", "lifecycle"}
    if spec.transport != Transport() or spec.noise.keepalive:
        tags.add("sse")
    if spec.transport.bom or any(not plan.arguments.isascii() for plan in spec.calls):
        tags.add("bytes")
    return tuple(tag for tag in ("bytes", "sse", "delta", "json", "lifecycle") if tag in tags)


def _title(spec: StreamSpec) -> str:
    calls = spec.calls
    names = ", ".join(str(plan.name) for plan in calls)
    parts = [f"{len(calls)} call{'s' if len(calls) != 1 else ''} ({names})"]
    pieces = sum(len(plan.fragments) for plan in calls)
    parts.append(f"{pieces} fragment{'s' if pieces != 1 else ''}")
    if spec.choices > 1:
        parts.append(f"{spec.choices} choices")
    if spec.schedule != "sequential":
        parts.append(spec.schedule)
    ending = spec.ending
    parts.append(f"error {ending.error}" if ending.error else f"finish {ending.finish}")
    if not ending.done:
        parts.append("no [DONE]")
    if ending.cut:
        parts.append("cut")
    if spec.transport.newline != "lf":
        parts.append(spec.transport.newline)
    return "fuzz: " + ", ".join(parts)


def scenario_for(
    spec: StreamSpec, splittings: Sequence[Splitting] = (), opt_ins: frozenset[str] = frozenset()
) -> Scenario:
    """A ``must`` scenario for a planned spec (``impl-defined`` for ``name_changes``, D12), under
    both profiles (the lenient one alone on a route with ``opt_ins``, D75): its id (``fuzz-``
    and a hash of the spec, so the same spec always gets the same id), a title naming what it
    does, the rules from ``rules_for``, layer tags, and the quirks the oracle expects a finding
    for."""
    digest = hashlib.sha256(repr(spec).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    findings = expect(spec, render(spec), "lenient", opt_ins).findings
    return Scenario(
        id=f"fuzz-{digest}",
        title=_title(spec),
        rules=rules_for(spec),
        spec=spec,
        tags=_tags(spec),
        quirks=tuple(quirk for quirk in DIALECTS[spec.dialect].quirks if quirk in findings),
        # A name changed mid-call may be rejected or taken as the last (D12): only a call run
        # under a name it did not end with is unsafe.
        kind="impl-defined" if spec.oddity == "name_changes" else "must",
        profiles=("lenient",) if opt_ins else PROFILES,
        splittings=tuple(splittings),
        opt_ins=opt_ins,
    )


def scenarios(
    tools: Sequence[Tool] | None = None,
    *,
    dialect: str = "openai-chat",
    max_calls: int = 3,
    max_choices: int = 2,
    lone_surrogates: bool = True,
    opt_ins: frozenset[str] = frozenset(),
) -> st.SearchStrategy[Scenario]:
    """``stream_specs`` wrapped as Scenarios by ``scenario_for`` (default splittings); with
    ``opt_ins``, for a route that opts in (``snapshots``, openai-chat: D76), each stream made
    one the oracle predicts there (:func:`_on_route`)."""
    specs = stream_specs(
        tools,
        dialect=dialect,
        max_calls=max_calls,
        max_choices=max_choices,
        lone_surrogates=lone_surrogates,
    )
    if not opt_ins:
        return specs.map(scenario_for)
    return (
        specs.map(_on_route)
        .filter(partial(predictable, opt_ins=opt_ins))
        .map(partial(scenario_for, opt_ins=opt_ins))
    )


def _on_route(spec: StreamSpec) -> StreamSpec:
    """``spec`` without what the oracle does not predict on a snapshots route (D76): its
    oddity, a cut, a limit on sizes, arguments sent as a JSON value. Ordinary deltas stay: a
    snapshots route must refuse them."""
    return replace(
        spec,
        calls=tuple(replace(plan, arguments_as_value=False) for plan in spec.calls),
        ending=replace(spec.ending, cut=False),
        limits=Limits(max_calls=spec.limits.max_calls, max_choices=spec.limits.max_choices),
        oddity=None,
    )

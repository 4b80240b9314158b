"""The calls of one stream (``call_plans``): ids, names, metadata policies, schedules and wire
indices, each drawn so that the oracle can predict the outcome."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from callstream.reference import CallKind, Tool

from ..core.dialects.openai_chat.events import delta_count
from ..core.spec import (
    CallPlan,
    IdPolicy,
    NamePolicy,
    Schedule,
)
from ._arguments import draw_value
from ._fragments import cut
from ._invalid import draw_malformed, draw_schema_violation, violations
from ._json_text import SURROGATE, spell
from ._knobs import Json, between, flag, knobs, label_draw, one_in, pick, rarely, sometimes
from ._schemas import CUSTOM_TOOLS
from ._tape import CALL_BYTES, tape

__all__ = [
    "call_plans",
    "draw_call_plans",
]


_OUTCOMES = ("malformed_json", "schema_violation", "unknown_tool", "missing_name", "no_arguments")
_UNKNOWN_NAMES = ("unknown_tool", "Search", "get_weather ", "tool.name", "функция")
_ID_SUFFIXES = ("_a1B2c3", "-Ωμέγα", "_😀")
_EXTRA_CONTENT = {"google": {"thought_signature": "CiQBjz1rX2Z0ZXN0LXNpZ25hdHVyZQ=="}}
_INDEXING = sometimes("next", ("none", "zero", "late"), 30)
_QUIRKS = knobs(flag(50), one_in("next", ("none", "zero", "late"), 45))
"""Whether a stream's calls send their metadata the ways real servers do (half the streams),
and how its first choice numbers them (``late``: a call's first delta without its index, the
later ones with it; 15 % each, as only quirky streams use them), in one choice."""
_DRAFTS = knobs(
    (("valid", 16), ("malformed_json", 2), *((outcome, 1) for outcome in _OUTCOMES[1:])),
    flag(10),
)
"""What a call's arguments are (valid about three times in four, malformed JSON, which takes
the most shapes, twice as often as each other refusal) and whether their strings may hold lone
surrogates (one call in ten), in one choice."""


@dataclass(frozen=True, slots=True)
class _Draft:
    """A call before its metadata: who it names and its argument text."""

    name: str | None
    arguments: str
    outcome: str
    value: Json = None
    """The parsed arguments when the text is a JSON object (valid or not)."""
    lone: bool = False
    """The value may hold lone surrogates (which a JSON value on the wire cannot)."""
    kind: CallKind = "function"


_CUSTOM_INPUTS = {custom.tool.name: custom for custom in CUSTOM_TOOLS}


def _other_kind(draw: st.DrawFn, tool: Tool, tools: Sequence[Tool]) -> str | None:
    """Half the time, for a call that must name no offered tool, a tool of the other kind
    (V3: a function call naming a custom tool, or the reverse, names none), when one is."""
    others = [other.name for other in tools if other.kind != tool.kind]
    if not others or not draw(rarely(50)):
        return None
    label_draw("call: names a tool of the other kind")
    return str(pick(draw, others))


_CUSTOM_CALLS = sometimes("fits", ("refused", "other kind"), 50)
"""What a call to a custom tool sends: an input its format takes, or (as often) one it refuses
or a function call under the custom tool's name (V3: it names no offered function tool)."""


def _drafted_name(draw: st.DrawFn, tool: Tool, tools: Sequence[Tool], outcome: str) -> str | None:
    """The name a call to ``tool`` sends: its own, none (``missing_name``), or for
    ``unknown_tool`` a tool of the other kind or a name no tool has."""
    if outcome == "unknown_tool":
        known = {tool.name for tool in tools}
        return _other_kind(draw, tool, tools) or pick(
            draw, [n for n in _UNKNOWN_NAMES if n not in known] or ["x"]
        )
    if outcome == "missing_name":
        return None
    return tool.name


def _custom_draft(draw: st.DrawFn, tool: Tool, tools: Sequence[Tool], outcome: str) -> _Draft:
    """A call to the custom ``tool``: an input its format takes or one it refuses, or a
    function call under its name; where the drafted outcome concerns the name or the absence
    of text, that outcome instead."""
    custom = _CUSTOM_INPUTS.get(tool.name)
    fits, refused = (custom.fits, custom.refused) if custom is not None else (("",), ())
    form = draw(_CUSTOM_CALLS) if outcome in ("valid", "malformed_json", "schema_violation") else ""
    if form == "other kind":
        label_draw("call: names a tool of the other kind")
        text = json.dumps({"input": fits[0]})
        return _Draft(tool.name, text, "unknown_tool", {"input": fits[0]})
    refuse = form == "refused" and bool(refused)
    text = "" if outcome == "no_arguments" else str(pick(draw, refused if refuse else fits))
    label_draw("call: custom, input refused" if refuse else "call: custom")
    name = _drafted_name(draw, tool, tools, outcome)
    return _Draft(name, text, outcome, kind="custom")


def _draft(draw: st.DrawFn, tools: Sequence[Tool], lone_surrogates: bool) -> _Draft:
    """Who one call names and its argument text (drawn inside the call's span: no strategy is
    built per call)."""
    tool: Tool = pick(draw, tools)
    outcome, lone = _DRAFTS.draw(draw)
    if tool.kind == "custom":
        return _custom_draft(draw, tool, tools, outcome)
    if outcome == "schema_violation" and not violations(tool.parameters):
        outcome = "malformed_json"
    label_draw(f"call: {outcome}")
    lone = lone_surrogates and lone
    if outcome == "no_arguments":
        return _Draft(tool.name, "", outcome, lone=lone)
    if outcome in ("malformed_json", "schema_violation"):
        damage = draw_schema_violation if outcome == "schema_violation" else draw_malformed
        invalid = damage(draw, tool, lone)
        label_draw(f"invalid arguments: {invalid.kind}")
        value = json.loads(invalid.text) if invalid.reason == "schema_violation" else None
        return _Draft(tool.name, invalid.text, outcome, value, lone)
    value = draw_value(draw, tool.parameters, lone)
    text = spell(draw, value)
    name = _drafted_name(draw, tool, tools, outcome)
    return _Draft(name, text, outcome, value, lone)


def _bare(plan: CallPlan, schedule: Schedule) -> bool:
    """Whether some delta of a call carries neither index, id nor name."""
    return (
        plan.omit_index
        and plan.id_policy not in ("every", "changing")
        and plan.name_policy != "every"
        and delta_count(plan, schedule) > 1
    )


@dataclass
class _Wires:
    """The tool-call indices used so far in one choice, and by which calls."""

    used: dict[int, CallPlan]
    position: int = 0


def _reusable(plan: CallPlan) -> bool:
    """Whether a call's index may be taken over by a new call (quirk C2): both must carry a
    string id from their first delta and never send a name late, or the reader cannot tell."""
    return (
        not plan.legacy
        and not plan.omit_index
        and plan.id_policy in ("once", "every")
        and plan.name_policy != "late"
    )


@dataclass
class _Stream:
    """What the calls drawn so far decided for the ones still to come."""

    tools: Sequence[Tool]
    schedule: Schedule
    lone_surrogates: bool
    quirky: bool
    no_index: set[int]
    zero: set[int]
    late: set[int]
    """Choices whose calls send no index on their first delta (sequential calls only)."""
    wires: dict[int, _Wires]
    legacy_in: set[int]
    ambiguous: set[int]
    count: int = 0


@st.composite
def _call_plans(
    draw: st.DrawFn,
    tools: Sequence[Tool],
    choices: int,
    schedule: Schedule,
    max_calls: int,
    lone_surrogates: bool,
) -> tuple[CallPlan, ...]:
    return draw_call_plans(draw, tools, choices, schedule, max_calls, lone_surrogates)


def draw_call_plans(
    draw: st.DrawFn,
    tools: Sequence[Tool],
    choices: int,
    schedule: Schedule,
    max_calls: int,
    lone_surrogates: bool,
) -> tuple[CallPlan, ...]:
    """What ``call_plans`` draws, drawn in the caller's span (from its tape): how many calls
    (shrinking to one; ``callstream.fuzz.minimise`` drops any call past that), each then read
    from a tape of its own, so that the shrinker simplifies one call without moving the bytes
    of the next."""
    read = tape(draw)
    # Per choice: indices as OpenAI sends them, none at all (Gemini), or every call at index 0
    # told apart by a new id and name (Ollama), which cannot be interleaved.
    quirky, mode = _QUIRKS.draw(read)
    if quirky:
        label_draw("calls: metadata quirks")
    modes = [mode, *(read(_INDEXING) for _ in range(1, choices))]
    stream = _Stream(
        tools,
        schedule,
        lone_surrogates,
        quirky,
        no_index={choice for choice, mode in enumerate(modes) if quirky and mode == "none"},
        zero={
            choice
            for choice, mode in enumerate(modes)
            if quirky and mode == "zero" and schedule != "interleaved"
        },
        late={
            choice
            for choice, mode in enumerate(modes)
            if quirky and mode == "late" and schedule == "sequential"
        },
        wires={choice: _Wires({}) for choice in range(choices)},
        legacy_in=set(),
        ambiguous=set(),
    )
    # The calls are drawn in order, each seeing what the earlier ones decided.
    count = 1 + read(between(0, max_calls - 1))
    plans = [_call(read.another(CALL_BYTES), stream) for _ in range(count)]
    if len({plan.name for plan in plans if plan.name is not None}) < len(plans):
        label_draw("calls: the same function twice")
    return tuple(plans)


def _call(draw: st.DrawFn, stream: _Stream) -> CallPlan:
    """One more call of ``stream``."""
    choices = len(stream.wires)
    choice = draw(between(0, choices - 1)) if choices > 1 else 0
    draft = _draft(draw, stream.tools, stream.lone_surrogates)
    schedule = stream.schedule
    if schedule in ("whole", "together"):
        pieces: tuple[str, ...] = (draft.arguments,) if draft.arguments else ()
    else:
        pieces = cut(draw, draft.arguments)
    plan = CallPlan(
        draft.name,
        draft.arguments,
        pieces,
        kind=draft.kind,
        id=f"call_{stream.count}",
        choice=choice,
    )
    stream.count += 1
    if stream.quirky:
        plan = _metadata(
            draw,
            plan,
            draft,
            schedule,
            omit_index=choice in stream.no_index,
            zero_index=choice in stream.zero,
            late_index=choice in stream.late,
            legacy_in=stream.legacy_in,
        )
    if plan.legacy:
        stream.legacy_in.add(choice)
    wires = stream.wires[choice]
    if choice in stream.no_index and schedule == "sequential":
        # A bare fragment (no index, id or name) while several calls are open rejects the
        # calls open then; the oracle rejects the whole choice, so no call may open later
        # unless it is bare too (and so rejected in its turn).
        if choice in stream.ambiguous and not _bare(plan, schedule):
            reject()
        if wires.position > 0 and _bare(plan, schedule):
            stream.ambiguous.add(choice)
    return _wire_index(draw, plan, wires, schedule, stream.quirky, choice in stream.zero)


_ID_POLICIES: tuple[IdPolicy, ...] = ("every", "omit", "empty", "numeric", "changing")
_NAME_POLICIES: tuple[NamePolicy, ...] = ("every", "omit", "late")
_WHO = knobs(
    ((False, 6), (True, 1)),  # the legacy function_call (14 %: it turns off the others)
    (
        ("once", 10),
        *(
            (policy, {"changing": 6, "numeric": 5, "every": 4}.get(policy, 3))
            for policy in _ID_POLICIES
        ),
    ),
    (("once", 9), *((policy, 2) for policy in _NAME_POLICIES)),  # 40 %
    (("", 17), *((suffix, 1) for suffix in _ID_SUFFIXES)),  # 15 %
)
"""How a quirky call names itself, in one choice."""
_WHO_UNINDEXED = knobs(
    ((False, 6), (True, 1)),
    (
        ("once", 10),
        *((policy, 15 if policy in ("omit", "empty") else 3) for policy in _ID_POLICIES),
    ),
    (("once", 9), *((policy, 2) for policy in _NAME_POLICIES)),
    (("", 17), *((suffix, 1) for suffix in _ID_SUFFIXES)),
)
"""How a quirky call without an index names itself: as ``_WHO``, but without an id (or with
``""``, as Gemini sends it) about one time in two, so that a later call routed by its name
alone (a call of its own, C1) is common, not one stream in three hundred."""
_HOW = knobs(
    flag(15),  # arguments as a JSON value
    flag(20),  # cumulative snapshots
    flag(10),  # extra_content
    ((False, 8), ("function", 1), ("", 1)),  # type in every delta: its kind, or "" (Novita)
    flag(20),  # arguments in the header
)
"""How a quirky call's arguments travel, in one choice."""


def _metadata(
    draw: st.DrawFn,
    plan: CallPlan,
    draft: _Draft,
    schedule: Schedule,
    *,
    omit_index: bool,
    zero_index: bool,
    late_index: bool,
    legacy_in: set[int],
) -> CallPlan:
    """How one call's metadata travels, among the combinations the oracle can predict. Every
    knob is drawn, then the combinations the oracle cannot predict are turned back to the
    ordinary value, so a call's draws stay aligned while the shrinker simplifies."""
    legacy, id_policy, name_policy, suffix = (_WHO_UNINDEXED if omit_index else _WHO).draw(draw)
    as_value, snapshots, extra, repeated_type, header_arguments = _HOW.draw(draw)
    type_every = repeated_type is not False
    blank_type = repeated_type == "" and plan.kind == "function"
    if plan.kind == "custom":
        # The legacy function_call has no custom form; cumulative snapshots (C10) are a quirk
        # of function arguments.
        legacy = snapshots = False
    if late_index:
        # A header without an index opens a call of its own by its id; the deltas after it
        # carry none, nor a name, so the index they name can only be that call's (C1).
        legacy = False
        id_policy = "once"
        name_policy = name_policy if name_policy in ("once", "omit") else "once"
    if zero_index:
        # Each call at index 0 must come with an id and a name to be told from the last one.
        legacy = False
        id_policy = id_policy if id_policy in ("once", "every") else "once"
        name_policy = name_policy if name_policy in ("once", "every") else "once"
    if legacy and not omit_index and schedule != "together" and plan.choice not in legacy_in:
        label_draw("call: legacy function_call")
        return replace(plan, id=None, legacy=True)
    if id_policy == "changing" and (omit_index or name_policy in ("every", "late")):
        # A changed id that comes with a name is a new call, not the same one continued; and
        # without an index, a changed id is a new call too.
        id_policy = "once"
    if omit_index:
        # Without an index a fragment is routed by its id: one that only repeats the name
        # reads as a new call, a header with neither id nor name as the old one, and a name
        # that comes late as a new call.
        if name_policy == "late" or (name_policy == "every" and id_policy != "every"):
            # A name without an id or an index would open a call of its own: send none.
            name_policy = "omit"
        if (name_policy == "omit" or plan.name is None) and id_policy not in ("once", "every"):
            # A header with neither id nor name continues the open call: a call without a
            # name opens by its id (its first delta has its id alone: a call of its own).
            id_policy = "once"
        # An entry the reader cannot route is dropped, with the repeated type it carries.
        type_every = blank_type = False
    name = plan.name
    if name_policy == "omit":
        # The same bytes as a call without a name; the oracle expects the plan's name for a
        # call it rejects before completion even when the policy never sends it.
        name, name_policy = None, "once"
        label_draw("call: name omit")
    call_id = f"{int(plan.id[5:]):04d}" if id_policy == "numeric" and plan.id else plan.id
    as_value = (
        as_value
        and name_policy != "late"
        and isinstance(draft.value, dict)
        and not draft.lone
        and not SURROGATE.search(json.dumps(draft.value, ensure_ascii=False))
    )
    snapshots = snapshots and not as_value and schedule in ("sequential", "interleaved")
    for knob, on in (
        (f"id {id_policy}", id_policy != "once"),
        (f"name {name_policy}", name_policy != "once"),
        ("arguments as a value", as_value),
        ("cumulative snapshots", snapshots),
        ("extra_content", extra),
        ("no index", omit_index),
        ("no index on the first delta", late_index),
        ('type "" on every delta', type_every and blank_type),
    ):
        if on:
            label_draw(f"call: {knob}")
    return replace(
        plan,
        name=name,
        id=None if call_id is None else call_id + suffix,
        omit_index=omit_index,
        late_index=late_index,
        id_policy=id_policy,
        name_policy=name_policy,
        type_every=type_every,
        blank_type=type_every and blank_type,
        header_arguments=header_arguments,
        arguments_as_value=as_value,
        snapshots=snapshots,
        extra_content=copy.deepcopy(_EXTRA_CONTENT) if extra else None,
    )


def _wire_index(
    draw: st.DrawFn, plan: CallPlan, wires: _Wires, schedule: Schedule, quirky: bool, zero: bool
) -> CallPlan:
    """The call's tool-call index on the wire: the next one, or (rarely) past a gap (C14), one
    an earlier gap skipped (below the next: C14 too) or one an earlier call of the choice
    already uses (C2); with ``zero``, index 0 whenever the reader can tell the calls there
    apart."""
    position = wires.position
    wires.position += 1
    if plan.legacy or plan.omit_index:
        return plan
    if plan.late_index:
        if position > 0 or delta_count(plan, schedule) < 2:
            # Only the first call of a choice (C1 continues the single open call), and one
            # whose index comes at all: else it sends it from the first delta, as any other.
            plan = replace(plan, late_index=False)
        else:
            wires.used[position] = plan
            return plan
    following = len(wires.used)
    wire = following if following not in wires.used else max(wires.used) + 1
    if plan.name_policy == "late" and wire != following:
        # The strict profile rejects a call at a header whose index deviates (C14), before a
        # late name arrives; the oracle expects the name all the same.
        plan = replace(plan, name_policy="once")
    owners = [w for w, owner in wires.used.items() if _reusable(owner)]
    how = "next"
    takes_over = plan.name is not None and _reusable(plan) and plan.name_policy in ("once", "every")
    holes = [w for w in range(following) if w not in wires.used]
    if zero and 0 in owners and takes_over:
        how = "zero"
    elif quirky and holes and plan.name_policy != "late" and draw(rarely(90)):
        how = "below"
    elif quirky and draw(rarely(25)) and plan.name_policy != "late":
        options = ["gap"]
        if owners and schedule != "interleaved" and takes_over:
            options.append("reuse")
        how = pick(draw, options)
    if how == "gap":
        wire = max([wire - 1, *wires.used]) + draw(between(2, 4))
        label_draw("call: index gap")
    elif how == "below":
        # An index an earlier gap skipped: below the next one, so the indices go down (C14).
        # Its metadata otherwise plain, so that C14 is what the strict profile rejects it for.
        wire = pick(draw, holes)
        plan = replace(
            plan,
            id_policy="once",
            name_policy="once",
            type_every=False,
            blank_type=False,
            header_arguments=False,
            arguments_as_value=False,
            snapshots=False,
            extra_content=None,
        )
        label_draw("call: index below the next")
    elif how == "reuse":
        wire = pick(draw, owners)
        label_draw("call: index reused")
    elif how == "zero":
        wire = 0
        label_draw("call: index 0 reused (every call at index 0)")
    wires.used[wire] = plan
    return plan if wire == position else replace(plan, index=wire)


def call_plans(
    tools: Sequence[Tool],
    *,
    choices: int = 1,
    schedule: Schedule = "sequential",
    max_calls: int = 3,
    lone_surrogates: bool = True,
) -> st.SearchStrategy[tuple[CallPlan, ...]]:
    """The calls of one stream (1 to ``max_calls``, spread over ``choices``), each naming one of
    ``tools`` (often the same one twice) with arguments valid for it, or now and then a call
    that must be refused: malformed JSON, a schema violation, an unknown or missing name, no
    arguments at all. Each is cut by ``fragments`` (whole under the ``whole`` and ``together``
    schedules). Now and then the calls' metadata travels the way real servers send it: ids
    repeated, changing, missing, empty or numeric; names repeated, late or missing; ``type``
    repeated; arguments in the header, as a JSON value or as cumulative snapshots; the legacy
    ``function_call``; ``extra_content``; no index, an index past a gap, or one reused by a new
    call. Only combinations whose outcome the oracle predicts are drawn."""
    if not tools:
        raise InvalidArgument("call_plans needs at least one tool")
    return _call_plans(tuple(tools), choices, schedule, max_calls, lone_surrogates)

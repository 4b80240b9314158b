"""The ``openai-responses`` streams (``GENERATORS["openai-responses"]``): the calls of
``call_plans`` as output items, sent sequentially, in parallel (``interleaved``) or each whole;
a message item before them; every terminal event (completed, incomplete on the token limit or
the content filter, ``response.done``, failed after a flat or nested ``error``, an ``error``
alone, none), events after the terminal, a cut last event; the transports of every dialect.
Knobs that belong to Chat Completions are turned off, so every spec drawn is one the
``openai-responses`` oracle predicts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

from hypothesis import strategies as st

from callstream.reference import Limits, Tool

from ..core.spec import CallPlan, Ending, Noise, StreamSpec
from ._calls import draw_call_plans
from ._knobs import aim, between, flag, knobs, label_draw, one_in, rarely
from ._oddities import draw_oddity, with_oddity
from ._schemas import CUSTOM_KNOB, draw_tools, with_custom_tool
from ._tape import STREAM_BYTES, tape
from ._transports import draw_transport

__all__ = ["responses_stream_specs"]

_DIALECT = "openai-responses"
_SCHEDULES = ("interleaved", "whole")
_FINISHES: tuple[Any, ...] = (
    "length",
    None,
    "content_filter",
    "done",
    "stop",
    "length",
    None,
    "done",
    "content_filter",
)
_ERRORS: tuple[Any, ...] = ("nested", "flat", "event", "failed")
_CUT_OFF = (None, "length", "content_filter")
"""The finishes that leave the last call without its ``.done`` (or send no terminal)."""
_NEWLINES: tuple[Literal["lf", "crlf", "cr", "mixed"], ...] = ("lf", "crlf", "cr", "mixed")
_ONE_IN_THREE = ((False, 2), (True, 1))
"""About 35 % (a third), in weights small enough for nine knobs to share a choice."""
_AFTER = (("duplicate_finish",), ("late_delta",))


_ID_POLICIES = ("once", "omit", "empty", "changing")
"""How a call item's ``call_id`` travels: once, not at all, empty, or another one in its
``output_item.done`` (``changing``: the call is refused there, A3)."""


def _as_item(plan: CallPlan, header: bool, index: int | None) -> CallPlan:
    """``plan`` with only the knobs a Responses call item has: at output_index ``index`` when
    given (0 for a gateway that numbers every item 0, quirk R8; or far down); its deltas
    cumulative snapshots (which ``.done`` then restates otherwise, quirk R1) where the ending
    finishes every call. A call whose text comes only in ``.done`` (earendil-works/pi#2745) is
    not drawn: a plan's fragments must concatenate to its arguments for the regression it
    becomes to load back; the corpus has it literally."""
    return replace(
        plan,
        index=index,
        omit_index=False,
        late_index=False,
        id_policy=plan.id_policy if plan.id_policy in _ID_POLICIES else "once",
        name_policy=plan.name_policy if plan.name_policy in ("once", "omit") else "once",
        type_every=False,
        blank_type=False,
        header_arguments=header and bool(plan.arguments),
        arguments_as_value=False,
        snapshots=plan.snapshots and not header,
        legacy=False,
        extra_content=None,
    )


_SHAPES = knobs(one_in("sequential", _SCHEDULES, 35), CUSTOM_KNOB)
"""How the calls are scheduled (sequentially but about 35 times in a hundred) and which custom
tool the stream offers besides its function tools (none but one stream in four), in one
choice."""

_TRANSPORTS = knobs(
    tuple((newline, 1) for newline in _NEWLINES),
    ((True, 7), (False, 3)),  # a space after data:
    flag(30),  # a BOM
    _ONE_IN_THREE,  # payloads over several data: lines
    _ONE_IN_THREE,  # no event: lines
    _ONE_IN_THREE,  # empty data: lines
    _ONE_IN_THREE,  # a bare event line
    _ONE_IN_THREE,  # trailing spaces
    _ONE_IN_THREE,  # id: and retry: lines
    flag(20),  # bytes that are not UTF-8
    percent=30,
    names="newline space bom multiline unnamed empty_data bare_event trailing_space id_lines"
    " invalid_utf8",
)
"""Every transport knob in one choice, seven streams in ten plain LF."""


def _limits(draw: st.DrawFn, calls: Sequence[CallPlan]) -> Limits:
    """Sometimes a small ``max_argument_bytes``, where no strict rejection could come first."""
    if not calls or not draw(rarely(10)) or any(plan.header_arguments for plan in calls):
        return Limits()
    largest = max(len(plan.arguments.encode("utf-8", "surrogatepass")) for plan in calls)
    label_draw("limits: small max_argument_bytes")
    return Limits(max_argument_bytes=draw(between(1, max(1, largest))))


_ENDINGS = knobs(
    ((False, 2), (True, 3)),  # a terminal other than completed (60 %)
    one_in(None, _ERRORS, 40),
    tuple((finish, 1) for finish in _FINISHES),
    one_in((), _AFTER, 30),
    flag(30),  # the last event cut
)
"""Every ending knob in one choice; two streams in five complete."""


def _endings(draw: st.DrawFn) -> Ending:
    other, error, finish, after, cut = _ENDINGS.draw(draw)
    if not other:
        label_draw("responses: completed")
        return Ending()
    if error is not None:
        label_draw(f"responses: error {error}")
        return Ending(error=error)
    if finish is None:
        after = ()
    cut = cut and not after
    label_draw(f"responses: finish {finish}")
    return Ending(finish=finish, after_finish=after, cut=cut)


_NOISES = knobs(
    one_in(None, ("Let me check.", "Sure 😀\n"), 20),  # a message item
    flag(20),  # usage
    one_in(0, (1,), 10),  # keep-alive comments
    flag(10),  # every call's arguments in output_item.added
    one_in(None, ("shared", "far"), 20),  # every item at output_index 0, or past FAR
)
"""The message item, usage, keep-alives and how the items are numbered, in one choice."""

FAR = 300
"""Where the calls' output indices start when they lie far down the output list (a long
response of many items): past 256, where CPython stops sharing one object per int, so a reader
that compared indices by identity would see two equal ones disagree."""


def _restates_every_call(ending: Ending, limits: Limits) -> bool:
    """Whether every call's ``.done`` is sent and read, as cumulative snapshots need for their
    outcome to be told: an ending that finishes every call, under no size limit."""
    return ending.error is None and ending.finish not in _CUT_OFF and limits == Limits()


@st.composite
def responses_stream_specs(
    draw: st.DrawFn,
    tool_set: Sequence[Tool] | None,
    max_calls: int,
    max_choices: int,
    lone_surrogates: bool,
) -> StreamSpec:
    """A Responses stream (the arguments are those of every generator; choices are always 1)."""
    # The stream's knobs from one choice or two (each call reads a tape of its own).
    draw = tape(draw, STREAM_BYTES)
    oddity = draw_oddity(draw, _DIALECT)
    exposed = tuple(tool_set) if tool_set is not None else draw_tools(draw)
    schedule, custom = _SHAPES.draw(draw)
    if tool_set is None:
        exposed = with_custom_tool(exposed, custom)
    drawn = draw_call_plans(draw, exposed, 1, schedule, max_calls, lone_surrogates)
    content, usage, keepalive, header, numbering = _NOISES.draw(draw)
    shared = numbering == "shared" and len(drawn) > 1
    far = numbering == "far" and bool(drawn)
    calls = tuple(
        _as_item(plan, header, 0 if shared else FAR + number if far else None)
        for number, plan in enumerate(drawn)
    )
    for knob, on in (
        ("arguments in output_item.added", header),
        ("one output_index", shared),
        ("output indices past 256", far),
    ):
        if on:
            label_draw(f"responses: {knob}")
    ending = _endings(draw)
    limits = _limits(draw, calls)
    if any(plan.snapshots for plan in calls) and not _restates_every_call(ending, limits):
        calls = tuple(replace(plan, snapshots=False) for plan in calls)
    if any(plan.snapshots for plan in calls):
        label_draw("responses: cumulative snapshot deltas")
    spec = StreamSpec(
        tools=exposed,
        calls=calls,
        schedule=schedule,
        noise=Noise(content=content, usage=usage, keepalive=keepalive),
        ending=ending,
        transport=draw_transport(draw, _TRANSPORTS),
        limits=limits,
        dialect=_DIALECT,
    )
    spec = with_oddity(oddity, spec)
    label_draw(f"schedule: {schedule}")
    aim(float(sum(len(plan.fragments) for plan in calls)), "fragments")
    return spec

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

from hypothesis import reject
from hypothesis import strategies as st

from callstream.reference import Limits, Tool

from ..core.spec import CallPlan, Ending, Noise, StreamSpec, Transport
from ._calls import draw_call_plans
from ._knobs import aim, between, label_draw, rarely, sometimes
from ._oddities import draw_oddity, with_oddity
from ._predictable import predictable
from ._schemas import tools

__all__ = ["responses_stream_specs"]

_DIALECT = "openai-responses"
_SCHEDULES = ("interleaved", "whole")
_FINISHES: tuple[Any, ...] = ("length", None, "content_filter", "done", "stop", "length", None)
_ERRORS: tuple[Any, ...] = ("nested", "flat", "event")
_FINISH = st.sampled_from(_FINISHES)
_NEWLINE: st.SearchStrategy[Literal["lf", "crlf", "cr", "mixed"]] = st.sampled_from(
    ("lf", "crlf", "cr", "mixed")
)
_AFTER = (("duplicate_finish",), ("late_delta",))


def _as_item(plan: CallPlan, header: bool, shared: bool) -> CallPlan:
    """``plan`` with only the knobs a Responses call item has: at output_index 0 when
    ``shared`` (a gateway that numbers every item 0, quirk R8). A call whose text comes only in
    ``.done`` (earendil-works/pi#2745) is not drawn: a plan's fragments must concatenate to its
    arguments for the regression it becomes to load back; the corpus has it literally."""
    return replace(
        plan,
        index=0 if shared else None,
        omit_index=False,
        id_policy=plan.id_policy if plan.id_policy in ("once", "omit", "empty") else "once",
        name_policy=plan.name_policy if plan.name_policy in ("once", "omit") else "once",
        type_every=False,
        header_arguments=header and bool(plan.arguments),
        arguments_as_value=False,
        snapshots=False,
        legacy=False,
        extra_content=None,
    )


def _transports(draw: st.DrawFn) -> Transport:
    if not draw(rarely(30)):
        return Transport()
    transport = Transport(
        newline=draw(_NEWLINE),
        space=not draw(rarely(30)),
        bom=draw(rarely(30)),
        multiline=draw(rarely(35)),
        unnamed=draw(rarely(35)),
        empty_data=draw(rarely(35)),
        bare_event=draw(rarely(35)),
        trailing_space=draw(rarely(35)),
    )
    label_draw(f"transport: newline {transport.newline}")
    for knob in ("unnamed", "empty_data", "bare_event", "trailing_space"):
        if getattr(transport, knob):
            label_draw(f"transport: {knob}")
    return transport


def _limits(draw: st.DrawFn, calls: Sequence[CallPlan]) -> Limits:
    """Sometimes a small ``max_argument_bytes``, where no strict rejection could come first."""
    if not calls or not draw(rarely(8)) or any(plan.header_arguments for plan in calls):
        return Limits()
    largest = max(len(plan.arguments.encode("utf-8", "surrogatepass")) for plan in calls)
    label_draw("limits: small max_argument_bytes")
    return Limits(max_argument_bytes=draw(between(1, max(1, largest))))


def _endings(draw: st.DrawFn) -> Ending:
    if not draw(rarely(60)):
        label_draw("responses: completed")
        return Ending()
    error = draw(sometimes(None, _ERRORS, 15))
    if error is not None:
        label_draw(f"responses: error {error}")
        return Ending(error=error)
    finish = draw(_FINISH)
    after: tuple[str, ...] = () if finish is None else draw(sometimes((), _AFTER, 10))
    cut = draw(rarely(15)) and not after
    label_draw(f"responses: finish {finish}")
    return Ending(finish=finish, after_finish=after, cut=cut)


@st.composite
def responses_stream_specs(
    draw: st.DrawFn,
    tool_set: Sequence[Tool] | None,
    max_calls: int,
    max_choices: int,
    lone_surrogates: bool,
) -> StreamSpec:
    """A Responses stream (the arguments are those of every generator; choices are always 1)."""
    oddity = draw_oddity(draw, _DIALECT)
    exposed = tuple(tool_set) if tool_set is not None else draw(tools())
    schedule = draw(sometimes("sequential", _SCHEDULES, 35))
    drawn = draw_call_plans(draw, exposed, 1, schedule, max_calls, lone_surrogates)
    header = draw(rarely(10))
    shared = len(drawn) > 1 and draw(rarely(10))
    calls = tuple(_as_item(plan, header, shared) for plan in drawn)
    for knob, on in (("arguments in output_item.added", header), ("one output_index", shared)):
        if on:
            label_draw(f"responses: {knob}")
    content = draw(sometimes(None, ("Let me check.", "Sure 😀\n"), 20))
    spec = StreamSpec(
        tools=exposed,
        calls=calls,
        schedule=schedule,
        noise=Noise(
            content=content, usage=draw(rarely(20)), keepalive=draw(sometimes(0, (1,), 10))
        ),
        ending=_endings(draw),
        transport=_transports(draw),
        limits=_limits(draw, calls),
        dialect=_DIALECT,
    )
    if not predictable(spec):
        reject()
    spec = with_oddity(oddity, spec)
    label_draw(f"schedule: {schedule}")
    aim(float(sum(len(plan.fragments) for plan in calls)), "fragments")
    return spec

"""The streams drawn for the ``anthropic-messages`` dialect (``GENERATORS["anthropic-messages"]``).

The calls are ``call_plans``' (valid and refused arguments, unknown and missing names, dangerous
cuts), re-sent the way Anthropic streams carry them: one ``tool_use`` block per call, its id and
name once (now and then no id), now and then its block without index (C1) or past a gap (C14),
its input whole in ``content_block_start`` and streamed as well (A6) or there only. Endings are
Anthropic's stop reasons; a stop reason that cuts the model off (``max_tokens``, ``refusal``,
``pause_turn``, ``model_context_window_exceeded``) usually cuts the last call's input inside
its text too, as fine-grained streaming does (A1). Noise is a text block before the calls,
``ping`` and keep-alive comments; the transport varies as openai-chat's does. Ordinary streams
dominate and every knob shrinks to off, so a failure shrinks to one or two calls.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from hypothesis import reject
from hypothesis import strategies as st

from callstream.reference import Limits, Tool

from ..core.spec import CallPlan, Ending, Noise, Schedule, StreamSpec, Transport
from ._calls import draw_call_plans
from ._knobs import aim, between, label_draw, rarely, sometimes
from ._oddities import draw_oddity, with_oddity
from ._predictable import predictable
from ._schemas import tools

__all__ = ["anthropic_stream_specs"]

_DIALECT = "anthropic-messages"
_CUTTING = ("max_tokens", "refusal", "pause_turn", "model_context_window_exceeded")
_FINISHES = ("max_tokens", None, "end_turn", "refusal", "pause_turn", "stop_sequence", *_CUTTING)
_FINISH = st.sampled_from(_FINISHES)
_NEWLINE: st.SearchStrategy[Literal["lf", "crlf", "cr", "mixed"]] = st.sampled_from(
    ("lf", "crlf", "cr", "mixed")
)
_SCHEDULES: tuple[Schedule, ...] = ("interleaved", "whole")
_TRANSPORT_KNOBS = ("unnamed", "empty_data", "bare_event", "trailing_space")
_CONTENTS = ("I'll look that up.", "", "Sure — un instant 😀\n")


def _resent(draw: st.DrawFn, plan: CallPlan, position: int) -> CallPlan:
    """``plan`` as one tool_use block sends it."""
    plain = replace(
        plan,
        id=plan.id or f"toolu_{position:02d}",
        index=None,
        omit_index=False,
        id_policy="once",
        name_policy="once" if plan.name is not None else "omit",
        type_every=False,
        header_arguments=False,
        arguments_as_value=False,
        snapshots=False,
        legacy=False,
        extra_content=None,
    )
    if draw(rarely(8)):
        label_draw("anthropic: tool_use without id")
        plain = replace(plain, id_policy="omit")
    if draw(rarely(6)):
        label_draw("anthropic: block without index")
        plain = replace(plain, omit_index=True)
    elif draw(rarely(6)):
        label_draw("anthropic: block index past a gap")
        plain = replace(plain, index=position + draw(between(2, 4)))
    if _is_object(plan.arguments) and draw(rarely(10)):
        as_value = draw(st.booleans())
        label_draw("anthropic: input in content_block_start" + (" only" if as_value else ""))
        plain = replace(plain, header_arguments=not as_value, arguments_as_value=as_value)
    return plain


def _cut_short(draw: st.DrawFn, plan: CallPlan) -> CallPlan:
    """The call cut inside its input, as a stop reason that interrupts the model leaves it."""
    text = plan.arguments
    if len(text) < 2 or plan.arguments_as_value or plan.header_arguments:
        return plan
    keep = draw(between(1, len(text) - 1))
    pieces: list[str] = []
    taken = 0
    for fragment in plan.fragments:
        if taken + len(fragment) >= keep:
            pieces.append(fragment[: keep - taken])
            break
        pieces.append(fragment)
        taken += len(fragment)
    label_draw("anthropic: input cut short")
    return replace(plan, arguments=text[:keep], fragments=tuple(p for p in pieces if p))


def _endings(draw: st.DrawFn) -> Ending:
    if not draw(rarely(60)):
        return Ending()
    finish = draw(_FINISH)
    error: Literal["event"] | None = "event" if draw(rarely(10)) else None
    done = not draw(rarely(25))
    cut = draw(rarely(15)) and error is None and (done or finish is not None)
    label_draw(f"anthropic: stop_reason {finish}" if error is None else "anthropic: error")
    return Ending(finish=finish, error=error, done=done, cut=cut)


def _transports(draw: st.DrawFn) -> Transport:
    if not draw(rarely(30)):
        return Transport()
    transport = Transport(
        newline=draw(_NEWLINE),
        space=not draw(rarely(30)),
        bom=draw(rarely(30)),
        multiline=draw(rarely(20)),
        unnamed=draw(rarely(20)),
        empty_data=draw(rarely(20)),
        bare_event=draw(rarely(20)),
        trailing_space=draw(rarely(20)),
    )
    for knob in _TRANSPORT_KNOBS:
        if getattr(transport, knob):
            label_draw(f"transport: {knob}")
    return transport


@st.composite
def anthropic_stream_specs(
    draw: st.DrawFn,
    tool_set: Sequence[Tool] | None,
    max_calls: int,
    max_choices: int,
    lone_surrogates: bool,
) -> StreamSpec:
    """An Anthropic Messages stream the oracle predicts under both profiles (``max_choices``
    is ignored: a message has one)."""
    oddity = draw_oddity(draw, _DIALECT)
    exposed = tuple(tool_set) if tool_set is not None else draw(tools())
    functions = tuple(tool for tool in exposed if tool.kind == "function")
    if not functions:
        reject()
    schedule = draw(sometimes("sequential", _SCHEDULES, 25))
    drawn = draw_call_plans(draw, functions, 1, schedule, max_calls, lone_surrogates)
    calls = [_resent(draw, plan, position) for position, plan in enumerate(drawn)]
    ending = _endings(draw)
    if calls and ending.finish in _CUTTING and draw(rarely(70)):
        calls[-1] = _cut_short(draw, calls[-1])
    noise = Noise(
        role=not draw(rarely(20)),
        content=draw(sometimes(None, _CONTENTS, 25)),
        keepalive=draw(sometimes(0, (1, 2), 15)),
    )
    limits = Limits()
    small = draw(rarely(6))
    if calls and small and not any(p.omit_index or p.index for p in calls):
        largest = max(len(plan.arguments.encode("utf-8", "surrogatepass")) for plan in calls)
        limits = Limits(max_argument_bytes=draw(between(1, max(1, largest))))
        label_draw("limits: small max_argument_bytes")
    spec = StreamSpec(
        tools=exposed,
        calls=tuple(calls),
        schedule=schedule,
        noise=noise,
        ending=ending,
        transport=_transports(draw),
        limits=limits,
        dialect=_DIALECT,
    )
    if not predictable(spec):
        reject()
    spec = with_oddity(oddity, spec)
    label_draw(f"calls: {len(calls)}")
    aim(float(sum(len(plan.fragments) for plan in calls)), "fragments")
    return spec


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False

"""The streams drawn for the ``anthropic-messages`` dialect (``GENERATORS["anthropic-messages"]``).

The calls are ``call_plans``' (valid and refused arguments, unknown and missing names, dangerous
cuts), re-sent the way Anthropic streams carry them: one ``tool_use`` block per call, its id and
name once (now and then no id), now and then its block without index (C1) or past a gap (C14),
its input whole in ``content_block_start`` and streamed as well (A6) or there only, or its start
without an ``input`` field (A4). Endings are Anthropic's stop reasons; a stop reason that cuts
the model off (``max_tokens``, ``refusal``, ``pause_turn``, ``model_context_window_exceeded``)
usually cuts the last call's input inside its text too, as fine-grained streaming does (A1), and
so does an ending with no stop reason.
Noise is a text block before the calls, ``ping`` and keep-alive comments; the transport varies
as openai-chat's does. Ordinary streams dominate and every knob shrinks to off, so a failure
shrinks to one or two calls.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from hypothesis import reject
from hypothesis import strategies as st

from callstream.reference import Limits, Tool

from ..core.spec import CallPlan, Ending, Noise, Schedule, StreamSpec
from ._calls import draw_call_plans
from ._json_text import SURROGATE
from ._knobs import aim, between, flag, knobs, label_draw, one_in, rarely, sometimes
from ._oddities import draw_oddity, with_oddity
from ._schemas import draw_tools
from ._tape import STREAM_BYTES, tape
from ._transports import draw_transport

__all__ = ["anthropic_stream_specs"]

_DIALECT = "anthropic-messages"
_CUTTING = ("max_tokens", "refusal", "pause_turn", "model_context_window_exceeded")
_FINISHES = ("max_tokens", None, "end_turn", "refusal", "pause_turn", "stop_sequence", *_CUTTING)
_NEWLINES: tuple[Literal["lf", "crlf", "cr", "mixed"], ...] = ("lf", "crlf", "cr", "mixed")
_SCHEDULES: tuple[Schedule, ...] = ("interleaved", "whole")
_CONTENTS = ("I'll look that up.", "", "Sure — un instant 😀\n")


_RESENDING = knobs(
    ((False, 23), (True, 2)),  # no id (8 %)
    (("next", 44), ("none", 3), (2, 1), (3, 1), (4, 1)),  # no index (6 %), a gap (6 %)
    # Streamed (90 %), also or only in content_block_start (of objects), or streamed after a
    # start without an input field (of inputs streamed).
    (("streamed", 18), ("also in start", 1), ("only in start", 1), ("no input field", 1)),
)
"""How one tool_use block departs from the ordinary, in one choice."""


def _resent(draw: st.DrawFn, plan: CallPlan, position: int) -> CallPlan:
    """``plan`` as one tool_use block sends it."""
    plain = replace(
        plan,
        id=plan.id or f"toolu_{position:02d}",
        index=None,
        omit_index=False,
        late_index=False,
        id_policy="once",
        name_policy="once" if plan.name is not None else "omit",
        type_every=False,
        blank_type=False,
        header_arguments=False,
        arguments_as_value=False,
        snapshots=False,
        legacy=False,
        extra_content=None,
    )
    no_id, index, start = _RESENDING.draw(draw)
    if no_id:
        label_draw("anthropic: tool_use without id")
        plain = replace(plain, id_policy="omit")
    if index == "none":
        label_draw("anthropic: block without index")
        plain = replace(plain, omit_index=True)
    elif index != "next":
        label_draw("anthropic: block index past a gap")
        plain = replace(plain, index=position + index)
    if start == "no input field":
        if plan.arguments:
            label_draw("anthropic: content_block_start without input")
            plain = replace(plain, bare_start=True)
    elif start != "streamed" and _is_object(plan.arguments):
        as_value = start == "only in start"
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


_ENDINGS = knobs(
    ((False, 2), (True, 3)),  # an ending other than tool_use (60 %)
    tuple((finish, 2 if finish is None else 1) for finish in _FINISHES),  # none, twice as often
    ((None, 9), ("event", 1)),  # an error event
    ((True, 2), (False, 1)),  # message_stop (a third of the endings drawn without)
    ((False, 6), (True, 1)),  # cut inside the last event (about 15 %)
)
"""Every ending knob in one choice; two streams in five end the ordinary way."""


def _endings(draw: st.DrawFn) -> Ending:
    other, finish, error, done, cut = _ENDINGS.draw(draw)
    if not other:
        return Ending()
    cut = cut and error is None and (done or finish is not None)
    label_draw(f"anthropic: stop_reason {finish}" if error is None else "anthropic: error")
    return Ending(finish=finish, error=error, done=done, cut=cut)


_TRANSPORTS = knobs(
    tuple((newline, 1) for newline in _NEWLINES),
    ((True, 7), (False, 3)),  # a space after data:
    flag(30),  # a BOM
    flag(20),  # payloads over several data: lines
    flag(20),  # no event: lines
    flag(20),  # empty data: lines
    flag(20),  # a bare event line
    flag(20),  # trailing spaces
    flag(20),  # id: and retry: lines
    flag(20),  # bytes that are not UTF-8
    percent=30,
    names="newline space bom multiline unnamed empty_data bare_event trailing_space id_lines"
    " invalid_utf8",
)
"""Every transport knob in one choice, seven streams in ten plain LF."""


_NOISES = knobs(
    ((True, 4), (False, 1)),  # the text block's role (20 % none)
    one_in(None, _CONTENTS, 25),
    one_in(0, (1, 2), 15),  # keep-alive comments
)
"""The noise around the calls, in one choice."""


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
    # The stream's knobs from one choice or two (each call reads a tape of its own).
    draw = tape(draw, STREAM_BYTES)
    oddity = draw_oddity(draw, _DIALECT)
    exposed = tuple(tool_set) if tool_set is not None else draw_tools(draw)
    functions = tuple(tool for tool in exposed if tool.kind == "function")
    if not functions:
        reject()
    schedule = draw(sometimes("sequential", _SCHEDULES, 25))
    drawn = draw_call_plans(draw, functions, 1, schedule, max_calls, lone_surrogates)
    calls = [_resent(draw, plan, position) for position, plan in enumerate(drawn)]
    ending = _endings(draw)
    # A stream that ends with no stop reason at all (message_stop alone, end of file) was
    # cut off as well, so often inside its last input: held at its stop, that call is what
    # such an ending settles (D24, D27).
    cutting = ending.finish in _CUTTING or ending.finish is None
    if calls and cutting and draw(rarely(70)):
        calls[-1] = _cut_short(draw, calls[-1])
    role, content, keepalive = _NOISES.draw(draw)
    noise = Noise(role=role, content=content, keepalive=keepalive)
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
        transport=draw_transport(draw, _TRANSPORTS),
        limits=limits,
        dialect=_DIALECT,
    )
    spec = with_oddity(oddity, spec)
    label_draw(f"calls: {len(calls)}")
    aim(float(sum(len(plan.fragments) for plan in calls)), "fragments")
    return spec


def _is_object(text: str) -> bool:
    """Whether ``text`` is a JSON object a ``content_block_start`` can carry as a value: one
    without a lone surrogate, which JSON text carries only as an escape (the value is written
    raw, as the API writes it)."""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and not SURROGATE.search(json.dumps(value, ensure_ascii=False))

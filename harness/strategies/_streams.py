"""The stream around the calls (``stream_specs``): noise, endings, transports and limits."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from typing import Literal

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from callstream.reference import Limits, Tool

from ..core.dialects.openai_chat.events import carries_call
from ..core.rendering import render
from ..core.spec import (
    CallPlan,
    Ending,
    Noise,
    Schedule,
    StreamSpec,
)
from ..core.wire import data_lines, data_size
from ..errors import PlanError
from ._anthropic import anthropic_stream_specs
from ._calls import draw_call_plans
from ._knobs import Knobs, aim, between, flag, knobs, label_draw, one_in, rarely
from ._oddities import draw_oddity, with_oddity
from ._responses import responses_stream_specs
from ._schemas import CUSTOM_KNOB, draw_tools, with_custom_tool
from ._tape import STREAM_BYTES, tape
from ._transports import draw_transport

__all__ = [
    "stream_specs",
]


_CONTENTS = (
    "Let me check.",
    "",
    "Sure — I'll look that up 😀\n",
    '<tool_call>{"name": "search"}</tool_call>',
    "[TOOL_CALLS]",
    "<|tool_call|>",
)
_FINISHES = (
    ("tool_calls", 2),
    ("stop", 3),
    ("length", 3),
    (None, 4),
    ("function_call", 3),
    ("content_filter", 2),
    ("error", 1),
    ("MALFORMED_FUNCTION_CALL", 1),
    ("eos", 1),
    ("tool_use", 1),
    ("safety", 1),
    ("abort", 1),
)
"""Finish reasons with their weights: the ones that matter most (truncation, none at all)
most often."""
_SCHEDULES: tuple[Schedule, ...] = ("sequential", "interleaved", "whole", "together")
_ERRORS: tuple[Literal["nested", "flat", "openrouter", "event"], ...] = (
    "nested",
    "flat",
    "openrouter",
    "event",
)
_NEWLINES: tuple[Literal["lf", "crlf", "cr", "mixed"], ...] = ("lf", "crlf", "cr", "mixed")
_AFTER_FINISH = (
    ("usage_chunk",),
    ("duplicate_finish",),
    ("late_delta",),
    ("duplicate_finish", "late_delta"),
    ("usage_chunk", "duplicate_finish"),
)
_ONE_IN_SEVEN = ((False, 6), (True, 1))
"""About 15 % (14 %), in weights small enough for seven knobs to share a choice."""
_NOISES = knobs(
    ((True, 6), (False, 1)),  # the role chunk
    _ONE_IN_SEVEN,  # the role repeated
    one_in(None, _CONTENTS, 30),
    flag(25),  # a usage chunk
    _ONE_IN_SEVEN,  # usage in every chunk
    _ONE_IN_SEVEN,  # Azure's empty first chunk
    one_in(0, (1, 2), 20),  # keep-alive comments
    percent=50,
)
"""Every noise knob in one choice, half the streams none at all."""


def _noises(draw: st.DrawFn) -> Noise:
    role, role_every, content, usage, usage_every, empty_first, keepalive = _NOISES.draw(draw)
    noise = Noise(
        role=role,
        # A repeated role is only a repeat after a role chunk.
        role_every=role_every and role,
        content=content,
        usage=usage,
        usage_every=usage_every,
        empty_first=empty_first,
        keepalive=keepalive,
    )
    for knob in ("role_every", "usage", "usage_every", "empty_first", "keepalive"):
        if getattr(noise, knob):
            label_draw(f"noise: {knob}")
    if not role:
        label_draw("noise: no role chunk")
    if noise.content is not None:
        label_draw("noise: content")
    return noise


_ENDINGS = knobs(
    _FINISHES,
    one_in(None, _ERRORS, 35),
    (((), 8), *((after, 1) for after in _AFTER_FINISH)),  # 38 %
    ((True, 7), (False, 3)),  # [DONE]
    flag(25),  # the finish with the last delta
    ((False, 2), (True, 1)),  # cut inside the last event
    percent=70,
)
"""Every ending knob in one choice; three streams in ten end the ordinary way."""


def _endings(draw: st.DrawFn, choices: int) -> Ending:
    finish, error, after, done, with_last, cut = _ENDINGS.draw(draw)
    if finish is None or error is not None:
        after = ()  # nothing comes after a finish that never came
    # A cut stream must lose an event the oracle can account for: [DONE], the usage chunk or
    # the finish chunk itself; never a delta, an error or a chunk after the finish.
    cuttable = (
        choices == 1
        and error is None
        and (done or (finish is not None and not after and not with_last))
    )
    ending = Ending(
        finish=finish,
        finish_with_last=with_last,
        after_finish=after,
        error=error,
        done=done,
        cut=cut and cuttable,
    )
    label_draw(f"finish: {finish}" if error is None else f"error: {error}")
    for knob in ("finish_with_last", "after_finish", "cut"):
        if getattr(ending, knob):
            label_draw(f"ending: {knob}")
    if not done:
        label_draw("ending: no [DONE]")
    return ending


_TRANSPORTS = knobs(
    tuple((newline, 1) for newline in _NEWLINES),
    ((True, 7), (False, 3)),  # a space after data:
    flag(30),  # a BOM
    flag(20),  # event: lines
    flag(20),  # payloads over several data: lines
    flag(20),  # empty data: lines
    flag(20),  # a bare event line
    flag(35),  # trailing spaces
    flag(20),  # id: and retry: lines
    flag(20),  # bytes that are not UTF-8
    percent=30,
    names=(
        "newline space bom event_lines multiline empty_data bare_event trailing_space id_lines"
        " invalid_utf8"
    ),
)
"""Every transport knob in one choice, seven streams in ten plain LF."""


@cache
def _shapes(max_choices: int) -> Knobs:
    """How many choices a stream has (one but about 15 times in a hundred), how its calls are
    scheduled (sequentially but about 35 times in a hundred) and which custom tool it offers
    besides its function tools (none but one stream in four), in one choice."""
    return knobs(
        one_in(1, tuple(range(2, max_choices + 1)) or (1,), 15),
        one_in("sequential", _SCHEDULES[1:], 35),
        CUSTOM_KNOB,
    )


def _strictly_rejected(plan: CallPlan) -> bool:
    """Whether the strict profile rejects the call mid-stream for how it was sent."""
    return (
        plan.omit_index
        or plan.late_index
        or plan.index is not None
        or plan.id_policy == "changing"
        or plan.name_policy == "late"
        or plan.arguments_as_value
    )


_RARITIES = knobs(flag(8), flag(10), flag(12))
"""Three rare knobs in one choice: no tool exposed, a small ``max_argument_bytes``, a
``max_event_size`` drawn from the stream's own events."""


def _limits(draw: st.DrawFn, calls: Sequence[CallPlan], small: bool) -> Limits:
    # A call past the limit is rejected at the fragment that passes it, so the oracle can
    # predict it only when no other rejection could come first mid-stream.
    if not small or any(_strictly_rejected(plan) for plan in calls):
        return Limits()
    largest = max(len(plan.arguments.encode("utf-8", "surrogatepass")) for plan in calls)
    label_draw("limits: small max_argument_bytes")
    return Limits(max_argument_bytes=draw(between(1, max(1, largest))))


_EXACTLY = rarely(50)


def _sized(draw: st.DrawFn, spec: StreamSpec) -> StreamSpec:
    """``spec`` under a ``max_event_size`` drawn from its own events (V5), its payloads over
    several ``data:`` lines (T5: the size counts the LF between them): a few characters under
    the first event that carries a call, within its line count (so that a reader that forgets
    those LFs reads it), where every event before it fits; else, or one time in two, the
    largest event's size exactly, where every event fits (so that a reader that counts a
    character too many, or each LF twice, refuses it)."""
    spec = replace(spec, transport=replace(spec.transport, multiline=True))
    try:
        events = render(spec).events
    except PlanError:
        return spec
    sizes = [data_size(event, spec.transport) for event in events]
    first = next((at for at, event in enumerate(events) if carries_call(event.data)), None)
    if first is None:
        return spec
    lines = data_lines(events[first], spec.transport)
    limit = sizes[first] - draw(between(1, max(1, lines - 1)))
    if limit < max(sizes[:first], default=1) or draw(_EXACTLY):
        label_draw("limits: max_event_size at the largest event")
        limit = max(sizes)
    else:
        label_draw("limits: max_event_size under the first call's event")
    return replace(spec, limits=Limits(max_event_size=limit))


@st.composite
def _stream_specs(
    draw: st.DrawFn,
    tool_set: Sequence[Tool] | None,
    max_calls: int,
    max_choices: int,
    lone_surrogates: bool,
) -> StreamSpec:
    # The stream's knobs from one choice or two (each call reads a tape of its own).
    draw = tape(draw, STREAM_BYTES)
    oddity = draw_oddity(draw, "openai-chat")
    exposed = tuple(tool_set) if tool_set is not None else draw_tools(draw)
    choices, schedule, custom = _shapes(max_choices).draw(draw)
    if oddity == "kind_changes" and custom is None:
        custom = 0  # a call may change kind only where both kinds are offered
    if tool_set is None:
        exposed = with_custom_tool(exposed, custom)
        if oddity == "kind_changes":
            # The custom tool first, where a call's draw lands most often: the change of kind
            # that matters most is a function fragment for a custom call (D90).
            exposed = (*exposed[-1:], *exposed[:-1])
    calls = draw_call_plans(draw, exposed, choices, schedule, max_calls, lone_surrogates)
    no_tools, small, sized = _RARITIES.draw(draw)
    if no_tools:
        # The call names a tool the request did not offer: no tool at all is exposed.
        exposed = ()
        label_draw("tools: none exposed")
    spec = StreamSpec(
        tools=exposed,
        calls=calls,
        choices=choices,
        schedule=schedule,
        noise=_noises(draw),
        ending=_endings(draw, choices),
        transport=draw_transport(draw, _TRANSPORTS),
        limits=_limits(draw, calls, small),
    )
    if spec.limits == Limits() and sized:
        spec = _sized(draw, spec)
    spec = with_oddity(oddity, spec)
    label_draw(f"schedule: {schedule}")
    label_draw(f"calls: {len(calls)}")
    if choices > 1:
        label_draw(f"choices: {choices}")
    aim(float(sum(len(plan.fragments) for plan in calls)), "fragments")
    aim(
        float(sum(len(plan.arguments.encode("utf-8", "surrogatepass")) for plan in calls)),
        "argument bytes",
    )
    return spec


GENERATORS: dict[str, Callable[..., st.SearchStrategy[StreamSpec]]] = {
    "openai-chat": _stream_specs,
    "anthropic-messages": anthropic_stream_specs,
    "openai-responses": responses_stream_specs,
}
"""The streams drawn for each dialect, by name: called with ``(tools, max_calls, max_choices,
lone_surrogates)``. ``tests/test_dialects.py`` checks that every dialect the harness renders
has its generator."""


def stream_specs(
    tools: Sequence[Tool] | None = None,
    *,
    dialect: str = "openai-chat",
    max_calls: int = 3,
    max_choices: int = 2,
    lone_surrogates: bool = True,
) -> st.SearchStrategy[StreamSpec]:
    """Planned streams the oracle predicts under both profiles: ``call_plans`` over ``tools``
    (drawn with ``tools()`` when None) in 1 to ``max_choices`` choices, scheduled sequentially,
    interleaved, each call whole or all calls together; noise (no role chunk or a repeated one,
    content with or without tool-call markup, usage chunks, Azure's empty first chunk,
    keep-alive comments); endings (every finish reason, with the last delta or on its own,
    chunks after it, in-band errors of each shape, with or without ``[DONE]``, cut inside the
    last event); transport (LF, CRLF, CR or mixed line endings, ``data:`` without a space, a
    BOM, ``event:`` lines, payloads over several ``data:`` lines, ``id:`` and ``retry:`` lines);
    sometimes a small ``max_argument_bytes``. Ordinary streams dominate: each group of knobs is
    rarely on. The streams are in ``dialect`` (openai-chat's are described here; see
    :data:`GENERATORS`)."""
    if dialect not in GENERATORS:
        raise InvalidArgument(f"no streams are drawn for dialect {dialect!r}")
    return GENERATORS[dialect](
        None if tools is None else tuple(tools), max_calls, max_choices, lone_surrogates
    )

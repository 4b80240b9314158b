"""The corners of the wire format the other knobs do not reach, drawn rarely: ``draw_oddity``
first in a stream's draws, ``with_oddity`` once the stream is drawn.

A stream shows at most one oddity, and shrinks to none. An oddity is either sent by the
renderer (``StreamSpec.oddity``: an event after ``[DONE]`` or after ``message_stop``, a choice
without ``delta``, an event of an unknown type, a delta for a block never started, an
``event:`` name unlike the payload's type, an ``event: error`` whose data is text, a missing
``response.created``, a gap in ``sequence_number``…) or is a plan the other knobs do not draw:
no calls at all, no tools offered, two calls sharing an id (openai-chat/C34), a stop reason
outside Anthropic's set. A stream the oddity does not fit (the oracle refuses it) is drawn
without it, so an oddity costs no rejected example.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import cast

from hypothesis import strategies as st

from callstream.reference import Limits

from ..core.dialects.anthropic_messages import events as anthropic_messages
from ..core.dialects.openai_chat import events as openai_chat
from ..core.dialects.openai_responses import events as openai_responses
from ..core.spec import Oddity, StreamSpec
from ._knobs import label_draw, pick, rarely
from ._predictable import predictable

__all__ = ["draw_oddity", "with_oddity"]

PERCENT = 6
"""How often each oddity is drawn, in streams per hundred (before the streams it does not fit)."""
OTHER_STOP = "guardrail_intervened"
"""A stop reason outside Anthropic's set (Amazon Bedrock's, for a blocked answer)."""


def _no_calls(spec: StreamSpec) -> StreamSpec:
    return replace(spec, calls=())


def _no_tools(spec: StreamSpec) -> StreamSpec:
    return replace(spec, tools=())


def _shared_id(spec: StreamSpec) -> StreamSpec:
    """The second call of the first call's choice under its id, or, where it has none, a copy
    of the first call (openai-chat/C34: two distinct calls, one id)."""
    if not spec.calls or spec.calls[0].id is None:
        return spec
    first, *others = spec.calls
    for at, plan in enumerate(others, start=1):
        if plan.choice == first.choice:
            calls = list(spec.calls)
            calls[at] = replace(plan, id=first.id)
            return replace(spec, calls=tuple(calls))
    return replace(spec, calls=(*spec.calls, first))


def _other_stop(spec: StreamSpec) -> StreamSpec:
    return replace(spec, ending=replace(spec.ending, finish=OTHER_STOP))


def _error_text(spec: StreamSpec) -> StreamSpec:
    """An ``event: error`` ending whose data is text, not JSON (T4)."""
    ending = replace(spec.ending, error="event", after_finish=(), cut=False)
    return replace(spec, ending=ending, oddity="error_text")


def _string_error(spec: StreamSpec) -> StreamSpec:
    """An error ending whose error is text, not an object (anthropic-messages, T4)."""
    return replace(_error_text(spec), oddity="string_error")


def _choice_not_object(spec: StreamSpec) -> StreamSpec:
    """A choice that is a string in the place of an error ending's event (openai-chat): the
    error drawn, else an in-band one."""
    ending = replace(spec.ending, error=spec.ending.error or "nested", after_finish=(), cut=False)
    return replace(spec, ending=ending, oddity="choice_not_object")


def _untyped_error(spec: StreamSpec) -> StreamSpec:
    """An ``event: error`` ending whose payload has no ``type`` (anthropic-messages, T4)."""
    return replace(_error_text(spec), oddity="untyped_error")


def _no_item_done(spec: StreamSpec) -> StreamSpec:
    """The last call item never done (openai-responses), under an ending that would have closed
    it: ``response.completed`` where the one drawn cuts the last call off, or its last event."""
    ending = spec.ending
    if ending.error is not None or ending.finish in ("length", "content_filter") or ending.cut:
        ending = replace(ending, finish="tool_calls", error=None, cut=False)
    return replace(spec, ending=ending, oddity="no_item_done")


def _restated_otherwise(spec: StreamSpec) -> StreamSpec:
    """The first call's ``output_item.done`` restating another text than its ``.done``
    (openai-responses), under an ending that sends both: ``response.completed``, nothing cut,
    no size limit."""
    ending = replace(spec.ending, finish="tool_calls", error=None, cut=False)
    return replace(spec, ending=ending, limits=Limits(), oddity="restated_otherwise")


_PLANS: dict[str, Callable[[StreamSpec], StreamSpec]] = {
    "no calls": _no_calls,
    "no tools": _no_tools,
    "shared id": _shared_id,
    "other stop reason": _other_stop,
    "error_text": _error_text,
    "untyped_error": _untyped_error,
    "choice_not_object": _choice_not_object,
    "string_error": _string_error,
    "no_item_done": _no_item_done,
    "restated_otherwise": _restated_otherwise,
}
_ODDITIES: dict[str, tuple[str, ...]] = {
    "openai-chat": (*openai_chat.ODDITIES, "shared id", "no calls"),
    "anthropic-messages": (
        *anthropic_messages.ODDITIES,
        "other stop reason",
        "no tools",
        "no calls",
    ),
    "openai-responses": (*openai_responses.ODDITIES, "no tools", "no calls"),
}
"""What each dialect's streams may show, by the name ``hypothesis.event`` labels it with: what
its renderer sends (each dialect's ``events.ODDITIES``), then the plans above."""

_ODD = {dialect: rarely(PERCENT * len(names)) for dialect, names in _ODDITIES.items()}
"""Whether a stream of the dialect shows an oddity: one draw, shrinking to none."""


def draw_oddity(draw: st.DrawFn, dialect: str) -> str | None:
    """Which oddity of ``dialect`` a stream shows, if any: about ``PERCENT`` in a hundred for
    each. Drawn first, before the calls, so that shrinking the calls keeps it; one draw says
    whether (shrinking to none), a second which (Hypothesis draws some regions of one long
    table of outcomes far more often than others)."""
    names = _ODDITIES.get(dialect)
    if names is None or not draw(_ODD[dialect]):
        return None
    return str(pick(draw, names))


def with_oddity(name: str | None, spec: StreamSpec) -> StreamSpec:
    """``spec`` with the oddity ``name`` (from :func:`draw_oddity`), where the oracle predicts
    it under both profiles; else ``spec`` as it is."""
    if name is None:
        return spec
    odd = _PLANS[name](spec) if name in _PLANS else replace(spec, oddity=cast(Oddity, name))
    if odd == spec or not predictable(odd):
        return spec
    label_draw(f"oddity: {name}")
    return odd

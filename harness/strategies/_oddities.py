"""The corners of the wire format the other knobs do not reach, drawn rarely: ``draw_oddity``
first in a stream's draws, ``with_oddity`` once the stream is drawn.

A stream shows at most one oddity, and shrinks to none. An oddity is either sent by the
renderer (``StreamSpec.oddity``: an event after ``[DONE]`` or after ``message_stop``, a choice
without ``delta``, an event of an unknown type, a delta for a block never started, an
``event:`` name unlike the payload's type, an ``event: error`` whose data is text, a missing
``response.created``, a gap in ``sequence_number``…) or is a plan the other knobs do not draw:
no calls at all, no tools offered, two calls sharing an id (openai-chat/C34), a call id sent
as a number (C7), a stop reason outside Anthropic's set, 258 calls in one choice. A stream the
oddity does not fit (the oracle refuses it) is drawn without it, so an oddity costs no rejected
example.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import cast

from hypothesis import reject
from hypothesis import strategies as st

from callstream.reference import Limits

from ..core.dialects.anthropic_messages import events as anthropic_messages
from ..core.dialects.openai_chat import events as openai_chat
from ..core.dialects.openai_responses import events as openai_responses
from ..core.spec import CallPlan, Oddity, StreamSpec
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
    of the first call (openai-chat/C34: two distinct calls, one id). Both are sent without a
    quirk the strict profile rejects a call for, under no size limit, so that the strict
    profile rejects them for sharing the id (the oracle predicts no other order)."""
    if not spec.calls or spec.calls[0].id is None:
        return spec
    calls = list(spec.calls)
    first = calls[0] = _unquirked(calls[0])
    at = next((at for at, plan in enumerate(calls[1:], 1) if plan.choice == first.choice), None)
    if at is None:
        # A copy of its own: the oracle tells a choice's calls apart by identity (as it must,
        # two calls may be equal), and the same object twice would read as one call.
        calls.append(replace(first))
    else:
        calls[at] = replace(_unquirked(calls[at]), id=first.id)
    limits = replace(spec.limits, max_argument_bytes=Limits().max_argument_bytes)
    return replace(spec, calls=tuple(calls), limits=limits)


def _numeric_id(spec: StreamSpec) -> StreamSpec:
    """The first call's id sent as a number (openai-chat/C7: stringified leniently, ignored
    strictly, so the call is rejected ``missing_id`` there), the call otherwise plain."""
    if not spec.calls or spec.calls[0].id is None:
        return spec
    first = replace(_unquirked(spec.calls[0]), id_policy="numeric")
    return replace(spec, calls=(first, *spec.calls[1:]))


def _unquirked(plan: CallPlan) -> CallPlan:
    """``plan`` without the metadata quirks the strict profile rejects a call for (C3, C6,
    C27, C32): its id sent once, its name at once, its arguments as text, as ``tool_calls``."""
    return replace(
        plan,
        id_policy="once" if plan.id_policy == "changing" else plan.id_policy,
        name_policy="once" if plan.name_policy == "late" else plan.name_policy,
        arguments_as_value=False,
        legacy=False,
    )


MANY_CALLS = 258
"""How many calls ``many calls`` sends: indices past 256, where CPython stops sharing one
object per small integer, so a reader that compares indices by identity is caught."""


def _many_calls(spec: StreamSpec) -> StreamSpec:
    """:data:`MANY_CALLS` calls of the first tool, each ``{}`` in one delta, at indices 0 to 257
    in order, under a ``max_calls`` that allows them (openai-chat)."""
    if not spec.tools:
        return spec
    name = spec.tools[0].name
    calls = tuple(CallPlan(name, "{}", ("{}",), id=f"call_{n}") for n in range(MANY_CALLS))
    limits = replace(spec.limits, max_calls=MANY_CALLS)
    return replace(spec, calls=calls, schedule="sequential", limits=limits)


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
    "numeric id": _numeric_id,
    "other stop reason": _other_stop,
    "error_text": _error_text,
    "untyped_error": _untyped_error,
    "choice_not_object": _choice_not_object,
    "string_error": _string_error,
    "no_item_done": _no_item_done,
    "restated_otherwise": _restated_otherwise,
    "many calls": _many_calls,
}
_ODDITIES: dict[str, tuple[str, ...]] = {
    "openai-chat": (*openai_chat.ODDITIES, "shared id", "no calls", "numeric id"),
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
RARE_PERCENT = 3
"""How often each of the costly oddities is drawn, in a hundred of the streams that draw no
other (about one in four): a stream of 258 calls takes twenty times an ordinary one's time."""
_RARE: dict[str, tuple[str, ...]] = {"openai-chat": ("many calls",)}
"""The costly oddities, drawn in the streams that draw no other."""
_RARELY = {dialect: rarely(RARE_PERCENT * len(names)) for dialect, names in _RARE.items()}


def draw_oddity(draw: st.DrawFn, dialect: str) -> str | None:
    """Which oddity of ``dialect`` a stream shows, if any: about ``PERCENT`` in a hundred for
    each (``RARE_PERCENT`` for the costly ones). Drawn first, before the calls, so that
    shrinking the calls keeps it; one draw says whether (shrinking to none), a second which
    (Hypothesis draws some regions of one long table of outcomes far more often than others)."""
    names = _ODDITIES.get(dialect)
    if names is None:
        return None
    if draw(_ODD[dialect]):
        return str(pick(draw, names))
    rare = _RARE.get(dialect)
    if rare is None or not draw(_RARELY[dialect]):
        return None
    return str(pick(draw, rare))


def with_oddity(name: str | None, spec: StreamSpec) -> StreamSpec:
    """``spec`` with the oddity ``name`` (from :func:`draw_oddity`), where the oracle predicts
    it under both profiles; else ``spec`` as it is, where the oracle predicts that; else the
    example is rejected. Every generator ends here: the spec the oracle cannot predict is never
    drawn, and the one with the oddity is checked first, so that it is the only one checked."""
    if name is not None:
        odd = _PLANS[name](spec) if name in _PLANS else replace(spec, oddity=cast(Oddity, name))
        if odd != spec and predictable(odd):
            label_draw(f"oddity: {name}")
            return odd
    if not predictable(spec):
        reject()
    return spec

"""How a drawn stream's events become bytes: :func:`draw_transport`, one choice from a dialect's
table of transport knobs (its :class:`~callstream.strategies._knobs.Knobs`, whose names are
:class:`~callstream.core.spec.Transport`'s fields)."""

from __future__ import annotations

from dataclasses import fields

from hypothesis import strategies as st

from ..core.spec import Transport
from ._knobs import Knobs, label_draw

__all__ = ["draw_transport"]

_FLAGS = tuple(field.name for field in fields(Transport) if field.type == "bool")
"""The transport knobs that are on or off (``Transport`` postpones its annotations)."""


def draw_transport(draw: st.DrawFn, table: Knobs) -> Transport:
    """A transport drawn from ``table``, each unusual knob labelled for Hypothesis's
    statistics (``callstream fuzz`` shows them)."""
    transport = Transport(**table.fields(draw))
    if transport == Transport():
        return transport
    label_draw(f"transport: newline {transport.newline}")
    if not transport.space:
        label_draw("transport: data: without a space")
    for knob in _FLAGS:
        if knob != "space" and getattr(transport, knob):
            label_draw(f"transport: {knob}")
    return transport

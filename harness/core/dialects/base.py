"""What the harness needs of a dialect: the one object per wire format that renders a plan into
that format's events, reads a scenario's literal events, and derives what a planned stream must
become (the dialect's completion signals, its quirks, its profiles).

The layers above keep their part of each dialect in a table keyed by the same name: the
generators (``callstream.strategies``), the provider emulator (``callstream.emulator``) and the
adapters, which declare the dialects they read. ``tests/test_dialects.py`` checks that every
dialect has every part.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ...errors import PlanError
from ...rules import QuirkId, RuleId
from ..spec import Expected, StreamSpec
from ..wire import Event, Rendered

__all__ = ["Dialect", "literal_event", "plain_route"]


class Dialect(Protocol):
    """One wire format, on the harness's side."""

    @property
    def name(self) -> str:
        """As scenarios, declarations and reports spell it: ``openai-chat``."""

    @property
    def quirks(self) -> tuple[QuirkId, ...]:
        """The quirk ids of research/wire_formats.md §7 its streams can show."""

    @property
    def not_certifiable(self) -> Mapping[RuleId, str]:
        """The rules no scenario of this dialect can certify through the contract, and why."""

    def events(self, spec: StreamSpec) -> list[Event]:
        """The events a planned ``spec`` is sent as, each marking the finishes and per-call
        boundaries it carries."""

    def literal(self, item: Any) -> Event:
        """One item of a scenario's literal ``events:`` list as the event it stands for."""

    def expect(
        self, spec: StreamSpec, rendered: Rendered, profile: str, opt_ins: frozenset[str]
    ) -> Expected:
        """What the planned ``spec``, sent as ``rendered``, must become under ``profile`` on a
        route with ``opt_ins``; :class:`~callstream.errors.PlanError` for a plan it cannot
        predict."""


def literal_event(item: Any) -> Event:
    """A literal item as an event: ``{"event": name, "data": text}`` names its SSE event type,
    anything else is the data itself (a payload, or raw text such as ``[DONE]``)."""
    if isinstance(item, dict) and set(item) <= {"event", "data"} and "data" in item:
        return Event(item["data"], item.get("event"))
    return Event(item)


def plain_route(dialect: str, opt_ins: frozenset[str]) -> None:
    """Refuse a route's opt-ins where the dialect's oracle predicts plain routes only: such a
    scenario writes its expectation out (D76)."""
    if opt_ins:
        listed = ", ".join(sorted(opt_ins))
        raise PlanError(
            f"{dialect}: the oracle predicts no route that opts in ({listed}): "
            "write the expectation out (D76)"
        )

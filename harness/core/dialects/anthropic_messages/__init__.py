"""Anthropic Messages (``message_start`` … ``message_stop``), on the harness's side.

- ``events`` — a plan as the Messages stream's events;
- ``expectation`` — what a planned stream must become.

Its completion signals are per call, ``content_block_stop`` (C5), and per message,
``message_delta.stop_reason``. A message has one choice, so A7 cannot be certified in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ....rules import ANTHROPIC_MESSAGES_QUIRKS, BEYOND_THE_CONTRACT, QuirkId, RuleId, rule_ids
from ...spec import Expected, StreamSpec
from ...wire import Event, Rendered
from ..base import literal_event, plain_route
from .events import ERROR, MESSAGE, USAGE, plan_events, stop_reason
from .expectation import expect_anthropic_messages

__all__ = ["ANTHROPIC_MESSAGES", "ERROR", "MESSAGE", "USAGE", "AnthropicMessages", "stop_reason"]


@dataclass(frozen=True, slots=True)
class AnthropicMessages:
    """The ``anthropic-messages`` dialect (see :class:`~callstream.core.dialects.base.Dialect`)."""

    name: str = "anthropic-messages"
    quirks: tuple[QuirkId, ...] = ANTHROPIC_MESSAGES_QUIRKS
    not_certifiable: Mapping[RuleId, str] = field(
        default_factory=lambda: {
            **BEYOND_THE_CONTRACT,
            **dict.fromkeys(
                rule_ids("A7"), "anthropic-messages has one message per stream, no choices"
            ),
        }
    )

    def events(self, spec: StreamSpec) -> list[Event]:
        """The events the plan is sent as, each with its ``event:`` name."""
        return list(plan_events(spec))

    def literal(self, item: Any) -> Event:
        """A literal item: a payload with a ``type`` (sent under ``event: <type>``, as the API
        sends it), ``{"event": …, "data": …}`` (the name as given: ``{"data": …}`` alone sends
        no ``event:`` line, quirk T7), or raw text."""
        if isinstance(item, dict) and "data" not in item and isinstance(item.get("type"), str):
            return Event(item, item["type"])
        return literal_event(item)

    def expect(
        self, spec: StreamSpec, rendered: Rendered, profile: str, opt_ins: frozenset[str]
    ) -> Expected:
        """What the planned stream must become under ``profile``."""
        plain_route(self.name, opt_ins)
        return expect_anthropic_messages(spec, rendered, profile)


ANTHROPIC_MESSAGES = AnthropicMessages()
"""The dialect, as :data:`~callstream.core.dialects.DIALECTS` holds it."""

"""OpenAI Responses (``response.*`` events), on the harness's side.

- ``events`` — a plan as Responses events, numbered by ``sequence_number``;
- ``expectation`` — what a planned stream must become.

Its completion signals are a call's ``output_item.done`` with status ``completed`` (the per-call
boundary, C5) and the response's terminal event (``response.completed``, ``.incomplete``,
``.failed``, an ``error`` event).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ....rules import BEYOND_THE_CONTRACT, OPENAI_RESPONSES_QUIRKS, QuirkId, RuleId, rule_ids
from ...spec import Expected, StreamSpec
from ...wire import Event, Rendered
from ..base import literal_event, plain_route
from .events import RESPONSE, USAGE, call_item_id, plan_events
from .expectation import expect_openai_responses

__all__ = ["OPENAI_RESPONSES", "RESPONSE", "USAGE", "OpenAIResponses", "call_item_id"]


@dataclass(frozen=True, slots=True)
class OpenAIResponses:
    """The ``openai-responses`` dialect (see :class:`~callstream.core.dialects.base.Dialect`)."""

    name: str = "openai-responses"
    quirks: tuple[QuirkId, ...] = OPENAI_RESPONSES_QUIRKS
    not_certifiable: Mapping[RuleId, str] = field(
        default_factory=lambda: {
            **BEYOND_THE_CONTRACT,
            **dict.fromkeys(
                rule_ids("A7"), "a Responses stream has one output list: no choices to separate"
            ),
        }
    )

    def events(self, spec: StreamSpec) -> list[Event]:
        """The ``response.*`` events the plan is sent as."""
        return list(plan_events(spec))

    def literal(self, item: Any) -> Event:
        """A literal item: ``{"event": …, "data": …}``, or a payload sent under its ``type``."""
        event = literal_event(item)
        if event.event is None and isinstance(event.data, dict):
            kind = event.data.get("type")
            if isinstance(kind, str):
                return Event(event.data, kind)
        return event

    def expect(
        self, spec: StreamSpec, rendered: Rendered, profile: str, opt_ins: frozenset[str]
    ) -> Expected:
        """What the planned stream must become under ``profile``."""
        plain_route(self.name, opt_ins)
        return expect_openai_responses(spec, rendered, profile)


OPENAI_RESPONSES = OpenAIResponses()
"""The dialect, as :data:`~callstream.core.dialects.DIALECTS` holds it."""

"""OpenAI Chat Completions (``chat.completion.chunk``), on the harness's side.

- ``events`` — a plan as chunk payloads, and the chunk envelope everyone builds chunks with;
- ``expectation`` — what a planned stream must become.

Its completion signal is the choice's ``finish_reason``; it has no per-call boundary, so C5
cannot be certified in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ....rules import BEYOND_THE_CONTRACT, OPENAI_CHAT_QUIRKS, QuirkId, RuleId, rule_ids
from ...spec import Expected, StreamSpec
from ...wire import Event, Rendered
from ..base import literal_event
from .events import ENVELOPE, USAGE, chat_chunk, delta_choice, plan_events
from .expectation import expect_openai_chat

__all__ = ["ENVELOPE", "OPENAI_CHAT", "USAGE", "OpenAIChat", "chat_chunk", "delta_choice"]


@dataclass(frozen=True, slots=True)
class OpenAIChat:
    """The ``openai-chat`` dialect (see :class:`~callstream.core.dialects.base.Dialect`)."""

    name: str = "openai-chat"
    quirks: tuple[QuirkId, ...] = OPENAI_CHAT_QUIRKS
    not_certifiable: Mapping[RuleId, str] = field(
        default_factory=lambda: {
            **BEYOND_THE_CONTRACT,
            **dict.fromkeys(
                rule_ids("C5"),
                "openai-chat has no per-call done event (Responses and Anthropic have one)",
            ),
        }
    )

    def events(self, spec: StreamSpec) -> list[Event]:
        """The chunks, finishes and ``[DONE]`` the plan is sent as."""
        return list(plan_events(spec))

    def literal(self, item: Any) -> Event:
        """A literal item: a chunk payload, ``"[DONE]"``, or ``{"event": …, "data": …}``."""
        return literal_event(item)

    def expect(
        self, spec: StreamSpec, rendered: Rendered, profile: str, opt_ins: frozenset[str]
    ) -> Expected:
        """What the planned stream must become under ``profile``."""
        return expect_openai_chat(spec, rendered, profile, opt_ins)


OPENAI_CHAT = OpenAIChat()
"""The dialect, as :data:`~callstream.core.dialects.DIALECTS` holds it."""

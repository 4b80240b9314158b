"""Dialects: each turns one provider's events into call updates on a :class:`CallBook`.

A dialect is the only place that knows a wire format. Adding one means adding a module here and
an entry in ``DIALECTS``; the call state, validation and the Assembler stay as they are.
"""

from __future__ import annotations

from typing import Any, Protocol

from .._calls import CallBook
from .anthropic_messages import AnthropicMessages
from .openai_chat import OpenAIChat
from .openai_responses import OpenAIResponses

__all__ = ["DIALECTS", "Dialect"]


class Dialect(Protocol):
    """What the Assembler needs from a dialect."""

    usage: Any
    """The last usage object the stream reported, if any."""

    def receive(self, event: str, data: str) -> None:
        """One dispatched SSE event: its type and its data. May raise StreamFailure."""

    def receive_payload(self, event: str, payload: Any) -> None:
        """One already-decoded event payload. May raise StreamFailure."""

    def end(self) -> None:
        """The connection ended: settle whatever the stream left open."""


class DialectFactory(Protocol):
    def __call__(self, book: CallBook) -> Dialect: ...


DIALECTS: dict[str, DialectFactory] = {
    "openai-chat": OpenAIChat,
    "anthropic-messages": AnthropicMessages,
    "openai-responses": OpenAIResponses,
}

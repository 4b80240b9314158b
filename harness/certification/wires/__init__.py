"""The dialects ``callstream certify`` speaks: for each, how a probe is asked in its shape and
how what the reference assembler does not read is read back (see :mod:`.base`).

- ``openai_chat`` — OpenAI Chat Completions, the default;
- ``anthropic_messages`` — Anthropic Messages (``x-api-key``, ``anthropic-version``);
- ``openai_responses`` — OpenAI Responses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import UsageError
from .anthropic_messages import ANTHROPIC_MESSAGES_WIRE
from .base import Asked, Usage, Wire, qualified
from .openai_chat import OPENAI_CHAT_WIRE
from .openai_responses import OPENAI_RESPONSES_WIRE

__all__ = ["DEFAULT_WIRE", "WIRES", "Asked", "Usage", "Wire", "qualified", "wire", "wire_of"]

WIRES: dict[str, Wire] = {
    OPENAI_CHAT_WIRE.name: OPENAI_CHAT_WIRE,
    ANTHROPIC_MESSAGES_WIRE.name: ANTHROPIC_MESSAGES_WIRE,
    OPENAI_RESPONSES_WIRE.name: OPENAI_RESPONSES_WIRE,
}
"""Every dialect certify speaks, by name."""
DEFAULT_WIRE = OPENAI_CHAT_WIRE.name


def wire(name: str) -> Wire:
    """The dialect called ``name``; a :class:`UsageError` lists the known ones."""
    try:
        return WIRES[name]
    except KeyError:
        raise UsageError(f"--dialect {name!r}: known dialects: {', '.join(WIRES)}") from None


def wire_of(context: Mapping[str, Any]) -> Wire:
    """The dialect a recording was made in (its header's ``dialect``; openai-chat for a
    cassette recorded before certify spoke others)."""
    name = context.get("dialect", DEFAULT_WIRE)
    return wire(name if isinstance(name, str) else DEFAULT_WIRE)

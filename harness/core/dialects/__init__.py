"""The dialects the harness renders and predicts, by name (see :mod:`.base`).

- ``openai_chat`` — OpenAI Chat Completions (``chat.completion.chunk``, ``finish_reason``,
  ``data: [DONE]``).
- ``anthropic_messages`` — Anthropic Messages (``content_block_start`` … ``message_stop``).
- ``openai_responses`` — OpenAI Responses (``response.*`` events, ``output_item.done``).

Adding a dialect is adding a package here (its events and its expectation) and its entry in
:data:`DIALECTS`, then its parts in the layers above.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...errors import UsageError
from ...rules import RULES, RuleId
from .anthropic_messages import ANTHROPIC_MESSAGES
from .base import Dialect, literal_event, plain_route
from .openai_chat import OPENAI_CHAT
from .openai_responses import OPENAI_RESPONSES

__all__ = [
    "DEFAULT_DIALECT",
    "DIALECTS",
    "NOT_CERTIFIABLE",
    "Dialect",
    "dialect",
    "literal_event",
    "not_certifiable",
    "plain_route",
]

DIALECTS: dict[str, Dialect] = {
    OPENAI_CHAT.name: OPENAI_CHAT,
    ANTHROPIC_MESSAGES.name: ANTHROPIC_MESSAGES,
    OPENAI_RESPONSES.name: OPENAI_RESPONSES,
}
"""Every dialect the harness renders and predicts."""
DEFAULT_DIALECT = OPENAI_CHAT.name
"""The dialect of a scenario that names none and sits in no dialect's folder."""


def dialect(name: str) -> Dialect:
    """The dialect called ``name``; a :class:`UsageError` lists the known ones."""
    try:
        return DIALECTS[name]
    except KeyError:
        raise UsageError(f"unknown dialect {name!r}; known: {', '.join(DIALECTS)}") from None


def not_certifiable(dialects: Iterable[str] = DIALECTS) -> dict[RuleId, str]:
    """The rules no scenario of any of ``dialects`` can certify through the contract, in the
    order of REQUIREMENTS.md, each with why (the first dialect's reason)."""
    chosen = [DIALECTS[name] for name in dialects]
    return {
        rule: chosen[0].not_certifiable[rule]
        for rule in RULES
        if chosen and all(rule in one.not_certifiable for one in chosen)
    }


NOT_CERTIFIABLE = not_certifiable()
"""The rules no scenario of any dialect callstream speaks can certify, and why: the corpus
cannot cover them, so reports show them as not certifiable rather than as holes."""

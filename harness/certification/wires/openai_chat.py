"""OpenAI Chat Completions as certify asks and reads it: ``POST {base}/chat/completions`` with a
bearer token, the probe's body as written, ``chat.completion.chunk`` events and a
``chat.completion`` when not streaming."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...core.dialects.openai_chat import OPENAI_CHAT
from ...rules import QuirkId
from ..probes import Probe
from .base import Asked, Usage, checks_of_quirks

__all__ = ["OPENAI_CHAT_WIRE"]


@dataclass(frozen=True, slots=True)
class OpenAIChatWire:
    """The ``openai-chat`` dialect (see :class:`~callstream.certification.wires.base.Wire`)."""

    name: str = "openai-chat"
    path: str = "/chat/completions"
    quirks: tuple[QuirkId, ...] = OPENAI_CHAT.quirks
    check_of_quirk: Mapping[str, str] = field(
        default_factory=lambda: checks_of_quirks(
            "openai-chat",
            {
                "sse_framing": "T6 T9 T10 T11",
                "chunk_envelope": "C21 C22 C27 C28 C29 C30",
                "index_contract": "C1 C2 C3 C14",
                "identity_once": "C4 C5 C6 C7",
                "arguments_json": "C10 C11 C12 C13 C32",
                "finish_reason": "C16 C33",
                "after_finish": "C20",
                "usage": "C23",
                "terminator": "C24",
                "calls_made": "C31",
            },
        )
    )
    aliases: Mapping[str, str] = field(default_factory=dict)
    finish_field: str = "finish_reason"
    usage_missing: str = "include_usage was asked for, but no usage came"
    token_counts: tuple[str, ...] = ("prompt_tokens", "completion_tokens", "total_tokens")
    completing: frozenset[str] = frozenset({"tool_calls", "stop", "function_call"})
    calls_finish: str | None = "tool_calls"
    completion_noun: str = "a chat.completion"
    unfinished: str = "a choice ended without a finish_reason"

    def headers(self, api_key: str | None) -> dict[str, str]:
        """The bearer token."""
        return {"authorization": f"Bearer {api_key}"} if api_key else {}

    def body(self, probe: Probe, model: str, *, stream: bool) -> dict[str, Any]:
        """The probe as written (``stream_options`` only when streaming)."""
        return probe.body(model, stream=stream)

    def asked(self, body: Mapping[str, Any], calls: int) -> Asked:
        """A named or required ``tool_choice``, ``max_tokens`` (or ``max_completion_tokens``),
        ``stream_options.include_usage``."""
        choice = body.get("tool_choice")
        named = None
        if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
            named = choice["function"].get("name")
        options = body.get("stream_options")
        return Asked(
            named=named,
            required=choice == "required",
            limited=any(
                isinstance(body.get(key), int) for key in ("max_tokens", "max_completion_tokens")
            ),
            wants_usage=isinstance(options, dict) and options.get("include_usage") is True,
            calls=calls,
        )

    def finishes(self, payloads: Sequence[Any]) -> dict[int, str]:
        """Each choice's first ``finish_reason``."""
        finished: dict[int, str] = {}
        for payload in payloads:
            for entry in _choices_of(payload):
                reason = entry.get("finish_reason")
                number = entry.get("index", 0)
                if isinstance(reason, str) and reason and isinstance(number, int):
                    finished.setdefault(number, reason)
        return finished

    def usage(self, payloads: Sequence[Any]) -> Usage:
        """The last chunk's ``usage`` object."""
        last: Usage = None
        for number, payload in enumerate(payloads):
            if isinstance(payload, dict) and isinstance(payload.get("usage"), dict):
                last = (number, payload["usage"])
        return last

    def restated(self, payloads: Sequence[Any]) -> list[str | None] | None:
        """None: the stream restates no call."""
        return None

    def unclosed(self, payloads: Sequence[Any]) -> list[str]:
        """None: a chat call has no closing event of its own."""
        return []

    def is_error(self, payload: Any) -> bool:
        """A flat error payload (``object: error``)."""
        return isinstance(payload, dict) and payload.get("object") == "error"

    def completion(self, body: Any) -> tuple[list[tuple[str | None, str]], str | None] | None:
        """The first choice's ``tool_calls`` and ``finish_reason``."""
        message = _message_of(body)
        if message is None:
            return None
        calls = [_plain_call(entry) for entry in message.get("tool_calls") or ()]
        finish = body["choices"][0].get("finish_reason")
        return calls, finish if isinstance(finish, str) else None


OPENAI_CHAT_WIRE = OpenAIChatWire()


def _choices_of(payload: Any) -> list[dict[str, Any]]:
    """The choices of a chunk that are objects; none when it has no list of them."""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    return [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []


def _message_of(completion: Any) -> dict[str, Any] | None:
    """The message of a chat.completion's first choice, or None when it has none."""
    choices = completion.get("choices") if isinstance(completion, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    return message if isinstance(message, dict) else None


def _plain_call(entry: Any) -> tuple[str | None, str]:
    """The name and argument text of one of a message's ``tool_calls``."""
    function = entry.get("function") if isinstance(entry, dict) else None
    if not isinstance(function, dict):
        return None, ""
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    name = function.get("name")
    return (name if isinstance(name, str) else None), arguments

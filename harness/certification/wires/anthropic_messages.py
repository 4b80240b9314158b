"""Anthropic Messages as certify asks and reads it: ``POST {base}/messages`` with ``x-api-key``
and ``anthropic-version: 2023-06-01``; the probe's system messages as ``system``, its tools as
``{name, description, input_schema}``, its ``tool_choice`` as ``auto``, ``any`` or ``tool``, and
``max_tokens``, which the API requires (D36); ``message_start`` … ``message_stop`` events and a
``Message`` when not streaming."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...core.dialects.anthropic_messages import ANTHROPIC_MESSAGES
from ...rules import QuirkId
from ..probes import Probe
from .base import Asked, Usage, checks_of_quirks

__all__ = ["ANTHROPIC_MESSAGES_WIRE", "ANTHROPIC_VERSION", "DEFAULT_MAX_TOKENS"]

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
"""The ``max_tokens`` of a probe that sets none: the API requires one, and this one is far
above any probe's answer, so it is not a limit the probe asks for (D36)."""
_CHOICES = {"required": "any", "auto": "auto", "none": "none"}
_CHAT_ONLY = ("stream_options", "parallel_tool_calls", "max_completion_tokens", "tool_choice")


@dataclass(frozen=True, slots=True)
class AnthropicMessagesWire:
    """The ``anthropic-messages`` dialect (see
    :class:`~callstream.certification.wires.base.Wire`)."""

    name: str = "anthropic-messages"
    path: str = "/messages"
    quirks: tuple[QuirkId, ...] = ANTHROPIC_MESSAGES.quirks
    check_of_quirk: Mapping[str, str] = field(
        default_factory=lambda: checks_of_quirks(
            "anthropic-messages",
            {
                "sse_framing": "T6 T7 T8 T9 T10 T11",
                "chunk_envelope": "A3 A4",
                "index_contract": "C1 C14",
                "identity_once": "C7",
                "arguments_json": "A6",
                "terminator": "C24",
            },
        )
    )
    aliases: Mapping[str, str] = field(
        default_factory=lambda: {"C11": "A1", "C12": "A1", "C17": "A1", "C26": "A2"}
    )
    finish_field: str = "stop_reason"
    usage_missing: str = "the stream reported no usage"
    token_counts: tuple[str, ...] = ("input_tokens", "output_tokens")
    completing: frozenset[str] = frozenset({"tool_use", "end_turn", "stop_sequence"})
    calls_finish: str | None = "tool_use"
    completion_noun: str = "a Message"
    unfinished: str = "the message ended without a stop_reason"

    def headers(self, api_key: str | None) -> dict[str, str]:
        """``x-api-key`` and ``anthropic-version``."""
        key = {"x-api-key": api_key} if api_key else {}
        return {**key, "anthropic-version": ANTHROPIC_VERSION}

    def body(self, probe: Probe, model: str, *, stream: bool) -> dict[str, Any]:
        """The probe as a Messages request."""
        options = probe.options
        system = [m["content"] for m in probe.messages if m.get("role") == "system"]
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": options.get("max_tokens")
            or options.get("max_completion_tokens")
            or DEFAULT_MAX_TOKENS,
            "messages": [dict(m) for m in probe.messages if m.get("role") != "system"],
            "tools": [_tool(tool) for tool in probe.tools],
            **{key: value for key, value in options.items() if key not in _CHAT_ONLY},
        }
        if system:
            body["system"] = "\n\n".join(map(str, system))
        choice = _tool_choice(options.get("tool_choice"), options.get("parallel_tool_calls"))
        if choice is not None:
            body["tool_choice"] = choice
        body["stream"] = stream
        return body

    def asked(self, body: Mapping[str, Any], calls: int) -> Asked:
        """``tool_choice`` ``tool`` (named) or ``any`` (required); a ``max_tokens`` other than
        the default; usage always (message_start and message_delta carry it, D37)."""
        choice = body.get("tool_choice")
        kind = choice.get("type") if isinstance(choice, dict) else None
        named = choice.get("name") if isinstance(choice, dict) and kind == "tool" else None
        limit = body.get("max_tokens")
        return Asked(
            named=named if isinstance(named, str) else None,
            required=kind == "any",
            limited=isinstance(limit, int) and limit != DEFAULT_MAX_TOKENS,
            wants_usage=True,
            calls=calls,
        )

    def finishes(self, payloads: Sequence[Any]) -> dict[int, str]:
        """The message's first ``stop_reason`` (one message: choice 0)."""
        for payload in payloads:
            if isinstance(payload, dict) and payload.get("type") == "message_delta":
                delta = payload.get("delta")
                reason = delta.get("stop_reason") if isinstance(delta, dict) else None
                if isinstance(reason, str) and reason:
                    return {0: reason}
        return {}

    def usage(self, payloads: Sequence[Any]) -> Usage:
        """``message_start``'s usage, each field replaced by the ``message_delta`` usage that
        follows (cumulative, A5)."""
        merged: dict[str, Any] = {}
        last = None
        for number, payload in enumerate(payloads):
            if not isinstance(payload, dict):
                continue
            kind = payload.get("type")
            message = payload.get("message")
            if kind == "message_start" and isinstance(message, dict):
                found = message.get("usage")
            elif kind == "message_delta":
                found = payload.get("usage")
            else:
                continue
            if isinstance(found, dict):
                merged.update(found)
                last = number
        return None if last is None else (last, merged)

    def restated(self, payloads: Sequence[Any]) -> list[str | None] | None:
        """None: the stream restates no call."""
        return None

    def unclosed(self, payloads: Sequence[Any]) -> list[str]:
        """Each ``tool_use`` block started and never stopped (a stop without an index stops
        the one open block, as C1 reads it)."""
        open_blocks: dict[Any, bool] = {}  # by index: is it a tool_use block
        for payload in payloads:
            if not isinstance(payload, dict):
                continue
            block = payload.get("content_block")
            index = payload.get("index")
            if payload.get("type") == "content_block_start" and isinstance(block, dict):
                open_blocks[index] = block.get("type") == "tool_use"
            elif payload.get("type") == "content_block_stop":
                if index is None and len(open_blocks) == 1:
                    index = next(iter(open_blocks))
                open_blocks.pop(index, None)
        unclosed = [
            f"block {index}: no content_block_stop" for index, call in open_blocks.items() if call
        ]
        return unclosed

    def is_error(self, payload: Any) -> bool:
        """A payload of type ``error``."""
        return isinstance(payload, dict) and payload.get("type") == "error"

    def completion(self, body: Any) -> tuple[list[tuple[str | None, str]], str | None] | None:
        """The ``tool_use`` blocks of a ``Message`` (their input as JSON text) and its
        ``stop_reason``."""
        if not isinstance(body, dict) or body.get("type") != "message":
            return None
        content = body.get("content")
        if not isinstance(content, list):
            return None
        calls = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                name = block.get("name")
                text = json.dumps(block.get("input"), ensure_ascii=False)
                calls.append((name if isinstance(name, str) else None, text))
        reason = body.get("stop_reason")
        return calls, reason if isinstance(reason, str) else None


def _tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A chat tool (``{"type": "function", "function": {…}}``) as an Anthropic tool."""
    function = tool.get("function", tool)
    out = {"name": function["name"]}
    if "description" in function:
        out["description"] = function["description"]
    out["input_schema"] = function.get("parameters") or {"type": "object", "properties": {}}
    return out


def _tool_choice(choice: Any, parallel: Any) -> dict[str, Any] | None:
    """A chat ``tool_choice`` (and ``parallel_tool_calls``) as Anthropic's ``tool_choice``."""
    out: dict[str, Any] | None = None
    if isinstance(choice, str) and choice in _CHOICES:
        out = {"type": _CHOICES[choice]}
    elif isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        out = {"type": "tool", "name": choice["function"].get("name")}
    if isinstance(parallel, bool):
        out = {**(out or {"type": "auto"}), "disable_parallel_tool_use": not parallel}
    return out


ANTHROPIC_MESSAGES_WIRE = AnthropicMessagesWire()

"""OpenAI Responses as certify asks and reads it: ``POST {base}/responses`` with a bearer token;
the probe's system messages as ``instructions``, the others as ``input``, its tools flat
(``{type: function, name, description, parameters}``), a named ``tool_choice`` as
``{type: function, name}``, ``max_tokens`` as ``max_output_tokens``; ``response.*`` events and a
``response`` object when not streaming."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...core.dialects.openai_responses import OPENAI_RESPONSES
from ...rules import QuirkId
from ..probes import Probe
from .base import Asked, Usage, checks_of_quirks

__all__ = ["OPENAI_RESPONSES_WIRE"]

_TERMINALS = frozenset(
    {"response.completed", "response.incomplete", "response.failed", "response.done"}
)
_ARGUMENTS_DONE = "response.function_call_arguments.done"
_ITEM_DONE = "response.output_item.done"
_CHAT_ONLY = ("stream_options", "max_tokens", "max_completion_tokens", "tool_choice")


@dataclass(frozen=True, slots=True)
class OpenAIResponsesWire:
    """The ``openai-responses`` dialect (see
    :class:`~callstream.certification.wires.base.Wire`)."""

    name: str = "openai-responses"
    path: str = "/responses"
    quirks: tuple[QuirkId, ...] = OPENAI_RESPONSES.quirks
    check_of_quirk: Mapping[str, str] = field(
        default_factory=lambda: checks_of_quirks(
            "openai-responses",
            {
                "sse_framing": "T6 T8 T9 T10 T11",
                "chunk_envelope": "R4 R7 R12",
                "arguments_json": "R1 R2 R10 R11",
                "index_contract": "R8",
                "identity_once": "R9",
                "terminator": "R5",
            },
        )
    )
    aliases: Mapping[str, str] = field(default_factory=lambda: {"C11": "R11", "C25": "R5"})
    finish_field: str = "status"
    usage_missing: str = "the terminal response reported no usage"
    token_counts: tuple[str, ...] = ("input_tokens", "output_tokens", "total_tokens")
    completing: frozenset[str] = frozenset({"completed"})
    calls_finish: str | None = None
    completion_noun: str = "a response object"
    unfinished: str = "the response ended without a terminal event"

    def headers(self, api_key: str | None) -> dict[str, str]:
        """The bearer token."""
        return {"authorization": f"Bearer {api_key}"} if api_key else {}

    def body(self, probe: Probe, model: str, *, stream: bool) -> dict[str, Any]:
        """The probe as a Responses request."""
        options = probe.options
        system = [m["content"] for m in probe.messages if m.get("role") == "system"]
        body: dict[str, Any] = {
            "model": model,
            "input": [
                {"role": m.get("role"), "content": m.get("content")}
                for m in probe.messages
                if m.get("role") != "system"
            ],
            "tools": [_tool(tool) for tool in probe.tools],
            **{key: value for key, value in options.items() if key not in _CHAT_ONLY},
        }
        if system:
            body["instructions"] = "\n\n".join(map(str, system))
        limit = options.get("max_tokens") or options.get("max_completion_tokens")
        if limit is not None:
            body["max_output_tokens"] = limit
        choice = options.get("tool_choice")
        if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
            choice = {"type": "function", "name": choice["function"].get("name")}
        if choice is not None:
            body["tool_choice"] = choice
        body["stream"] = stream
        return body

    def asked(self, body: Mapping[str, Any], calls: int) -> Asked:
        """A named (``{type: function, name}``) or ``required`` ``tool_choice``,
        ``max_output_tokens``; usage always (the terminal response carries it, D54)."""
        choice = body.get("tool_choice")
        named = choice.get("name") if isinstance(choice, dict) else None
        return Asked(
            named=named if isinstance(named, str) else None,
            required=choice == "required",
            limited=isinstance(body.get("max_output_tokens"), int),
            wants_usage=True,
            calls=calls,
        )

    def finishes(self, payloads: Sequence[Any]) -> dict[int, str]:
        """The status of the first terminal event's response (one output list: choice 0)."""
        for payload in payloads:
            if isinstance(payload, dict) and payload.get("type") in _TERMINALS:
                response = payload.get("response")
                status = response.get("status") if isinstance(response, dict) else None
                if isinstance(status, str) and status:
                    return {0: status}
        return {}

    def usage(self, payloads: Sequence[Any]) -> Usage:
        """The ``usage`` of the last response object that carries one."""
        last: Usage = None
        for number, payload in enumerate(payloads):
            response = payload.get("response") if isinstance(payload, dict) else None
            if isinstance(response, dict) and isinstance(response.get("usage"), dict):
                last = (number, response["usage"])
        return last

    def restated(self, payloads: Sequence[Any]) -> list[str | None] | None:
        """The names of the ``function_call`` items in the first terminal response's
        ``output``."""
        for payload in payloads:
            if isinstance(payload, dict) and payload.get("type") in _TERMINALS:
                response = payload.get("response")
                read = self.completion(response)
                return None if read is None else [name for name, _ in read[0]]
        return None

    def unclosed(self, payloads: Sequence[Any]) -> list[str]:
        """Each ``function_call`` item added without its ``function_call_arguments.done`` or
        its ``output_item.done``."""
        missing: dict[Any, set[str]] = {}
        for payload in payloads:
            kind = payload.get("type") if isinstance(payload, dict) else None
            item = payload.get("item") if isinstance(payload, dict) else None
            if kind == "response.output_item.added" and isinstance(item, dict):
                if item.get("type") == "function_call":
                    missing[item.get("id")] = {_ARGUMENTS_DONE, _ITEM_DONE}
            elif kind == _ITEM_DONE and isinstance(item, dict):
                missing.get(item.get("id"), set()).discard(_ITEM_DONE)
            elif kind == _ARGUMENTS_DONE:
                missing.get(payload.get("item_id"), set()).discard(_ARGUMENTS_DONE)
        return [
            f"item {item_id}: no {' and no '.join(sorted(events))}"
            for item_id, events in missing.items()
            if events
        ]

    def is_error(self, payload: Any) -> bool:
        """An ``error`` event's payload, or ``response.failed``."""
        return isinstance(payload, dict) and payload.get("type") in ("error", "response.failed")

    def completion(self, body: Any) -> tuple[list[tuple[str | None, str]], str | None] | None:
        """The ``function_call`` items of a ``response`` object and its status."""
        if not isinstance(body, dict) or body.get("object") != "response":
            return None
        output = body.get("output")
        if not isinstance(output, list):
            return None
        calls = []
        for item in output:
            if isinstance(item, dict) and item.get("type") == "function_call":
                name, text = item.get("name"), item.get("arguments")
                calls.append(
                    (name if isinstance(name, str) else None, text if isinstance(text, str) else "")
                )
        status = body.get("status")
        return calls, status if isinstance(status, str) else None


def _tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A chat tool as a flat Responses function tool."""
    function = tool.get("function", tool)
    return {"type": "function", **function}


OPENAI_RESPONSES_WIRE = OpenAIResponsesWire()

"""After assembly (E1–E4): the helpers a client needs to run calls and answer the model.

The assembler never runs a tool (E1). These helpers put its results in execution order, build
the assistant message that holds the calls and the tool messages that answer them with the
original ids (E2), and give each call an idempotency key so a retried turn does not run a
side-effecting call twice (E3).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from ._calls import canonical_json
from ._model import CallResult

__all__ = [
    "ExecutionLedger",
    "assistant_message",
    "idempotency_key",
    "rejection_message",
    "release_order",
    "tool_message",
]


def release_order(results: Iterable[CallResult]) -> list[CallResult]:
    """Results in the documented execution order: by choice, then by index (E4)."""
    return sorted(results, key=lambda result: (result.choice, result.index))


def assistant_message(results: Iterable[CallResult], content: str | None = None) -> dict[str, Any]:
    """The assistant message to put in history: every call of one choice that has an id, in
    index order, with its exact argument text, so each can be answered by a tool message (E2)."""
    ordered = release_order(results)
    choices = {result.choice for result in ordered}
    if len(choices) > 1:
        raise ValueError(
            f"results of several choices {sorted(choices)}: build one message per choice"
        )
    calls = [_history_call(result) for result in ordered if result.id is not None]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message


def _history_call(result: CallResult) -> dict[str, Any]:
    """A call as the assistant message holds it: a function call, or a custom call with its
    input (the shape of ``ChatCompletionMessageCustomToolCall``)."""
    if result.kind == "custom":
        return {
            "id": result.id,
            "type": "custom",
            "custom": {"name": result.name or "", "input": result.arguments_text},
        }
    return {
        "id": result.id,
        "type": "function",
        "function": {"name": result.name or "", "arguments": result.arguments_text},
    }


def tool_message(result: CallResult, output: str) -> dict[str, Any]:
    """The tool message that answers ``result`` with ``output``, carrying its original id (E2)."""
    if result.id is None:
        raise ValueError("a call without an id cannot be answered; the strict profile rejects it")
    return {"role": "tool", "tool_call_id": result.id, "content": output}


def rejection_message(result: CallResult) -> dict[str, Any]:
    """A tool message telling the model why its call was not run, so it can retry."""
    if result.ready:
        raise ValueError("this call is ready: answer it with tool_message()")
    text = f"The call was not executed: {result.reason}"
    if result.detail:
        text += f" ({result.detail})"
    return tool_message(result, text + ".")


def idempotency_key(result: CallResult) -> str:
    """A stable key for one call: the same call retried gets the same key (E3).

    It covers the id, the call's position (choice and index), the name and the canonical
    arguments, so two distinct calls never share a key, even when a provider gives them one id
    (quirk C34); the same response assembled again gives every call the key it had.
    """
    arguments = canonical_json(result.arguments) if result.ready else result.arguments_text
    position = f"{result.choice}.{result.index}"
    material = "\0".join((result.id or "", position, result.name or "", arguments))
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class ExecutionLedger:
    """Remembers which calls have run, so a retried turn runs each side effect once (E3)."""

    def __init__(self) -> None:
        self._done: set[str] = set()

    def claim(self, result: CallResult) -> bool:
        """True the first time a ready call is seen (run it); False for a repeat or a rejection."""
        if not result.ready:
            return False
        key = idempotency_key(result)
        if key in self._done:
            return False
        self._done.add(key)
        return True

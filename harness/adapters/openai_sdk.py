"""The openai SDK as ``http:`` connectables.

- ``http:openai``: ``client.chat.completions.create(stream=True)``, every chunk folded by
  ``openai.lib.streaming.chat.ChatCompletionStreamState``, then ``get_final_completion()``:
  each choice's ``message.tool_calls`` are its results.
- ``http:openai-stream-helper``: the ``client.chat.completions.stream()`` helper, read through
  its events: a call is released by its ``tool_calls.function.arguments.done`` event, with the
  arguments that event carries (the helper's documented per-call signal). A call that never
  gets one is rejected ``interrupted``; the helper's events name no choice, so it claims a
  single choice.

What the SDK claims: it folds deltas into calls (A), decodes the event stream itself (T),
hands the assistant message back (C1, E), and refuses truncation: ``get_final_completion()``
raises ``LengthFinishReasonError`` / ``ContentFilterFinishReasonError`` for ``length`` /
``content_filter``, and an in-band error payload raises ``APIError`` (C3). Those exceptions
reject the calls they cut short (``truncated``, ``filtered``, ``stream_error``); any other
exception is the SDK's crash. It checks no schema, tool name or identity (V), and its
``get_final_completion()`` "does not provide any guarantees that the stream has actually
finished" (C2).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any, cast

import openai
from openai.lib.streaming.chat import ChatCompletionStreamState

from reference_impl import Tool

from ..connect import Declaration
from ._http import (
    AT_CLOSE,
    MESSAGES,
    TIMEOUT,
    HttpAdapter,
    call_result,
    openai_tools,
)

__all__ = ["OpenAIRaw", "OpenAIStreamHelper", "raw", "stream_helper"]

_DECLARATION = Declaration(observables=AT_CLOSE)


@cache
def _client(base_url: str) -> openai.OpenAI:
    # No retries: a bad stream must be judged as it came, not asked for again.
    return openai.OpenAI(base_url=base_url, api_key="callstream", max_retries=0, timeout=TIMEOUT)


def _request(model: str, offered: list[dict[str, Any]]) -> dict[str, Any]:
    request: dict[str, Any] = {"model": model, "messages": MESSAGES, "stream": True}
    if offered:
        request["tools"] = offered
    return request


def _in_band(exc: openai.APIError) -> bool:
    """True for the ``APIError`` the SDK raises on an error payload inside a 200 stream (not an
    HTTP status or a connection failure, which are the emulator's or the harness's)."""
    return not isinstance(exc, openai.APIStatusError | openai.APIConnectionError)


def _rejected_snapshot(completion: Any, reason: str) -> list[dict[str, Any]]:
    """Every call of a partial completion, rejected: a choice cut by ``length`` or
    ``content_filter`` for that, the others for ``reason`` (the exception discarded them)."""
    results = []
    for choice in completion.choices if completion is not None else ():
        why = {"length": "truncated", "content_filter": "filtered"}.get(
            choice.finish_reason or "", reason
        )
        results += [
            call_result(
                choice.index,
                index,
                call.id,
                call.function.name,
                call.function.arguments,
                rejected=why,
            )
            for index, call in enumerate(choice.message.tool_calls or ())
        ]
    return results


class OpenAIRaw(HttpAdapter):
    """``create(stream=True)`` folded by ``ChatCompletionStreamState``."""

    distributions = ("openai",)
    declaration = _DECLARATION

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The calls of the final completion."""
        offered = openai_tools(tools)
        state: ChatCompletionStreamState[Any] = ChatCompletionStreamState(
            input_tools=cast(Any, offered)
        )
        seen = False
        try:
            stream = _client(base_url).chat.completions.create(**_request(model, offered))
            for chunk in stream:
                state.handle_chunk(chunk)
                seen = True
            if not seen:
                return []
            completion = state.get_final_completion()
        except openai.LengthFinishReasonError as exc:
            return _rejected_snapshot(exc.completion, "truncated")
        except openai.ContentFilterFinishReasonError as exc:
            return _rejected_snapshot(exc.completion, "filtered")
        except openai.APIError as exc:
            if not _in_band(exc):
                raise
            snapshot = state.current_completion_snapshot if seen else None
            return _rejected_snapshot(snapshot, "stream_error")
        return [
            call_result(choice.index, index, call.id, call.function.name, call.function.arguments)
            for choice in completion.choices
            for index, call in enumerate(choice.message.tool_calls or ())
        ]


class OpenAIStreamHelper(HttpAdapter):
    """``client.chat.completions.stream()``, each call released by its ``done`` event."""

    distributions = ("openai",)
    declaration = Declaration(observables=AT_CLOSE - {"choices"})

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The calls as their ``done`` events gave them; the others rejected."""
        offered = openai_tools(tools)
        done: dict[int, dict[str, Any]] = {}
        ending = "interrupted"
        snapshot: Any = None
        try:
            request = _request(model, offered)
            del request["stream"]
            with _client(base_url).chat.completions.stream(**request) as stream:
                for event in stream:
                    snapshot = stream.current_completion_snapshot
                    if event.type == "tool_calls.function.arguments.done":
                        done[event.index] = call_result(
                            0,
                            event.index,
                            _call_id(snapshot, event.index),
                            event.name,
                            event.arguments,
                        )
        except openai.APIError as exc:
            if not _in_band(exc):
                raise
            ending = "stream_error"
        open_calls = _open_calls(snapshot, done)
        results = [*done.values()]
        results += [
            call_result(
                0, index, call.id, call.function.name, call.function.arguments, rejected=ending
            )
            for index, call in open_calls
        ]
        return sorted(results, key=lambda result: result["index"])


def _call_id(snapshot: Any, index: int) -> Any:
    calls = snapshot.choices[0].message.tool_calls if snapshot and snapshot.choices else None
    return calls[index].id if calls and index < len(calls) else None


def _open_calls(snapshot: Any, done: dict[int, Any]) -> Iterable[tuple[int, Any]]:
    if snapshot is None or not snapshot.choices:
        return []
    calls = snapshot.choices[0].message.tool_calls or ()
    return [(index, call) for index, call in enumerate(calls) if index not in done]


raw = OpenAIRaw()
"""``http:openai``."""
stream_helper = OpenAIStreamHelper()
"""``http:openai-stream-helper``."""

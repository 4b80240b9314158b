"""The openai SDK as ``http:`` connectables, one for each way its users read a streamed answer.

Paths below are in the installed SDK (``openai/…``).

- ``http:openai``, the documented helper path (``helpers.md``, "Streaming Helpers", "Chat
  Completions API")::

      with client.chat.completions.stream(model=…, messages=…, tools=…) as stream:
          for event in stream: …                    # content.delta events shown to the user
      completion = stream.get_final_completion()
      for call in completion.choices[0].message.tool_calls or []:
          run(call.function.name, call.function.arguments)

  The helper folds only the chunks whose ``object`` is ``chat.completion.chunk`` (it drops
  Azure's asynchronous-filter events: ``_is_valid_chat_completion_chunk_weak`` in
  ``lib/streaming/chat/_completions.py``). ``get_final_completion()`` refuses a completion any
  of whose choices ended on ``length`` or ``content_filter``: it raises
  ``LengthFinishReasonError`` / ``ContentFilterFinishReasonError`` (``parse_chat_completion``
  in ``lib/_parsing/_completions.py``), and an error payload inside the stream raises
  ``APIError`` (``Stream.__stream__`` in ``_streaming.py``).
- ``http:openai-state``, the raw pattern of ``ChatCompletionStreamState``'s own docstring
  (``lib/streaming/chat/_completions.py``): ``create(stream=True)``, every chunk handed to
  ``state.handle_chunk()``, then ``state.get_final_completion()``. Same folding and refusals,
  without the helper's chunk filter.
- ``http:openai-done-events``: the helper's events, each call run as soon as its
  ``tool_calls.function.arguments.done`` event arrives, with that event's ``arguments``
  (helpers.md: "Emitted when a function tool call's arguments are complete"), its id read from
  the stream's snapshot. The helper fires it when a delta names another tool-call index, or
  when the choice gets a finish reason, whatever the reason (``ChoiceEventState.get_done_events``
  in ``lib/streaming/chat/_completions.py``). A call without one is never handed back: this path
  has no notion of a rejected call, and its events name no choice, so several choices cannot be
  told apart.

The function tools are offered plain (no ``strict``), as most users declare them, and custom
tools as chat-completions custom tools with their format: the SDK then parses no arguments
(``parse_function_tool_arguments`` returns None) and hands back their text only. A custom tool
call (``"type": "custom"``) is folded into the SDK's function-call model, its ``custom``
payload kept as a plain dict: the adapter reads its name and input there
(``get_final_completion()`` itself logs it by attribute and raises). Every result comes out
when the stream has ended (see ``_http``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import openai
from openai.lib.streaming.chat import ChatCompletionStreamState

from callstream.reference import Tool

from ...core.declaration import Declaration
from .base import (
    MESSAGES,
    TIMEOUT,
    HttpAdapter,
    call_result,
    custom_result,
    in_band_error,
    openai_tools,
)

__all__ = [
    "OpenAIDoneEvents",
    "OpenAIStreamHelper",
    "OpenAIStreamState",
    "done_events",
    "stream_helper",
    "stream_state",
]

_REFUSED = {"length": "truncated", "content_filter": "filtered"}
"""The finish reasons ``get_final_completion()`` refuses, as the contract's reasons."""
_FOLDED = Declaration(
    observables=frozenset({"status", "reason", "arguments_text", "ids", "choices"})
)
"""What the final completion exposes: every call with its text and id, per choice, and the
SDK's refusals as exceptions of distinct types."""


@cache
def _client(base_url: str) -> openai.OpenAI:
    # No retries: a bad stream must be judged as it came, not asked for again.
    return openai.OpenAI(base_url=base_url, api_key="callstream", max_retries=0, timeout=TIMEOUT)


def _request(model: str, tools: Sequence[Tool]) -> dict[str, Any]:
    request: dict[str, Any] = {"model": model, "messages": MESSAGES}
    if offered := openai_tools(tools):
        request["tools"] = offered
    return request


def _final_calls(completion: Any) -> list[dict[str, Any]]:
    """The calls of a final completion, as the caller runs them."""
    return [
        _result(choice.index, index, call)
        for choice in completion.choices
        for index, call in enumerate(_calls(choice.message))
    ]


def _refused(completion: Any, reason: str) -> list[dict[str, Any]]:
    """Every call of a completion the SDK refused, rejected: a choice that ended on ``length``
    or ``content_filter`` for that, the others for ``reason`` (the exception took them too)."""
    return [
        _result(
            choice.index, index, call, rejected=_REFUSED.get(choice.finish_reason or "", reason)
        )
        for choice in (completion.choices if completion is not None else ())
        for index, call in enumerate(_calls(choice.message))
    ]


def _calls(message: Any) -> list[tuple[str, Any, Any, Any]]:
    """(kind, id, name, text) of each call of an assistant message: its tool calls, then a
    legacy ``function_call``, which the SDK folds into its own field (it has no id). A custom
    call's text is its input."""
    calls = [_call(call) for call in message.tool_calls or ()]
    if message.function_call is not None:
        function = message.function_call
        calls.append(("function", None, function.name, function.arguments))
    return calls


def _call(call: Any) -> tuple[str, Any, Any, Any]:
    if call.type != "custom":
        return "function", call.id, call.function.name, call.function.arguments
    # The snapshot folds a custom call into the SDK's function-call model, which has no custom
    # field: its payload stays the dict the deltas built (a typed message has an object).
    payload = call.custom if isinstance(call.custom, dict) else call.custom.model_dump()
    return "custom", call.id, payload.get("name"), payload.get("input")


def _result(
    choice: int, index: int, call: tuple[str, Any, Any, Any], rejected: str | None = None
) -> dict[str, Any]:
    kind, call_id, name, text = call
    made = custom_result if kind == "custom" else call_result
    return made(choice, index, call_id, name, text, rejected=rejected)


class OpenAIStreamHelper(HttpAdapter):
    """``client.chat.completions.stream()``, then ``stream.get_final_completion()``."""

    distributions = ("openai",)
    declaration = _FOLDED

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The calls of the final completion, or those the SDK refused, rejected."""
        with _client(base_url).chat.completions.stream(**_request(model, tools)) as stream:
            folded = False

            def fold() -> Any:
                nonlocal folded
                for event in stream:
                    folded = folded or event.type == "chunk"
                return stream.get_final_completion()

            return _final_or_refused(
                fold, lambda: stream.current_completion_snapshot if folded else None
            )


class OpenAIStreamState(HttpAdapter):
    """``create(stream=True)`` folded by ``ChatCompletionStreamState``."""

    distributions = ("openai",)
    declaration = _FOLDED

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The calls of the final completion, or those the SDK refused, rejected."""
        state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
        folded = False

        def fold() -> Any:
            nonlocal folded
            for chunk in _client(base_url).chat.completions.create(
                **_request(model, tools), stream=True
            ):
                state.handle_chunk(chunk)
                folded = True
            return state.get_final_completion()

        return _final_or_refused(
            fold, lambda: state.current_completion_snapshot if folded else None
        )


def _final_or_refused(fold: Callable[[], Any], snapshot: Callable[[], Any]) -> list[dict[str, Any]]:
    """The calls of the completion ``fold`` returns; where the SDK refuses it through its
    documented signals (``LengthFinishReasonError``, ``ContentFilterFinishReasonError``, an
    in-band ``APIError``), the calls it cut short, rejected (``snapshot``: what was folded)."""
    try:
        completion = fold()
    except openai.LengthFinishReasonError as exc:
        return _refused(exc.completion, "truncated")
    except openai.ContentFilterFinishReasonError as exc:
        return _refused(exc.completion, "filtered")
    except openai.APIError as exc:
        if not in_band_error(exc):
            raise
        return _refused(snapshot(), "stream_error")
    return _final_calls(completion)


class OpenAIDoneEvents(HttpAdapter):
    """``client.chat.completions.stream()``, each call run at its ``arguments.done`` event."""

    distributions = ("openai",)
    declaration = Declaration(observables=frozenset({"arguments_text", "ids"}))

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The calls whose done event arrived before the stream ended or failed."""
        done: list[dict[str, Any]] = []
        with _client(base_url).chat.completions.stream(**_request(model, tools)) as stream:
            try:
                for event in stream:
                    if event.type == "tool_calls.function.arguments.done":
                        call_id = _call_id(stream.current_completion_snapshot, event.index)
                        done.append(
                            call_result(0, event.index, call_id, event.name, event.arguments)
                        )
            except openai.APIError as exc:
                if not in_band_error(exc):
                    raise
        return done


def _call_id(snapshot: Any, index: int) -> Any:
    """The id of the call at ``index`` of the snapshot's first choice: the done event carries
    none, so the caller reads it there to answer the call."""
    return snapshot.choices[0].message.tool_calls[index].id


stream_helper = OpenAIStreamHelper()
"""``http:openai``."""
stream_state = OpenAIStreamState()
"""``http:openai-state``."""
done_events = OpenAIDoneEvents()
"""``http:openai-done-events``."""

"""The openai SDK's Responses API as ``http:`` connectables, one for each way its users read a
streamed response; and what every ``openai-responses`` adapter shares (the tools offered, the
calls of a response's output).

Paths below are in the installed SDK (``openai/…``).

- ``http:openai-responses``, the documented helper path (``helpers.md``, "Responses API")::

      with client.responses.stream(model=…, input=…, tools=…) as stream:
          for event in stream: …                     # output_text.delta events shown to the user
      response = stream.get_final_response()
      for item in response.output:
          if item.type in ("function_call", "custom_tool_call"):
              run(item.name, item.arguments or item.input)   # answered by item.call_id

- ``http:openai-responses-state``, the raw path: ``responses.create(stream=True)``, every event
  handed to the helper's own accumulator, ``ResponseStreamState.handle_event()``, the response
  taken from the ``response.completed`` event it fires (the helper's ``get_final_response()``
  returns the same object); without one there is no response to run.

The accumulator (``ResponseStreamState`` in ``lib/streaming/responses/_responses.py``) keys items
by ``output_index``, appends each argument delta to the item added, keeps each item its
``output_item.done`` restates, and builds the final response from ``response.completed``'s own
``output`` (the streamed items only where that field is missing): an empty final output loses
the streamed calls. It refuses a stream it cannot follow by raising ``RuntimeError`` on purpose
("Duplicate response output index 0.", "Cannot complete response with unfinished output
items.", "Received a content event for output index 1 before receiving its output item", and
``get_final_response()``'s "Didn't receive a `response.completed` event."): D68 takes those as
its refusals. An ``error`` event whose payload nests an ``error`` object raises ``APIError``
(``Stream.__stream__`` in ``_streaming.py``); ``response.failed``, ``response.incomplete`` and a
flat ``error`` event are handed to the user as events.

Observables: the calls handed back are the final output's ``function_call`` and
``custom_tool_call`` items, with their ``call_id`` and text; the SDK parses arguments only for a
``strict`` tool (``parse_function_tool_arguments``) and the tools are offered plain, so
``arguments`` is not exposed. Where the SDK refuses, the calls it had are rejected: each as the
events it handed the user last showed it (the added item, its arguments snapshot, its done
item). Its refusals are one class told apart by message, so ``reason`` is not exposed (D61); the
reason each result carries is informative. A Responses stream has one response: ``choices`` is
not exposed.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import openai
from openai.lib.streaming.responses import ResponseStreamState

from callstream.reference import Tool

from ...core.declaration import Declaration
from .base import MESSAGES, TIMEOUT, HttpAdapter, call_result, custom_result, in_band_error

__all__ = [
    "RESPONSES",
    "OpenAIResponsesHelper",
    "OpenAIResponsesState",
    "Snapshot",
    "builtin_refusal",
    "output_calls",
    "responses_helper",
    "responses_state",
    "responses_tools",
]

RESPONSES = ("openai-responses",)
"""The dialect every adapter of the Responses API reads."""
_DECLARATION = Declaration(
    dialects=RESPONSES, observables=frozenset({"status", "arguments_text", "ids"})
)
_CALL_ITEMS = ("function_call", "custom_tool_call")
_INCOMPLETE = {"max_output_tokens": "truncated", "content_filter": "filtered"}
_ACCUMULATOR = "lib/streaming/responses/_responses.py"


def responses_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """``tools`` as the ``tools`` field of a Responses request: a function tool with its
    parameters (not ``strict``, as most users declare them), a custom tool with its format."""
    offered: list[dict[str, Any]] = []
    for tool in tools:
        if tool.kind == "custom":
            custom: dict[str, Any] = {"type": "custom", "name": tool.name}
            if tool.format is not None:
                custom["format"] = dict(tool.format)
            offered.append(custom)
        else:
            parameters = dict(tool.parameters or {"type": "object", "properties": {}})
            offered.append(
                {"type": "function", "name": tool.name, "parameters": parameters, "strict": False}
            )
    return offered


def output_calls(output: Iterable[Any], rejected: str | None = None) -> list[dict[str, Any]]:
    """The calls among a response's output items, in order: each ``function_call`` with its
    argument text, each ``custom_tool_call`` with its input, ``call_id`` their id."""
    results: list[dict[str, Any]] = []
    for item in output:
        kind = _get(item, "type")
        if kind not in _CALL_ITEMS:
            continue
        index = len(results)
        call_id, name = _get(item, "call_id"), _get(item, "name")
        if kind == "custom_tool_call":
            text = _get(item, "input")
            results.append(custom_result(0, index, call_id, name, text, rejected=rejected))
        else:
            text = _get(item, "arguments")
            results.append(call_result(0, index, call_id, name, text, rejected=rejected))
    return results


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


@dataclass(slots=True)
class Snapshot:
    """The calls as the SDK's events last showed them to the user, and how the stream ended:
    what a user has when the SDK refuses the response."""

    items: dict[Any, dict[str, Any]] = field(default_factory=dict)
    """Each output item by ``output_index``: its type, call_id, name and text."""
    ending: str | None = None
    """The reason the last terminal or error event gives, or None while none came."""
    final: Any = None
    """The ``response.completed`` event's response."""
    drained: bool = False
    """True once the library has read the stream to its end."""

    def see(self, event: Any) -> None:
        """Take in one event the SDK handed the user."""
        kind = getattr(event, "type", None)  # litellm's GenericEvent may carry none
        if kind in ("response.output_item.added", "response.output_item.done"):
            item = event.item
            if item is not None:
                self.items[event.output_index] = {
                    "type": item.type,
                    "call_id": getattr(item, "call_id", None),
                    "name": getattr(item, "name", None),
                    "arguments": getattr(item, "arguments", None),
                    "input": getattr(item, "input", None),
                }
        elif kind == "response.function_call_arguments.delta":
            # The openai SDK's event carries the arguments so far; a raw event only its delta.
            if (item := self.items.get(event.output_index)) is not None:
                so_far = getattr(event, "snapshot", None)
                item["arguments"] = so_far if so_far is not None else _joined(item, event.delta)
        elif kind == "response.completed":
            self.final = event.response
        elif kind == "response.incomplete":
            details = getattr(event.response, "incomplete_details", None)
            self.ending = _INCOMPLETE.get(getattr(details, "reason", None) or "", "provider_finish")
        elif kind in ("response.failed", "error"):
            self.ending = "stream_error"

    def refused(self, reason: str | None = None) -> list[dict[str, Any]]:
        """Every call seen, rejected for ``reason`` or how the stream ended."""
        why = reason or self.ending or "interrupted"
        return output_calls((self.items[n] for n in self.items), rejected=why)


def _joined(item: dict[str, Any], delta: Any) -> Any:
    return (item["arguments"] or "") + delta if isinstance(delta, str) else item["arguments"]


@cache
def _client(base_url: str) -> openai.OpenAI:
    # No retries: a bad stream must be judged as it came, not asked for again.
    return openai.OpenAI(base_url=base_url, api_key="callstream", max_retries=0, timeout=TIMEOUT)


def _request(model: str, tools: Sequence[Tool]) -> dict[str, Any]:
    request: dict[str, Any] = {"model": model, "input": MESSAGES[0]["content"]}
    if offered := responses_tools(tools):
        request["tools"] = offered
    return request


def builtin_refusal(exc: BaseException, kind: type[BaseException], where: str) -> bool:
    """True when ``exc`` is exactly ``kind`` raised by the library's own ``raise`` statement in
    the file ending with ``where`` (D68): a deliberate refusal, not an operation that failed
    inside it nor an error passing through."""
    if type(exc) is not kind or exc.__traceback__ is None:
        return False
    raised_in = traceback.extract_tb(exc.__traceback__)[-1].filename.replace("\\", "/")
    return raised_in.endswith(where)


def _final_or_refused(fold: Callable[[Snapshot], Any], seen: Snapshot) -> list[dict[str, Any]]:
    """The calls of the response ``fold`` returns; where the SDK refuses it (its accumulator's
    ``RuntimeError``, an in-band ``APIError``) or gives none, the calls it had, rejected."""
    try:
        response = fold(seen)
    except RuntimeError as exc:
        if not builtin_refusal(exc, RuntimeError, _ACCUMULATOR):
            raise
        return seen.refused(None if seen.drained else "protocol_error")
    except openai.APIError as exc:
        if not in_band_error(exc):
            raise
        return seen.refused("stream_error")
    if response is None:
        return seen.refused()
    return output_calls(response.output or ())


class OpenAIResponsesHelper(HttpAdapter):
    """``client.responses.stream()``, then ``stream.get_final_response()``."""

    distributions = ("openai",)
    declaration = _DECLARATION

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The calls of the final response, or those the SDK refused, rejected."""
        with _client(base_url).responses.stream(**_request(model, tools)) as stream:

            def fold(seen: Snapshot) -> Any:
                for event in stream:
                    seen.see(event)
                seen.drained = True
                return stream.get_final_response()

            return _final_or_refused(fold, Snapshot())


class OpenAIResponsesState(HttpAdapter):
    """``responses.create(stream=True)`` folded by ``ResponseStreamState``."""

    distributions = ("openai",)
    declaration = _DECLARATION

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The calls of the completed response, or those of a response never completed,
        rejected."""
        request = _request(model, tools)
        state: ResponseStreamState[Any] = ResponseStreamState(
            input_tools=request.get("tools", openai.omit), text_format=openai.omit
        )

        def fold(seen: Snapshot) -> Any:
            for raw in _client(base_url).responses.create(**request, stream=True):
                for event in state.handle_event(raw):
                    seen.see(event)
            seen.drained = True
            return seen.final

        return _final_or_refused(fold, Snapshot())


responses_helper = OpenAIResponsesHelper()
"""``http:openai-responses``."""
responses_state = OpenAIResponsesState()
"""``http:openai-responses-state``."""

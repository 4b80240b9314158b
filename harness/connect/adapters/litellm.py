"""litellm as an ``http:`` connectable: ``http:litellm``.

The user code path of litellm's streaming docs ("Helper function": rebuild the complete
response from the chunks), and of the agents built on it::

    chunks = []
    for chunk in litellm.completion(model="openai/<name>", api_base=…, messages=…,
                                    tools=…, stream=True):
        chunks.append(chunk)
    response = litellm.stream_chunk_builder(chunks, messages=messages)
    for call in response.choices[0].message.tool_calls or []:
        run(call.function.name, call.function.arguments)

Paths below are in the installed package. ``stream_chunk_builder``
(``litellm_core_utils/streaming_chunk_builder_utils.py``) groups tool-call deltas by
``(choice index, tool-call index)`` and hands back each choice's calls, ready, with their
argument text only (it parses none); a custom tool call with its input, verbatim. It lists
them in wire-index order; the contract numbers calls by first appearance, so each rebuilt call
takes the position at which its (choice, index) first appeared in the chunks litellm yielded:
a stream whose calls come at indices 2 then 0 is two calls in the order they came, not a
swap of their names and texts.

Nothing acts on ``length`` or ``content_filter``, which are passed through. Once the stream
has begun, whatever breaks it (no finish reason before the end, an error payload, a data line
that is not JSON) litellm raises as an OpenAI-style exception: its ``MidStreamFallbackError``
(``CustomStreamWrapper._handle_stream_fallback_error`` and ``_should_fail_on_clean_eof`` in
``litellm_core_utils/streaming_handler.py``), which routers catch to fall back, or, for a
provider error it maps to a client error, that mapped exception itself (``Timeout`` for an
error payload with code 504). That is litellm's signal of a failed stream: the calls it cut
short are rejected ``stream_error``. It says only that the stream failed, not how, so litellm
exposes no reason. An error raised by ``completion()`` itself, before the stream, is the
request's (the emulator's), and any other exception is litellm's crash: both are raised.

litellm reaches for the internet on import (its model-cost map) and prints help on errors:
this module keeps it offline and quiet, before importing it.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOG", "CRITICAL")

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import count
from typing import Any

import litellm
import openai

from callstream.reference import Tool

from ...core.declaration import Declaration
from .base import (
    MESSAGES,
    TIMEOUT,
    HttpAdapter,
    call_result,
    custom_result,
    openai_tools,
)

__all__ = ["LiteLLM", "completion", "rebuilt_calls"]

litellm.suppress_debug_info = True
litellm.telemetry = False


class LiteLLM(HttpAdapter):
    """``litellm.completion(stream=True)``, the chunks rebuilt by ``stream_chunk_builder``."""

    distributions = ("litellm", "openai")
    declaration = Declaration(observables=frozenset({"status", "arguments_text", "ids", "choices"}))

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The calls of the rebuilt response, or those a failed stream cut short, rejected."""
        chunks: list[Any] = []
        request: dict[str, Any] = {
            "model": f"openai/{model}",
            "api_base": base_url,
            "api_key": "callstream",
            "messages": MESSAGES,
            "stream": True,
            "max_retries": 0,
            "num_retries": 0,
            "timeout": TIMEOUT,
        }
        if offered := openai_tools(tools):
            request["tools"] = offered
        stream = litellm.completion(**request)
        try:
            for chunk in stream:
                chunks.append(chunk)
        except openai.APIError:  # MidStreamFallbackError and every mapped provider error
            return rebuilt_calls(chunks, rejected="stream_error")
        return rebuilt_calls(chunks)


def rebuilt_calls(chunks: list[Any], rejected: str | None = None) -> list[dict[str, Any]]:
    """Every call of the response ``stream_chunk_builder`` rebuilds from ``chunks``: each
    choice's tool calls, then a legacy ``function_call`` (which has no id), numbered and
    ordered by their first appearance in the stream, as the contract numbers calls."""
    response: Any = litellm.stream_chunk_builder(chunks, messages=MESSAGES) if chunks else None
    seen = _wire_calls(chunks)
    results = []
    for choice in response.choices if response is not None else ():
        calls = [*(getattr(choice.message, "tool_calls", None) or ())]
        positions = _positions(seen, choice.index, calls)
        if legacy := getattr(choice.message, "function_call", None):
            calls.append(legacy)
            positions.append(max(positions, default=-1) + 1)
        results += [
            _result(choice.index, index, call, rejected)
            for index, call in sorted(zip(positions, calls, strict=True), key=lambda pair: pair[0])
        ]
    return results


@dataclass(slots=True)
class _WireCall:
    """A tool call of the stream as litellm's deltas key it, by (choice, wire index): what
    ``stream_chunk_builder`` keeps of it (the last id and name its deltas carried)."""

    position: int
    """Its place among its choice's calls, in order of first appearance."""
    id: Any = None
    name: Any = None


def _wire_calls(chunks: list[Any]) -> dict[tuple[int, int], _WireCall]:
    seen: dict[tuple[int, int], _WireCall] = {}
    for chunk in chunks:
        for choice in chunk.choices:
            for delta in getattr(choice.delta, "tool_calls", None) or ():
                key = (choice.index, delta.index)
                if key not in seen:
                    seen[key] = _WireCall(sum(1 for other, _ in seen if other == choice.index))
                seen[key].id = delta.id or seen[key].id
                seen[key].name = _name(delta) or seen[key].name
    return seen


def _name(call: Any) -> Any:
    """The function name of a delta or a rebuilt call, or its custom tool's name."""
    function = getattr(call, "function", None)
    return getattr(function, "name", None) or getattr(getattr(call, "custom", None), "name", None)


def _positions(seen: dict[tuple[int, int], _WireCall], choice: int, calls: list[Any]) -> list[int]:
    """The position of each of a choice's rebuilt ``calls``. ``stream_chunk_builder`` lists
    the calls it keeps in wire-index order (``streaming_chunk_builder_utils.py``: sorted keys),
    which is not the order of first appearance when a later call has a lower index: each call
    is matched, in that order, to the next wire call with its id and name. A call that matches
    none is numbered after every call of the stream."""
    wires = [seen[key] for key in sorted(key for key in seen if key[0] == choice)]
    unmatched = count(len(wires))
    positions = []
    start = 0
    for call in calls:
        found = next(
            (
                n
                for n in range(start, len(wires))
                if (wires[n].id, wires[n].name) == (call.id, _name(call))
            ),
            None,
        )
        if found is None:
            positions.append(next(unmatched))
        else:
            positions.append(wires[found].position)
            start = found + 1
    return positions


def _result(choice: int, index: int, call: Any, rejected: str | None) -> dict[str, Any]:
    if getattr(call, "type", None) == "custom":
        custom = call.custom
        return custom_result(choice, index, call.id, custom.name, custom.input, rejected=rejected)
    function = getattr(call, "function", call)  # a legacy function_call is its own function
    call_id = getattr(call, "id", None)
    return call_result(choice, index, call_id, function.name, function.arguments, rejected=rejected)


completion = LiteLLM()
"""``http:litellm``."""

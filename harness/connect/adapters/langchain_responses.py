"""langchain on the Responses API as an ``http:`` connectable: ``http:langchain-responses``.

The user code path of ``http:langchain`` (langchain's tool-streaming guide, chunks summed with
``+``) with the model switched to the Responses API, as langchain-openai's ``ChatOpenAI`` docs
show (``use_responses_api=True``)::

    llm = ChatOpenAI(model=…, base_url=…, use_responses_api=True).bind_tools(tools)
    gathered = None
    for chunk in llm.stream(messages):
        gathered = chunk if gathered is None else gathered + chunk
    for call in gathered.tool_calls: run(call["name"], call["args"])
    # gathered.invalid_tool_calls: the calls whose arguments langchain could not parse

Paths below are in the installed packages. ``_convert_responses_chunk_to_generation_chunk``
(``langchain_openai/chat_models/base.py``) makes a tool-call chunk of each function call's
``output_item.added`` (name, ``call_id``, the arguments it carries) and of each
``function_call_arguments.delta``, numbered by output item; it ignores
``function_call_arguments.done`` and a function call's ``output_item.done``, so the text is the
added arguments and the deltas, whatever the restatements say. A custom tool call is one chunk,
made at its ``output_item.done``, its input wrapped as ``{"__arg1": input}``: the adapter hands
it back as a custom call with that input. Calls are numbered in the order langchain lists
them: a custom call comes where its ``output_item.done`` came, which may be after a function
call that began later; langchain's chunks keep no trace of the item's first appearance, so the
adapter cannot renumber it as D16 asks (``or-r-parallel-custom-and-function`` judges the two
calls against each other's expectations). The sum then parses each call as ``http:langchain``
describes (``tool_calls`` ready with langchain's parse, ``invalid_tool_calls`` rejected
``malformed_json``). ``response.completed`` and ``response.incomplete`` alike end the message
(only usage and metadata are taken from them): nothing acts on an incomplete response.

Failures: ``response.failed`` and an ``error`` event make langchain raise ``ValueError`` with the
error's message, on purpose, in that function; an ``error`` event nesting an ``error`` object
raises the SDK's ``APIError`` first (re-raised by ``_handle_openai_api_error``). Both are its
refusal of the stream (D68): the calls summed so far are rejected ``stream_error``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from functools import cache
from typing import Any

import openai
from langchain_core.messages import BaseMessageChunk
from langchain_core.runnables import Runnable
from langchain_openai import ChatOpenAI

from callstream.reference import Tool

from ...core.declaration import Declaration
from ._langchain_chunks import chunks_of, classified
from .base import MESSAGES, TIMEOUT, HttpAdapter, call_result, custom_result, in_band_error
from .openai_responses import RESPONSES, builtin_refusal, responses_tools

__all__ = ["LangChainResponses", "chat_openai_responses"]

_CONVERTER = "langchain_openai/chat_models/base.py"
"""Where langchain-openai raises ``ValueError`` on a failed response or an error event."""


@cache
def _chat(base_url: str) -> ChatOpenAI:
    return ChatOpenAI(
        model="callstream",
        base_url=base_url,
        api_key="callstream",  # type: ignore[arg-type]
        max_retries=0,
        timeout=TIMEOUT,
        use_responses_api=True,
    )


class LangChainResponses(HttpAdapter):
    """``ChatOpenAI(use_responses_api=True).bind_tools(…).stream()``, chunks summed with ``+``."""

    distributions = ("langchain-openai", "langchain-core", "openai")
    declaration = Declaration(
        dialects=RESPONSES,
        observables=frozenset({"status", "reason", "arguments_text", "arguments", "ids"}),
    )

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The sum's ``tool_calls`` ready and ``invalid_tool_calls`` rejected, in stream order."""
        offered = responses_tools(tools)
        chat: Runnable[Any, Any] = (
            _chat(base_url).bind_tools(offered) if offered else _chat(base_url)
        )
        custom = {tool.name for tool in tools if tool.kind == "custom"}
        gathered: BaseMessageChunk | None = None
        try:
            for chunk in chat.stream(MESSAGES, model=model):
                gathered = chunk if gathered is None else gathered + chunk
        except (ValueError, openai.APIError) as exc:
            if not (in_band_error(exc) or builtin_refusal(exc, ValueError, _CONVERTER)):
                raise
            return [
                _custom(result, custom)
                for result in (
                    call_result(
                        0, index, piece["id"], piece["name"], piece["args"], rejected="stream_error"
                    )
                    for index, piece in enumerate(chunks_of(gathered))
                )
            ]
        return [_custom(result, custom) for result in classified(gathered)]


def _custom(result: dict[str, Any], custom: set[str]) -> dict[str, Any]:
    """A custom tool's call as the custom call it is: langchain wraps its input as
    ``{"__arg1": input}``; the input is its value, verbatim."""
    if result["name"] not in custom:
        return result
    wrapped = result["arguments"]
    if not isinstance(wrapped, dict):  # a rejected call: its wrapper as langchain summed it
        with contextlib.suppress(TypeError, ValueError):
            wrapped = json.loads(result["arguments_text"])
    text = wrapped.get("__arg1") if isinstance(wrapped, dict) else result["arguments_text"]
    rejected = result["reason"] if result["status"] == "rejected" else None
    made = custom_result(result["choice"], result["index"], result["id"], result["name"], text,
                         rejected=rejected)  # fmt: skip
    return made


chat_openai_responses = LangChainResponses()
"""``http:langchain-responses``."""

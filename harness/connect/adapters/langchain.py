"""langchain as an ``http:`` connectable: ``http:langchain``.

The user code path of langchain's tool-streaming guide ("How to stream tool calls"), whose
``AIMessageChunk`` doc shows the same ``+``::

    llm = ChatOpenAI(model=…, base_url=…).bind_tools(tools)
    gathered = None
    for chunk in llm.stream(messages):
        gathered = chunk if gathered is None else gathered + chunk
    for call in gathered.tool_calls:
        run(call["name"], call["args"])
    # gathered.invalid_tool_calls: the calls whose arguments langchain could not parse

Paths below are in the installed packages. ``+`` merges tool-call chunks by index
(``merge_lists`` in ``langchain_core/utils/_merge.py``); ``AIMessageChunk.init_tool_calls``
(``langchain_core/messages/ai.py``) then parses each merged chunk's text with
``parse_partial_json``: a dict makes a ``tool_calls`` entry (ready, with langchain's parse as its
arguments), anything else an ``invalid_tool_calls`` entry (rejected ``malformed_json``). The raw
text of a ready call is read from the merged ``tool_call_chunks`` of the same message.

``bind_tools`` takes no chat-completions custom tool (it raises "Unsupported function"; its
``custom_tool`` is for the Responses API), so a custom tool is offered as a function of the
same name.

``ChatOpenAI`` reads only ``choices[0]`` of each chunk and refuses ``n > 1`` when streaming ("n
must be 1 when streaming.", ``langchain_openai/chat_models/base.py``): several choices are a
declared non-feature. The finish reason only lands in ``response_metadata``; nothing acts on it.
An error payload inside the stream raises the SDK's ``APIError`` through ``stream()``
(``_handle_openai_api_error`` re-raises it): the calls it cut short are rejected
``stream_error``.
"""

from __future__ import annotations

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
from .base import MESSAGES, TIMEOUT, HttpAdapter, call_result, function_tools, in_band_error

__all__ = ["LangChain", "chat_openai"]


@cache
def _chat(base_url: str) -> ChatOpenAI:
    # One client per process; each request names its model (a request's keyword arguments
    # override the model's defaults in the payload).
    return ChatOpenAI(
        model="callstream",
        base_url=base_url,
        api_key="callstream",  # type: ignore[arg-type]
        max_retries=0,
        timeout=TIMEOUT,
    )


class LangChain(HttpAdapter):
    """``ChatOpenAI.bind_tools(…).stream()``, the chunks summed with ``+``."""

    distributions = ("langchain-openai", "langchain-core", "openai")
    declaration = Declaration(
        observables=frozenset({"status", "reason", "arguments_text", "arguments", "ids"})
    )

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The sum's ``tool_calls`` ready and ``invalid_tool_calls`` rejected, in stream order."""
        offered = function_tools(tools)
        chat: Runnable[Any, Any] = (
            _chat(base_url).bind_tools(offered) if offered else _chat(base_url)
        )
        gathered: BaseMessageChunk | None = None
        try:
            for chunk in chat.stream(MESSAGES, model=model):
                gathered = chunk if gathered is None else gathered + chunk
        except openai.APIError as exc:
            if not in_band_error(exc):
                raise
            return [
                call_result(
                    0, index, piece["id"], piece["name"], piece["args"], rejected="stream_error"
                )
                for index, piece in enumerate(chunks_of(gathered))
            ]
        return classified(gathered)


chat_openai = LangChain()
"""``http:langchain``."""

"""langchain as an ``http:`` connectable: ``http:langchain``.

``langchain_openai.ChatOpenAI(...).bind_tools(tools).stream(messages)``, every
``AIMessageChunk`` summed with ``+`` (as langchain's own standard tests fold a stream), then the
merged ``tool_call_chunks`` read in order: each one langchain turns into a ``tool_calls`` entry
is ready with langchain's parse of its arguments; each it puts in ``invalid_tool_calls`` (the
arguments are not a JSON object) is rejected ``malformed_json``.

What langchain claims: it merges tool-call chunks by index (A), through the openai SDK's
transport (T), hands the message back (C1, E), and parses arguments, setting apart those that
do not parse (V1). It reads only the first choice of each chunk and refuses ``n > 1`` when
streaming, so it claims a single choice. It does not look at the finish reason (C3) nor check
schemas, tool names or identity (V2–V6). An in-band error payload raises the SDK's
``APIError`` through ``stream()``: the calls it cut short are rejected ``stream_error``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import openai
from langchain_core.messages import AIMessageChunk, BaseMessageChunk
from langchain_core.runnables import Runnable
from langchain_openai import ChatOpenAI

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
    """``ChatOpenAI.stream()`` with the chunks summed."""

    distributions = ("langchain-openai", "langchain-core", "openai")
    declaration = Declaration(observables=AT_CLOSE - {"choices"})

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The merged tool-call chunks, each as langchain classifies it."""
        chat: Runnable[Any, Any] = _chat(base_url)
        offered = openai_tools(tools)
        if offered:
            chat = _chat(base_url).bind_tools(offered)
        message: BaseMessageChunk | None = None
        try:
            for chunk in chat.stream(MESSAGES, model=model):
                message = chunk if message is None else message + chunk
        except openai.APIError as exc:
            if isinstance(exc, openai.APIStatusError | openai.APIConnectionError):
                raise
            return [
                call_result(
                    0,
                    index,
                    piece.get("id"),
                    piece.get("name"),
                    piece.get("args"),
                    rejected="stream_error",
                )
                for index, piece in enumerate(_pieces(message))
            ]
        return [_result(index, piece) for index, piece in enumerate(_pieces(message))]


def _pieces(message: BaseMessageChunk | None) -> list[Any]:
    if not isinstance(message, AIMessageChunk):
        return []
    return list(message.tool_call_chunks)


def _result(index: int, piece: Any) -> dict[str, Any]:
    """One merged chunk as langchain itself classifies it: a message made of it alone has it
    in ``tool_calls`` or in ``invalid_tool_calls``."""
    alone = AIMessageChunk(content="", tool_call_chunks=[piece])
    text = piece.get("args")
    if alone.tool_calls:
        call = alone.tool_calls[0]
        return call_result(0, index, call.get("id"), call.get("name"), text, arguments=call["args"])
    return call_result(
        0, index, piece.get("id"), piece.get("name"), text, rejected="malformed_json"
    )


chat_openai = LangChain()
"""``http:langchain``."""

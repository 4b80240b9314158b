"""langchain-anthropic as an ``http:`` connectable: ``http:langchain-anthropic``.

The user code path of langchain's tool-streaming guide ("How to stream tool calls"), with
``ChatAnthropic`` in place of ``ChatOpenAI``::

    llm = ChatAnthropic(model=…, base_url=…).bind_tools(tools)
    gathered = None
    for chunk in llm.stream(messages):
        gathered = chunk if gathered is None else gathered + chunk
    for call in gathered.tool_calls:
        run(call["name"], call["args"])
    # gathered.invalid_tool_calls: the calls whose arguments langchain could not parse

Paths below are in the installed packages. ``ChatAnthropic._stream``
(``langchain_anthropic/chat_models.py``) reads the anthropic SDK's raw events
(``messages.with_raw_response.create(stream=True)``) and makes a chunk of each
(``_make_message_chunk_from_anthropic_event``): a ``tool_use`` block's start is a tool-call
chunk at the block's index with its id, name and, where the start carries a non-empty ``input``
object, that object as JSON text; each ``input_json_delta`` of a block whose start was a
``tool_use`` (the last start seen, whatever index the delta names) is a chunk of text at the
delta's index. ``content_block_stop`` makes nothing; the stop reason only lands in
``response_metadata``. ``+`` merges the chunks by index (``merge_lists`` in
``langchain_core/utils/_merge.py``) and ``AIMessageChunk.init_tool_calls``
(``langchain_core/messages/ai.py``) parses each merged text with ``parse_partial_json``: a dict
makes a ``tool_calls`` entry (ready, langchain's parse its arguments), anything else an
``invalid_tool_calls`` entry (rejected ``malformed_json``). An ``event: error`` raises the
SDK's ``APIStatusError`` through ``stream()`` (``_handle_anthropic_api_error`` re-raises it as
it is): the calls it cut short are rejected ``stream_error``.

Observables: status, reason, the merged text, langchain's parse and the ids. A message has one
choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anthropic
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessageChunk, BaseMessageChunk
from langchain_core.runnables import Runnable

from callstream.reference import Tool

from ...core.declaration import Declaration
from ._langchain_chunks import classified
from .anthropic_request import MAX_TOKENS, anthropic_tools, in_band_anthropic_error, origin
from .base import MESSAGES, TIMEOUT, HttpAdapter, call_result

__all__ = ["LangChainAnthropic", "chat_anthropic"]


class LangChainAnthropic(HttpAdapter):
    """``ChatAnthropic.bind_tools(…).stream()``, the chunks summed with ``+``."""

    distributions = ("langchain-anthropic", "langchain-core", "anthropic")
    declaration = Declaration(
        dialects=("anthropic-messages",),
        observables=frozenset({"status", "reason", "arguments_text", "arguments", "ids"}),
    )

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The sum's ``tool_calls`` ready and ``invalid_tool_calls`` rejected, in stream order."""
        chat = ChatAnthropic(  # type: ignore[call-arg]
            model=model,
            base_url=origin(base_url),
            api_key="callstream",  # type: ignore[arg-type]
            max_retries=0,
            timeout=TIMEOUT,
            max_tokens=MAX_TOKENS,
        )
        offered = anthropic_tools(tools)
        runnable: Runnable[Any, Any] = chat.bind_tools(offered) if offered else chat
        gathered: BaseMessageChunk | None = None
        try:
            for chunk in runnable.stream(MESSAGES):
                gathered = chunk if gathered is None else gathered + chunk
        except anthropic.APIStatusError as exc:
            if not in_band_anthropic_error(exc):
                raise
            return [
                call_result(
                    0, index, piece["id"], piece["name"], piece["args"], rejected="stream_error"
                )
                for index, piece in enumerate(_merged(gathered))
            ]
        return classified(gathered)


def _merged(message: BaseMessageChunk | None) -> list[Any]:
    return list(message.tool_call_chunks) if isinstance(message, AIMessageChunk) else []


chat_anthropic = LangChainAnthropic()
"""``http:langchain-anthropic``."""

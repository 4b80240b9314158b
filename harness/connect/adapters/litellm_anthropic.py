"""litellm's Anthropic provider as an ``http:`` connectable: ``http:litellm-anthropic``.

The user code path of ``http:litellm`` (litellm's streaming docs, "Helper function"), with the
model named ``anthropic/<name>``, so that litellm speaks the Messages API itself and hands back
OpenAI-shaped chunks::

    chunks = []
    for chunk in litellm.completion(model="anthropic/<name>", api_base=…, messages=…,
                                    tools=…, stream=True):
        chunks.append(chunk)
    response = litellm.stream_chunk_builder(chunks, messages=messages)
    for call in response.choices[0].message.tool_calls or []:
        run(call.function.name, call.function.arguments)

Paths below are in the installed package. litellm reads the Messages events with its own
iterator (``ModelResponseIterator.chunk_parser`` in ``llms/anthropic/chat/handler.py``), not
the anthropic SDK: a ``tool_use`` block's start becomes a tool-call delta with the block's id
and name, each ``input_json_delta`` a delta of argument text, both numbered by litellm's own
count of tool_use blocks (``tool_index``), not by the block index; a ``tool_use`` block that
streamed nothing gets ``"{}"`` at its stop. The stop reason is mapped to a finish reason
(``max_tokens`` → ``length``, ``tool_use`` → ``tool_calls``…) and otherwise not acted on. An
``event: error`` raises litellm's ``AnthropicError`` (status 500), which the stream wrapper
turns into an OpenAI-style exception, as in ``http:litellm``: the calls it cut short are
rejected ``stream_error``. ``stream_chunk_builder`` then rebuilds the calls exactly as for
``http:litellm``, whose numbering by first appearance this adapter reuses.

Observables: as ``http:litellm`` (status, the text, the ids), without ``choices``: a message
has one.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # as http:litellm: offline, quiet
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOG", "CRITICAL")

from collections.abc import Sequence
from typing import Any

import litellm
import openai

from callstream.reference import Tool

from ...core.declaration import Declaration
from .anthropic_request import MAX_TOKENS, origin
from .base import MESSAGES, TIMEOUT, HttpAdapter, function_tools
from .litellm import rebuilt_calls

__all__ = ["LiteLLMAnthropic", "anthropic_completion"]


class LiteLLMAnthropic(HttpAdapter):
    """``litellm.completion("anthropic/…", stream=True)``, rebuilt by ``stream_chunk_builder``."""

    distributions = ("litellm",)
    declaration = Declaration(
        dialects=("anthropic-messages",),
        observables=frozenset({"status", "arguments_text", "ids"}),
    )

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The calls of the rebuilt response, or those a failed stream cut short, rejected."""
        chunks: list[Any] = []
        request: dict[str, Any] = {
            "model": f"anthropic/{model}",
            "api_base": origin(base_url),
            "api_key": "callstream",
            "messages": MESSAGES,
            "max_tokens": MAX_TOKENS,
            "stream": True,
            "max_retries": 0,
            "num_retries": 0,
            "timeout": TIMEOUT,
        }
        if offered := function_tools(tools):
            request["tools"] = offered  # litellm's OpenAI-shaped tools, translated by it
        stream = litellm.completion(**request)
        try:
            for chunk in stream:
                chunks.append(chunk)
        except openai.APIError:  # MidStreamFallbackError and every mapped provider error
            return rebuilt_calls(chunks, rejected="stream_error")
        return rebuilt_calls(chunks)


anthropic_completion = LiteLLMAnthropic()
"""``http:litellm-anthropic``."""

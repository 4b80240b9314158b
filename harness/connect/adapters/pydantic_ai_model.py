"""pydantic-ai's OpenAI chat model as an ``http:`` connectable: ``http:pydantic-ai``.

The user code path of pydantic-ai's "Direct Model Requests" docs (``model_request_stream``),
which is also what an ``Agent`` run reads a streamed model turn from::

    model = OpenAIChatModel(name, provider=OpenAIProvider(base_url=…, api_key=…))
    params = ModelRequestParameters(function_tools=[ToolDefinition(name, parameters_json_schema=…)])
    async with model_request_stream(model, messages, model_request_parameters=params) as stream:
        async for event in stream: …                  # PartStartEvent / PartDeltaEvent …
    for part in stream.get().parts:
        if isinstance(part, ToolCallPart): run(part.tool_name, part.args)

Paths below are in the installed package (``pydantic_ai/…``). ``OpenAIStreamedResponse`` reads
``choices[0]`` of each chunk (``models/openai/_chat_streaming.py``) and hands its tool-call
deltas to the parts manager (``_parts_manager.py``, ``handle_tool_call_delta``), which keys a
call by the delta's index, or else starts a new part; the response's ``finish_reason`` is only
recorded, and a stream that ends without one gets one made up (``_missing_finish_reason``):
every call is handed back whatever the stream's end. The text stays the model's: the response
keeps ``args`` as the string that came, parsed only when an agent runs the tool.

Observables: each ``ToolCallPart`` is a call handed back to run, with its id and its text; none
is ever set apart, so ``status`` and ``reason`` are not observable, nor ``arguments`` (no parse at
this layer) nor several choices. pydantic-ai's own errors (``ModelAPIError``,
``UnexpectedModelBehavior``, an in-band error payload's ``stream_error``), raised where the
stream is refused, hand nothing back; any other exception is the library's crash. The openai
client is made with retries off, so a bad stream is judged as it came.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import openai
from pydantic_ai import ModelRequest, ToolCallPart
from pydantic_ai.direct import model_request_stream
from pydantic_ai.exceptions import AgentRunError
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.tools import ToolDefinition

from callstream.reference import Tool

from ...core.declaration import Declaration
from .base import MESSAGES, TIMEOUT, HttpAdapter, call_result, function_tools

__all__ = ["PydanticAI", "chat_model"]


class PydanticAI(HttpAdapter):
    """``model_request_stream`` on ``OpenAIChatModel``; the response's tool-call parts."""

    distributions = ("pydantic-ai-slim", "openai")
    declaration = Declaration(observables=frozenset({"arguments_text", "ids"}))

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """Each tool-call part of the final response, in order, handed back to run."""
        return asyncio.run(_assemble(base_url, model, tools))


async def _assemble(base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key="callstream", max_retries=0, timeout=TIMEOUT
    )
    provider = OpenAIProvider(openai_client=client)
    chat = OpenAIChatModel(model, provider=provider)
    parameters = ModelRequestParameters(
        function_tools=[
            ToolDefinition(
                name=tool["function"]["name"],
                parameters_json_schema=tool["function"]["parameters"],
            )
            for tool in function_tools(tools)
        ]
    )
    messages = [ModelRequest.user_text_prompt(MESSAGES[0]["content"])]
    try:
        async with model_request_stream(
            chat, messages, model_request_parameters=parameters
        ) as stream:
            async for _ in stream:
                pass
            response = stream.get()
    except AgentRunError as exc:
        # An HTTP status or a connection failure is the emulator's or the harness's, never the
        # stream's: pydantic-ai maps it from the openai SDK's error, kept as the cause.
        if isinstance(exc.__cause__, openai.APIStatusError | openai.APIConnectionError):
            raise
        return []
    finally:
        await client.close()
    calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
    return [
        call_result(0, index, part.tool_call_id, part.tool_name, part.args)
        for index, part in enumerate(calls)
    ]


chat_model = PydanticAI()
"""``http:pydantic-ai``."""

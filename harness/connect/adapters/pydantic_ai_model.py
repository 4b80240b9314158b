"""pydantic-ai's OpenAI chat model as an ``http:`` connectable: ``http:pydantic-ai``.

The streamed model turn of a pydantic-ai ``Agent`` run, reproduced through the "Direct Model
Requests" API (``model_request_stream``), which is what the agent's graph reads a streamed turn
from, followed by the check the agent makes before it runs a tool::

    model = OpenAIChatModel(name, provider=OpenAIProvider(base_url=…, api_key=…))
    params = ModelRequestParameters(function_tools=[ToolDefinition(name, parameters_json_schema=…)])
    async with model_request_stream(model, messages, model_request_parameters=params) as stream:
        async for event in stream: …                  # PartStartEvent / PartDeltaEvent …
    for part in stream.get().parts:
        if isinstance(part, ToolCallPart):
            tool = tools_by_name.get(part.tool_name)    # else: a retry prompt, nothing runs
            args = tool.function_schema.validator.validate_json(part.args or "{}")
            run(tool, args)                             # a ValidationError: a retry prompt

Paths below are in the installed package (``pydantic_ai/…``). ``OpenAIStreamedResponse`` reads
``choices[0]`` of each chunk (``models/openai/_chat_streaming.py``) and hands its tool-call
deltas to the parts manager (``_parts_manager.py``, ``handle_tool_call_delta``), which keys a
call by the delta's index, or else starts a new part; the response's ``finish_reason`` is only
recorded, and a stream that ends without one gets one made up (``_missing_finish_reason``):
every call is handed back whatever the stream's end. The response keeps ``args`` as the string
that came. The agent's tool manager (``tool_manager.py``, ``_validate_tool_args``) then looks
the tool up by name and validates ``args or '{}'`` with the tool's validator: for a tool
declared by its JSON schema (``Tool.from_schema``, as here) that is pydantic-core's JSON parse
alone (``any_schema``: no schema check; ``Infinity`` and ``NaN`` accepted). An unknown tool or
a failed validation goes back to the model as a retry prompt: that call is not run.

Observables: each tool-call part the agent would run is handed back ready, with its id, its
text and the validator's parse as its arguments; one it would not run is not handed back (the
contract reads it as refused). pydantic-ai gives such a refusal no status or machine-readable
reason the adapter could keep with the call, and reads ``choices[0]`` only: ``status``,
``reason`` and ``choices`` are not observable. pydantic-ai's own errors (``ModelAPIError``,
``UnexpectedModelBehavior``, an in-band error payload's ``stream_error``), raised where the
stream is refused, hand nothing back; any other exception is the library's crash. The openai
client is made with retries off, so a bad stream is judged as it came.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import openai
from pydantic_ai.exceptions import AgentRunError
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from callstream.reference import Tool

from ...core.declaration import Declaration
from ._pydantic_ai_turn import agent_calls, streamed_turn
from .base import TIMEOUT, HttpAdapter

__all__ = ["PydanticAI", "chat_model"]


class PydanticAI(HttpAdapter):
    """``model_request_stream`` on ``OpenAIChatModel``; the response's tool-call parts."""

    distributions = ("pydantic-ai-slim", "openai")
    declaration = Declaration(observables=frozenset({"arguments_text", "arguments", "ids"}))

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """Each tool-call part of the final response the agent would run, in order."""
        return asyncio.run(_assemble(base_url, model, tools))


async def _assemble(base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key="callstream", max_retries=0, timeout=TIMEOUT
    )
    provider = OpenAIProvider(openai_client=client)
    chat = OpenAIChatModel(model, provider=provider)
    try:
        response, agent_tools = await streamed_turn(chat, tools)
    except AgentRunError as exc:
        # An HTTP status or a connection failure is the emulator's or the harness's, never the
        # stream's: pydantic-ai maps it from the openai SDK's error, kept as the cause.
        if isinstance(exc.__cause__, openai.APIStatusError | openai.APIConnectionError):
            raise
        return []
    finally:
        await client.close()
    return agent_calls(response, agent_tools)


chat_model = PydanticAI()
"""``http:pydantic-ai``."""

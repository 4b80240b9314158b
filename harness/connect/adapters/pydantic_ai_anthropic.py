"""pydantic-ai's Anthropic model as an ``http:`` connectable: ``http:pydantic-ai-anthropic``.

The streamed model turn of a pydantic-ai ``Agent`` run on Claude, reproduced as ``http:pydantic-ai``
reproduces it on OpenAI: the "Direct Model Requests" API (``model_request_stream``), then the
check the agent makes before it runs a tool (D63)::

    model = AnthropicModel(name, provider=AnthropicProvider(anthropic_client=AsyncAnthropic(…)))
    params = ModelRequestParameters(function_tools=[ToolDefinition(name, parameters_json_schema=…)])
    async with model_request_stream(model, messages, model_request_parameters=params) as stream:
        async for event in stream: …
    for part in stream.get().parts:
        if isinstance(part, ToolCallPart):
            tool = tools_by_name.get(part.tool_name)    # else: a retry prompt, nothing runs
            args = tool.function_schema.validator.validate_json(part.args or "{}")
            run(tool, args)                             # a ValidationError: a retry prompt

Paths below are in the installed package (``pydantic_ai/…``). ``AnthropicStreamedResponse``
(``models/anthropic/_streaming.py``) reads the anthropic SDK's beta events: a ``tool_use``
block's start opens a tool-call part keyed by the block's index, with its id, its name and its
start ``input`` as a dict where it is not empty; each ``input_json_delta`` is handed to the
parts manager (``handle_tool_call_delta_events``) under the delta's index, which appends its
text to the part's ``args``. The stop reason is only recorded as the response's finish reason.
The tool manager's check is ``http:pydantic-ai``'s: an unknown tool or arguments its validator
(for a tool declared by its JSON schema, pydantic-core's JSON parse) refuses go back to the
model as a retry prompt.

Observables, as for ``http:pydantic-ai`` (D62): each part the agent would run, ready, with its
id, its text and the validator's parse; no ``status`` or ``reason``. The text is what the tool
manager parses, ``args or '{}'`` (a block that streamed nothing runs as ``{}``, D22); a part
whose ``args`` is the start's dict has no text but pydantic-ai's own dump of it
(``args_as_json_str()``). pydantic-ai's own errors
(``AgentRunError``s: an ``event: error`` comes out as its ``ModelHTTPError`` from the SDK's
``APIStatusError`` of the 200 stream) hand nothing back; an HTTP status or a connection failure
under one is the emulator's and is raised; any other exception is the library's crash.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import anthropic
from pydantic_ai.exceptions import AgentRunError
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

from callstream.reference import Tool

from ...core.declaration import Declaration
from ._pydantic_ai_turn import agent_calls, streamed_turn
from .anthropic_request import in_band_anthropic_error, origin
from .base import TIMEOUT, HttpAdapter

__all__ = ["PydanticAIAnthropic", "anthropic_model"]


class PydanticAIAnthropic(HttpAdapter):
    """``model_request_stream`` on ``AnthropicModel``; the response's tool-call parts."""

    distributions = ("pydantic-ai-slim", "anthropic")
    declaration = Declaration(
        dialects=("anthropic-messages",),
        observables=frozenset({"arguments_text", "arguments", "ids"}),
    )

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """Each tool-call part of the final response the agent would run, in order."""
        return asyncio.run(_assemble(base_url, model, tools))


async def _assemble(base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
    client = anthropic.AsyncAnthropic(
        base_url=origin(base_url), api_key="callstream", max_retries=0, timeout=TIMEOUT
    )
    claude = AnthropicModel(model, provider=AnthropicProvider(anthropic_client=client))
    try:
        response, agent_tools = await streamed_turn(claude, tools)
    except AgentRunError as exc:
        cause = exc.__cause__
        if isinstance(cause, anthropic.APIConnectionError) or (
            isinstance(cause, anthropic.APIStatusError) and not in_band_anthropic_error(cause)
        ):
            raise
        return []
    finally:
        await client.close()
    return agent_calls(response, agent_tools)


anthropic_model = PydanticAIAnthropic()
"""``http:pydantic-ai-anthropic``."""

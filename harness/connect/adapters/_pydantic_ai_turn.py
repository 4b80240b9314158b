"""What the pydantic-ai adapters share, whatever the model: one streamed model turn with the
agent's tools (``model_request_stream``), and the check the agent makes before it runs a tool
(D63, D66). Imports pydantic-ai only, so each adapter needs only its own provider's SDK."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_ai import ModelRequest, ToolCallPart
from pydantic_ai import Tool as AgentTool
from pydantic_ai.direct import model_request_stream
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.tools import ToolDefinition

from callstream.reference import Tool

from .base import MESSAGES, call_result, function_tools

__all__ = ["agent_calls", "streamed_turn"]


async def streamed_turn(
    model: Model, tools: Sequence[Tool]
) -> tuple[ModelResponse, dict[str, AgentTool]]:
    """The response of one streamed request to ``model`` offering ``tools`` as an agent offers
    them, with those tools by name. pydantic-ai's own errors (``AgentRunError``) propagate."""
    agent_tools = {
        tool["function"]["name"]: AgentTool.from_schema(
            _not_run,
            name=tool["function"]["name"],
            description=None,
            json_schema=tool["function"]["parameters"],
        )
        for tool in function_tools(tools)
    }
    parameters = ModelRequestParameters(
        function_tools=[
            ToolDefinition(name=name, parameters_json_schema=tool.function_schema.json_schema)
            for name, tool in agent_tools.items()
        ]
    )
    messages = [ModelRequest.user_text_prompt(MESSAGES[0]["content"])]
    async with model_request_stream(model, messages, model_request_parameters=parameters) as stream:
        async for _ in stream:
            pass
        return stream.get(), agent_tools


def agent_calls(response: ModelResponse, agent_tools: dict[str, AgentTool]) -> list[dict[str, Any]]:
    """Each tool-call part the agent would run, ready, in order: an unknown tool or arguments
    its validator refuses go back to the model as a retry prompt, so they are not handed back.
    The text is what the tool manager parses, ``args or '{}'``; a part whose ``args`` is a
    dict shows pydantic-ai's own dump of it (``args_as_json_str()``)."""
    calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
    results = []
    for index, part in enumerate(calls):
        tool = agent_tools.get(part.tool_name)
        if tool is None:
            continue
        validator = tool.function_schema.validator
        try:
            if isinstance(part.args, dict):
                parsed = validator.validate_python(part.args)
                text = part.args_as_json_str()
            else:
                text = part.args or "{}"
                parsed = validator.validate_json(text)
        except ValidationError:
            continue
        results.append(
            call_result(0, index, part.tool_call_id, part.tool_name, text, arguments=parsed)
        )
    return results


def _not_run(**arguments: Any) -> None:
    raise AssertionError("the adapter runs no tool")  # the agent would call it; we never do

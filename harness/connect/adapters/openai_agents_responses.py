"""openai-agents' Responses model as an ``http:`` connectable: ``http:openai-agents-responses``.

The model an ``Agent`` runs on by default (``OpenAIResponsesModel``), given an OpenAI-compatible
server as the SDK's docs show (``OpenAIResponsesModel(model=…, openai_client=AsyncOpenAI(
base_url=…))``), streamed as ``Runner.run_streamed`` streams it: the Runner iterates
``model.stream_response(…)`` and takes the calls to run from the ``response.completed`` event's
``response.output`` (its ``function_call`` and ``custom_tool_call`` items), or, where that output
is empty, from the items of the ``output_item.done`` events it streamed
(``run_internal/run_loop.py``)::

    model = OpenAIResponsesModel(model=name, openai_client=AsyncOpenAI(base_url=…))
    async for event in model.stream_response(None, prompt, ModelSettings(), tools, None, [], …):
        if event.type == "response.completed":
            for item in event.response.output:
                if item.type == "function_call": run(item.name, item.arguments)

Paths below are in the installed package (``agents/…``). ``OpenAIResponsesModel.stream_response``
(``models/openai_responses.py``) passes the openai SDK's raw events through, keeps the
completed response as it came (the streamed items count only where its ``output`` is empty),
and after a ``response.failed``, ``response.incomplete`` or ``error`` event raises
``ModelBehaviorError``, an ``AgentsException``: the SDK's refusal, which hands nothing back
(D60). An ``error`` event nesting an ``error`` object raises the openai SDK's ``APIError``
first: nothing either. The tools are offered as the SDK's ``FunctionTool`` (not strict) and
``CustomTool``.

Observables, as for ``http:openai-agents`` (D62, D63): each call item of the completed response
with its ``call_id`` and text (the Runner hands the text to the tool unparsed); a refused call
leaves no trace, so ``status``, ``reason`` and ``arguments`` are not observable. Tracing is
switched off: nothing leaves the machine, and the SDK's log of each refused stream is quiet.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import openai
from agents import (
    CustomTool,
    FunctionTool,
    ModelSettings,
    OpenAIResponsesModel,
    set_tracing_disabled,
)
from agents import (
    Tool as AgentTool,
)
from agents.exceptions import AgentsException
from agents.models.interface import ModelTracing

from callstream.reference import Tool

from ...core.declaration import Declaration
from .base import MESSAGES, TIMEOUT, HttpAdapter, in_band_error
from .openai_responses import RESPONSES, output_calls, responses_tools

__all__ = ["OpenAIAgentsResponses", "responses_model"]

set_tracing_disabled(True)
# The model logs every refused stream ("Error streaming response"); the verdict says it already.
logging.getLogger("openai.agents").setLevel(logging.CRITICAL)


class OpenAIAgentsResponses(HttpAdapter):
    """``OpenAIResponsesModel.stream_response``; the completed response's calls."""

    distributions = ("openai-agents", "openai")
    declaration = Declaration(dialects=RESPONSES, observables=frozenset({"arguments_text", "ids"}))

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """Each call item of the completed response, in order."""
        return asyncio.run(_assemble(base_url, model, tools))


async def _not_run(context: Any, arguments: str) -> str:
    raise AssertionError("the adapter runs no tool")  # the Runner would call it; we never do


def _offered(tools: Sequence[Tool]) -> list[AgentTool]:
    offered: list[AgentTool] = []
    for tool in responses_tools(tools):
        if tool["type"] == "custom":
            offered.append(
                CustomTool(
                    name=tool["name"],
                    description="",
                    on_invoke_tool=_not_run,
                    format=tool.get("format"),
                )
            )
        else:
            offered.append(
                FunctionTool(
                    name=tool["name"],
                    description="",
                    params_json_schema=tool["parameters"],
                    on_invoke_tool=_not_run,
                    strict_json_schema=False,
                )
            )
    return offered


async def _assemble(base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key="callstream", max_retries=0, timeout=TIMEOUT
    )
    responses = OpenAIResponsesModel(model=model, openai_client=client)
    final = None
    streamed: list[Any] = []
    try:
        async for event in responses.stream_response(
            None,
            MESSAGES[0]["content"],
            ModelSettings(),
            _offered(tools),
            None,
            [],
            ModelTracing.DISABLED,
        ):
            if event.type == "response.completed":
                final = event.response
            elif event.type == "response.output_item.done":
                streamed.append(event.item)
    except AgentsException:
        return []
    except openai.APIError as exc:
        if not in_band_error(exc):
            raise
        return []
    finally:
        await client.close()
    if final is None:
        return []  # the run loop raises "Model did not produce a final response!"
    # The run loop runs the completed response's output or, where that is empty, the items the
    # stream finished (``run_internal/run_loop.py``: "Some streaming backends emit output items
    # during item.done events while leaving the terminal response output empty").
    return output_calls(final.output or streamed)


responses_model = OpenAIAgentsResponses()
"""``http:openai-agents-responses``."""

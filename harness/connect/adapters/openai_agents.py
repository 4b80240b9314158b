"""openai-agents' Chat Completions model as an ``http:`` connectable: ``http:openai-agents``.

The model an ``Agent`` runs on when it is given an OpenAI-compatible server ("Using other LLM
providers" in the SDK's docs: ``OpenAIChatCompletionsModel(model=…, openai_client=AsyncOpenAI(
base_url=…))``), streamed as ``Runner.run_streamed`` streams it: the Runner iterates
``model.stream_response(…)`` and takes the calls to run from the ``response.completed``
event's ``response.output`` (its ``function_call`` items)::

    model = OpenAIChatCompletionsModel(model=name, openai_client=AsyncOpenAI(base_url=…))
    async for event in model.stream_response(None, prompt, ModelSettings(), tools, None, [], …):
        if event.type == "response.completed":
            for item in event.response.output:
                if item.type == "function_call": run(item.name, item.arguments)

Paths below are in the installed package (``agents/…``). ``ChatCmplStreamHandler.handle_stream``
(``models/chatcmpl_stream_handler.py``) reads ``choices[0]`` of each chunk and keeps each call
by its delta's index, appending argument text and setting name and id as they come. It
requires a finish reason only for the official OpenAI endpoint (``require_finish_reason``
is ``ChatCmplHelpers.is_openai(client)``), and refuses a ``length`` finish only when nothing
visible came (``raise_on_length_truncation``, ``ModelBehaviorError``): a call cut by length is
otherwise completed.

Observables: each ``function_call`` item is a call handed back to run, with its ``call_id``
and its argument text (the Runner parses it when it invokes the tool, after the model turn);
none is set apart, so ``status``, ``reason`` and ``arguments`` are not observable, nor several
choices. The SDK's own refusals (``AgentsException``, ``ModelBehaviorError``) and the openai
SDK's in-band ``APIError`` hand nothing back; any other exception is the library's crash.
Tracing is switched off: nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import openai
from agents import (
    FunctionTool,
    ModelSettings,
    OpenAIChatCompletionsModel,
    set_tracing_disabled,
)
from agents import (
    Tool as AgentTool,
)
from agents.exceptions import AgentsException
from agents.models.interface import ModelTracing

from callstream.reference import Tool

from ...core.declaration import Declaration
from .base import MESSAGES, TIMEOUT, HttpAdapter, call_result, function_tools, in_band_error

__all__ = ["OpenAIAgents", "chat_completions_model"]

set_tracing_disabled(True)


class OpenAIAgents(HttpAdapter):
    """``OpenAIChatCompletionsModel.stream_response``; the completed response's calls."""

    distributions = ("openai-agents", "openai")
    declaration = Declaration(observables=frozenset({"arguments_text", "ids"}))

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """Each ``function_call`` item of the completed response, in order."""
        return asyncio.run(_assemble(base_url, model, tools))


async def _not_run(context: Any, arguments: str) -> str:
    raise AssertionError("the adapter runs no tool")  # the Runner would call it; we never do


async def _assemble(base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key="callstream", max_retries=0, timeout=TIMEOUT
    )
    chat = OpenAIChatCompletionsModel(model=model, openai_client=client)
    offered: list[AgentTool] = [
        FunctionTool(
            name=tool["function"]["name"],
            description="",
            params_json_schema=tool["function"]["parameters"],
            on_invoke_tool=_not_run,
            strict_json_schema=False,
        )
        for tool in function_tools(tools)
    ]
    final = None
    try:
        async for event in chat.stream_response(
            None,
            MESSAGES[0]["content"],
            ModelSettings(),
            offered,
            None,
            [],
            ModelTracing.DISABLED,
        ):
            if event.type == "response.completed":
                final = event.response
    except AgentsException:
        return []
    except openai.APIError as exc:
        if not in_band_error(exc):
            raise
        return []
    finally:
        await client.close()
    calls = [item for item in (final.output if final else ()) if item.type == "function_call"]
    return [
        call_result(0, index, item.call_id, item.name, item.arguments)
        for index, item in enumerate(calls)
    ]


chat_completions_model = OpenAIAgents()
"""``http:openai-agents``."""

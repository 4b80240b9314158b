"""``http:`` connectables: client libraries run against the provider emulator.

``http:<name>`` names an adapter of this registry. Each reproduces one user code path of its
library (its module's docstring quotes the library's own documentation of it), lives in its own
module, imported only when asked for, and needs its library installed
(``pip install 'callstream[<extra>]'``). Reading the ``openai-chat`` dialect::

    http:openai               openai SDK, chat.completions.stream() + get_final_completion()
    http:openai-state         openai SDK, create(stream=True) + ChatCompletionStreamState
    http:openai-done-events   openai SDK, chat.completions.stream(), each call at its done event
    http:langchain            langchain-openai ChatOpenAI.stream(), chunks summed with +
    http:litellm              litellm.completion(stream=True) + stream_chunk_builder()
    http:pydantic-ai          pydantic-ai OpenAIChatModel, model_request_stream(); ToolCallParts
    http:openai-agents        openai-agents OpenAIChatCompletionsModel.stream_response()

reading the ``anthropic-messages`` dialect (``POST /v1/messages``)::

    http:anthropic            anthropic SDK, messages.stream() + get_final_message()
    http:anthropic-accumulator  anthropic SDK, create(stream=True) + accumulate_event()
    http:langchain-anthropic  langchain-anthropic ChatAnthropic.stream(), chunks summed with +
    http:litellm-anthropic    litellm.completion("anthropic/…", stream=True) + stream_chunk_builder
    http:pydantic-ai-anthropic  pydantic-ai AnthropicModel, model_request_stream(); ToolCallParts

and, reading the ``openai-responses`` dialect (``POST /v1/responses``)::

    http:openai-responses            openai SDK, responses.stream() + get_final_response()
    http:openai-responses-state      openai SDK, responses.create(stream=True) + ResponseStreamState
    http:langchain-responses         langchain-openai ChatOpenAI(use_responses_api=True).stream()
    http:litellm-responses           litellm.responses(stream=True)
    http:openai-agents-responses     openai-agents OpenAIResponsesModel.stream_response()
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from ...core.declaration import Implementation
from ...errors import UsageError
from .base import HttpAdapter

__all__ = ["ADAPTERS", "Adapter", "HttpAdapter", "installed", "load_adapter"]


@dataclass(frozen=True, slots=True)
class Adapter:
    """Where an adapter lives and what it needs."""

    module: str
    attribute: str
    library: str
    """The module the library is imported as."""
    extra: str
    """The ``callstream[extra]`` that installs it."""


ADAPTERS: dict[str, Adapter] = {
    "openai": Adapter(
        "callstream.connect.adapters.openai_sdk", "stream_helper", "openai", "openai"
    ),
    "openai-state": Adapter(
        "callstream.connect.adapters.openai_sdk", "stream_state", "openai", "openai"
    ),
    "openai-done-events": Adapter(
        "callstream.connect.adapters.openai_sdk", "done_events", "openai", "openai"
    ),
    "langchain": Adapter(
        "callstream.connect.adapters.langchain", "chat_openai", "langchain_openai", "langchain"
    ),
    "litellm": Adapter("callstream.connect.adapters.litellm", "completion", "litellm", "litellm"),
    "pydantic-ai": Adapter(
        "callstream.connect.adapters.pydantic_ai_model", "chat_model", "pydantic_ai", "pydantic-ai"
    ),
    "openai-agents": Adapter(
        "callstream.connect.adapters.openai_agents",
        "chat_completions_model",
        "agents",
        "openai-agents",
    ),
    "anthropic": Adapter(
        "callstream.connect.adapters.anthropic_sdk", "message_stream", "anthropic", "anthropic"
    ),
    "anthropic-accumulator": Adapter(
        "callstream.connect.adapters.anthropic_sdk", "accumulator", "anthropic", "anthropic"
    ),
    "langchain-anthropic": Adapter(
        "callstream.connect.adapters.langchain_anthropic",
        "chat_anthropic",
        "langchain_anthropic",
        "langchain-anthropic",
    ),
    "litellm-anthropic": Adapter(
        "callstream.connect.adapters.litellm_anthropic",
        "anthropic_completion",
        "litellm",
        "litellm",
    ),
    "pydantic-ai-anthropic": Adapter(
        "callstream.connect.adapters.pydantic_ai_anthropic",
        "anthropic_model",
        "pydantic_ai",
        "pydantic-ai-anthropic",
    ),
    "openai-responses": Adapter(
        "callstream.connect.adapters.openai_responses", "responses_helper", "openai", "openai"
    ),
    "openai-responses-state": Adapter(
        "callstream.connect.adapters.openai_responses", "responses_state", "openai", "openai"
    ),
    "langchain-responses": Adapter(
        "callstream.connect.adapters.langchain_responses",
        "chat_openai_responses",
        "langchain_openai",
        "langchain",
    ),
    "litellm-responses": Adapter(
        "callstream.connect.adapters.litellm_responses", "responses", "litellm", "litellm"
    ),
    "openai-agents-responses": Adapter(
        "callstream.connect.adapters.openai_agents_responses",
        "responses_model",
        "agents",
        "openai-agents",
    ),
}
"""Every ``http:`` adapter, by name."""


def installed() -> list[str]:
    """The adapters whose library is installed, in registry order."""
    return [name for name, adapter in ADAPTERS.items() if _importable(adapter.library)]


def load_adapter(spec: str) -> Implementation:
    """The implementation ``http:<name>`` names; a :class:`UsageError` says what is missing."""
    name = spec.partition(":")[2]
    adapter = ADAPTERS.get(name)
    if adapter is None:
        raise UsageError(
            f"{spec!r}: no such http: adapter; known: {', '.join(f'http:{n}' for n in ADAPTERS)}"
        )
    if not _importable(adapter.library):
        raise UsageError(
            f"{spec!r} needs {adapter.library}, which is not installed: "
            f"pip install 'callstream[{adapter.extra}]'"
        )
    factory: HttpAdapter = getattr(importlib.import_module(adapter.module), adapter.attribute)
    return Implementation(spec, f"{name} ({_versions(factory)})", factory, factory.declaration)


def _versions(factory: HttpAdapter) -> str:
    return ", ".join(f"{name} {version}" for name, version in factory.versions.items())


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False

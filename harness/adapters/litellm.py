"""litellm as an ``http:`` connectable: ``http:litellm``.

``litellm.completion(model="openai/<name>", api_base=…, stream=True)``, every chunk kept, then
``litellm.stream_chunk_builder(chunks, messages=…)`` (litellm's documented way to rebuild the
response of a stream): each choice's ``message.tool_calls`` are its results, ready with
``json.loads`` of their argument text (litellm hands back text, as the SDK does).

What litellm claims: it folds deltas into calls (A), through the openai SDK's transport (T),
hands the message back (C1, E). It passes the finish reason through without acting on it
(C3) and checks no JSON, schema, tool name or identity (V). Whatever breaks the stream once it
has begun (an in-band error payload, a data line that is not JSON) litellm raises as its
``MidStreamFallbackError``, its documented signal of a failed stream: the calls it cut short
are rejected ``stream_error``. Any other exception is litellm's crash.

litellm reaches for the internet on import (its model-cost map) and prints help on errors:
this module keeps it offline and quiet, before importing it.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOG", "CRITICAL")

from collections.abc import Sequence
from typing import Any

import litellm
from litellm.exceptions import MidStreamFallbackError

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

__all__ = ["LiteLLM", "completion"]

litellm.suppress_debug_info = True
litellm.telemetry = False


class LiteLLM(HttpAdapter):
    """``litellm.completion(stream=True)`` rebuilt by ``stream_chunk_builder``."""

    distributions = ("litellm", "openai")
    declaration = Declaration(observables=AT_CLOSE)

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The calls of the rebuilt response."""
        offered = openai_tools(tools)
        chunks: list[Any] = []
        request: dict[str, Any] = {
            "model": f"openai/{model}",
            "api_base": base_url,
            "api_key": "callstream",
            "messages": MESSAGES,
            "stream": True,
            "max_retries": 0,
            "num_retries": 0,
            "timeout": TIMEOUT,
        }
        if offered:
            request["tools"] = offered
        try:
            for chunk in litellm.completion(**request):
                chunks.append(chunk)
        except MidStreamFallbackError:
            return [
                call_result(*call, rejected="stream_error") for call in _calls(_rebuilt(chunks))
            ]
        return [call_result(*call) for call in _calls(_rebuilt(chunks))]


def _rebuilt(chunks: list[Any]) -> Any:
    return litellm.stream_chunk_builder(chunks, messages=MESSAGES) if chunks else None


def _calls(response: Any) -> list[tuple[Any, int, Any, Any, Any]]:
    """(choice, index, id, name, arguments text) of every call of a rebuilt response."""
    if response is None:
        return []
    return [
        (choice.index, index, call.id, call.function.name, call.function.arguments)
        for choice in response.choices
        for index, call in enumerate(getattr(choice.message, "tool_calls", None) or ())
    ]


completion = LiteLLM()
"""``http:litellm``."""

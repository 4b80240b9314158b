"""litellm's Responses API as an ``http:`` connectable: ``http:litellm-responses``.

The user code path of litellm's ``/responses`` docs ("Streaming"): ``litellm.responses(…,
stream=True)`` yields the Responses events, and the response is the one the
``response.completed`` event carries, whose output items are the calls to run::

    for event in litellm.responses(model="openai/<name>", api_base=…, input=…, tools=…,
                                   stream=True):
        if event.type == "response.completed":
            response = event.response
    for item in response.output:
        if item.type in ("function_call", "custom_tool_call"): run(item.name, …)

Paths below are in the installed package. ``SyncResponsesAPIStreamingIterator``
(``responses/streaming_iterator.py``) yields each event as parsed, a data line that is not JSON
dropped (``_process_chunk``). It raises, as an OpenAI-style exception, on an ``error`` event and
on ``response.failed`` (``_maybe_raise_for_error_event``: the mapped provider error, or its
``MidStreamFallbackError``) and when the stream ends without a terminal event
(``_raise_if_ended_without_terminal_event``): that is litellm's signal of a failed stream, the
calls it cut short are rejected ``stream_error``; it says only that the stream failed, so
``reason`` is not exposed. ``response.incomplete`` is passed through as an event; a response
that never completed has no calls to run, so the calls seen are rejected. The calls seen are
those the events showed, each event's delta appended to its item's text, its done item kept.

litellm asks for a whole response and makes the events itself ("fake stream",
``should_fake_stream`` in ``llms/openai/responses/transformation.py``) for any model its cost map
does not list as streaming natively, which is every model name of an OpenAI-compatible server
it has not been told about: the adapter declares the model as a user of such a deployment does
(``litellm.register_model`` with ``supports_native_streaming``, D69), so the stream reaches
litellm's own reader. litellm stays offline and quiet (see ``http:litellm``).
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOG", "CRITICAL")

from collections.abc import Sequence
from typing import Any

import litellm
import openai

from callstream.reference import Tool

from ...core.declaration import Declaration
from .base import MESSAGES, TIMEOUT, HttpAdapter
from .openai_responses import RESPONSES, Snapshot, output_calls, responses_tools

__all__ = ["LiteLLMResponses", "responses"]

litellm.suppress_debug_info = True
litellm.telemetry = False

_STREAMING = {"litellm_provider": "openai", "mode": "responses", "supports_native_streaming": True}
"""What a user declares of a custom deployment (``model_info``) so litellm streams it."""


class LiteLLMResponses(HttpAdapter):
    """``litellm.responses(stream=True)``; the ``response.completed`` event's calls."""

    distributions = ("litellm", "openai")
    declaration = Declaration(
        dialects=RESPONSES, observables=frozenset({"status", "arguments_text", "ids"})
    )

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The calls of the completed response, or those of a failed one, rejected."""
        request: dict[str, Any] = {
            "model": f"openai/{model}",
            "api_base": base_url,
            "api_key": "callstream",
            "input": MESSAGES[0]["content"],
            "stream": True,
            "max_retries": 0,
            "num_retries": 0,
            "timeout": TIMEOUT,
        }
        if offered := responses_tools(tools):
            request["tools"] = offered
        seen = Snapshot()
        # D69: litellm fakes the stream of a model its cost map does not list (a whole response
        # asked for, events made from it); the deployment is declared as streaming natively.
        known = f"openai/{model}"
        litellm.register_model({known: _STREAMING})
        try:
            # A failed request raises here: the emulator's, not the stream's.
            stream: Any = litellm.responses(**request)
            try:
                for event in stream:
                    seen.see(event)
            except openai.APIError:  # MidStreamFallbackError and every mapped provider error
                return seen.refused("stream_error")
        finally:
            litellm.model_cost.pop(known, None)
        if seen.final is None:
            return seen.refused()
        # litellm's response model has no ``output`` when the event carries none: no calls.
        return output_calls(getattr(seen.final, "output", None) or ())


responses = LiteLLMResponses()
"""``http:litellm-responses``."""

"""What the emulator serves for each dialect: the path its requests are posted to and the
non-streaming answer a scenario of it stands for. :class:`~callstream.emulator.app.ProviderApp`
answers ``POST /v1<path>`` for each dialect here; a scenario is served on its own dialect's
path only. ``tests/test_dialects.py`` checks that every dialect the harness renders is served.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.dialects.openai_chat import ENVELOPE, OPENAI_CHAT, USAGE
from ..core.spec import Scenario
from .anthropic import message
from .anthropic_routes import ANTHROPIC_ROUTES
from .responses import response_object
from .responses_routes import RESPONSES_ROUTES
from .routes import ROUTES, Route
from .wire_route import WireRoute

__all__ = ["ROUTES_OF", "SERVED", "SERVED_AT", "Served", "chat_completion"]


@dataclass(frozen=True, slots=True)
class Served:
    """How the emulator serves one dialect."""

    path: str
    """Where its requests are posted, after ``/v1``."""
    completion: Callable[[Scenario], Mapping[str, Any] | None]
    """The non-streaming answer a scenario stands for (None: the scenario only streams)."""


def chat_completion(scenario: Scenario) -> dict[str, Any] | None:
    """The non-streaming ``chat.completion`` a route would answer ``scenario``'s request with,
    from its plan: each choice's text, calls (true id, name and argument text) and finish
    reason. None for a literal stream, which has no plan to assemble."""
    spec = scenario.spec
    if spec.literal:
        return None
    choices = []
    for choice in range(spec.choices):
        message: dict[str, Any] = {"role": "assistant", "content": spec.noise.content}
        calls = [call for call in spec.calls if call.choice == choice]
        tool_calls = [
            {
                "id": None if call.id_policy == "omit" else call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in calls
            if not call.legacy
        ]
        if tool_calls:
            message["tool_calls"] = tool_calls
        legacy = [call for call in calls if call.legacy]
        if legacy:
            message["function_call"] = {"name": legacy[0].name, "arguments": legacy[0].arguments}
        choices.append(
            {
                "index": choice,
                "message": message,
                "finish_reason": spec.ending.finish,
                "logprobs": None,
            }
        )
    return {**ENVELOPE, "object": "chat.completion", "choices": choices, "usage": USAGE}


SERVED: dict[str, Served] = {
    OPENAI_CHAT.name: Served("/chat/completions", chat_completion),
    "anthropic-messages": Served("/messages", message),
    "openai-responses": Served("/responses", response_object),
}
"""Every dialect the emulator serves, by name."""
SERVED_AT: dict[str, str] = {served.path: name for name, served in SERVED.items()}
"""The dialect served at each path."""
ROUTES_OF: dict[str, Mapping[str, type[Route] | type[WireRoute]]] = {
    OPENAI_CHAT.name: ROUTES,
    "anthropic-messages": ANTHROPIC_ROUTES,
    "openai-responses": RESPONSES_ROUTES,
}
"""The emulated routes of each dialect, by name (``route:<name>`` on its path only)."""

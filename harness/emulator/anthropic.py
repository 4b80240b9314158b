"""The Anthropic Messages answers the emulator gives on ``POST /v1/messages``: the streamed one
is the scenario's rendering (as for every dialect); the non-streaming one, a ``Message`` whose
``content`` holds the plan's text and one ``tool_use`` block per call with its true input."""

from __future__ import annotations

import json
from typing import Any

from ..core.dialects.anthropic_messages import MESSAGE, USAGE, stop_reason
from ..core.spec import Scenario

__all__ = ["message"]


def message(scenario: Scenario) -> dict[str, Any] | None:
    """The non-streaming ``Message`` a route would answer ``scenario``'s request with, from its
    plan; None for a literal stream, or a call whose input is not a JSON object (a ``Message``
    carries ``input`` parsed, so such a call has no non-streaming form)."""
    spec = scenario.spec
    if spec.literal:
        return None
    content: list[dict[str, Any]] = []
    if spec.noise.content is not None:
        content.append({"type": "text", "text": spec.noise.content})
    for call in spec.calls:
        try:
            value = json.loads(call.arguments) if call.arguments else {}
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        block: dict[str, Any] = {"type": "tool_use", "id": call.id, "name": call.name}
        content.append({**block, "input": value})
    return {
        **MESSAGE,
        "content": content,
        "stop_reason": stop_reason(spec),
        "stop_sequence": None,
        "usage": dict(USAGE),
    }

"""The non-streaming answer an ``openai-responses`` scenario stands for: the ``response``
object a route would return for its request without ``stream: true`` (research/wire_formats.md
§3.1), from the plan alone.
"""

from __future__ import annotations

from typing import Any

from ..core.dialects.openai_responses import RESPONSE, USAGE, call_item_id
from ..core.spec import Scenario

__all__ = ["response_object"]


def response_object(scenario: Scenario) -> dict[str, Any] | None:
    """The ``response`` for ``scenario``'s request: a message item for its text, then one item
    per call (``call_id``, name and whole text), status ``completed``. None for a literal
    stream, which has no plan."""
    spec = scenario.spec
    if spec.literal:
        return None
    output: list[dict[str, Any]] = []
    if spec.noise.content is not None:
        part = {"type": "output_text", "text": spec.noise.content, "annotations": []}
        output.append(
            {
                "id": "msg_0",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [part],
            }
        )
    for number, call in enumerate(spec.calls):
        custom = call.kind == "custom"
        output.append(
            {
                "id": call_item_id(call, number),
                "type": "custom_tool_call" if custom else "function_call",
                "status": "completed",
                "call_id": None if call.id_policy == "omit" else call.id,
                "name": call.name,
                "input" if custom else "arguments": call.arguments,
            }
        )
    return {
        **RESPONSE,
        "object": "response",
        "model": "callstream",
        "status": "completed",
        "output": output,
        "usage": dict(USAGE),
    }

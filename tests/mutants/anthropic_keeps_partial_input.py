"""Keeps the partially parsed input of a block the token limit cut off, as a finished call.

anthropic-sdk-python parses ``input_json_delta`` with jiter in partial mode after every
fragment and has no strict parse at ``content_block_stop``: when ``stop_reason`` is
``max_tokens`` the final ``input`` is whatever the partial parse produced, closed brackets and
all (anthropics/anthropic-sdk-python#794, anthropics/anthropic-sdk-python#975; pydantic-ai got
the truncated arguments, pydantic/pydantic-ai#3118). Breaks C3: an input cut by the token
limit, a refusal or a pause is never a complete call.
"""

from __future__ import annotations

import json

from ._anthropic_base import CALLSTREAM, AnthropicAssembler, Block

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["C3"]
CITES = [
    "anthropics/anthropic-sdk-python#794",
    "anthropics/anthropic-sdk-python#975",
    "pydantic/pydantic-ai#3118",
]


class KeepsPartialInput(AnthropicAssembler):
    """Closes what the cut left open and completes the call at its stop."""

    def boundary(self, block: Block) -> None:
        """Complete the input the way a partial parser does: close the open string and
        brackets, then take it as the call's input."""
        call = block.call
        assert call is not None
        text = call.text
        try:
            json.loads(text or "{}")
        except ValueError:
            call.fragments.append(_closers(text))
        super().boundary(block)


def _closers(text: str) -> str:
    """What a partial-JSON parser appends to make ``text`` parse."""
    stack: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]" and stack:
            stack.pop()
    tail = '"' if in_string else ""
    if tail and text.rstrip().endswith(":"):
        tail = ""
    if text.rstrip().endswith(":") or text.rstrip().endswith(","):
        tail += "null" if text.rstrip().endswith(":") else ""
    return tail + "".join(reversed(stack))


factory = KeepsPartialInput

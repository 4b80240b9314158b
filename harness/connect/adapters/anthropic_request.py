"""What the Anthropic adapters share: the Messages request they send, the tool_use blocks of a
``Message`` as results, and the anthropic SDK's signal of an error inside the stream.

Every library here but litellm speaks through the anthropic SDK (``http:anthropic``,
``http:anthropic-accumulator``, ``http:langchain-anthropic``, ``http:pydantic-ai-anthropic``),
so the SDK's error classes are theirs too. The emulator answers ``POST /v1/messages``; the SDK
appends ``/v1/messages`` to its base URL, so it is given the emulator's origin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from callstream.reference import Tool

from .base import call_result

__all__ = [
    "MAX_TOKENS",
    "anthropic_tools",
    "in_band_anthropic_error",
    "origin",
    "tool_use_results",
]

MAX_TOKENS = 1024
"""The ``max_tokens`` every Messages request must carry; the emulator ignores it."""


def origin(base_url: str) -> str:
    """The emulator's origin (``http://host:port``) from its OpenAI-style ``…/v1`` base URL."""
    return base_url.removesuffix("/").removesuffix("/v1")


def anthropic_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """``tools`` as the ``tools`` field of a Messages request: each a client tool with its
    input schema. The Messages API has no free-form tool: a custom tool is offered as a tool of
    the same name taking an object."""
    return [
        {
            "name": tool.name,
            "input_schema": dict(tool.parameters or {"type": "object", "properties": {}}),
        }
        for tool in tools
    ]


def tool_use_results(
    content: Sequence[Any], *, rejected: str | None = None
) -> list[dict[str, Any]]:
    """The ``tool_use`` blocks of a message's ``content``, in order, as results: each with its
    id, name and ``input`` (the library's parse) as its arguments; a ``server_tool_use`` block
    runs on Anthropic's side and is no call for the client (D21). The SDK keeps no text of an
    input, only its parse: a result has none."""
    blocks = [block for block in content if getattr(block, "type", None) == "tool_use"]
    return [
        call_result(0, index, block.id, block.name, None, arguments=block.input, rejected=rejected)
        for index, block in enumerate(blocks)
    ]


def in_band_anthropic_error(exc: BaseException | None) -> bool:
    """True for the anthropic SDK's error raised on an ``event: error`` inside a 200 stream: it
    makes the same ``APIStatusError`` as for an HTTP status, from the stream's own response,
    whose status is 200 (``Stream.__stream__`` in ``anthropic/_streaming.py``). A real HTTP
    status or a connection failure is the emulator's or the harness's, never the stream's."""
    import anthropic  # loaded only for the adapters that speak through it

    return isinstance(exc, anthropic.APIStatusError) and exc.status_code == 200

"""What the langchain adapters share, whatever the provider: the calls of a sum of streamed
chunks, each ready or set apart as langchain-core set it. Imports langchain-core only, so each
adapter needs only its own provider's package."""

from __future__ import annotations

from collections import deque
from typing import Any

from langchain_core.messages import AIMessageChunk, BaseMessageChunk

from .base import call_result

__all__ = ["chunks_of", "classified"]


def classified(message: BaseMessageChunk | None) -> list[dict[str, Any]]:
    """Each merged chunk with the entry the sum made of it. ``init_tool_calls`` sends the
    chunks, in order, each to ``tool_calls`` or to ``invalid_tool_calls`` (the latter keeping
    the chunk's name, text and id), so one walk over the chunks pairs every one with its entry:
    text that parsed once parses again, so no ready chunk can match the next invalid entry."""
    if not isinstance(message, AIMessageChunk):
        return []
    ready = iter(message.tool_calls)
    invalid = deque(message.invalid_tool_calls)
    results = []
    for index, piece in enumerate(message.tool_call_chunks):
        text = piece["args"]
        if invalid and (invalid[0]["name"], invalid[0]["args"], invalid[0]["id"]) == (
            piece["name"],
            text,
            piece["id"],
        ):
            bad = invalid.popleft()
            results.append(
                call_result(0, index, bad["id"], bad["name"], text, rejected="malformed_json")
            )
        else:
            call = next(ready)
            results.append(
                call_result(0, index, call["id"], call["name"], text, arguments=call["args"])
            )
    return results


def chunks_of(message: BaseMessageChunk | None) -> list[Any]:
    """The tool-call chunks of a sum of chunks, as langchain merged them (none from anything
    but an ``AIMessageChunk``)."""
    return list(message.tool_call_chunks) if isinstance(message, AIMessageChunk) else []

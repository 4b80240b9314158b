"""The anthropic SDK as ``http:`` connectables, one for each way its users read a streamed
message.

Paths below are in the installed SDK (``anthropic/…``).

- ``http:anthropic``, the documented helper path (``helpers.md``, "Streaming Helpers")::

      with client.messages.stream(model=…, max_tokens=…, messages=…, tools=…) as stream:
          for event in stream: …                    # text events shown to the user
      message = stream.get_final_message()
      for block in message.content:
          if block.type == "tool_use":
              run(block.name, block.input)

- ``http:anthropic-accumulator``, the raw events of ``create(stream=True)`` folded by the
  function the helper folds them with, ``accumulate_event`` (``lib/streaming/_messages.py``),
  the caller keeping the snapshot and the JSON buffers it asks for::

      snapshot, buffers = None, {}
      for event in client.messages.create(…, stream=True):
          snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)

  The helper skips the events that come before ``message_start``; ``accumulate_event`` raises
  ``RuntimeError`` on them.

Both re-parse a ``tool_use`` block's input buffer on every ``input_json_delta`` with jiter in
partial mode (``from_json(…, partial_mode=True)``), which completes what is missing and drops
an unfinished string: the block's ``input`` is always an object made from what came, never the
text. A buffer jiter cannot read even partially makes them raise ``ValueError("Unable to parse
tool parameter JSON from model…")`` mid-stream. Nothing looks at the stop reason: the message
is handed back however it ended. An ``event: error`` raises the SDK's ``APIStatusError`` from
the 200 response (``Stream.__stream__`` in ``_streaming.py``): the calls folded so far are
rejected ``stream_error``, as the user's ``except`` loses them.

Observables: each call's id and the SDK's parse of its input; ``status`` and ``reason``, as the
SDK's only refusal is that error, and the snapshot it leaves shows every call it took along.
The SDK keeps no argument text the user reads (the buffers are private to the helper), and a
message has one choice. Any other exception (the ``ValueError`` above, a ``RuntimeError`` on an
event out of order) is not one of the SDK's own classes: the library's crash (D60).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import anthropic
from anthropic.lib.streaming._messages import accumulate_event

from callstream.reference import Tool

from ...core.declaration import Declaration
from .anthropic_request import (
    MAX_TOKENS,
    anthropic_tools,
    in_band_anthropic_error,
    origin,
    tool_use_results,
)
from .base import MESSAGES, TIMEOUT, HttpAdapter

__all__ = ["AnthropicAccumulator", "AnthropicStream", "accumulator", "message_stream"]

_FOLDED = Declaration(
    dialects=("anthropic-messages",),
    observables=frozenset({"status", "reason", "arguments", "ids"}),
)
"""What the final message exposes: every tool_use block's id and parsed input, and the SDK's
refusal of a stream that failed."""


@cache
def _client(base_url: str) -> anthropic.Anthropic:
    # No retries: a bad stream must be judged as it came, not asked for again.
    return anthropic.Anthropic(
        base_url=origin(base_url), api_key="callstream", max_retries=0, timeout=TIMEOUT
    )


def _request(model: str, tools: Sequence[Tool]) -> dict[str, Any]:
    request: dict[str, Any] = {"model": model, "max_tokens": MAX_TOKENS, "messages": MESSAGES}
    if offered := anthropic_tools(tools):
        request["tools"] = offered
    return request


def _final_or_refused(fold: Callable[[], Any], snapshot: Callable[[], Any]) -> list[dict[str, Any]]:
    """The calls of the message ``fold`` returns; where an ``event: error`` fails the stream,
    those of the ``snapshot`` folded so far, rejected."""
    try:
        message = fold()
    except anthropic.APIStatusError as exc:
        if not in_band_anthropic_error(exc):
            raise
        folded = snapshot()
        return tool_use_results(folded.content if folded else (), rejected="stream_error")
    return tool_use_results(message.content if message else ())


class AnthropicStream(HttpAdapter):
    """``client.messages.stream()``, then ``stream.get_final_message()``."""

    distributions = ("anthropic",)
    declaration = _FOLDED

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The tool_use blocks of the final message, or those an error cut short, rejected."""
        with _client(base_url).messages.stream(**_request(model, tools)) as stream:

            def fold() -> Any:
                for _ in stream:
                    pass
                return stream.get_final_message()

            return _final_or_refused(fold, stream._current_snapshot_or_none)


class AnthropicAccumulator(HttpAdapter):
    """``create(stream=True)``, each event folded by ``accumulate_event``."""

    distributions = ("anthropic",)
    declaration = _FOLDED

    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """The tool_use blocks of the folded message, or those an error cut short, rejected."""
        snapshot: Any = None
        buffers: dict[int, bytes] = {}

        def fold() -> Any:
            nonlocal snapshot
            for event in _client(base_url).messages.create(**_request(model, tools), stream=True):
                snapshot = accumulate_event(
                    event=event, current_snapshot=snapshot, json_bufs=buffers
                )
            return snapshot

        return _final_or_refused(fold, lambda: snapshot)


message_stream = AnthropicStream()
"""``http:anthropic``."""
accumulator = AnthropicAccumulator()
"""``http:anthropic-accumulator``."""

"""Emulated Anthropic-wire routes, served on ``POST /v1/messages``: the fake model's answer as
Anthropic's Messages API streams it (research/wire_formats.md §4), and as gateways and
servers implementing that wire bend it (§7 A1–A6, C1, C24).

The request is read in Anthropic's shape: ``tools`` with ``input_schema``, ``tool_choice`` of
type ``auto``, ``any``, ``tool`` or ``none`` (parallel calls unless
``disable_parallel_tool_use``), ``max_tokens``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

from .model import Answer, Call, think
from .reply import Reply
from .wire_route import NamedEvent, WireRoute, fragments, named_event, offered, pauses, u_escaped

__all__ = ["ANTHROPIC_ROUTES", "AnthropicRoute"]

_CHOICES = {"auto": "auto", "any": "required", "none": "none"}
_OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


class AnthropicRoute(WireRoute):
    """Anthropic's Messages API: ``message_start``, a ``ping``, one block per text and per
    ``tool_use`` (``input: {}`` in its start, then ``partial_json`` fragments, the first one
    ``""``), ``message_delta`` with the stop reason and the output tokens, ``message_stop``.
    Certifies under the strict profile."""

    name = "anthropic"
    title = "well-behaved, as api.anthropic.com"
    dialect = "anthropic-messages"

    def chat_request(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Anthropic's fields as the fake model reads them."""
        choice = request.get("tool_choice", {"type": "auto"})
        kind = choice.get("type") if isinstance(choice, dict) else choice
        chat_choice: Any = _CHOICES.get(kind, kind) if isinstance(kind, str) else kind
        if kind == "tool" and isinstance(choice, dict):
            chat_choice = {"type": "function", "function": {"name": choice.get("name")}}
        parallel = not (isinstance(choice, dict) and choice.get("disable_parallel_tool_use"))
        return {
            "model": request.get("model"),
            "messages": request.get("messages"),
            "tools": offered(request.get("tools"), "input_schema"),
            "tool_choice": chat_choice,
            "parallel_tool_calls": parallel,
            "max_tokens": request.get("max_tokens"),
        }

    # -- streaming ----------------------------------------------------------------------------

    def events(self, answer: Answer) -> list[NamedEvent]:
        out: list[NamedEvent] = [self.start(answer), ("ping", {"type": "ping"})]
        index = 0
        if answer.text:
            out.append(_block_start(index, {"type": "text", "text": ""}))
            pieces = fragments(answer.text)
            out += [_delta(index, {"type": "text_delta", "text": t}) for t in pieces]
            out.append(_block_stop(index))
            index += 1
        for number, call in enumerate(answer.calls, index):
            out += self.block(call, number)
        out.append(self.message_delta(answer))
        out.append(("message_stop", {"type": "message_stop"}))
        return out

    def start(self, answer: Answer) -> NamedEvent:
        """``message_start``: the message, empty, with its input tokens."""
        message = {
            **_envelope(answer),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": answer.usage["prompt_tokens"], "output_tokens": 1},
        }
        return "message_start", {"type": "message_start", "message": message}

    def block(self, call: Call, index: int) -> list[NamedEvent]:
        """One ``tool_use`` block: its start, its input's fragments, its stop."""
        start = {"type": "tool_use", "id": _tool_use_id(call), "name": call.name, "input": {}}
        pieces = ["", *fragments(call.arguments)]
        return [
            _block_start(index, start),
            *(_delta(index, {"type": "input_json_delta", "partial_json": p}) for p in pieces),
            _block_stop(index),
        ]

    def message_delta(self, answer: Answer) -> NamedEvent:
        """The stop reason and the output tokens, cumulative."""
        payload = {
            "type": "message_delta",
            "delta": {"stop_reason": _stop_reason(answer), "stop_sequence": None},
            "usage": {"output_tokens": answer.usage["completion_tokens"]},
        }
        return "message_delta", payload

    # -- not streaming ------------------------------------------------------------------------

    def completion(self, answer: Answer) -> dict[str, Any]:
        """The ``Message``: a text block, then one ``tool_use`` block per call, its input
        parsed."""
        content: list[dict[str, Any]] = []
        if answer.text:
            content.append({"type": "text", "text": answer.text})
        for call in answer.calls:
            try:
                value = json.loads(call.arguments)
            except ValueError:
                value = {}  # cut by max_tokens: a Message carries input parsed
            block = {"type": "tool_use", "id": _tool_use_id(call), "name": call.name}
            content.append({**block, "input": value})
        return {
            **_envelope(answer),
            "content": content,
            "stop_reason": _stop_reason(answer),
            "stop_sequence": None,
            "usage": {
                "input_tokens": answer.usage["prompt_tokens"],
                "output_tokens": answer.usage["completion_tokens"],
            },
        }


class Overloaded(AnthropicRoute):
    """Anthropic under load: a mid-stream ``event: error`` (``overloaded_error``) in the 200
    stream, right after the first block starts, and no ``message_stop`` (A2; coder/aibridge
    stream_error, anthropic-sdk-python#1918)."""

    name = "anthropic-overloaded"
    title = "Anthropic overloaded: an error event in a 200 stream"
    quirks = ("anthropic-messages/A2",)

    def events(self, answer: Answer) -> list[NamedEvent]:
        out = super().events(answer)
        cut = next(n for n, (name, _) in enumerate(out) if name == "content_block_start") + 1
        return [*out[:cut], ("ping", {"type": "ping"}), ("error", _OVERLOADED)]


class NoMessageStop(AnthropicRoute):
    """A gateway that ends the stream after ``message_delta``: no ``message_stop``, and no
    ``ping`` either (C24)."""

    name = "anthropic-no-message-stop"
    title = "an Anthropic-wire gateway without ping and message_stop"
    quirks = ("anthropic-messages/C24",)

    def events(self, answer: Answer) -> list[NamedEvent]:
        return [e for e in super().events(answer) if e[0] not in ("ping", "message_stop")]


class NoIndex(AnthropicRoute):
    """A gateway that drops ``index`` from ``content_block_delta`` and ``content_block_stop``
    (C1; decolua/9router#2218): each belongs to the one open block."""

    name = "anthropic-no-index"
    title = "an Anthropic-wire gateway without block indices on deltas"
    quirks = ("anthropic-messages/C1",)

    def events(self, answer: Answer) -> list[NamedEvent]:
        return [
            (name, {k: v for k, v in payload.items() if k != "index"})
            if name in ("content_block_delta", "content_block_stop")
            else (name, payload)
            for name, payload in super().events(answer)
        ]


class DoubledInput(AnthropicRoute):
    """A gateway that streams each input, ``{}`` in the block's start and its fragments, then
    sends the whole input once more as a last ``partial_json``: the streamed input is doubled,
    ``{…}{…}`` (A1: not JSON at content_block_stop; the Anthropic form of codex-lb#284)."""

    name = "anthropic-doubled-input"
    title = "an Anthropic-wire gateway that repeats the whole input as a last delta"
    quirks = ("anthropic-messages/A1",)

    def block(self, call: Call, index: int) -> list[NamedEvent]:
        out = super().block(call, index)
        whole = _delta(index, {"type": "input_json_delta", "partial_json": call.arguments})
        return [*out[:-1], whole, out[-1]]


class OneShotCut(AnthropicRoute):
    """vLLM's ``/v1/messages``: each input in one ``partial_json``, its leading ``{"``
    dropped (A1; vllm-project/vllm#34887)."""

    name = "anthropic-vllm"
    title = "vLLM's /v1/messages: input in one shot, its leading {\" lost"
    quirks = ("anthropic-messages/A1",)

    def block(self, call: Call, index: int) -> list[NamedEvent]:
        start, *_, stop = super().block(call, index)
        text = call.arguments[2:] if call.arguments.startswith('{"') else call.arguments
        if text == "{}":
            return [start, stop]
        return [start, _delta(index, {"type": "input_json_delta", "partial_json": text}), stop]


class EchoesKey(AnthropicRoute):
    """A hostile Anthropic-wire gateway that echoes the ``x-api-key`` it was sent: raw and cut
    in two by a network read, split across two text deltas, ``\\u``-escaped inside a
    ``partial_json``, in base64, in an ``error`` event and in response headers. Without a
    credential it answers as Anthropic does."""

    name = "anthropic-echoes-key"
    title = "a hostile Anthropic-wire gateway that echoes the key back"

    def reply(
        self,
        request: Mapping[str, Any],
        delay: float = 0.0,
        *,
        credentials: Sequence[str] = (),
    ) -> Reply:
        if not credentials:
            return super().reply(request, delay)
        key = max(credentials, key=len)
        answer = think(self.chat_request(request))
        echoed = (("x-echo", key), ("x-api-key", key))
        if request.get("stream") is not True:
            completion = self.completion(answer)
            completion["content"].insert(0, {"type": "text", "text": f"your key is {key}"})
            return Reply((), completion=completion, headers=echoed)
        cut = 1 + len(key) // 2
        escaped = "".join(u_escaped(c) for c in key)
        encoded = base64.b64encode(f"user:{key}".encode()).decode()
        start, ping = (named_event(name, payload) for name, payload in self.events(answer)[:2])
        text = _block_start(0, {"type": "text", "text": ""})
        opened = named_event(*_delta(0, {"type": "text_delta", "text": f"your key is {key}"}))
        found = opened.find(key.encode())  # -1: a key JSON had to escape
        at = found + cut if found >= 0 else len(opened) // 2
        call = Call(f"call_{encoded[:8]}", "echo", "")
        chunks = [
            start,
            ping,
            named_event(*text),
            opened[:at],
            opened[at:],
            named_event(*_delta(0, {"type": "text_delta", "text": f" {key[:cut]}"})),
            named_event(*_delta(0, {"type": "text_delta", "text": f"{key[cut:]} {encoded}"})),
            named_event(*_block_stop(0)),
            *(named_event(*event) for event in self.block(call, 1)[:1]),
            *(
                named_event(*_delta(1, {"type": "input_json_delta", "partial_json": piece}))
                for piece in ('{"echo": "', escaped, '"}')
            ),
            named_event(*_block_stop(1)),
            named_event(
                "error",
                {"type": "error", "error": {"type": "authentication_error", "message": key}},
            ),
        ]
        return Reply(tuple(chunks), pauses(len(chunks), delay), headers=echoed)


ANTHROPIC_ROUTES: dict[str, type[AnthropicRoute]] = {
    route.name: route
    for route in (
        AnthropicRoute,
        Overloaded,
        NoMessageStop,
        NoIndex,
        DoubledInput,
        OneShotCut,
        EchoesKey,
    )
}
"""Every emulated Anthropic-wire route by name."""


def _envelope(answer: Answer) -> dict[str, Any]:
    return {
        "id": "msg_" + answer.id.removeprefix("chatcmpl-"),
        "type": "message",
        "role": "assistant",
        "model": answer.model,
    }


def _tool_use_id(call: Call) -> str:
    return "toolu_" + call.id.removeprefix("call_")


def _stop_reason(answer: Answer) -> str:
    if answer.finish == "length":
        return "max_tokens"
    return "tool_use" if answer.calls else "end_turn"


def _block_start(index: int, block: Mapping[str, Any]) -> NamedEvent:
    return "content_block_start", {
        "type": "content_block_start",
        "index": index,
        "content_block": dict(block),
    }


def _delta(index: int, delta: Mapping[str, Any]) -> NamedEvent:
    return "content_block_delta", {
        "type": "content_block_delta",
        "index": index,
        "delta": dict(delta),
    }


def _block_stop(index: int) -> NamedEvent:
    return "content_block_stop", {"type": "content_block_stop", "index": index}

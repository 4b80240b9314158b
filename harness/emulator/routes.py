"""Emulated provider routes: the fake model's answer (:mod:`.model`) rendered the way a real
kind of route renders it.

A :class:`Route` renders an :class:`~callstream.emulator.model.Answer` as a stream of SSE chunks
(one chunk per write) or as a non-streaming ``chat.completion``. :class:`Route` itself is a
well-behaved OpenAI route; each subclass bends it the way a real route does
(research/wire_formats.md §6), and names the quirks of §7 it reproduces. ``ROUTES`` lists them by
name.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from ..core.dialects.openai_chat import chat_chunk, delta_choice
from .model import Answer, Call, think
from .reply import Reply
from .wire_route import fragments, pauses, u_escaped

__all__ = ["ROUTES", "Route"]


class Route:
    """A well-behaved OpenAI route: role first, each call's header (id, type, name, ``""``) once
    then its argument fragments, one finish chunk, the usage chunk when asked for, ``[DONE]``.
    Certifies under the strict profile."""

    name = "openai"
    title = "well-behaved, as api.openai.com"
    quirks: tuple[str, ...] = ()
    """The quirk ids of research/wire_formats.md §7 the route reproduces."""
    fingerprint = "fp_callstream"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[str, int] = {}

    def reply(
        self,
        request: Mapping[str, Any],
        delay: float = 0.0,
        *,
        credentials: Sequence[str] = (),
    ) -> Reply:
        """The route's answer to ``request``: a stream of SSE chunks, ``delay`` seconds apart,
        when it asks for ``stream: true``, else a ``chat.completion``. ``credentials`` are
        those the request carried (in headers or the query), which an honest route ignores."""
        answer = think(request)
        if request.get("stream") is not True:
            return Reply((), completion=self.completion(answer))
        events = self.events(answer)
        chunks = [event if isinstance(event, bytes) else _sse(event) for event in events]
        return self.stream(answer, chunks, delay)

    # -- streaming: override these to bend the route ------------------------------------------

    def stream(self, answer: Answer, chunks: list[bytes], delay: float) -> Reply:
        """The chunks as a reply; a route that misbehaves on the connection overrides this."""
        return Reply(tuple(chunks), pauses(len(chunks), delay))

    def events(self, answer: Answer) -> list[Any]:
        """The stream's events in order: chunk payloads, ``"[DONE]"``, or raw bytes."""
        out: list[Any] = [
            self.chunk(answer, {"role": "assistant", "content": "" if answer.text else None})
        ]
        out += [self.chunk(answer, {"content": piece}) for piece in fragments(answer.text or "")]
        for index, call in enumerate(answer.calls):
            out += [
                self.chunk(answer, {"tool_calls": [delta]}) for delta in self.deltas(call, index)
            ]
        out.append(self.chunk(answer, {}, self.finish(answer)))
        if answer.include_usage:
            out.append(self.chunk(answer, None, usage=answer.usage))
        out.append("[DONE]")
        return out

    def deltas(self, call: Call, index: int) -> list[dict[str, Any]]:
        """The tool-call entries that carry one call: its header, then its fragments."""
        header = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        return [header] + [
            {"index": index, "function": {"arguments": piece}}
            for piece in fragments(call.arguments)
        ]

    def finish(self, answer: Answer) -> str:
        """The finish reason the route reports."""
        return answer.finish

    def chunk(
        self,
        answer: Answer,
        delta: dict[str, Any] | None,
        finish: str | None = None,
        *,
        usage: Mapping[str, int] | None = None,
    ) -> dict[str, Any]:
        """One ``chat.completion.chunk``: a delta of choice 0 (``None``: no choice at all, as
        in the usage chunk) with its finish reason."""
        envelope = {
            "id": answer.id,
            "object": "chat.completion.chunk",
            "created": answer.created,
            "model": answer.model,
            "system_fingerprint": self.fingerprint,
        }
        choices = [] if delta is None else [delta_choice(0, delta, finish, logprobs=True)]
        if usage is not None:
            return chat_chunk(choices, envelope=envelope, usage=dict(usage))
        if answer.include_usage:
            return chat_chunk(choices, envelope=envelope, usage=None)
        return chat_chunk(choices, envelope=envelope)

    # -- not streaming ------------------------------------------------------------------------

    def completion(self, answer: Answer) -> dict[str, Any]:
        """The non-streaming ``chat.completion``."""
        message: dict[str, Any] = {"role": "assistant", "content": answer.text, "refusal": None}
        if answer.calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": self.arguments(call)},
                }
                for call in answer.calls
            ]
        return {
            "id": answer.id,
            "object": "chat.completion",
            "created": answer.created,
            "model": answer.model,
            "system_fingerprint": self.fingerprint,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": self.finish(answer),
                }
            ],
            "usage": dict(answer.usage),
        }

    def arguments(self, call: Call) -> str:
        """The argument text as the route sends it."""
        return call.arguments

    def occurrence(self, answer: Answer) -> int:
        """How many times this route has now streamed this same answer (1 the first time)."""
        with self._lock:
            seen = self._seen[answer.id] = self._seen.get(answer.id, 0) + 1
        return seen


class Gemini(Route):
    """Gemini's OpenAI-compatible endpoint: no ``index`` on tool calls (C1), every call whole in
    one chunk that also carries the finish reason, and ``stop`` instead of ``tool_calls`` while
    streaming (C16); the non-streaming answer says ``tool_calls``."""

    name = "gemini"
    title = "Gemini's OpenAI-compatible endpoint"
    quirks = ("openai-chat/C1", "openai-chat/C16")

    def events(self, answer: Answer) -> list[Any]:
        out: list[Any] = []
        finish = "stop" if answer.finish == "tool_calls" else answer.finish
        if answer.text:
            text_finish = None if answer.calls else finish
            out.append(
                self.chunk(answer, {"role": "assistant", "content": answer.text}, text_finish)
            )
        if answer.calls:
            delta: dict[str, Any] = {} if answer.text else {"role": "assistant"}
            delta["tool_calls"] = [
                {
                    "function": {"arguments": call.arguments, "name": call.name},
                    "id": call.id,
                    "type": "function",
                }
                for call in answer.calls
            ]
            out.append(self.chunk(answer, delta, finish))
        if answer.include_usage:
            out.append(self.chunk(answer, None, usage=answer.usage))
        out.append("[DONE]")
        return out


class Ollama(Route):
    """Ollama's ``/v1/chat/completions``: every call whole, all of them in one chunk on index 0,
    told apart only by their ids (C2); arguments re-serialised as Go does (compact, keys sorted,
    ``<>&`` escaped); ``stop`` upgraded to ``tool_calls``."""

    name = "ollama"
    title = "Ollama's OpenAI-compatible endpoint"
    quirks = ("openai-chat/C2", "openai-chat/C8")
    fingerprint = "fp_ollama"

    def events(self, answer: Answer) -> list[Any]:
        out: list[Any] = [self.chunk(answer, {"role": "assistant", "content": answer.text or ""})]
        if answer.calls:
            entries = [
                {
                    "id": call.id,
                    "index": 0,
                    "type": "function",
                    "function": {"name": call.name, "arguments": self.arguments(call)},
                }
                for call in answer.calls
            ]
            out.append(self.chunk(answer, {"tool_calls": entries}))
        out.append(self.chunk(answer, {}, self.finish(answer)))
        if answer.include_usage:
            out.append(self.chunk(answer, None, usage=answer.usage))
        out.append("[DONE]")
        return out

    def finish(self, answer: Answer) -> str:
        return "tool_calls" if answer.calls and answer.finish == "stop" else answer.finish

    def arguments(self, call: Call) -> str:
        try:
            value = json.loads(call.arguments)
        except ValueError:
            return call.arguments  # cut short: nothing to re-serialise
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class LiteLLM(Route):
    """A LiteLLM proxy: ``id`` and ``type`` on every tool-call chunk (C4), then a duplicate
    "summary" chunk repeating each call's name and whole arguments (C5, C11), so an assembler
    that appends it gets the arguments twice (BerriAI/litellm#20480)."""

    name = "litellm"
    title = "a LiteLLM proxy"
    quirks = ("openai-chat/C4", "openai-chat/C5", "openai-chat/C11")

    def events(self, answer: Answer) -> list[Any]:
        out = super().events(answer)
        if answer.calls:
            summary = [
                {
                    "index": index,
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for index, call in enumerate(answer.calls)
            ]
            finish_at = next(n for n, event in enumerate(out) if _finishes(event))
            out.insert(finish_at, self.chunk(answer, {"tool_calls": summary}))
        return out

    def deltas(self, call: Call, index: int) -> list[dict[str, Any]]:
        header, *fragments = super().deltas(call, index)
        return [header] + [{"id": call.id, "type": "function", **entry} for entry in fragments]


class VLLM(Route):
    """A vLLM server with a tool parser: ``length`` reported as ``tool_calls`` (C17,
    vllm#53269) whether streaming or not, and the closing brace of the last call's arguments
    dropped while streaming (C12, vllm#32152)."""

    name = "vllm"
    title = "a vLLM server (hermes tool parser)"
    quirks = ("openai-chat/C12", "openai-chat/C17")

    def deltas(self, call: Call, index: int) -> list[dict[str, Any]]:
        out = super().deltas(call, index)
        out[0] = {**out[0], "id": f"chatcmpl-tool-{call.id.removeprefix('call_')}"}
        return out

    def events(self, answer: Answer) -> list[Any]:
        if answer.calls and answer.calls[-1].arguments.endswith("}"):
            last = answer.calls[-1]
            answer = replace(
                answer,
                calls=(*answer.calls[:-1], replace(last, arguments=last.arguments[:-1])),
            )
        return super().events(answer)

    def completion(self, answer: Answer) -> dict[str, Any]:
        out = super().completion(answer)
        for call in out["choices"][0]["message"].get("tool_calls", ()):
            call["id"] = f"chatcmpl-tool-{call['id'].removeprefix('call_')}"
        return out

    def finish(self, answer: Answer) -> str:
        return "tool_calls" if answer.calls and answer.finish == "length" else answer.finish


class OpenRouter(Route):
    """OpenRouter: ``: OPENROUTER PROCESSING`` comment blocks (T4), the usage in one more chunk
    *after* the finish, with a choice and no finish reason (C20, C23), and, every other time
    the same long answer is streamed, a mid-stream error chunk that ends it (C26)."""

    name = "openrouter"
    title = "OpenRouter"
    quirks = ("openai-chat/T4", "openai-chat/C20", "openai-chat/C23", "openai-chat/C26")
    _COMMENT = b": OPENROUTER PROCESSING\n\n"
    _LONG = 1000
    """Answers with more argument text than this fail every other time."""

    def events(self, answer: Answer) -> list[Any]:
        out = super().events(answer)
        if answer.include_usage:
            out = [event for event in out if not _usage_only(event)]
        after = self.chunk(answer, {"role": "assistant", "content": ""})
        after["choices"][0]["native_finish_reason"] = None
        after["usage"] = dict(answer.usage)
        out.insert(len(out) - 1, after)
        if sum(len(call.arguments) for call in answer.calls) > self._LONG:
            if self.occurrence(answer) % 2 == 1:
                out = out[: len(out) // 2]
                out.append(self._error(answer))
        commented: list[Any] = [self._COMMENT] * 3
        for n, event in enumerate(out, 1):
            commented.append(event)
            if n % 40 == 0:
                commented.append(self._COMMENT)
        return commented

    def _error(self, answer: Answer) -> dict[str, Any]:
        payload = self.chunk(answer, {"content": ""}, "error")
        payload["provider"] = "openai"
        payload["error"] = {"code": 502, "message": "Provider disconnected"}
        return payload


class Azure(Route):
    """Azure OpenAI: a first chunk with empty ``choices``, blank ``id``, ``object`` and
    ``model`` and ``created: 0``, carrying ``prompt_filter_results`` (C21); the rest as OpenAI."""

    name = "azure"
    title = "Azure OpenAI"
    quirks = ("openai-chat/C21",)

    def events(self, answer: Answer) -> list[Any]:
        filtered = {"filtered": False, "severity": "safe"}
        first = {
            "choices": [],
            "created": 0,
            "id": "",
            "model": "",
            "object": "",
            "prompt_filter_results": [
                {
                    "prompt_index": 0,
                    "content_filter_results": dict.fromkeys(
                        ("hate", "self_harm", "sexual", "violence"), filtered
                    ),
                }
            ],
        }
        return [first, *super().events(answer)]


class NeverFinishes(Route):
    """A route that stalls: it streams the first half of the answer, then only ``: keep-alive``
    comments (T4), and never finishes. Non-streaming requests are answered normally."""

    name = "never-finishes"
    title = "a stalled stream: keep-alive comments forever"
    quirks = ("openai-chat/T4",)
    heartbeat = 0.2
    """Seconds between keep-alive comments."""

    def stream(self, answer: Answer, chunks: list[bytes], delay: float) -> Reply:
        half = chunks[: max(2, len(chunks) // 2)]
        return Reply(
            tuple(half), pauses(len(half), delay), linger=24 * 3600.0, heartbeat=self.heartbeat
        )


class EchoesKey(Route):
    """A hostile gateway that echoes the credential it was sent (the bearer token, a key-like
    header or query parameter) back in every form it can take: raw and cut in two by a network
    read, JSON-escaped whole and in part, URL-encoded, in base64 at each alignment, split across
    two content deltas and across argument fragments (escaped once more inside the arguments),
    in an in-band error, and in response headers. Which characters are escaped and where the
    cuts fall depend on the key, so different keys try different variants. Without a
    credential it answers as OpenAI does."""

    name = "echoes-key"
    title = "a hostile gateway that echoes the key back"

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
        answer = think(request)
        echoed = (("x-echo", key), ("x-api-key", key))
        if request.get("stream") is not True:
            completion = self.completion(answer)
            message = completion["choices"][0]["message"]
            message["content"] = f"your key is {key}"
            for call in message.get("tool_calls", ()):
                call["function"]["arguments"] = json.dumps({"echo": key})
            return Reply((), completion=completion, headers=echoed)
        chunks = self._echo(answer, key)
        return Reply(tuple(chunks), pauses(len(chunks), delay), headers=echoed)

    def _echo(self, answer: Answer, key: str) -> list[bytes]:
        bits = int.from_bytes(hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest())
        cut = 1 + bits % (len(key) - 1)
        partly = "".join(u_escaped(c) if bits >> (n % 200) & 1 else c for n, c in enumerate(key))
        encoded = base64.b64encode(f"user:{key}".encode()).decode()

        def content(text: str, raw: str | None = None) -> bytes:
            event = _sse(self.chunk(answer, {"content": text}))
            return event if raw is None else event.replace(text.encode(), raw.encode())

        role = _sse(self.chunk(answer, {"role": "assistant", "content": f"your key is {key}"}))
        at = role.index(key.encode()) + cut
        chunks = [
            role[:at],
            role[at:],
            content("#1", "".join(u_escaped(c) for c in key)),
            content("#2", partly),
            content(f" ?api-key={quote(key, safe='')} ?key={quote(key[:cut])}{key[cut:]}"),
            content(f" Basic {encoded} {base64.urlsafe_b64encode(key.encode()).decode()}"),
            content(f" {key[:cut]}"),
            content(key[cut:]),
        ]
        call = answer.calls[0] if answer.calls else Call("call_echo", "echo", "")
        arguments = json.dumps({"echo": "#3"}).replace("#3", partly)
        header, *_ = self.deltas(call, 0)
        chunks.append(_sse(self.chunk(answer, {"tool_calls": [header]})))
        for piece in (arguments[: 10 + cut], arguments[10 + cut :]):
            fragment = {"index": 0, "function": {"arguments": piece}}
            chunks.append(_sse(self.chunk(answer, {"tool_calls": [fragment]})))
        chunks.append(_sse(self.chunk(answer, {}, "tool_calls")))
        chunks.append(_sse({"error": {"message": f"Incorrect API key provided: {key}"}}))
        chunks.append(_sse("[DONE]"))
        return chunks


ROUTES: dict[str, type[Route]] = {
    route.name: route
    for route in (
        Route,
        Gemini,
        Ollama,
        LiteLLM,
        VLLM,
        OpenRouter,
        Azure,
        NeverFinishes,
        EchoesKey,
    )
}
"""Every emulated route by name."""


# -- the fake model's pieces --------------------------------------------------------------------


def _sse(event: Any) -> bytes:
    data = (
        event
        if isinstance(event, str)
        else json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    )
    return f"data: {data}\n\n".encode("utf-8", "surrogatepass")


def _finishes(event: Any) -> bool:
    return isinstance(event, dict) and any(
        choice.get("finish_reason") for choice in event.get("choices") or ()
    )


def _usage_only(event: Any) -> bool:
    return isinstance(event, dict) and not event.get("choices") and bool(event.get("usage"))

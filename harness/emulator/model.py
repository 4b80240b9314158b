"""The emulator's fake model: it answers any chat-completions request plausibly and
deterministically, for the emulated routes to render (:mod:`.routes`).

Theory of operation. :func:`think` reads the request's structured fields (the tools offered and
their JSON Schemas, ``tool_choice``, ``parallel_tool_calls``, ``max_tokens`` or
``max_completion_tokens``) and one cue in the prompt: a last user message that says "first"
gets a sentence of text before the calls. The same request always gets the same answer:

- which tools: the named one for a named ``tool_choice``; every tool offered (up to three) when
  ``parallel_tool_calls`` is true; else the first; none for ``tool_choice: "none"``;
- the arguments: built from each tool's schema, a property taking its first ``examples`` entry,
  else its ``default``, its first ``enum`` value, or a plain value of its type;
- the length: four characters make a token, and an answer longer than the token limit is cut
  there, in the middle of the arguments, and finishes ``length``.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import RequestError

__all__ = ["Answer", "Call", "think"]

_CHARS_PER_TOKEN = 4
_PARALLEL_MAX = 3
"""Argument and text fragments cycle through these sizes, like tokens of a real model."""


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call of an answer."""

    id: str
    name: str
    arguments: str
    """The exact argument text (cut short when the answer ran out of tokens)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What the fake model says to one request."""

    id: str
    """The completion id, ``chatcmpl-…``: a digest of the request."""
    model: str
    created: int
    text: str | None
    calls: tuple[Call, ...]
    finish: str
    """``tool_calls``, ``stop`` (text only, or a named ``tool_choice``, as OpenAI does) or
    ``length``."""
    usage: Mapping[str, int]
    include_usage: bool
    """The request asked for ``stream_options.include_usage``."""
    named: bool
    """``tool_choice`` named a function."""


def think(request: Mapping[str, Any]) -> Answer:
    """The fake model's answer to a chat-completions request (see the module docstring).
    Raises RequestError for a request a real route would refuse with a 400."""
    tools = _offered(request.get("tools"))
    choice = request.get("tool_choice", "auto")
    named = isinstance(choice, dict)
    if named:
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        chosen = [tool for tool in tools if tool[0] == name]
        if not chosen:
            raise RequestError(f"tool_choice names {name!r}, which is not a tool", "tool_choice")
    elif choice not in ("auto", "required", "none"):
        raise RequestError(f"tool_choice {choice!r} is not auto, required, none or a function")
    elif choice == "none" or not tools:
        chosen = []
    elif request.get("parallel_tool_calls") is True:
        chosen = tools[:_PARALLEL_MAX]
    else:
        chosen = tools[:1]
    key = _digest(request)
    messages = request.get("messages")
    text = None
    if not chosen:
        text = "Hello! There is nothing for me to call here."
    elif _asked_to_speak_first(messages):
        text = "Let me look that up for you."
    arguments = [json.dumps(_example(schema, name), ensure_ascii=False) for name, schema in chosen]
    budget = _token_limit(request)
    finish = "stop" if named or not chosen else "tool_calls"
    if budget is not None:
        text, arguments, cut = _cut(text, arguments, budget * _CHARS_PER_TOKEN)
        if cut:
            finish = "length"
    calls = tuple(
        Call(f"call_{_digest(key, n)[:24]}", name, args)
        for n, ((name, _), args) in enumerate(zip(chosen, arguments, strict=False))
    )
    written = len(text or "") + sum(len(call.arguments) for call in calls)
    prompt = len(json.dumps([messages, request.get("tools")], ensure_ascii=False))
    usage = {
        "prompt_tokens": math.ceil(prompt / _CHARS_PER_TOKEN),
        "completion_tokens": max(1, math.ceil(written / _CHARS_PER_TOKEN)),
    }
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    options = request.get("stream_options")
    return Answer(
        id=f"chatcmpl-{key[:24]}",
        model=str(request.get("model", "")),
        created=int(time.time()),
        text=text,
        calls=calls,
        finish=finish,
        usage=usage,
        include_usage=isinstance(options, dict) and options.get("include_usage") is True,
        named=named,
    )


# -- the fake model's pieces --------------------------------------------------------------------


def _offered(raw: Any) -> list[tuple[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RequestError("tools must be a list", "tools")
    tools = []
    for n, entry in enumerate(raw):
        function = entry.get("function") if isinstance(entry, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise RequestError(f"tools[{n}] has no function name", "tools")
        tools.append((function["name"], function.get("parameters")))
    return tools


def _asked_to_speak_first(messages: Any) -> bool:
    if not isinstance(messages, list):
        return False
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    return isinstance(content, str) and "first" in content.lower()


def _token_limit(request: Mapping[str, Any]) -> int | None:
    for field in ("max_completion_tokens", "max_tokens"):
        value = request.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _cut(text: str | None, arguments: list[str], budget: int) -> tuple[str | None, list[str], bool]:
    """Text and arguments within ``budget`` characters; calls past the cut are dropped."""
    if text is not None:
        if len(text) >= budget:
            return text[:budget], [], True
        budget -= len(text)
    kept: list[str] = []
    for args in arguments:
        if len(args) > budget:
            return text, [*kept, args[:budget]], True
        kept.append(args)
        budget -= len(args)
    return text, kept, False


def _example(schema: Any, name: str) -> Any:
    """A value for ``schema``, deterministic: its first example, default or enum value, else a
    plain value of its type (an object gets every property)."""
    if not isinstance(schema, dict):
        return {}
    for key in ("examples", "enum"):
        values = schema.get(key)
        if isinstance(values, list) and values:
            return values[0]
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return _example(options[0], name)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            return {}
        return {key: _example(sub, key) for key, sub in properties.items()}
    if kind == "array":
        return [_example(schema.get("items"), name)]
    if kind == "string":
        return f"{name} value"
    if kind == "integer":
        return int(schema.get("minimum", 3))
    if kind == "number":
        return float(schema.get("minimum", 1.5))
    if kind == "boolean":
        return True
    return None


def _digest(*parts: Any) -> str:
    data = json.dumps(
        [
            {k: v for k, v in part.items() if k not in ("stream", "stream_options")}
            if isinstance(part, Mapping)
            else part
            for part in parts
        ],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()

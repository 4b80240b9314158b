"""Emulated Responses-wire routes, served on ``POST /v1/responses``: the fake model's answer as
OpenAI's Responses API streams it (research/wire_formats.md §3), and as backends and proxies
implementing that wire bend it (§7 R1–R7).

The request is read in the Responses shape: ``input``, flat function ``tools``
(``{type, name, parameters}``), ``tool_choice`` (``auto``, ``required``, ``none`` or
``{type: function, name}``), ``parallel_tool_calls``, ``max_output_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .model import Answer, Call
from .wire_route import NamedEvent, WireRoute, fragments, named_event, offered

__all__ = ["RESPONSES_ROUTES", "ResponsesRoute"]


class ResponsesRoute(WireRoute):
    """OpenAI's Responses API: ``response.created`` and ``.in_progress``; a message item for
    the text; per call ``output_item.added`` (arguments ``""``), the argument deltas,
    ``function_call_arguments.done`` and ``output_item.done``; ``response.completed`` with the
    whole output and the usage (``response.incomplete`` when ``max_output_tokens`` cut it);
    ``sequence_number`` from 0, one by one. Certifies under the strict profile."""

    name = "openai-responses"
    title = "well-behaved, as api.openai.com/v1/responses"
    dialect = "openai-responses"

    def chat_request(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The Responses fields as the fake model reads them."""
        choice = request.get("tool_choice", "auto")
        if isinstance(choice, dict) and choice.get("type") == "function":
            choice = {"type": "function", "function": {"name": choice.get("name")}}
        messages = request.get("input")
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        return {
            "model": request.get("model"),
            "messages": messages,
            "tools": offered(request.get("tools"), "parameters"),
            "tool_choice": choice,
            "parallel_tool_calls": request.get("parallel_tool_calls"),
            "max_tokens": request.get("max_output_tokens"),
        }

    def chunks(self, answer: Answer) -> list[bytes]:
        """Each event numbered by ``sequence_number``, from 0."""
        return [
            named_event(name, {**payload, "sequence_number": number})
            for number, (name, payload) in enumerate(self.events(answer))
        ]

    # -- streaming ----------------------------------------------------------------------------

    def events(self, answer: Answer) -> list[NamedEvent]:
        response = {**self.response(answer, "in_progress"), "output": [], "usage": None}
        out: list[NamedEvent] = [
            _event("response.created", response=response),
            _event("response.in_progress", response=response),
        ]
        index = 0
        if answer.text:
            out += _message(answer.text, "msg_" + answer.id.removeprefix("chatcmpl-"))
            index += 1
        for number, call in enumerate(answer.calls, index):
            out += self.call_events(answer, call, number)
        out.append(self.terminal(answer))
        return out

    def call_events(self, answer: Answer, call: Call, index: int) -> list[NamedEvent]:
        """One call's events: added, the deltas, ``.done``, ``output_item.done``."""
        item = _item(call, "in_progress", "")
        where = {"item_id": item["id"], "output_index": index}
        done = "incomplete" if self.cut(answer, call) else "completed"
        return [
            _event("response.output_item.added", output_index=index, item=item),
            *(
                _event("response.function_call_arguments.delta", **where, delta=piece)
                for piece in fragments(call.arguments)
            ),
            _event("response.function_call_arguments.done", **where, arguments=call.arguments),
            _event(
                "response.output_item.done",
                output_index=index,
                item=_item(call, done, call.arguments),
            ),
        ]

    def terminal(self, answer: Answer) -> NamedEvent:
        """``response.completed``, or ``response.incomplete`` when the tokens ran out."""
        if answer.finish == "length":
            response = {
                **self.response(answer, "incomplete"),
                "incomplete_details": {"reason": "max_output_tokens"},
            }
            return _event("response.incomplete", response=response)
        return _event("response.completed", response=self.response(answer, "completed"))

    def cut(self, answer: Answer, call: Call) -> bool:
        """The call the token limit cut: the last one of an answer that finished ``length``."""
        return answer.finish == "length" and call is answer.calls[-1]

    def response(self, answer: Answer, status: str) -> dict[str, Any]:
        """The response object: its output and usage as they stand at the end."""
        output = []
        if answer.text:
            output.append(_message_item(answer.text, "msg_" + answer.id.removeprefix("chatcmpl-")))
        for call in answer.calls:
            status_of = "incomplete" if self.cut(answer, call) else "completed"
            output.append(_item(call, status_of, call.arguments))
        return {
            "id": "resp_" + answer.id.removeprefix("chatcmpl-"),
            "object": "response",
            "created_at": answer.created,
            "status": status,
            "model": answer.model,
            "output": output,
            "usage": {
                "input_tokens": answer.usage["prompt_tokens"],
                "output_tokens": answer.usage["completion_tokens"],
                "total_tokens": answer.usage["total_tokens"],
            },
        }

    # -- not streaming ------------------------------------------------------------------------

    def completion(self, answer: Answer) -> dict[str, Any]:
        """The ``response`` object, as ``response.completed`` (or ``.incomplete``) carries
        it."""
        return self.terminal(answer)[1]["response"]  # type: ignore[no-any-return]


class Reordered(ResponsesRoute):
    """A proxy that forwards events out of order: the second and third argument deltas of each
    call swap places, their ``sequence_number`` with them (R4)."""

    name = "responses-reordered"
    title = "a Responses proxy that reorders events"
    quirks = ("openai-responses/R4",)

    def chunks(self, answer: Answer) -> list[bytes]:
        numbered = [
            (name, {**payload, "sequence_number": number})
            for number, (name, payload) in enumerate(self.events(answer))
        ]
        for at in [n for n, (_, p) in enumerate(numbered) if p["type"].endswith("item.added")]:
            if numbered[at + 2][0].endswith(".delta") and numbered[at + 3][0].endswith(".delta"):
                numbered[at + 2], numbered[at + 3] = numbered[at + 3], numbered[at + 2]
        return [named_event(name, payload) for name, payload in numbered]


class NoTerminal(ResponsesRoute):
    """A backend that ends the stream after the last output item: no ``response.completed``
    or any other terminal event (R5; research/wire_formats.md §7: "EOF without a terminal")."""

    name = "responses-no-terminal"
    title = "a Responses backend that never sends response.completed"
    quirks = ("openai-responses/R5",)

    def events(self, answer: Answer) -> list[NamedEvent]:
        return super().events(answer)[:-1]


class EmptyOutput(ResponsesRoute):
    """A gateway whose ``response.completed`` carries neither the output nor the usage
    (decolua/9router#705)."""

    name = "responses-empty-output"
    title = "a Responses gateway whose final event has no output and no usage"

    def terminal(self, answer: Answer) -> NamedEvent:
        name, payload = super().terminal(answer)
        response = {**payload["response"], "output": []}
        response.pop("usage")
        return name, {**payload, "response": response}

    def completion(self, answer: Answer) -> dict[str, Any]:
        return ResponsesRoute.terminal(self, answer)[1]["response"]  # type: ignore[no-any-return]


class ArgumentsInAdded(ResponsesRoute):
    """A backend whose ``output_item.added`` already carries the whole arguments, and the
    deltas follow all the same (R2; icoretech/codex-pooler#193)."""

    name = "responses-args-in-added"
    title = "a Responses backend that sends the arguments in output_item.added too"
    quirks = ("openai-responses/R2",)

    def call_events(self, answer: Answer, call: Call, index: int) -> list[NamedEvent]:
        added, *rest = super().call_events(answer, call, index)
        item = {**added[1]["item"], "arguments": call.arguments}
        return [("response.output_item.added", {**added[1], "item": item}), *rest]


class NoDone(ResponsesRoute):
    """A backend that streams each call's deltas and nothing more: no
    ``function_call_arguments.done``, no ``output_item.done``; only ``response.completed``
    says the calls are whole (a client that runs a call at its ``output_item.done``, the
    per-call boundary, never runs it)."""

    name = "responses-no-done"
    title = "a Responses backend that omits the .done events"

    def call_events(self, answer: Answer, call: Call, index: int) -> list[NamedEvent]:
        return [
            (name, payload)
            for name, payload in super().call_events(answer, call, index)
            if not name.endswith(".done")
        ]


RESPONSES_ROUTES: dict[str, type[ResponsesRoute]] = {
    route.name: route
    for route in (ResponsesRoute, Reordered, NoTerminal, EmptyOutput, ArgumentsInAdded, NoDone)
}
"""Every emulated Responses-wire route by name."""


def _event(kind: str, **fields: Any) -> NamedEvent:
    return kind, {"type": kind, **fields}


def _item(call: Call, status: str, arguments: str) -> dict[str, Any]:
    return {
        "id": "fc_" + call.id.removeprefix("call_"),
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": call.id,
        "name": call.name,
    }


def _message_item(text: str, item_id: str) -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": []}
    return {
        "id": item_id,
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [part],
    }


def _message(text: str, item_id: str) -> list[NamedEvent]:
    """A message item's events: added, its text part, the text deltas, the dones."""
    where = {"item_id": item_id, "output_index": 0, "content_index": 0}
    empty = {"type": "output_text", "text": "", "annotations": []}
    added = {**_message_item(text, item_id), "status": "in_progress", "content": []}
    whole = _message_item(text, item_id)
    return [
        _event("response.output_item.added", output_index=0, item=added),
        _event("response.content_part.added", **where, part=empty),
        *(_event("response.output_text.delta", **where, delta=t) for t in fragments(text)),
        _event("response.output_text.done", **where, text=text),
        _event("response.content_part.done", **where, part=whole["content"][0]),
        _event("response.output_item.done", output_index=0, item=whole),
    ]

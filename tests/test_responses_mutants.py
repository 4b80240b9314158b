"""The ``responses_*`` mutants (``tests/mutants``): the Responses base assembler agrees with the
reference, and each mutant shows its bug on a stream where the base is right."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from callstream.reference import Assembler, Tool
from tests.mutants import MUTANTS
from tests.mutants._responses_base import ResponsesAssembler

TestFunction = TypeVar("TestFunction", bound=Callable[..., None])
WEATHER = Tool(
    "get_weather",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
PARIS, OSLO = '{"city": "Paris"}', '{"city": "Oslo"}'

EXHIBITED: set[str] = set()
"""The Responses mutants a test below shows at work, filled in at import."""


def exhibits(mutant: str) -> Callable[[TestFunction], TestFunction]:
    """Mark a test as showing ``mutant``'s bug."""

    def mark(test: TestFunction) -> TestFunction:
        EXHIBITED.add(mutant)
        return test

    return mark


def sse(*events: Any) -> bytes:
    """Events as SSE, each under its type, numbered from 0."""
    out = []
    for number, event in enumerate(events):
        if isinstance(event, str):
            out.append(f"data: {event}\n\n")
            continue
        payload = {"type": event["type"], "sequence_number": number, **event}
        out.append(f"event: {event['type']}\ndata: {json.dumps(payload)}\n\n")
    return "".join(out).encode()


def added(n: int, index: int | None = None, arguments: str = "") -> dict[str, Any]:
    item = {
        "id": f"fc_{n}",
        "type": "function_call",
        "status": "in_progress",
        "call_id": f"call_{n}",
        "name": "get_weather",
        "arguments": arguments,
    }
    return {
        "type": "response.output_item.added",
        "output_index": n if index is None else index,
        "item": item,
    }


def delta(n: int, text: str, index: int | None = None) -> dict[str, Any]:
    return {
        "type": "response.function_call_arguments.delta",
        "item_id": f"fc_{n}",
        "output_index": n if index is None else index,
        "delta": text,
    }


def done(n: int, text: str, index: int | None = None) -> dict[str, Any]:
    return {
        "type": "response.function_call_arguments.done",
        "item_id": f"fc_{n}",
        "output_index": n if index is None else index,
        "arguments": text,
    }


def item_done(n: int, text: str, index: int | None = None) -> dict[str, Any]:
    item = {
        "id": f"fc_{n}",
        "type": "function_call",
        "status": "completed",
        "call_id": f"call_{n}",
        "name": "get_weather",
        "arguments": text,
    }
    return {
        "type": "response.output_item.done",
        "output_index": n if index is None else index,
        "item": item,
    }


def terminal(kind: str = "response.completed", **response: Any) -> dict[str, Any]:
    return {"type": kind, "response": {"id": "resp_1", **response}}


CREATED = {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}


def call(n: int, text: str) -> list[dict[str, Any]]:
    return [added(n), delta(n, text[:5]), delta(n, text[5:]), done(n, text), item_done(n, text)]


def outcome(factory: Callable[..., Any], data: bytes) -> list[tuple[Any, ...]]:
    """What ``factory`` makes of ``data`` fed one byte at a time: status, reason, id, text."""
    assembler = factory(tools=[WEATHER], limits=None)
    results = [r for k in range(len(data)) for r in assembler.feed(data[k : k + 1])]
    results += assembler.close()
    return [(r["status"], r["reason"], r["id"], r["arguments_text"]) for r in results]


def reference(data: bytes) -> list[tuple[Any, ...]]:
    assembler = Assembler([WEATHER], dialect="openai-responses")
    results = assembler.feed(data) + assembler.close()
    return [(r.status.value, r.reason and r.reason.value, r.id, r.arguments_text) for r in results]


def bug_shows(mutant: str, data: bytes) -> list[tuple[Any, ...]]:
    """The base agrees with the reference on ``data``, the mutant does not; its results."""
    correct = reference(data)
    assert outcome(ResponsesAssembler, data) == correct
    wrong = outcome(MUTANTS[mutant].factory, data)
    assert wrong != correct
    return wrong


ORDINARY = {
    "two-sequential": sse(CREATED, *call(0, PARIS), *call(1, OSLO), terminal()),
    "incomplete": sse(
        CREATED,
        *call(0, PARIS),
        added(1),
        delta(1, '{"ci'),
        terminal("response.incomplete", incomplete_details={"reason": "max_output_tokens"}),
    ),
    "error": sse(CREATED, added(0), delta(0, "{"), {"type": "error", "message": "boom"}),
    "eof": sse(CREATED, *call(0, PARIS), added(1), delta(1, OSLO)),
}


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_the_responses_base_agrees_with_the_reference(name: str) -> None:
    """On ordinary Responses streams, fed a byte at a time, the base is the reference."""
    assert outcome(ResponsesAssembler, ORDINARY[name]) == reference(ORDINARY[name])


PARALLEL = sse(
    CREATED,
    added(0),
    added(1),
    delta(0, '{"city": '),
    delta(1, '{"city": '),
    delta(0, '"Paris"}'),
    delta(1, '"Oslo"}'),
    item_done(0, PARIS),
    item_done(1, OSLO),
    terminal(),
)


@exhibits("responses_routes_to_current_item")
def test_interleaved_calls_all_go_to_the_last_one() -> None:
    wrong = bug_shows("responses_routes_to_current_item", PARALLEL)
    assert wrong == [("ready", None, "call_1", PARIS), ("rejected", "malformed_json", "call_0", "")]


@exhibits("responses_routes_by_output_index")
def test_calls_sharing_an_output_index_are_merged() -> None:
    data = sse(CREATED, added(0, 0), added(1, 0), delta(0, PARIS, 0), delta(1, OSLO, 0), terminal())
    wrong = bug_shows("responses_routes_by_output_index", data)
    assert wrong[1][3] == PARIS + OSLO


@exhibits("responses_appends_done")
def test_the_done_text_is_appended() -> None:
    wrong = bug_shows("responses_appends_done", sse(CREATED, *call(0, PARIS), terminal()))
    assert wrong == [("rejected", "malformed_json", "call_0", PARIS * 3)]


@exhibits("responses_keeps_added_arguments")
def test_arguments_in_the_added_item_are_doubled() -> None:
    data = sse(CREATED, added(0, arguments=PARIS), delta(0, PARIS), terminal())
    wrong = bug_shows("responses_keeps_added_arguments", data)
    assert wrong == [("rejected", "malformed_json", "call_0", PARIS * 2)]


@exhibits("responses_ignores_done")
def test_arguments_sent_only_in_done_are_lost() -> None:
    data = sse(CREATED, added(0), done(0, PARIS), item_done(0, PARIS), terminal())
    wrong = bug_shows("responses_ignores_done", data)
    assert wrong == [("rejected", "malformed_json", "call_0", "")]


@exhibits("responses_incomplete_as_completed")
def test_a_call_cut_off_by_max_output_tokens_runs() -> None:
    data = sse(
        CREATED,
        added(0),
        delta(0, PARIS),
        terminal("response.incomplete", incomplete_details={"reason": "max_output_tokens"}),
    )
    assert bug_shows("responses_incomplete_as_completed", data)[0][0] == "ready"


@exhibits("responses_loses_calls_without_completed")
def test_finished_calls_are_lost_when_response_completed_never_comes() -> None:
    data = sse(CREATED, *call(0, PARIS))
    wrong = bug_shows("responses_loses_calls_without_completed", data)
    assert wrong == [("rejected", "interrupted", "call_0", PARIS)]


@exhibits("responses_trusts_final_output")
def test_an_empty_final_output_drops_the_streamed_calls() -> None:
    data = sse(CREATED, *call(0, PARIS), terminal(status="completed", output=[]))
    assert bug_shows("responses_trusts_final_output", data) == []


@exhibits("responses_releases_at_added")
def test_a_call_is_released_before_its_arguments() -> None:
    wrong = bug_shows("responses_releases_at_added", sse(CREATED, *call(0, PARIS), terminal()))
    assert wrong == [("rejected", "malformed_json", "call_0", "")]


@exhibits("responses_uses_item_id_as_call_id")
def test_the_item_id_is_returned_as_the_call_id() -> None:
    wrong = bug_shows(
        "responses_uses_item_id_as_call_id", sse(CREATED, *call(0, PARIS), terminal())
    )
    assert wrong[0][2] == "fc_0"

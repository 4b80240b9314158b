"""After assembly (E1–E4): answering the model and running each call once, in a fixed order."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from callstream.reference import (
    Assembler,
    CallResult,
    ExecutionLedger,
    Reason,
    Status,
    Tool,
    assistant_message,
    idempotency_key,
    rejection_message,
    release_order,
    tool_message,
)
from tests.helpers import (
    args,
    assemble,
    assemble_every_way,
    chunk,
    header,
    simple_call,
    sse,
)

WEATHER_TEXT = '{ "city" :  "Paris" }'
"""Argument text with unusual spacing: the assistant message must carry it byte for byte."""


def parallel_calls() -> bytes:
    """Two calls whose last fragments arrive index 1 first, then index 0."""
    return sse(
        chunk(header(0, "call_w", "get_weather"), role="assistant"),
        chunk(header(1, "call_s", "get_stock_price")),
        chunk(args(0, WEATHER_TEXT[:8])),
        chunk(args(1, '{"ticker": "ACME"}')),
        chunk(args(0, WEATHER_TEXT[8:])),
        chunk(finish="tool_calls"),
    )


def choice_1_finishing_first() -> bytes:
    """Two choices (two calls in choice 0, one in choice 1) where choice 1 finishes first."""
    return sse(
        chunk(header(0, "call_b", "get_weather", '{"city": "Tokyo"}'), choice=1),
        chunk(header(0, "call_a", "get_weather", '{"city": "Paris"}'), choice=0),
        chunk(header(1, "call_c", "get_weather", '{"city": "Rome"}'), choice=0),
        chunk(choice=1, finish="tool_calls"),
        chunk(choice=0, finish="tool_calls"),
    )


def anonymous_call(arguments: str, response: str = "chatcmpl-test") -> bytes:
    """One call sent without an id, so the lenient profile synthesises one, in the response
    with id ``response``."""
    return sse(
        chunk({"index": 0, "type": "function", "function": {"name": "get_weather"}}, id=response),
        chunk(args(0, arguments), id=response),
        chunk(finish="tool_calls", id=response),
    )


def assembled(data: bytes, **options: Any) -> list[CallResult]:
    """The results of ``data`` fed whole."""
    return assemble([data], **options)[0]


# --- E1 three stages --------------------------------------------------------------------------


def test_assembly_returns_candidates_as_plain_data() -> None:
    """E1: the assembler hands back a value in the contract shape for the caller to run; it
    runs nothing itself."""
    (call,) = assembled(sse(*simple_call()))
    assert call.to_dict() == {
        "choice": 0,
        "index": 0,
        "id": "call_1",
        "name": "get_weather",
        "arguments_text": '{"city": "Paris"}',
        "arguments": {"city": "Paris"},
        "status": "ready",
        "reason": None,
        "detail": None,
    }


def test_a_released_result_cannot_be_changed() -> None:
    """E1: results are frozen, so validation's verdict cannot be altered before execution."""
    (call,) = assembled(sse(*simple_call()))
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.status = Status.REJECTED  # type: ignore[misc]


def test_a_call_that_fails_validation_comes_back_as_a_rejected_candidate() -> None:
    """E1: validation is its own stage: a schema violation is returned, not run, with its raw
    text and the failing path, ready to be explained to the model."""
    (call,) = assembled(sse(*simple_call(arguments='{"city": 7}')))
    assert call.reason is Reason.SCHEMA_VIOLATION
    assert call.arguments_text == '{"city": 7}'
    assert "$.city" in (call.detail or "")
    answer = rejection_message(call)
    assert answer["tool_call_id"] == "call_1"
    assert "schema_violation" in answer["content"]


# --- E2 original identity ---------------------------------------------------------------------


def test_the_assistant_message_holds_the_calls_in_index_order() -> None:
    """E2: the assistant message lists the calls by index, with their original ids and their
    exact argument text, however the results were ordered when passed in."""
    results, _ = assemble_every_way(parallel_calls())
    message = assistant_message(list(reversed(results)))
    assert message == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_w",
                "type": "function",
                "function": {"name": "get_weather", "arguments": WEATHER_TEXT},
            },
            {
                "id": "call_s",
                "type": "function",
                "function": {"name": "get_stock_price", "arguments": '{"ticker": "ACME"}'},
            },
        ],
    }


def test_every_call_in_the_assistant_message_is_answered_with_its_original_id() -> None:
    """E2: tool messages (results for ready calls, explanations for rejected ones) carry the ids
    of the assistant message's calls, one answer each, in the same order."""
    results = assembled(
        sse(
            chunk(header(0, "call_w", "get_weather", '{"city": "Paris"}')),
            chunk(header(1, "call_x", "get_weather", '{"city": 7}')),
            chunk(finish="tool_calls"),
        )
    )
    history = [assistant_message(results)]
    for result in release_order(results):
        if result.ready:
            history.append(tool_message(result, "18°C"))
        else:
            history.append(rejection_message(result))
    asked = [call["id"] for call in history[0]["tool_calls"]]
    answered = [message["tool_call_id"] for message in history[1:]]
    assert asked == answered == ["call_w", "call_x"]
    assert history[1]["content"] == "18°C"
    assert "schema_violation" in history[2]["content"]


def test_a_custom_call_goes_back_in_history_as_a_custom_call_with_its_input() -> None:
    """E2: a custom call is put in the assistant message as OpenAI returns it (``type: custom``
    with ``custom.input`` verbatim), not as a function call with JSON arguments."""
    patch = "*** Begin Patch\n*** End Patch\n"
    results = assembled(
        sse(
            chunk(
                {"index": 0, "id": "call_c", "type": "custom", "custom": {"name": "apply_patch"}}
            ),
            chunk({"index": 0, "custom": {"input": patch}}),
            chunk(finish="tool_calls"),
        ),
        tools=[Tool.custom("apply_patch")],
    )
    assert assistant_message(results)["tool_calls"] == [
        {"id": "call_c", "type": "custom", "custom": {"name": "apply_patch", "input": patch}}
    ]
    assert tool_message(results[0], "applied")["tool_call_id"] == "call_c"


def test_a_synthesised_id_is_the_one_the_answer_carries() -> None:
    """E2: when the lenient profile made the id up, the assistant message and the tool message
    use that same id, so the answer still matches its call."""
    (call,) = assembled(anonymous_call('{"city": "Paris"}'))
    assert call.synthetic_id
    assert assistant_message([call])["tool_calls"][0]["id"] == call.id
    assert tool_message(call, "ok")["tool_call_id"] == call.id


def test_messages_refuse_what_cannot_be_answered_correctly() -> None:
    """E2: a call without an id cannot be answered, a ready call is not answered with a
    rejection, and calls of several choices do not share one assistant message."""
    (no_id,) = assembled(anonymous_call('{"city": "Paris"}'), profile="strict")
    assert no_id.reason is Reason.MISSING_ID
    with pytest.raises(ValueError, match="id"):
        tool_message(no_id, "ok")
    (ready,) = assembled(sse(*simple_call()))
    with pytest.raises(ValueError, match="ready"):
        rejection_message(ready)
    two_choices = assembled(
        sse(
            chunk(header(0, "call_a", "get_weather", '{"city": "Paris"}'), choice=0),
            chunk(header(0, "call_b", "get_weather", '{"city": "Tokyo"}'), choice=1),
            chunk(choice=0, finish="tool_calls"),
            chunk(choice=1, finish="tool_calls"),
        )
    )
    with pytest.raises(ValueError, match="choices"):
        assistant_message(two_choices)


# --- E3 idempotent dispatch -------------------------------------------------------------------


def test_the_idempotency_key_is_stable_across_assemblies_of_the_same_stream() -> None:
    """E3: the same stream assembled twice (a retried turn) gives every call the same key, and
    different calls different keys."""
    first = [idempotency_key(result) for result in assembled(parallel_calls())]
    again = [idempotency_key(result) for result in assembled(parallel_calls())]
    assert first == again
    assert len(set(first)) == 2


def test_a_later_identical_call_without_an_id_is_not_skipped_by_the_ledger() -> None:
    """E3: two responses of one conversation each make the same id-less call; their
    synthesised ids differ, so a ledger kept over the conversation runs both (the old per-stream
    ``call00000`` ids made the second look like a replay of the first)."""
    ledger = ExecutionLedger()
    first, second = (
        assembled(anonymous_call('{"city": "Paris"}', response=f"chatcmpl-{turn}"))[0]
        for turn in (1, 2)
    )
    assert first.synthetic_id
    assert second.synthetic_id
    assert first.id != second.id
    assert ledger.claim(first)
    assert ledger.claim(second)


def test_responses_without_an_id_still_get_distinct_synthesised_ids() -> None:
    """E3: with no response id to derive from, the made-up ids are random, never equal."""
    first, second = (assembled(anonymous_call('{"city": "Paris"}', response=""))[0] for _ in "ab")
    assert first.id != second.id


def test_the_same_response_assembled_again_keeps_its_synthesised_id_and_key() -> None:
    """E3: a replay of one response (same response id) gets the same made-up id and key, so a
    retried turn still runs the call once."""
    ledger = ExecutionLedger()
    once, again = (assembled(anonymous_call('{"city": "Paris"}'))[0] for _ in "ab")
    assert once.id == again.id
    assert ledger.claim(once)
    assert not ledger.claim(again)


def test_distinct_calls_sharing_an_id_get_distinct_keys() -> None:
    """E3 with quirk C34: two identical calls at different indices under one id are two calls;
    the lenient profile keeps both and the ledger runs both."""
    twin = '{"city": "Paris"}'
    results = assembled(
        sse(
            chunk(header(0, "call_same", "get_weather", twin)),
            chunk(header(1, "call_same", "get_weather", twin)),
            chunk(finish="tool_calls"),
        )
    )
    assert [r.ready for r in results] == [True, True]
    ledger = ExecutionLedger()
    assert [ledger.claim(result) for result in results] == [True, True]


def test_the_key_ignores_how_the_arguments_were_spaced_or_ordered() -> None:
    """E3: a retry whose provider re-serialised the same arguments (other spacing, other key
    order) keeps the key: it is the same call."""
    (first,) = assembled(sse(*simple_call(arguments='{"city": "Paris", "units": "c"}')))
    (retry,) = assembled(sse(*simple_call(arguments='{"units":"c","city":"Paris"}')))
    assert idempotency_key(first) == idempotency_key(retry)


def test_the_ledger_runs_each_call_of_a_retried_turn_once() -> None:
    """E3: claiming the calls of a turn, then of the same turn retried, runs each call once;
    a rejected call is never claimed."""
    ledger = ExecutionLedger()
    turn = assembled(parallel_calls())
    assert [ledger.claim(result) for result in turn] == [True, True]
    retried = assembled(parallel_calls())
    assert [ledger.claim(result) for result in retried] == [False, False]
    (truncated,) = assembled(sse(*simple_call(finish="length")))
    assert not ledger.claim(truncated)


def test_the_ledger_runs_two_calls_of_the_same_function_both() -> None:
    """E3: deduplication is by call, not by function: two weather calls both run."""
    results = assembled(
        sse(
            chunk(header(0, "call_a", "get_weather", '{"city": "Paris"}')),
            chunk(header(1, "call_b", "get_weather", '{"city": "Paris"}')),
            chunk(finish="tool_calls"),
        )
    )
    ledger = ExecutionLedger()
    assert [ledger.claim(result) for result in results] == [True, True]


# --- E4 deterministic order -------------------------------------------------------------------


def test_one_feed_releases_calls_by_index_not_by_last_fragment() -> None:
    """E4: index 1 received its last fragment before index 0, yet index 0 is released first,
    however the bytes were split."""
    results, _ = assemble_every_way(parallel_calls())
    assert [(result.index, result.id) for result in results] == [(0, "call_w"), (1, "call_s")]


def test_one_feed_releases_choices_in_order() -> None:
    """E4: choice 1 finishing before choice 0 within the same feed still comes after it."""
    results = Assembler().feed(choice_1_finishing_first())
    assert [(r.choice, r.index, r.id) for r in results] == [
        (0, 0, "call_a"),
        (0, 1, "call_c"),
        (1, 0, "call_b"),
    ]


def test_release_order_sorts_by_choice_then_index() -> None:
    """E4: ``release_order`` puts results gathered from several feeds in execution order."""
    results = assembled(choice_1_finishing_first())
    scrambled = [results[2], results[0], results[1]]
    assert [(r.choice, r.index) for r in release_order(scrambled)] == [(0, 0), (0, 1), (1, 0)]

"""The emulator serves openai-responses scenarios on ``POST /v1/responses``: streamed as the
dialect renders them, or answered whole as a ``response`` object."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from callstream.core.rendering import render
from callstream.core.spec import CallPlan, Scenario, StreamSpec
from callstream.emulator import Emulator
from callstream.reference import Assembler
from tests.helpers import WEATHER

CALL = CallPlan("get_weather", '{"city": "Paris"}', ('{"city"', ': "Paris"}'), id="call_1")
SCENARIO = Scenario(
    "emulated-responses",
    "one weather call over Responses",
    ("A2",),
    StreamSpec(tools=(WEATHER,), calls=(CALL,), dialect="openai-responses"),
)


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator([SCENARIO]) as running:
        yield running


def test_a_responses_scenario_streams_on_v1_responses(emulator: Emulator) -> None:
    """``stream: true`` on /v1/responses gets the scenario's bytes, which assemble to its call."""
    request = {"model": f"scenario:{SCENARIO.id}", "stream": True, "input": "weather?"}
    with httpx.stream("POST", f"{emulator.base_url}/responses", json=request) as response:
        assert response.status_code == 200
        body = b"".join(response.iter_raw())
    assert body == render(SCENARIO.spec).data
    assembler = Assembler([WEATHER], dialect="openai-responses")
    (result,) = assembler.feed(body) + assembler.close()
    assert (result.id, result.arguments) == ("call_1", {"city": "Paris"})


def test_a_responses_scenario_is_refused_on_the_chat_path(emulator: Emulator) -> None:
    """A scenario is served on its own dialect's path only, and the error says which."""
    request = {"model": f"scenario:{SCENARIO.id}", "stream": True}
    response = httpx.post(f"{emulator.base_url}/chat/completions", json=request)
    assert response.status_code == 400
    assert "/v1/responses" in response.text


def test_without_stream_the_answer_is_a_response_object(emulator: Emulator) -> None:
    """The non-streaming answer lists the call as a completed function_call item."""
    request = {"model": f"scenario:{SCENARIO.id}", "input": "weather?"}
    answer = httpx.post(f"{emulator.base_url}/responses", json=request).json()
    assert answer["object"] == "response"
    assert answer["status"] == "completed"
    (item,) = answer["output"]
    assert (item["type"], item["call_id"], item["arguments"]) == (
        "function_call",
        "call_1",
        '{"city": "Paris"}',
    )

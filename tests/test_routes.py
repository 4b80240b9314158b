"""The emulated routes: a fake model that answers each request plausibly, rendered as real routes
render it, each reproducing the quirks it names and no others."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from callstream.emulator import Emulator
from callstream.emulator.model import think
from callstream.emulator.routes import ROUTES
from callstream.reference import Assembler

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "examples": ["Zürich"]},
                "unit": {"enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1},
            },
            "required": ["city"],
        },
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}},
    },
}


def ask(**fields: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "messages": [{"role": "user", "content": "Weather in Zürich?"}],
        "tools": [WEATHER, TIME],
        **fields,
    }


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator() as running:
        yield running


def stream(emulator: Emulator, route: str, **fields: Any) -> bytes:
    body = ask(model=f"route:{route}", stream=True, **fields)
    response = httpx.post(f"{emulator.base_url}/chat/completions", json=body, timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    return response.content


def assembled(data: bytes) -> tuple[list[Any], set[str]]:
    asm = Assembler()  # no tool list: names and schemas are not checked here
    results = asm.feed(data) + asm.close()
    return results, {finding.quirk for finding in asm.findings}


def test_the_fake_model_builds_arguments_from_the_schema() -> None:
    """Examples first, then enum values, then a plain value of the type; the same request
    always gets the same answer, ids included."""
    answer = think(ask(tool_choice="required"))
    assert [call.name for call in answer.calls] == ["get_weather"]
    assert json.loads(answer.calls[0].arguments) == {"city": "Zürich", "unit": "celsius", "days": 1}
    assert answer.finish == "tool_calls"
    assert think(ask(tool_choice="required")).calls == answer.calls


def test_the_fake_model_follows_tool_choice_and_parallel_calls() -> None:
    """A named function is the only one called (and finishes stop, as OpenAI does); parallel
    calls call every tool offered; ``none`` calls nothing."""
    named = think(ask(tool_choice={"type": "function", "function": {"name": "get_time"}}))
    assert [call.name for call in named.calls] == ["get_time"]
    assert named.finish == "stop"
    parallel = think(ask(parallel_tool_calls=True))
    assert [call.name for call in parallel.calls] == ["get_weather", "get_time"]
    assert len({call.id for call in parallel.calls}) == 2
    assert think(ask(tool_choice="none")).calls == ()


def test_a_small_max_tokens_cuts_the_arguments_and_finishes_length() -> None:
    """Four characters a token: the arguments stop at the limit, mid-value."""
    whole = think(ask()).calls[0].arguments
    cut = think(ask(max_tokens=5))
    assert cut.finish == "length"
    assert cut.calls[0].arguments == whole[:20]


def test_a_prompt_that_says_first_gets_text_before_the_call() -> None:
    """The text-then-call probe's cue."""
    answer = think(ask(messages=[{"role": "user", "content": "First say what you will do."}]))
    assert answer.text
    assert answer.calls


def test_a_tool_choice_naming_no_tool_is_a_400(emulator: Emulator) -> None:
    """As a real route refuses it, in OpenAI's error shape."""
    body = ask(model="route:openai", tool_choice={"type": "function", "function": {"name": "x"}})
    response = httpx.post(f"{emulator.base_url}/chat/completions", json=body, timeout=10)
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "tool_choice"


@pytest.mark.parametrize(
    ("route", "quirks"),
    [
        ("openai", set()),
        ("gemini", {"openai-chat/C1", "openai-chat/C16"}),
        ("ollama", {"openai-chat/C2"}),
        ("litellm", {"openai-chat/C4", "openai-chat/C5", "openai-chat/C11"}),
        ("vllm", set()),  # its dropped brace is no quirk the assembler records, only bad JSON
        ("openrouter", {"openai-chat/C20", "openai-chat/C23"}),
        ("azure", {"openai-chat/C21"}),
    ],
)
def test_each_route_streams_the_quirks_it_names(
    emulator: Emulator, route: str, quirks: set[str]
) -> None:
    """A parallel answer through each route, assembled by the reference, shows exactly the
    route's quirks; the calls are the fake model's, whole."""
    results, found = assembled(stream(emulator, route, parallel_tool_calls=True))
    assert found == quirks
    assert [result.name for result in results] == ["get_weather", "get_time"]
    expected_ready = {"litellm": [False, False], "vllm": [True, False]}.get(route, [True, True])
    assert [result.ready for result in results] == expected_ready


def test_vllm_reports_a_cut_answer_as_tool_calls(emulator: Emulator) -> None:
    """The honest finish is length; the vLLM route says tool_calls, streaming or not."""
    data = stream(emulator, "vllm", max_tokens=4)
    assert b'"finish_reason":"tool_calls"' in data
    assert b'"finish_reason":"length"' not in data
    body = ask(model="route:vllm", max_tokens=4)
    completion = httpx.post(f"{emulator.base_url}/chat/completions", json=body, timeout=10).json()
    assert completion["choices"][0]["finish_reason"] == "tool_calls"
    assert b'"finish_reason":"length"' in stream(emulator, "openai", max_tokens=4)


def test_gemini_says_tool_calls_only_when_not_streaming(emulator: Emulator) -> None:
    """Its stream finishes stop; the same request not streamed finishes tool_calls."""
    body = ask(model="route:gemini")
    completion = httpx.post(f"{emulator.base_url}/chat/completions", json=body, timeout=10).json()
    assert completion["choices"][0]["finish_reason"] == "tool_calls"
    assert b'"finish_reason":"stop"' in stream(emulator, "gemini")


def test_openrouter_fails_a_long_answer_every_other_time() -> None:
    """The first long stream ends with an in-band error and no [DONE]; the second is whole."""
    long_tool = {
        "type": "function",
        "function": {
            "name": "write",
            "parameters": {"type": "object", "properties": {"text": {"examples": ["x" * 1200]}}},
        },
    }
    with Emulator() as emulator:
        first = stream(emulator, "openrouter", tools=[long_tool])
        second = stream(emulator, "openrouter", tools=[long_tool])
    assert b'"error":{"code":502' in first
    assert not first.endswith(b"data: [DONE]\n\n")
    assert second.endswith(b"data: [DONE]\n\n")
    assert first.startswith(b": OPENROUTER PROCESSING\n\n")


def test_never_finishes_sends_half_then_keep_alives_until_the_client_leaves(
    emulator: Emulator,
) -> None:
    """No finish, no [DONE]: after half the answer only comments come, a few a second."""
    body = ask(model="route:never-finishes", stream=True)
    pieces = []
    clock = time.monotonic()
    with httpx.stream(
        "POST", f"{emulator.base_url}/chat/completions", json=body, timeout=10
    ) as response:
        for piece in response.iter_bytes():
            pieces.append(piece)
            if time.monotonic() - clock > 0.7:
                break
    data = b"".join(pieces)
    assert data.count(b": keep-alive\n\n") >= 2
    assert b'finish_reason":"tool_calls' not in data
    assert b"[DONE]" not in data


def test_routes_are_listed_and_a_default_route_answers_any_model() -> None:
    """``route:<name>`` is always served; ``Emulator(route=…)`` answers every other model."""
    with Emulator(route="ollama") as emulator:
        listed = [m["id"] for m in httpx.get(f"{emulator.base_url}/models").json()["data"]]
        assert {f"route:{name}" for name in ROUTES} <= set(listed)
        body = ask(model="gpt-4o", stream=True, parallel_tool_calls=True)
        data = httpx.post(f"{emulator.base_url}/chat/completions", json=body, timeout=10).content
    assert b"fp_ollama" in data
    assert assembled(data)[1] == {"openai-chat/C2"}

"""The provider emulator: a real local HTTP server that streams what it is given, one chunk per
write, with OpenAI-shaped errors and a non-streaming answer built from a scenario's plan."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from callstream.core.rendering import render
from callstream.core.spec import CallPlan, Scenario, StreamSpec
from callstream.core.split import parse_splitting
from callstream.emulator import Emulator, chat_completion
from tests.helpers import WEATHER, args, chunk, header, sse

ROOT = Path(__file__).parent.parent
CALL = CallPlan("get_weather", '{"city": "Paris"}', ('{"city"', ': "Paris"}'), id="call_1")
SCENARIO = Scenario(
    "emulated-weather", "one weather call", ("A2",), StreamSpec(tools=(WEATHER,), calls=(CALL,))
)
STREAM = [
    sse(chunk(header(0, "call_1", "get_weather")), done=False),
    sse(chunk(args(0, '{"city": "Paris"}')), done=False),
    sse(chunk(finish="tool_calls")),
]


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator([SCENARIO]) as running:
        yield running


def raw_chunks(emulator: Emulator, model: str) -> list[bytes]:
    """POST a streaming request over a bare socket and return the body's HTTP chunks as the
    server framed them (chunked transfer encoding: one frame per write)."""
    body = json.dumps({"model": model, "stream": True}).encode()
    with socket.create_connection((emulator.host, emulator.port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: test\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        response = b""
        while piece := sock.recv(65536):
            response += piece
    head, _, rest = response.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    assert b"transfer-encoding: chunked" in head.lower()
    frames = []
    while True:
        size, _, rest = rest.partition(b"\r\n")
        if int(size, 16) == 0:
            return frames
        frames.append(rest[: int(size, 16)])
        rest = rest[int(size, 16) + 2 :]


def test_each_registered_chunk_is_its_own_write(emulator: Emulator) -> None:
    """The body is framed exactly as registered, one HTTP chunk per stream chunk."""
    model = emulator.register(STREAM)
    assert raw_chunks(emulator, model) == STREAM


def test_a_streaming_client_reads_the_chunks_separately(emulator: Emulator) -> None:
    """With a pause between chunks, an httpx streaming read sees each chunk on its own, in
    order, the pauses at least as long as asked."""
    model = emulator.register(STREAM, delay=(0.0, 0.15, 0.0))
    seen = []
    with (
        httpx.Client() as client,
        client.stream(
            "POST", f"{emulator.base_url}/chat/completions", json={"model": model, "stream": True}
        ) as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        for piece in response.iter_raw():
            seen.append((time.monotonic(), piece))
    pieces = [piece for _, piece in seen]
    assert b"".join(pieces) == b"".join(STREAM)
    assert pieces[0] == STREAM[0]
    assert seen[1][0] - seen[0][0] >= 0.14


def test_a_scenario_is_served_by_id_whole_or_cut_by_a_splitting(emulator: Emulator) -> None:
    """``scenario:<id>`` streams its bytes whole; ``@at-10,25`` cuts them there."""
    data = render(SCENARIO.spec).data
    assert raw_chunks(emulator, f"scenario:{SCENARIO.id}") == [data]
    assert raw_chunks(emulator, f"scenario:{SCENARIO.id}@at-10,25") == [
        data[:10],
        data[10:25],
        data[25:],
    ]
    assert parse_splitting("at-10,25").label == "at-10,25"


def test_an_unknown_model_is_a_404_in_openais_error_shape(emulator: Emulator) -> None:
    """The error names the model and says what to ask for instead."""
    response = httpx.post(
        f"{emulator.base_url}/chat/completions", json={"model": "gpt-4o", "stream": True}
    )
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "model_not_found"
    assert error["param"] == "model"
    assert "'gpt-4o' does not exist" in error["message"]
    assert "scenario:<id>" in error["message"]


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"{not json", "not JSON"),
        (b'{"stream": true}', "names no model"),
        (b'{"model": "scenario:emulated-weather@pairs", "stream": true}', "name one cut"),
        (b'{"model": "scenario:emulated-weather@halves", "stream": true}', "not a splitting"),
    ],
)
def test_a_bad_request_is_a_400_saying_why(emulator: Emulator, body: bytes, says: str) -> None:
    """A request that is not JSON, names no model or names no single chunking is refused."""
    response = httpx.post(f"{emulator.base_url}/chat/completions", content=body)
    assert response.status_code == 400
    assert says in response.json()["error"]["message"]


def test_other_paths_and_methods_are_json_errors(emulator: Emulator) -> None:
    """A client that hits the wrong path or method gets a JSON error, not an HTML page."""
    assert httpx.get(f"{emulator.base_url}/embeddings").status_code == 404
    assert httpx.get(f"{emulator.base_url}/chat/completions").status_code == 405


def test_models_lists_the_scenarios_and_the_registered_streams(emulator: Emulator) -> None:
    """GET /v1/models answers in OpenAI's list shape."""
    model = emulator.register(STREAM)
    listed = httpx.get(f"{emulator.base_url}/models").json()
    assert listed["object"] == "list"
    ids = [entry["id"] for entry in listed["data"]]
    assert f"scenario:{SCENARIO.id}" in ids
    assert model in ids
    emulator.unregister(model)
    assert model not in [
        entry["id"] for entry in httpx.get(f"{emulator.base_url}/models").json()["data"]
    ]


def test_a_non_streaming_request_gets_the_plan_as_a_chat_completion(emulator: Emulator) -> None:
    """``stream: false`` answers a scenario with the calls of its plan, whole."""
    response = httpx.post(
        f"{emulator.base_url}/chat/completions", json={"model": f"scenario:{SCENARIO.id}"}
    )
    completion = response.json()
    assert completion == chat_completion(SCENARIO)
    choice = completion["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]


def test_a_registered_stream_answers_non_streaming_only_when_given_a_body(
    emulator: Emulator,
) -> None:
    """Raw chunks have no plan: a non-streaming request is refused unless a body is given."""
    url = f"{emulator.base_url}/chat/completions"
    refused = httpx.post(url, json={"model": emulator.register(STREAM)})
    assert refused.status_code == 400
    assert "only streams" in refused.json()["error"]["message"]
    answer = {"object": "chat.completion", "choices": []}
    given = httpx.post(url, json={"model": emulator.register(STREAM, completion=answer)})
    assert given.json() == answer


def test_a_route_that_never_finishes_keeps_the_connection_open() -> None:
    """With ``linger``, every chunk arrives and then nothing: the client times out waiting for
    the end, and stopping the emulator does not wait for the stream."""
    with Emulator() as emulator:
        model = emulator.register([b": keep-alive\n\n"], linger=60.0)
        pieces = []
        with (
            httpx.Client(timeout=httpx.Timeout(5.0, read=0.5)) as client,
            client.stream(
                "POST",
                f"{emulator.base_url}/chat/completions",
                json={"model": model, "stream": True},
            ) as response,
            pytest.raises(httpx.ReadTimeout),
        ):
            pieces.extend(response.iter_raw())
        assert pieces == [b": keep-alive\n\n"]
        clock = time.monotonic()
    assert time.monotonic() - clock < 5.0
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://{emulator.host}:{emulator.port}/v1/models")


def test_callstream_serve_answers_until_stopped(tmp_path: Path) -> None:
    """``callstream serve`` prints where it listens and serves the corpus scenarios."""
    process = subprocess.Popen(
        [sys.executable, "-m", "callstream.cli", "serve", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("callstream: serving")
        assert "scenarios at http://127.0.0.1:" in first
        base = first.split(" at ")[1].strip()
        ids = [entry["id"] for entry in httpx.get(f"{base}/models", timeout=10).json()["data"]]
        assert "scenario:oc-a-openai-single-call-fragmented" in ids
    finally:
        process.terminate()
        process.wait(10)

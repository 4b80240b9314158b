"""Cassettes: written and read back byte for byte, validated line by line, secrets masked, and
runnable as literal scenarios by ``callstream run``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from callstream.cli import main
from callstream.corpus.cassette import (
    Chunk,
    Ended,
    RecordedRequest,
    RecordedResponse,
    Recording,
    cassette_scenario,
    load_cassette,
    write_cassette,
)
from callstream.errors import UsageError
from callstream.scrub import Scrubber
from tests.helpers import args, chunk, header

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def raw_sse(*payloads: dict[str, Any]) -> bytes:
    """Events with their non-ASCII characters as UTF-8 bytes, as real routes send them."""
    events = [json.dumps(payload, ensure_ascii=False) for payload in payloads] + ["[DONE]"]
    return "".join(f"data: {event}\n\n" for event in events).encode()


BODY = raw_sse(
    chunk(header(0, "call_1", "get_weather"), role="assistant"),
    chunk(args(0, '{"city": "Zürich"}')),
    chunk(finish="tool_calls"),
)
CUT = BODY.index("ü".encode()) + 1
"""A chunk boundary inside the two bytes of ü."""


def recording(body: bytes = BODY, *, stream: bool = True, cut: int = CUT) -> Recording:
    return Recording(
        probe="parameterless",
        title="a tool",
        repeat=1,
        stream=stream,
        calls=1,
        request=RecordedRequest(
            "POST",
            "http://127.0.0.1:9/v1/chat/completions",
            {"content-type": "application/json"},
            {"model": "m", "tools": TOOLS, "stream": stream},
        ),
        response=RecordedResponse(200, {"content-type": "text/event-stream"}, 0.01),
        chunks=(Chunk(0.02, body[:cut]), Chunk(0.5, body[cut:])),
        ended=Ended("eof", 0.51),
        context={"session": "2026-01-01T00:00:00+00:00", "profile": "lenient"},
    )


def test_a_cassette_reads_back_exactly_what_was_recorded(tmp_path: Path) -> None:
    """Chunk boundaries, bytes and times survive; a chunk cut inside a character is base64."""
    original = recording()
    path = write_cassette(tmp_path / "x.cassette.jsonl", original, Scrubber())
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert [line["type"] for line in lines] == ["header", "response", "chunk", "chunk", "end"]
    assert "base64" in lines[2]
    assert "base64" in lines[3]
    assert load_cassette(path) == original


def test_whole_utf8_chunks_are_stored_as_text(tmp_path: Path) -> None:
    """A person can read a cassette: chunks that are UTF-8 on their own are text."""
    path = write_cassette(tmp_path / "x.cassette.jsonl", recording(cut=10), Scrubber())
    chunks = [json.loads(line) for line in path.read_text("utf-8").splitlines()][2:4]
    assert [c["text"] for c in chunks] == [BODY[:10].decode(), BODY[10:].decode()]


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda lines: lines[:-1], "one end line"),
        (
            lambda lines: [lines[0].replace('"cassette": 1', '"cassette": 2'), *lines[1:]],
            "cassette",
        ),
        (lambda lines: [*lines[:-1], lines[-1].replace('"bytes": ', '"bytes": 1')], "counts"),
        (lambda lines: [lines[0], "{not json", *lines[1:]], ":2: not a JSON line"),
        (lambda lines: [lines[0], lines[1].replace('"status": 200', '"status": "ok"')], ":2:"),
    ],
)
def test_a_damaged_cassette_is_refused_saying_where(tmp_path: Path, damage, says: str) -> None:  # type: ignore[no-untyped-def]
    """A missing end, an unknown version, a wrong byte count, a broken or invalid line."""
    path = write_cassette(tmp_path / "x.cassette.jsonl", recording(), Scrubber())
    lines = path.read_text("utf-8").splitlines()
    path.write_text("\n".join(damage(lines)) + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match=says.replace("[", r"\[")):
        load_cassette(path)


def test_the_scrubber_masks_secrets_everywhere_keeping_lengths() -> None:
    """Text, bytes, URLs (credential parameters and user info, whatever their value) and
    headers (credential headers dropped)."""
    key = "sk-planted-0123456789"
    scrubber = Scrubber([key])
    assert scrubber.text(f"bad key {key}!") == f"bad key {'*' * len(key)}!"
    assert scrubber.data(f'"{key}"'.encode()) == f'"{"*" * len(key)}"'.encode()
    assert scrubber.url("https://u:pw@h/v1?key=abc&api-version=1") == (
        "https://***@h/v1?key=***&api-version=1"
    )
    assert scrubber.headers({"Authorization": "Bearer x", "X-Echo": key}) == {
        "x-echo": "*" * len(key)
    }
    assert Scrubber(["none"]).text("none of it") == "none of it"  # too short to be a secret


def test_writing_masks_a_secret_that_slipped_into_a_recording(tmp_path: Path) -> None:
    """The last line of defence: the file is scrubbed as it is written."""
    leaked = recording(BODY.replace(b"call_1", b"sk-planted-0123456789"), cut=10)
    path = write_cassette(
        tmp_path / "x.cassette.jsonl", leaked, Scrubber(["sk-planted-0123456789"])
    )
    assert b"sk-planted" not in path.read_bytes()


def test_a_streamed_cassette_is_a_literal_scenario_expecting_the_references_verdict(
    tmp_path: Path,
) -> None:
    """Its recorded body, the request's tools, and under each profile the calls as the
    reference settles them; a non-streaming cassette is no scenario."""
    path = write_cassette(tmp_path / "x.cassette.jsonl", recording(), Scrubber())
    scenario = cassette_scenario(path)
    assert scenario.spec.literal_sse == BODY
    assert [tool.name for tool in scenario.spec.tools] == ["get_weather"]
    assert scenario.spec.expected is not None
    (call,) = scenario.spec.expected["lenient"].calls
    assert (call.status, call.arguments) == ("ready", {"city": "Zürich"})
    flat = write_cassette(tmp_path / "y.cassette.jsonl", recording(stream=False), Scrubber())
    with pytest.raises(UsageError, match="holds no event stream"):
        cassette_scenario(flat)


def test_callstream_run_replays_cassettes_as_regression_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reference passes its own verdict; a mutant that treats the repeated summary chunk as
    more arguments fails it; non-streaming cassettes in a folder are skipped, named ones are
    refused."""
    repeated = raw_sse(
        chunk(header(0, "call_1", "get_weather"), role="assistant"),
        chunk(args(0, '{"city": "Zürich"}')),
        chunk({"index": 0, "id": "call_1", "type": "function", "function": {"arguments": "x"}}),
        chunk(finish="tool_calls"),
    )
    folder = tmp_path / "cassettes"
    write_cassette(folder / "a-r1-stream.cassette.jsonl", recording(repeated), Scrubber())
    write_cassette(folder / "a-r1-nonstream.cassette.jsonl", recording(stream=False), Scrubber())
    code = main(["run", str(folder), "--jobs", "1", "--out", str(tmp_path / "ok")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "7 cases of 1 scenarios: 7 passed" in out
    code = main(
        [
            "run",
            str(folder),
            "--jobs",
            "1",
            "--impl",
            "py:tests.mutants.concatenates_repeated_id:factory",
            "--out",
            str(tmp_path / "mutant"),
        ]
    )
    assert code == 1
    assert "FAILED cassette-parameterless-r1-" in capsys.readouterr().out
    named = str(folder / "a-r1-nonstream.cassette.jsonl")
    assert main(["run", named, "--out", str(tmp_path / "flat")]) == 2
    assert "holds no event stream" in capsys.readouterr().err

"""Hostile cassettes: ``callstream replay`` (and ``callstream run``) on a cassette someone else
made. A damaged or malicious file is refused with ``path:line: …`` and exit code 2; a valid
cassette holding a hostile stream is judged, its trouble reported as findings, exit code 1.
Never a traceback, never a fetch, never unbounded memory."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from callstream.cli import main
from callstream.corpus import cassette as cassette_module
from callstream.corpus.cassette import (
    Chunk,
    Ended,
    RecordedRequest,
    RecordedResponse,
    Recording,
    write_cassette,
)
from callstream.scrub import Scrubber

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "n": {"type": "integer"}},
        },
    },
}


def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    payload = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def call(arguments: str) -> bytes:
    header = {"index": 0, "id": "call_1", "type": "function"}
    header["function"] = {"name": "get_weather", "arguments": arguments}
    return event({"role": "assistant", "tool_calls": [header]})


GOOD = call('{"city": "Oslo"}') + event({}, "tool_calls") + b"data: [DONE]\n\n"


def write(path: Path, body: bytes = GOOD, tools: list[Any] | None = None) -> Path:
    recording = Recording(
        probe="parameterless",
        title="a tool",
        repeat=1,
        stream=True,
        calls=1,
        request=RecordedRequest(
            "POST",
            "http://127.0.0.1:9/v1/chat/completions",
            {"content-type": "application/json"},
            {"model": "m", "tools": [WEATHER] if tools is None else tools, "stream": True},
        ),
        response=RecordedResponse(200, {"content-type": "text/event-stream"}, 0.01),
        chunks=(Chunk(0.02, body),),
        ended=Ended("eof", 0.03),
        context={"session": "2026-01-01T00:00:00+00:00", "profile": "lenient"},
    )
    return write_cassette(path, recording, Scrubber())


def damaged(path: Path, line: int, change: Callable[[str], str]) -> Path:
    lines = path.read_text("utf-8").split("\n")
    lines[line - 1] = change(lines[line - 1])
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    return path


def rewritten(change: Callable[[bytes], bytes]) -> Callable[[Path], Path]:
    def spoil(path: Path) -> Path:
        path.write_bytes(change(path.read_bytes()))
        return path

    return spoil


def nested(levels: int) -> Callable[[Path], Path]:
    """The request body holding arrays ``levels`` deep."""
    deep = '"body": {"x": ' + "[" * levels + "]" * levels + ", "
    return lambda path: damaged(path, 1, lambda line: line.replace('"body": {', deep))


def replay(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str, str]:
    code = main(["replay", str(path)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


DEEP = 100_000
REFUSED: dict[str, tuple[Callable[[Path], Path], int, str]] = {
    "deep-nesting": (nested(DEEP), 1, "nested too deeply to read"),
    "nesting-past-the-limit": (nested(150), 1, "nested deeper than 100 levels"),
    "lone-surrogate": (
        lambda p: damaged(p, 3, lambda line: line.replace('"text": "', '"text": "\\ud800')),
        3,
        "a lone surrogate (U+D800) in a string",
    ),
    "huge-int": (
        lambda p: damaged(p, 2, lambda line: line.replace(": 200", ": 2" + "0" * 5000)),
        2,
        "Exceeds the limit (4300 digits)",
    ),
    "huge-float": (
        lambda p: damaged(p, 4, lambda line: line.replace('"t": 0.03', '"t": 1e400')),
        4,
        "a number too large for a double",
    ),
    "nan": (
        lambda p: damaged(p, 4, lambda line: line.replace('"t": 0.03', '"t": NaN')),
        4,
        "NaN is not a JSON number",
    ),
    "truncated-line": (
        rewritten(lambda data: data[: data.rindex(b'"how"')]),
        4,
        "not a JSON line",
    ),
    "malformed-line": (lambda p: damaged(p, 2, lambda line: "{not json"), 2, "not a JSON line"),
    "not-utf8": (rewritten(lambda data: data.replace(b"Oslo", b"Os\xfflo")), 3, "not UTF-8"),
    "empty-file": (rewritten(lambda data: b""), 1, "the first line must be the header"),
    "wrong-shape": (
        lambda p: damaged(p, 1, lambda line: line.replace('"stream": true', '"stream": []')),
        1,
        "$.stream: [] is not of type 'boolean'",
    ),
}


@pytest.mark.parametrize("kind", list(REFUSED))
def test_a_damaged_cassette_is_refused_with_its_path_and_line(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spoil, line, says = REFUSED[kind]
    path = spoil(write(tmp_path / "x.cassette.jsonl"))
    code, _, err = replay(capsys, path)
    assert code == 2
    assert err.startswith(f"callstream: error: {path}:{line}"), err
    assert says in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "reference",
    ["http://127.0.0.1:9/schema.json", "file:///dev/zero", "other.json#/x", "//evil/x"],
)
@pytest.mark.parametrize("command", ["replay", "run"])
def test_a_tool_schema_pointing_outside_itself_is_refused_and_nothing_fetched(
    reference: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A remote, file or relative $ref in a cassette's tools: refused before any schema is
    compiled, so nothing is fetched or read."""
    tool = json.loads(json.dumps(WEATHER))
    tool["function"]["parameters"]["properties"]["city"] = {"$ref": reference}
    path = write(tmp_path / "x.cassette.jsonl", tools=[tool])
    code = main([command, str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{path}:1: request.body.tools[0]: $ref {reference!r} points outside" in err


def test_a_reference_within_the_schema_is_fine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = json.loads(json.dumps(WEATHER))
    parameters = tool["function"]["parameters"]
    parameters["$defs"] = {"name": {"type": "string"}}
    parameters["properties"]["city"] = {"$ref": "#/$defs/name"}
    code, out, _ = replay(capsys, write(tmp_path / "x.cassette.jsonl", tools=[tool]))
    assert (code, out.split(":")[0]) == (0, "PASS")


def test_malformed_tools_are_refused_with_the_header_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "x.cassette.jsonl", tools=[{"type": "function", "function": {}}])
    code, _, err = replay(capsys, path)
    assert code == 2
    assert f"{path}:1: request.body: tools[0]: missing a non-empty string 'name'" in err


def test_a_line_or_a_body_past_the_limits_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading stops at the first line too long; a body too large is refused at the chunk that
    passes the limit (the limits made small here, as 32 and 64 MiB would be slow to write)."""
    monkeypatch.setattr(cassette_module, "MAX_LINE", 4000)
    long = write(tmp_path / "long.cassette.jsonl", body=call("x" * 5000))
    code, _, err = replay(capsys, long)
    assert (code, err) == (2, f"callstream: error: {long}:3: a line longer than 4000 bytes\n")
    monkeypatch.setattr(cassette_module, "MAX_LINE", 1 << 20)
    monkeypatch.setattr(cassette_module, "MAX_BODY", 3000)
    big = write(tmp_path / "big.cassette.jsonl", body=call("x" * 5000))
    code, _, err = replay(capsys, big)
    assert code == 2
    assert f"{big}:3: the body passes 3000 bytes" in err


HOSTILE_BODIES = {
    "deep-nesting-in-an-event": b"data: " + b"[" * DEEP + b"]" * DEEP + b"\n\n" + GOOD,
    "deep-arguments": call("[" * DEEP + "]" * DEEP) + event({}, "tool_calls") + b"data: [DONE]\n\n",
    "huge-int-in-an-event": b'data: {"n": 1' + b"0" * 5000 + b"}\n\n" + GOOD,
    "line-past-the-decoder-limit": b"data: " + b"x" * (9 << 20) + b"\n\n" + GOOD,
    "not-utf8": GOOD.replace(b"Oslo", b"Os\xff\xfelo"),
    "lone-surrogate-names": (
        call('{"city": "\\ud800"}').replace(b"get_weather", b"\\ud800")
        + event({}, "tool_calls")
        + b"data: [DONE]\n\n"
    ),
    "nothing-but-garbage": bytes(range(256)) * 64,
}


@pytest.mark.parametrize("kind", list(HOSTILE_BODIES))
def test_a_hostile_stream_in_a_valid_cassette_becomes_findings(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cassette is sound, its recorded stream is not: replay judges it, the trouble is in
    the findings (exit 1, or 0 for what the lenient profile mends: bytes that are not UTF-8),
    and the certificate is written."""
    path = write(tmp_path / "x.cassette.jsonl", body=HOSTILE_BODIES[kind])
    code = main(["replay", str(path), "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    certificate = json.loads((tmp_path / "out" / "certificate.json").read_text("utf-8"))
    assert certificate["findings"]
    assert (code, captured.out.split(":")[0]) == (
        (0, "PASS WITH FINDINGS") if kind == "not-utf8" else (1, "FAIL")
    )


def test_a_chunk_stored_as_base64_reads_back_byte_for_byte(tmp_path: Path) -> None:
    """The one way to store bytes that are not UTF-8: base64, exact."""
    raw = bytes(range(256))
    path = write(tmp_path / "x.cassette.jsonl", body=raw)
    line = json.loads(path.read_text("utf-8").splitlines()[2])
    assert base64.b64decode(line["base64"]) == raw
    assert cassette_module.load_cassette(path).body == raw


def test_an_integer_of_any_length_in_the_arguments_is_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """5001 digits, past CPython's conversion limit: a valid integer, so the call passes."""
    body = call('{"n": 1' + "0" * 5000 + "}") + event({}, "tool_calls") + b"data: [DONE]\n\n"
    code, out, err = replay(capsys, write(tmp_path / "x.cassette.jsonl", body=body))
    assert (code, out.split(":")[0]) == (0, "PASS"), err

"""Hostile input files: every malformed scenario, tools file or recorded stream is a clear
``path:line: message`` and exit 2 (or, for a recorded stream, a verdict), never a traceback, a
hang or memory that grows with the input."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import pytest

from callstream.cli import main
from callstream.core.tools import MAX_TOOLS_BYTES
from callstream.corpus.yaml_source import MAX_DEPTH, MAX_FILE_BYTES, MAX_VALUES

OK = """id: oc-hostile
title: one call
rules: [A2]
tools: [get_weather]
calls:
  - {name: get_weather, id: call_1, arguments: '{"city": "Paris"}'}
"""
LAUGHS = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]\n" for n in range(1, 10)
)
SCENARIOS: dict[str, tuple[str | bytes, str]] = {
    # name: (file content, what the message says)
    "billion laughs": (LAUGHS, f"more than {MAX_VALUES:,} values"),
    "deep flow nesting": ("id: " + "[" * 1_000 + "]" * 1_000 + "\n", "nested deeper than"),
    "deep block nesting": (
        "".join("  " * n + f"k{n}:\n" for n in range(300)) + "  " * 300 + "v\n",
        "nested deeper than",
    ),
    "deep tool schema": (
        OK.replace("[get_weather]", "[{name: w, parameters: " + "{a: " * 500 + "1" + "}" * 500)
        + "}]",
        "nested deeper than",
    ),
    "an integer of 5000 digits": (
        OK.replace('\'{"city": "Paris"}\'}', '\'{"city": "Paris"}\', chunk: ' + "9" * 5000 + "}"),
        "an integer of 5000 characters is too long",
    ),
    "random: 10**9 splittings": (OK + "splittings: [{random: 1000000000}]\n", "maximum of 1000"),
    "random: 10**30 splittings": (OK + f"splittings: [{{random: {10**30}}}]\n", "maximum"),
    "random: 1e9": (OK + "splittings: [{random: 1e9}]\n", "random"),
    "10**9 choices": (OK + "choices: 1000000000\n", "maximum of 1000"),
    "10**9 keep-alives": (OK + "noise: {keepalive: 1000000000}\n", "maximum of 10000"),
    "chunk: 0": (OK.replace('\'{"city": "Paris"}\'}', '\'{"city": "Paris"}\', chunk: 0}'), "chunk"),
    "a date that does not exist": (
        OK.replace("title: one call", "title: 2001-13-45"),
        "'2001-13-45' cannot be read: month must be in 1..12",
    ),
    "not UTF-8": (OK.encode() + b"# \xff\n", "byte 141 is not UTF-8"),
    "a lone surrogate on the wire": (OK.replace("id: call_1", 'id: "\\ud800"'), "surrogate"),
    "a NUL character": (OK + "\x00\n", "U+0000 is not allowed"),
    "an alias inside itself": ("a: &a [*a]\n", "id"),
    "a Python tag, never run": (OK + "x: !!python/object/apply:os.system [true]\n", "key 'x'"),
    "too large": (OK + "# " + "x" * MAX_FILE_BYTES + "\n", "larger than 8 MB"),
}


def lint(capsys: pytest.CaptureFixture[str], path: Path | str) -> tuple[int, str]:
    code = main(["lint", "--no-coverage", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_hostile_scenario_file_is_a_located_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    """The problem is reported as path:line (or path: for the whole file), exit 2."""
    content, says = SCENARIOS[name]
    path = tmp_path / "hostile.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    code, output = lint(capsys, path)
    assert code == 2, output
    assert output.startswith(f"{path}:"), output
    assert says.lower() in output.lower(), output
    assert "Traceback" not in output


def test_the_bounds_leave_room_for_the_corpus() -> None:
    """The corpus's largest and deepest files are far inside the bounds."""
    assert MAX_DEPTH >= 4 * 13
    assert MAX_VALUES >= 20 * 4_000


def test_an_endless_file_is_read_only_up_to_the_bound(capsys: pytest.CaptureFixture[str]) -> None:
    """/dev/zero named as a scenario file is too large, not a MemoryError."""
    code, output = lint(capsys, "/dev/zero")
    assert (code, output.strip()) == (2, "/dev/zero: the file is larger than 8 MB")


TOOLS: dict[str, tuple[str | bytes, str]] = {
    "deep nesting": ("[" * 100_000 + "]" * 100_000, ":1: nested deeper than 100 levels"),
    "a deep schema": (
        '[{"name": "w", "parameters": ' + '{"items": ' * 120 + "{}" + "}" * 120 + "}]",
        ":1: nested deeper than 100 levels",
    ),
    "an integer of 5000 digits": (
        '[{"name": "w",\n "parameters": {"maxLength": ' + "9" * 5000 + "}}]",
        ":2: an integer of more than 4300 digits",
    ),
    "not UTF-8": (b'[{"name":\n "w\xff"}]', ":2: byte 13 is not UTF-8"),
    "too large": ("[]" + " " * MAX_TOOLS_BYTES, ": the tools file is larger than 16 MB"),
}


@pytest.mark.parametrize("name", list(TOOLS))
def test_a_hostile_tools_file_is_a_located_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    """assemble --tools: exit 2, one line naming the file and the line."""
    content, says = TOOLS[name]
    path = tmp_path / "tools.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    stream = tmp_path / "empty.sse"
    stream.write_bytes(b"")
    code = main(["assemble", "--tools", str(path), str(stream)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"callstream: error: {path}{says}\n"


def chunk(call: dict[str, object]) -> bytes:
    payload = {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


SURROGATE = (
    b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c\\ud800",'
    b'"type":"function","function":{"name":"w","arguments":"{\\"a\\": \\"\\udc00\\"}"}}]},'
    b'"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n'
)


@pytest.mark.parametrize("form", ["json", "text"])
def test_lone_surrogates_in_a_stream_are_printed_as_escapes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, form: str
) -> None:
    """Peer data may carry \\ud800 escapes: the output stays valid UTF-8, the escape kept."""
    path = tmp_path / "surrogate.sse"
    path.write_bytes(SURROGATE)
    code = main(["assemble", "--format", form, str(path)])
    out = capsys.readouterr().out
    out.encode("utf-8")  # a lone surrogate would not encode
    assert code in (0, 1)
    assert "\\ud800" in out
    if form == "json":
        assert json.loads(out.splitlines()[0])["id"] == "c\ud800"


def test_an_endless_stream_stops_at_the_reference_limit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """/dev/zero as a recording: the line limit fails the stream and reading stops there."""
    code = main(["assemble", "/dev/zero"])
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert code == 1
    assert "too_large" in json.dumps(summary) or summary["stream_failure"]
    assert summary["summary"]["bytes"] < 64 << 20


_PEAK_RSS = """
import resource, sys
from callstream.cli import main
code = main(["assemble", "-"])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""


def peak_rss_kib(size: int, event: bytes) -> int:
    """The peak resident memory of ``callstream assemble -`` fed ``size`` bytes of ``event``s
    through a pipe, as the process itself measured it."""
    process = subprocess.Popen(
        [sys.executable, "-c", _PEAK_RSS],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    writer = threading.Thread(target=_feed, args=(process.stdin, size, event))
    writer.start()
    assert process.stderr is not None
    err = process.stderr.read()
    writer.join()
    assert process.wait() == 0, err
    return int(err.split()[-1])


def _feed(pipe: IO[bytes], size: int, event: bytes) -> None:
    block = event * ((1 << 20) // len(event) + 1)
    with pipe:
        for _ in range(size // len(block)):
            pipe.write(block)


def test_assemble_streams_its_input_in_bounded_memory() -> None:
    """48 MB piped in barely moves the peak resident memory above that of a tiny input: the
    input is fed as read, never held (it was all held before: 1 GB made 988 MB resident)."""
    event = b'data: {"choices":[{"index":0,"delta":{"content":"' + b"x" * 1000 + b'"}}]}\n\n'
    small = peak_rss_kib(1 << 20, event)
    large = peak_rss_kib(48 << 20, event)
    assert large - small < 16 << 10, (small, large)

"""``callstream assemble`` as a user runs it: output, exit codes, reports and clear errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from callstream.cli import main

RECORDINGS = Path(__file__).parent.parent / "scenarios" / "recordings" / "openai-chat"
TOOLS = str(RECORDINGS / "tools.json")
PARALLEL = str(RECORDINGS / "openai-parallel-calls.sse")
ERROR = str(RECORDINGS / "openai-in-band-error.sse")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def test_prints_one_json_object_per_call_then_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """Each call is a JSON line in the contract shape; the last line sums up; exit 0 when ready."""
    code, lines, _ = run(capsys, "assemble", PARALLEL, "--tools", TOOLS)
    assert code == 0
    first, second, summary = (json.loads(line) for line in lines)
    assert (first["name"], first["status"], first["arguments"]["city"]) == (
        "GetWeatherArgs",
        "ready",
        "Edinburgh",
    )
    assert second["arguments_text"] == '{"ticker": "AAPL", "exchange": "NASDAQ"}'
    assert summary["summary"] == {
        "calls": 2,
        "ready": 2,
        "rejected": 0,
        "bytes": Path(PARALLEL).stat().st_size,
        "profile": "lenient",
        "dialect": "openai-chat",
    }
    assert summary["findings"] == []
    assert summary["usage"]["total_tokens"] == 209


ANTHROPIC_STREAM = (
    "event: message_start\n"
    'data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",'
    '"content":[],"model":"claude","stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}'
    "\n\n"
    "event: content_block_start\n"
    'data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
    '"id":"toolu_1","name":"get_weather","input":{}}}\n\n'
    "event: content_block_delta\n"
    'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
    '"partial_json":"{\\"city\\": \\"Par"}}\n\n'
    "event: content_block_delta\n"
    'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
    '"partial_json":"is\\"}"}}\n\n'
    "event: content_block_stop\n"
    'data: {"type":"content_block_stop","index":0}\n\n'
)


def test_assemble_reads_the_dialect_it_is_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--dialect anthropic-messages`` reads an Anthropic stream: the call is ready at its
    ``content_block_stop`` although the stream was cut off before ``message_stop``; read as
    openai-chat, the same bytes make no call."""
    recording = tmp_path / "claude.sse"
    recording.write_text(ANTHROPIC_STREAM, encoding="utf-8")
    assert main(["assemble", "--dialect", "anthropic-messages", str(recording)]) == 0
    call, summary = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert (call["id"], call["name"], call["status"]) == ("toolu_1", "get_weather", "ready")
    assert call["arguments"] == {"city": "Paris"}
    assert summary["summary"]["dialect"] == "anthropic-messages"
    main(["assemble", str(recording)])
    *calls, summary = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert calls == []
    assert summary["summary"]["dialect"] == "openai-chat"


def test_rejected_call_exits_1_and_names_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    """A stream whose call was cut off by an error exits 1 and reports stream_error."""
    code, lines, _ = run(capsys, "assemble", ERROR, "--tools", TOOLS)
    assert code == 1
    result = json.loads(lines[0])
    assert (result["status"], result["reason"]) == ("rejected", "stream_error")
    assert json.loads(lines[-1])["stream_failure"].startswith("provider error: The server had")


def test_chunk_size_shows_when_each_call_was_released(capsys: pytest.CaptureFixture[str]) -> None:
    """Fed in small pieces, calls are released by the piece holding the finish chunk (C1, C4)."""
    data = Path(PARALLEL).read_bytes()
    finish_end = data.index(b'"finish_reason":"tool_calls"')
    _, lines, _ = run(capsys, "assemble", PARALLEL, "--chunk-size", "64")
    released = json.loads(lines[0])["released_after_byte"]
    assert finish_end < released <= finish_end + 64 + len(data[finish_end:].split(b"\n\n")[0])


def test_strict_profile_rejects_what_lenient_accepts(capsys: pytest.CaptureFixture[str]) -> None:
    """Gemini's index-less, id-less call is ready when lenient and rejected when strict."""
    gemini = str(RECORDINGS / "gemini-compat-no-index.sse")
    lenient, lenient_lines, _ = run(capsys, "assemble", gemini, "--tools", TOOLS)
    strict, strict_lines, _ = run(
        capsys, "assemble", gemini, "--tools", TOOLS, "--profile", "strict"
    )
    assert (lenient, strict) == (0, 1)
    assert json.loads(lenient_lines[0])["synthetic_id"] is True
    assert json.loads(strict_lines[0])["reason"] == "protocol_error"


def test_report_file_holds_the_same_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--report writes exactly what was printed, creating the folder."""
    report = tmp_path / "nested" / "run.jsonl"
    _, lines, _ = run(capsys, "assemble", PARALLEL, "--report", str(report))
    assert report.read_text(encoding="utf-8").splitlines() == lines


def test_text_format_is_readable(capsys: pytest.CaptureFixture[str]) -> None:
    """--format text names each call, its status and the findings."""
    openrouter = str(RECORDINGS / "openrouter-comments-usage-after-finish.sse")
    code, lines, _ = run(capsys, "assemble", openrouter, "--tools", TOOLS, "--format", "text")
    assert code == 0
    assert lines[0].startswith(
        "choice 0 call 0: get_current_time (id call_Qm2pX8vKc3LbT9nHd4Rf) READY"
    )
    assert "1 call(s): 1 ready, 0 rejected (openai-chat, lenient profile" in lines[2]
    assert any(line.startswith("finding [S2] openai-chat/C20 (choice 0):") for line in lines)


def test_reads_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """FILE '-' reads the stream from standard input."""
    stdin = io.TextIOWrapper(io.BytesIO(Path(PARALLEL).read_bytes()))
    monkeypatch.setattr(sys, "stdin", stdin)
    code, lines, _ = run(capsys, "assemble", "-")
    assert code == 0
    assert len(lines) == 3


def test_missing_stream_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A file that is not there gives exit 2 and names it."""
    missing = tmp_path / "nope.sse"
    code, lines, err = run(capsys, "assemble", str(missing))
    assert code == 2
    assert lines == []
    assert f"{missing}: cannot read the stream" in err


def test_malformed_tools_file_names_line_and_column(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Bad JSON in --tools is reported as path:line:column and exit 2."""
    tools = tmp_path / "tools.json"
    tools.write_text('[\n  {"name": "a",\n   "parameters": {]\n]\n', encoding="utf-8")
    code, _, err = run(capsys, "assemble", PARALLEL, "--tools", str(tools))
    assert code == 2
    assert f"{tools}:3:" in err


def test_invalid_tool_schema_names_the_tool(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A tool whose parameters are not a JSON Schema is named, with its position."""
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps([{"name": "ok"}, {"name": "bad", "parameters": {"type": "objekt"}}]),
        encoding="utf-8",
    )
    code, _, err = run(capsys, "assemble", PARALLEL, "--tools", str(tools))
    assert code == 2
    assert "tools[1]" in err
    assert "'bad'" in err


def test_unknown_tool_is_rejected_when_tools_are_given(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """With --tools, a call to a tool that was not offered is rejected unknown_tool."""
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"tools": [{"name": "get_stock_price"}]}), encoding="utf-8")
    code, lines, _ = run(capsys, "assemble", PARALLEL, "--tools", str(tools))
    assert code == 1
    assert [json.loads(line).get("reason") for line in lines[:2]] == ["unknown_tool", None]


def test_module_entry_point_runs() -> None:
    """``python -m callstream.cli`` works as the console script does."""
    done = subprocess.run(
        [sys.executable, "-m", "callstream.cli", "assemble", PARALLEL, "--format", "text"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "2 call(s): 2 ready, 0 rejected" in done.stdout

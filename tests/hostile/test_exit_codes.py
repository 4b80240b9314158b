"""Exit codes, the same for every command: 0 passed, 1 the implementation or stream failed,
2 a usage error as ``path:line: message``, 3 the harness failed (one line; a bug's traceback
goes to a log file, never to the terminal with exit 1), 130 interrupted."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NoReturn

import pytest

from callstream.cli import main
from callstream.cli.parser import COMMANDS
from callstream.errors import HarnessError

RECORDINGS = Path(__file__).parents[2] / "scenarios" / "recordings" / "openai-chat"
PARALLEL = str(RECORDINGS / "openai-parallel-calls.sse")
ERROR = str(RECORDINGS / "openai-in-band-error.sse")

ARGUMENTS = {
    # commands, and arguments each accepts
    "assemble": [PARALLEL],
    "run": [],
    "lint": [],
    "fuzz": [],
    "serve": [],
    "certify": ["--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
    "replay": ["a.cassette.jsonl"],
    "matrix": [],
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def raising(error: BaseException) -> Any:
    def command(args: Any) -> NoReturn:
        raise error

    return command


def command_raises(monkeypatch: pytest.MonkeyPatch, command: str, error: BaseException) -> None:
    """The function behind ``command`` raises ``error`` (the command table names it)."""
    monkeypatch.setitem(
        COMMANDS, command, dataclasses.replace(COMMANDS[command], run=raising(error))
    )


def test_0_when_every_call_is_ready(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "assemble", PARALLEL)[0] == 0


def test_1_when_the_stream_failed(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "assemble", ERROR)[0] == 1


def test_2_for_an_input_file_names_the_file_and_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("id: oc-x\ntitle: t\nrules: [A2]\ntools: [get_weather]\nbogus: 1\n")
    code, out, _ = run(capsys, "lint", "--no-coverage", str(path))
    assert code == 2
    assert f"{path}:5: unknown key 'bogus'" in out


def test_2_for_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["assemble", "--chunk-size", "0", PARALLEL])
    assert exited.value.code == 2


@pytest.mark.parametrize("command", list(ARGUMENTS))
def test_3_for_a_harness_error_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    command_raises(monkeypatch, command, HarnessError("a worker could not start"))
    code, _, err = run(capsys, command, *ARGUMENTS[command])
    assert (code, err) == (3, "callstream: error: a worker could not start\n")


@pytest.mark.parametrize("command", list(ARGUMENTS))
def test_3_for_a_bug_with_one_line_and_the_traceback_in_a_log(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: str,
) -> None:
    """An unexpected exception in any command is exit 3 (never 1, which blames the
    implementation): one line naming the error and the log that holds its traceback."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    command_raises(monkeypatch, command, RecursionError("deep\nsecond line"))
    code, _, err = run(capsys, command, *ARGUMENTS[command])
    assert code == 3
    [log] = tmp_path.glob("callstream-error-*.log")
    assert err == f"callstream: internal error: RecursionError: deep; the traceback is in {log}\n"
    assert "Traceback (most recent call last)" in log.read_text()
    assert "RecursionError: deep\nsecond line" in log.read_text()


def test_130_when_interrupted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    command_raises(monkeypatch, "lint", KeyboardInterrupt())
    assert run(capsys, "lint") == (130, "", "callstream: interrupted\n")


def test_a_bug_never_reaches_the_terminal_as_a_traceback(tmp_path: Path) -> None:
    """The real process: exit status 3, one line on stderr, nothing of the traceback."""
    program = (
        "import dataclasses, sys, tempfile\n"
        "from callstream.cli import main\n"
        "from callstream.cli.parser import COMMANDS\n"
        f"tempfile.tempdir = {str(tmp_path)!r}\n"
        "def boom(args): raise MemoryError('out of memory')\n"
        "COMMANDS['lint'] = dataclasses.replace(COMMANDS['lint'], run=boom)\n"
        "sys.exit(main(['lint']))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 3
    assert done.stderr.startswith("callstream: internal error: MemoryError: out of memory;")
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr

"""``callstream certify`` and ``callstream replay`` as a user runs them, against routes the
project's own provider emulator serves on 127.0.0.1: each route gets exactly the findings it
deserves, the cassettes replay to the same result, nothing hangs, no secret is written."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from callstream.cli import main
from callstream.corpus.cassette import load_cassette
from callstream.emulator import Emulator

ROOT = Path(__file__).parent.parent
PROBES = [
    "long-arguments",
    "parameterless",
    "parallel-calls",
    "tool-choice-required",
    "tool-choice-named",
    "max-tokens-truncation",
    "text-then-call",
    "include-usage",
]
NOT_NAMED = [p for p in PROBES if p not in ("tool-choice-named", "max-tokens-truncation")]
WITH_A_WHOLE_CALL = [p for p in PROBES if p != "max-tokens-truncation"]


def each(probes: list[str], check: str, quirk: str | None, severity: str) -> set[tuple[Any, ...]]:
    return {(probe, check, quirk, severity) for probe in probes}


# route -> profile -> (verdict, {(probe, check, quirk, severity)})
EXPECTED: dict[str, dict[str, tuple[str, set[tuple[Any, ...]]]]] = {
    "openai": {"strict": ("pass", set()), "lenient": ("pass", set())},
    "gemini": {
        "lenient": (
            "pass-with-findings",
            each(PROBES, "index_contract", "openai-chat/C1", "warning")
            | each(NOT_NAMED, "finish_reason", "openai-chat/C16", "warning"),
        ),
        "strict": (
            "fail",
            each(PROBES, "index_contract", "openai-chat/C1", "error")
            | each(NOT_NAMED, "finish_reason", "openai-chat/C16", "error"),
        ),
    },
    "ollama": {
        "lenient": (
            "pass-with-findings",
            {("parallel-calls", "index_contract", "openai-chat/C2", "warning")},
        ),
        "strict": ("fail", {("parallel-calls", "index_contract", "openai-chat/C2", "error")}),
    },
    "litellm": {
        "lenient": (
            "fail",
            each(PROBES, "identity_once", "openai-chat/C4", "warning")
            | each(PROBES, "identity_once", "openai-chat/C5", "warning")
            | each(WITH_A_WHOLE_CALL, "arguments_json", "openai-chat/C11", "error"),
        ),
    },
    "vllm": {
        "lenient": (
            "fail",
            each(WITH_A_WHOLE_CALL, "arguments_json", "openai-chat/C12", "error")
            | {("max-tokens-truncation", "finish_reason", "openai-chat/C17", "error")},
        ),
    },
    "openrouter": {
        "lenient": (
            "fail",
            {("long-arguments", "stream_error", "openai-chat/C26", "error")}
            | each(PROBES[1:], "after_finish", "openai-chat/C20", "warning")
            | each(PROBES[1:], "usage", "openai-chat/C23", "warning"),
        ),
    },
    "azure": {
        "lenient": (
            "pass-with-findings",
            each(PROBES, "chunk_envelope", "openai-chat/C21", "warning"),
        ),
        "strict": ("fail", each(PROBES, "chunk_envelope", "openai-chat/C21", "error")),
    },
    "never-finishes": {
        "lenient": (
            "fail",
            each(["parameterless", "include-usage"], "progress", None, "error"),
        ),
    },
}
CASES = [(route, profile) for route, profiles in EXPECTED.items() for profile in profiles]


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator() as running:
        yield running


def certify(
    capsys: pytest.CaptureFixture[str], base_url: str, model: str, out: Path, *extra: str
) -> tuple[int, str, str]:
    code = main(["certify", "--base-url", base_url, "--model", model, "--out", str(out), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def findings(certificate: dict[str, Any]) -> set[tuple[Any, ...]]:
    return {(f["probe"], f["check"], f["quirk"], f["severity"]) for f in certificate["findings"]}


@pytest.mark.parametrize(("route", "profile"), CASES, ids=[f"{r}-{p}" for r, p in CASES])
def test_each_emulated_route_gets_the_findings_it_deserves_and_replays_the_same(
    emulator: Emulator,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    route: str,
    profile: str,
) -> None:
    """Certified from the command line: the verdict, exactly the expected findings, the exit
    code (0 for pass with warnings only), every file; replaying the cassettes gives the same
    verdict and findings."""
    verdict, expected = EXPECTED[route][profile]
    probes = "parameterless,include-usage" if route == "never-finishes" else "all"
    out = tmp_path / "certificate"
    code, stdout, stderr = certify(
        capsys,
        emulator.base_url,
        f"route:{route}",
        out,
        "--profile",
        profile,
        "--probes",
        probes,
        "--timeout",
        "0.4",
    )
    certificate = json.loads((out / "certificate.json").read_text("utf-8"))
    assert (certificate["verdict"], findings(certificate)) == (verdict, expected)
    assert code == (1 if verdict == "fail" else 0)
    assert stdout.startswith(
        {"pass": "PASS:", "pass-with-findings": "PASS WITH", "fail": "FAIL:"}[verdict]
    )
    assert "certifying" in stderr
    for name in ("certificate.md", "certificate.html", "report.jsonl", "junit.xml", "badge.json"):
        assert (out / name).is_file()
    summary = (out / "summary.md").read_text("utf-8")
    assert "| R | Route rules (certify) | 8 |" in summary or route == "never-finishes"
    assert "Holes" not in summary  # the corpus's rules are not a certification's business
    assert certificate["route"]["model"] == f"route:{route}"
    code = main(["replay", str(out / "cassettes"), "--out", str(tmp_path / "replayed")])
    replayed = json.loads((tmp_path / "replayed" / "certificate.json").read_text("utf-8"))
    assert code == (1 if verdict == "fail" else 0)
    assert replayed["verdict"] == verdict
    assert [dict(f, cassette=None) for f in replayed["findings"]] == [
        dict(f, cassette=None) for f in certificate["findings"]
    ]


def test_a_check_that_fails_in_some_runs_only_is_flaky_not_passed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """OpenRouter fails every other long answer: with --repeat 2 the error is seen in run 1
    only, reported flaky, and the route fails; the certificate says so."""
    with Emulator() as emulator:
        code, stdout, _ = certify(
            capsys,
            emulator.base_url,
            "route:openrouter",
            tmp_path,
            "--repeat",
            "2",
            "--probes",
            "long-arguments",
        )
    assert code == 1
    certificate = json.loads((tmp_path / "certificate.json").read_text("utf-8"))
    (error,) = [f for f in certificate["findings"] if f["severity"] == "error"]
    assert (error["check"], error["quirk"], error["repeats"], error["flaky"]) == (
        "stream_error",
        "openai-chat/C26",
        [1],
        True,
    )
    assert "FLAKY 1/2" in stdout
    checks = {check["name"]: check["status"] for check in certificate["checks"]}
    assert checks["stream_error"] == "flaky"
    assert "flaky: in run 1 of 2" in (tmp_path / "certificate.md").read_text("utf-8")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_refused_connection_is_reported_at_once_and_stops_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Nothing listens: one connection finding, the other probes not run, within a second."""
    clock = time.monotonic()
    code, stdout, _ = certify(capsys, f"http://127.0.0.1:{free_port()}/v1", "m", tmp_path)
    assert time.monotonic() - clock < 5
    assert code == 1
    certificate = json.loads((tmp_path / "certificate.json").read_text("utf-8"))
    (finding,) = certificate["findings"]
    assert (finding["check"], finding["title"]) == ("connection", "the route cannot be reached")
    assert "ConnectError" in finding["detail"]
    assert [s["probe"] for s in certificate["skipped"]] == PROBES[1:]
    assert "not run: parameterless: the route cannot be reached" in stdout


def test_an_endpoint_that_accepts_and_never_answers_is_bounded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A dead endpoint (it accepts the connection and says nothing): no response within the
    timeout, then the run stops."""
    with socket.socket() as dead:
        dead.bind(("127.0.0.1", 0))
        dead.listen(8)
        clock = time.monotonic()
        code, _, _ = certify(
            capsys,
            f"http://127.0.0.1:{dead.getsockname()[1]}/v1",
            "m",
            tmp_path,
            "--timeout",
            "0.3",
        )
    assert time.monotonic() - clock < 3
    assert code == 1
    certificate = json.loads((tmp_path / "certificate.json").read_text("utf-8"))
    assert findings(certificate) == {("long-arguments", "progress", None, "error")}
    assert certificate["findings"][0]["title"] == "no response within the timeout"
    assert len(certificate["skipped"]) == len(PROBES) - 1


def register_and_certify(
    capsys: pytest.CaptureFixture[str],
    emulator: Emulator,
    out: Path,
    chunks: list[bytes],
    *extra: str,
    **reply: Any,
) -> tuple[int, dict[str, Any], float]:
    model = emulator.register(chunks, **reply)
    clock = time.monotonic()
    code, _, _ = certify(
        capsys, emulator.base_url, model, out, "--probes", "tool-choice-required", *extra
    )
    elapsed = time.monotonic() - clock
    return code, json.loads((out / "certificate.json").read_text("utf-8")), elapsed


def test_an_error_status_is_reported_with_the_routes_own_message(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A 500 with an OpenAI-shaped error body: the status and the message, nothing else."""
    body = json.dumps({"error": {"message": "upstream overloaded", "type": "server_error"}})
    code, certificate, _ = register_and_certify(
        capsys,
        emulator,
        tmp_path,
        [body.encode()],
        status=500,
        content_type="application/json",
    )
    assert code == 1
    (finding,) = certificate["findings"]
    assert (finding["check"], finding["title"], finding["detail"]) == (
        "http_status",
        "the route answered 500",
        "upstream overloaded",
    )


def test_a_body_that_is_not_an_event_stream_is_named_as_such(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An HTML page with a 200: the content type and the missing events, with an excerpt."""
    code, certificate, _ = register_and_certify(
        capsys,
        emulator,
        tmp_path,
        [b"<html><body>Gateway login</body></html>"],
        content_type="text/html",
    )
    assert code == 1
    assert findings(certificate) == {
        ("tool-choice-required", "content_type", None, "warning"),
        ("tool-choice-required", "sse_framing", None, "error"),
    }
    framing = next(f for f in certificate["findings"] if f["check"] == "sse_framing")
    assert framing["excerpt"] == "<html><body>Gateway login</body></html>"


def test_an_event_that_is_not_json_is_located_in_the_stream(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The reference cannot read on: one finding, in its words, at the event's byte."""
    role = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    role += b'"choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}\n\n'
    code, certificate, _ = register_and_certify(
        capsys, emulator, tmp_path, [role, b"data: {oops\n\n", b"data: [DONE]\n\n"]
    )
    assert code == 1
    (finding,) = certificate["findings"]
    assert (finding["check"], finding["title"], finding["offset"], finding["excerpt"]) == (
        "chunk_envelope",
        "the stream could not be read to its end",
        len(role),
        "{oops",
    )
    assert "event 2: data is not JSON" in finding["detail"]


def test_a_stream_that_never_ends_is_cut_at_the_deadline(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Data keeps coming (so it is progress), but never a finish: abandoned at the deadline."""
    event = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    event += b'"choices":[{"index":0,"delta":{"content":"la"},"finish_reason":null}]}\n\n'
    code, certificate, elapsed = register_and_certify(
        capsys,
        emulator,
        tmp_path,
        [event] * 400,
        "--timeout",
        "0.4",
        "--deadline",
        "0.8",
        delay=0.05,
    )
    assert code == 1
    assert elapsed < 4
    assert findings(certificate) == {("tool-choice-required", "progress", None, "error")}
    (finding,) = certificate["findings"]
    assert finding["title"] == "the response did not end within the deadline"


def test_keep_alives_alone_are_not_progress(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A route that sends only ``: keep-alive`` comments is abandoned after the timeout, and
    the finding counts the comments."""
    code, certificate, elapsed = register_and_certify(
        capsys,
        emulator,
        tmp_path,
        [b": keep-alive\n\n"],
        "--timeout",
        "0.4",
        linger=60.0,
        heartbeat=0.05,
    )
    assert code == 1
    assert elapsed < 4
    (finding,) = certificate["findings"]
    assert (finding["check"], finding["title"]) == (
        "progress",
        "no progress: no data event within the timeout",
    )
    assert "keep-alive comments after 0 data events" in finding["detail"]


def test_no_secret_reaches_any_file_or_output(
    emulator: Emulator,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted key, sent as the bearer token and in the URL, echoed back by the route in an
    error body and in a stream (cut in two by a chunk boundary), is in no file written and in
    neither stdout nor stderr."""
    key = "sk-planted-7f3a9c2e5b1d4f60"
    monkeypatch.setenv("PLANTED_KEY", key)
    echo = json.dumps({"error": {"message": f"Incorrect API key provided: {key}."}}).encode()
    refusing = emulator.register([echo], status=401, content_type="application/json")
    half = len(key) // 2
    start = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    start += b'"choices":[{"index":0,"delta":{"role":"assistant","content":"your key: '
    echoing = emulator.register(
        [
            start + key[:half].encode(),
            key[half:].encode() + b'"},"finish_reason":"stop"}]}\n\n',
            b"data: [DONE]\n\n",
        ]
    )
    outputs = []
    for n, (base, model) in enumerate(
        [
            (emulator.base_url, refusing),
            (f"{emulator.base_url}?key={key}", echoing),
            (f"{emulator.base_url}?key={key}", "route:openai"),
        ]
    ):
        code = main(
            [
                "certify",
                "--base-url",
                base,
                "--model",
                model,
                "--api-key-env",
                "PLANTED_KEY",
                "--out",
                str(tmp_path / str(n)),
                "--probes",
                "tool-choice-required,parameterless",
            ]
        )
        captured = capsys.readouterr()
        outputs += [captured.out, captured.err]
        assert code in (0, 1)
    assert "refused the credentials (401" in outputs[0]
    assert emulator.requests[-1]["model"] == "route:openai"
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert len(written) > 20
    leaks = [str(path) for path in written if key.encode() in path.read_bytes()]
    leaks += [n for n, text in enumerate(outputs) if key in text]
    assert leaks == []
    cassette = load_cassette(
        tmp_path / "1" / "cassettes" / "tool-choice-required-r1-stream.cassette.jsonl"
    )
    assert f"your key: {'*' * len(key)}".encode() in cassette.body
    assert len(cassette.chunks[0].data) == len(start) + len(key) // 2


def test_a_probe_file_adds_probes_using_the_shipped_tools(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--probes-file extends the shipped probes; --probes picks them by name."""
    extra = tmp_path / "mine.yaml"
    extra.write_text(
        "probes:\n"
        "  - name: weather-twice\n"
        "    title: two cities, one tool\n"
        "    tools: [get_weather]\n"
        "    messages: [{role: user, content: 'Weather in Paris and in Oslo?'}]\n"
        "    request: {tool_choice: required}\n"
        "    calls: 2\n",
        encoding="utf-8",
    )
    code, stdout, stderr = certify(
        capsys,
        emulator.base_url,
        "route:openai",
        tmp_path / "out",
        "--probes-file",
        str(extra),
        "--probes",
        "weather-twice",
    )
    assert code == 0
    assert "weather-twice" in stderr
    certificate = json.loads((tmp_path / "out" / "certificate.json").read_text("utf-8"))
    assert findings(certificate) == {("weather-twice", "calls_made", None, "info")}
    assert stdout.startswith("PASS:")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--probes", "nope"], "unknown probe 'nope'"),
        (["--api-key-env", "CALLSTREAM_UNSET_VARIABLE"], "is not set"),
        (["--base-url", "localhost:8000"], "not an http"),
        (["--probes-file", "missing.yaml"], "cannot read the probes"),
    ],
)
def test_usage_errors_exit_2_before_anything_is_sent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], says: str
) -> None:
    """A wrong probe name, an unset key variable, a URL without scheme, a missing file."""
    base = ["certify", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    if "--base-url" in argv:
        base = ["certify", "--model", "m"]
    code = main([*base, *argv, "--out", str(tmp_path)])
    assert code == 2
    assert says in capsys.readouterr().err


def test_a_user_serves_a_route_and_certifies_it_from_two_shells(tmp_path: Path) -> None:
    """``callstream serve --route vllm`` in one process, ``callstream certify`` in another:
    the verdict, the findings printed, the certificate written, exit code 1."""
    server = subprocess.Popen(
        [sys.executable, "-m", "callstream.cli", "serve", "--route", "vllm", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        base = first.split(" at ")[1].strip()
        said = "".join(server.stdout.readline() for _ in range(3))
        assert "any other model is answered as the vllm route" in said
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "callstream.cli",
                "certify",
                "--base-url",
                base,
                "--model",
                "my-model",
                "--out",
                str(tmp_path),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.terminate()
        server.wait(10)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("FAIL: my-model at")
    assert "finish_reason [openai-chat/C17] max-tokens-truncation" in done.stdout
    assert (tmp_path / "certificate.html").is_file()

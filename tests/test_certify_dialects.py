"""``callstream certify --dialect anthropic-messages|openai-responses`` as a user runs it, against
the emulator's Anthropic-wire and Responses-wire routes on 127.0.0.1: each probe asked in the
dialect's own shape, the faithful route certified clean under strict, each quirky route failed
with the dialect's own quirk ids, and the cassettes replayed and run in their dialect."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from callstream.cli import main
from callstream.corpus.cassette import cassette_scenario, load_cassette
from callstream.emulator import Emulator

ANTHROPIC = "anthropic-messages"
RESPONSES = "openai-responses"
FEW = ["tool-choice-required", "max-tokens-truncation"]
WHOLE = FEW[:1]
"""The probe whose call the token limit does not cut."""


def each(probes: list[str], check: str, quirk: str | None) -> set[tuple[Any, ...]]:
    return {(probe, check, quirk, "error") for probe in probes}


# (dialect, route) -> the strict profile's findings over FEW, every one an error
QUIRKY: dict[tuple[str, str], set[tuple[Any, ...]]] = {
    (ANTHROPIC, "anthropic-overloaded"): each(FEW, "stream_error", f"{ANTHROPIC}/A2"),
    (ANTHROPIC, "anthropic-no-message-stop"): each(FEW, "terminator", f"{ANTHROPIC}/C24"),
    (ANTHROPIC, "anthropic-no-index"): each(FEW, "index_contract", f"{ANTHROPIC}/C1"),
    # {…}{…}: the input streamed after {} in the start, then sent whole once more (a cut input
    # is not complete JSON either way: the stop reason max_tokens says so)
    (ANTHROPIC, "anthropic-doubled-input"): each(WHOLE, "arguments_json", f"{ANTHROPIC}/A1"),
    # the leading {" lost (the cut call is truncated all the same)
    (ANTHROPIC, "anthropic-vllm"): each(WHOLE, "arguments_json", f"{ANTHROPIC}/A1"),
    # two deltas swapped: strict stops reading at the first number out of order
    (RESPONSES, "responses-reordered"): each(FEW, "chunk_envelope", f"{RESPONSES}/R4")
    | each(FEW, "chunk_envelope", None),
    (RESPONSES, "responses-no-terminal"): each(FEW, "finish_reason", f"{RESPONSES}/R5")
    | each(FEW, "usage", None),
    # the final response has lost the calls the stream made, and the usage
    (RESPONSES, "responses-empty-output"): each(FEW, "usage", None)
    | each(FEW, "finish_reason", None),
    (RESPONSES, "responses-args-in-added"): each(FEW, "arguments_json", f"{RESPONSES}/R2"),
    # only response.completed (or .incomplete) says the calls are whole
    (RESPONSES, "responses-no-done"): each(FEW, "finish_reason", None),
}


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator() as running:
        yield running


def certify(
    capsys: pytest.CaptureFixture[str], emulator: Emulator, out: Path, *extra: str
) -> tuple[int, dict[str, Any]]:
    code = main(["certify", "--base-url", emulator.base_url, "--out", str(out), *extra])
    capsys.readouterr()
    return code, json.loads((out / "certificate.json").read_text("utf-8"))


def findings(certificate: dict[str, Any]) -> set[tuple[Any, ...]]:
    return {(f["probe"], f["check"], f["quirk"], f["severity"]) for f in certificate["findings"]}


def replayed(out: Path, tmp_path: Path) -> dict[str, Any]:
    assert main(["replay", str(out / "cassettes"), "--out", str(tmp_path / "replayed")]) in (0, 1)
    result: dict[str, Any] = json.loads((tmp_path / "replayed" / "certificate.json").read_text())
    return result


@pytest.mark.parametrize("dialect", [ANTHROPIC, RESPONSES])
def test_the_faithful_route_certifies_clean_under_strict_and_replays_the_same(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], tmp_path: Path, dialect: str
) -> None:
    """Every probe, streamed and not: no finding at all, exit 0; the certificate names the
    dialect; the replay, reading the dialect from the cassettes, agrees."""
    route = "anthropic" if dialect == ANTHROPIC else RESPONSES
    out = tmp_path / "certificate"
    code, certificate = certify(
        capsys,
        emulator,
        out,
        "--model",
        f"route:{route}",
        "--dialect",
        dialect,
        "--profile",
        "strict",
    )
    assert (code, certificate["verdict"], certificate["findings"]) == (0, "pass", [])
    assert certificate["route"]["dialect"] == dialect
    assert len(list((out / "cassettes").iterdir())) == 12  # 8 streamed, 4 compared
    again = replayed(out, tmp_path)
    assert (again["verdict"], again["route"]["dialect"]) == ("pass", dialect)


@pytest.mark.parametrize(("dialect", "route"), list(QUIRKY), ids=[r for _, r in QUIRKY])
def test_each_quirky_route_fails_strict_with_its_dialects_quirks(
    emulator: Emulator,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    dialect: str,
    route: str,
) -> None:
    """Exactly the expected findings, exit 1, and the same findings on replay."""
    out = tmp_path / "certificate"
    code, certificate = certify(
        capsys,
        emulator,
        out,
        "--model",
        f"route:{route}",
        "--dialect",
        dialect,
        "--profile",
        "strict",
        "--probes",
        ",".join(FEW),
    )
    assert (code, certificate["verdict"]) == (1, "fail")
    assert findings(certificate) == QUIRKY[(dialect, route)]
    assert findings(replayed(out, tmp_path)) == QUIRKY[(dialect, route)]


@pytest.mark.parametrize(
    ("dialect", "route", "quirk"),
    [
        (ANTHROPIC, "anthropic-no-index", f"{ANTHROPIC}/C1"),
        (RESPONSES, "responses-args-in-added", f"{RESPONSES}/R2"),
    ],
)
def test_what_a_lenient_assembler_mends_is_a_warning_under_lenient(
    emulator: Emulator,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    dialect: str,
    route: str,
    quirk: str,
) -> None:
    """The same quirk, mended by a lenient assembler: pass with findings, exit 0."""
    code, certificate = certify(
        capsys,
        emulator,
        tmp_path / "c",
        "--model",
        f"route:{route}",
        "--dialect",
        dialect,
        "--probes",
        "tool-choice-required",
    )
    assert (code, certificate["verdict"]) == (0, "pass-with-findings")
    assert {(f["quirk"], f["severity"]) for f in certificate["findings"]} == {(quirk, "warning")}


def test_each_request_goes_in_the_dialects_own_shape(
    emulator: Emulator,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Anthropic: POST …/messages with x-api-key (never written) and anthropic-version,
    max_tokens, tools with input_schema, tool_choice any or tool, system on its own.
    Responses: POST …/responses with input, flat function tools, max_output_tokens."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-planted-0123456789")
    probes = "max-tokens-truncation,tool-choice-named"
    out = tmp_path / "anthropic"
    certify(
        capsys,
        emulator,
        out,
        "--model",
        "route:anthropic",
        "--dialect",
        ANTHROPIC,
        "--probes",
        probes,
    )
    folder = out / "cassettes"
    first = load_cassette(folder / "max-tokens-truncation-r1-stream.cassette.jsonl")
    assert first.request.url.endswith("/v1/messages")
    assert first.request.headers["anthropic-version"] == "2023-06-01"
    assert "x-api-key" not in first.request.headers
    assert first.context["dialect"] == ANTHROPIC
    body = first.request.body
    assert (body["max_tokens"], body["tool_choice"]) == (24, {"type": "any"})
    assert body["system"].startswith("You save text.")
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert set(body["tools"][0]) == {"name", "description", "input_schema"}
    named = load_cassette(folder / "tool-choice-named-r1-stream.cassette.jsonl").request.body
    assert (named["max_tokens"], named["tool_choice"]) == (
        4096,
        {"type": "tool", "name": "get_weather"},
    )
    assert not any(b"sk-ant-planted" in p.read_bytes() for p in out.rglob("*") if p.is_file())

    out = tmp_path / "responses"
    certify(
        capsys,
        emulator,
        out,
        "--model",
        "route:openai-responses",
        "--dialect",
        RESPONSES,
        "--probes",
        probes,
    )
    folder = out / "cassettes"
    first = load_cassette(folder / "max-tokens-truncation-r1-stream.cassette.jsonl")
    assert first.request.url.endswith("/v1/responses")
    body = first.request.body
    assert body["instructions"].startswith("You save text.")
    assert [m["role"] for m in body["input"]] == ["user"]
    assert body["tools"][0]["type"] == "function"
    assert {"name", "parameters"} <= set(body["tools"][0])
    assert "messages" not in body
    assert "max_tokens" not in body
    assert body["max_output_tokens"] == 24
    named = load_cassette(folder / "tool-choice-named-r1-stream.cassette.jsonl").request.body
    assert named["tool_choice"] == {"type": "function", "name": "get_weather"}


def test_a_dialects_cassettes_run_as_regression_cases_in_that_dialect(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A quirky route's streamed cassette is a literal scenario of its dialect, whose
    expectation carries the dialect's quirk; callstream run passes the reference on it."""
    out = tmp_path / "certificate"
    certify(
        capsys,
        emulator,
        out,
        "--model",
        "route:anthropic-no-index",
        "--dialect",
        ANTHROPIC,
        "--probes",
        "tool-choice-required",
    )
    path = out / "cassettes" / "tool-choice-required-r1-stream.cassette.jsonl"
    scenario = cassette_scenario(path)
    assert scenario.spec.dialect == ANTHROPIC
    assert scenario.spec.expected is not None
    assert f"{ANTHROPIC}/C1" in scenario.spec.expected["lenient"].findings
    assert [call.status for call in scenario.spec.expected["lenient"].calls] == ["ready"]
    code = main(["run", str(out / "cassettes"), "--jobs", "1", "--out", str(tmp_path / "run")])
    assert code == 0, capsys.readouterr().out


def test_a_route_is_served_on_its_own_dialects_path_only(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Certifying an Anthropic route as a chat route gets the emulator's 400 naming the path,
    a finding, not a crash."""
    code, certificate = certify(
        capsys,
        emulator,
        tmp_path / "c",
        "--model",
        "route:anthropic",
        "--probes",
        "parameterless",
    )
    assert code == 1
    assert [(f["check"], f["title"], f["answer"]) for f in certificate["findings"]] == [
        ("http_status", "the route answered 400", "stream"),
        ("http_status", "the route answered 400", "non-stream"),
    ]
    assert "POST to /v1/messages" in certificate["findings"][0]["detail"]


def test_an_anthropic_message_that_ends_its_turn_with_calls_is_dishonest(
    emulator: Emulator, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """stop_reason end_turn although a tool_use block came: a client's agent loop stops with
    the call unrun. A deviation: an error under strict, a warning under lenient."""

    def sse(kind: str, **fields: Any) -> bytes:
        data = json.dumps({"type": kind, **fields})
        return f"event: {kind}\ndata: {data}\n\n".encode()

    usage = {"input_tokens": 9, "output_tokens": 1}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "usage": usage}
    block = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
    name = emulator.register(
        [
            sse("message_start", message={**message, "content": []}),
            sse("content_block_start", index=0, content_block=block),
            sse(
                "content_block_delta",
                index=0,
                delta={"type": "input_json_delta", "partial_json": '{"city": "Zürich"}'},
            ),
            sse("content_block_stop", index=0),
            sse("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 9}),
            sse("message_stop"),
        ]
    )
    for profile, severity, code in (("strict", "error", 1), ("lenient", "warning", 0)):
        out = tmp_path / profile
        found = certify(
            capsys,
            emulator,
            out,
            "--model",
            name,
            "--dialect",
            ANTHROPIC,
            "--probes",
            "tool-choice-required",
            "--profile",
            profile,
        )
        assert found[0] == code
        assert findings(found[1]) == {("tool-choice-required", "finish_reason", None, severity)}
        assert found[1]["findings"][0]["title"] == "stop_reason end_turn with calls"

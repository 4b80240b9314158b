"""The JavaScript adapters (adapters/js/): each a pipe program driving one npm library the way
its users do, judged like any implementation; the matrix runs them beside the Python ones and
lists those that cannot run here, with the reason.

They need ``node`` and the packages of ``adapters/js/package-lock.json``: this module runs
``npm ci --prefix adapters/js`` itself when they are not installed, so the README's test command
runs them on a fresh clone. Only where there is no Node.js at all are the library tests skipped,
and the roster tests show the matrix saying so."""

from __future__ import annotations

import fcntl
import functools
import json
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from callstream.cli import main
from callstream.connect.connectables import load_implementation
from callstream.core.declaration import OBSERVABLES, Implementation
from callstream.core.rendering import render
from callstream.corpus.scenario import Scenario, corpus_paths, load_scenarios
from callstream.errors import ImplementationReportedError, UsageError
from callstream.matrix.roster import JS_ADAPTERS, roster
from callstream.reference import Limits, Tool
from tests.helpers import TOOLS, args, chunk, header, sse

ROOT = Path(__file__).parent.parent
FOLDER = ROOT / JS_ADAPTERS
MANIFEST = json.loads((FOLDER / "package.json").read_text("utf-8"))["callstream"]["adapters"]
ALL = list(MANIFEST)
AI_SDK = ["ai-sdk-openai", "ai-sdk-openai-compatible"]
DIALECTS = {
    "openai-node-responses": "openai-responses",
    "ai-sdk-openai-responses": "openai-responses",
    "anthropic-sdk": "anthropic-messages",
    "ai-sdk-anthropic": "anthropic-messages",
    "langchain-anthropic-js": "anthropic-messages",
}
"""The adapters of the other dialects; every other one reads openai-chat."""
OPENAI_CHAT = [name for name in ALL if name not in DIALECTS]


def _packages_missing() -> bool:
    """Whether a package some adapter of the manifest drives is not installed (none yet, or
    an install from before the adapter was added)."""
    return any(
        not (FOLDER / "node_modules" / package / "package.json").is_file()
        for adapter in MANIFEST.values()
        for package in adapter["packages"]
    )


def _install_packages() -> None:
    """``npm ci`` once for every test worker (a lock keeps xdist's workers from racing), when
    npm is here and the locked packages are not all installed yet."""
    npm = shutil.which("npm")
    if npm is None or not _packages_missing():
        return
    with (FOLDER / ".npm-ci.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _packages_missing():
            subprocess.run(
                [npm, "ci", "--prefix", str(FOLDER), "--no-audit", "--no-fund"],
                check=True,
                capture_output=True,
            )


_install_packages()
_ready = {e.name: e for e in roster(FOLDER) if e.language == "javascript" and e.missing is None}
needs_node = pytest.mark.skipif(len(_ready) < len(ALL), reason="node is not on PATH")


def connectable(adapter: str) -> str:
    return f"cmd:node {FOLDER / MANIFEST[adapter]['program']}"


_LOADED: dict[str, Implementation] = {}


@pytest.fixture(scope="module", autouse=True)
def _programs() -> Iterator[None]:
    """One program per adapter for the module, as a worker keeps one for its streams."""
    yield
    for implementation in _LOADED.values():
        implementation.factory.stop()
    _LOADED.clear()


def loaded(adapter: str) -> Implementation:
    """The adapter loaded from its ``cmd:`` connectable, once for the module."""
    if adapter not in _LOADED:
        _LOADED[adapter] = load_implementation(connectable(adapter))
    return _LOADED[adapter]


def assemble(adapter: str, data: bytes, tools: Sequence[Tool] = TOOLS) -> list[Any]:
    """Feed ``data`` in one chunk, as the harness does, and return what ``close()`` gives."""
    stream = loaded(adapter).factory(tools=tools, limits=Limits())
    assert stream.feed(data) == []
    results: list[Any] = stream.close()
    return results


@functools.cache
def corpus() -> dict[str, Scenario]:
    """The built-in corpus by scenario id, loaded once for the module."""
    return {s.id: s for s in load_scenarios(corpus_paths([], [])).scenarios}


def corpus_scenario(scenario_id: str) -> Scenario:
    """One scenario of the built-in corpus (its stream is rendered as the emulator serves it)."""
    return corpus()[scenario_id]


def assemble_scenario(adapter: str, scenario_id: str) -> list[Any]:
    """What ``adapter`` hands back for a corpus scenario's stream, in its declared dialect."""
    scenario = corpus_scenario(scenario_id)
    assert scenario.spec.dialect == DIALECTS.get(adapter, "openai-chat")
    return assemble(adapter, render(scenario.spec).data, scenario.spec.tools)


def verdicts(results: list[Any]) -> list[tuple[str | None, str]]:
    return [(r["id"], r["status"]) for r in results]


def one_call(*fragments: str, finish: str | None = "tool_calls", role: bool = True) -> bytes:
    """One get_weather call whose arguments come in ``fragments``."""
    first = chunk(header(0, "call_abc", "get_weather"), role="assistant" if role else None)
    rest = [chunk(args(0, fragment)) for fragment in fragments]
    return sse(first, *rest, *([chunk(finish=finish)] if finish else []))


CLEAN = one_call('{"city": ', '"Paris"}')


@needs_node
def test_every_js_adapter_declares_what_it_can_show_and_never_release_timing() -> None:
    """Results come out at close (the library reads the whole answer through fetch), so none
    exposes "incremental"; the AI SDK and LangChain.js hand back parsed inputs, no text, and
    none tells a machine-readable reason for a refusal."""
    exposed = {name: loaded(name).declaration for name in ALL}
    for declaration in exposed.values():
        assert declaration.observables <= set(OBSERVABLES)
        assert "incremental" not in declaration.observables
    for name, declaration in exposed.items():
        assert declaration.dialects == (DIALECTS.get(name, "openai-chat"),)
    assert exposed["openai-node"].observables == {"status", "arguments_text", "ids", "choices"}
    for name in AI_SDK:
        assert exposed[name].observables == {"arguments", "ids"}
    assert exposed["langchain-openai-js"].observables == {"status", "arguments", "ids"}
    assert exposed["openai-node-responses"].observables == {"status", "arguments_text", "ids"}
    assert exposed["ai-sdk-openai-responses"].observables == {"arguments", "ids"}
    assert exposed["ai-sdk-anthropic"].observables == {"arguments", "ids"}
    for name in ("anthropic-sdk", "langchain-anthropic-js"):
        assert exposed[name].observables == {"status", "arguments", "ids"}


@needs_node
@pytest.mark.parametrize("adapter", OPENAI_CHAT)
def test_a_clean_stream_is_one_ready_call(adapter: str) -> None:
    """Every library gets the plain OpenAI stream right."""
    [result] = assemble(adapter, CLEAN)
    assert (result["id"], result["name"], result["status"]) == ("call_abc", "get_weather", "ready")
    if adapter in AI_SDK or adapter == "langchain-openai-js":
        assert result["arguments"] == {"city": "Paris"}
    if adapter == "openai-node":
        assert result["arguments_text"] == '{"city": "Paris"}'


@needs_node
@pytest.mark.parametrize("adapter", ["openai-node", "langchain-openai-js", *AI_SDK])
def test_a_call_cut_by_length_is_handed_back_to_run(adapter: str) -> None:
    """None of them acts on a `length` finish for plain tools: the truncated call comes back
    as one to run (openai-node refuses it only for strict or auto-parseable tools; the AI SDK
    keeps a call whose text happens to parse)."""
    results = assemble(adapter, one_call('{"city": "Paris"}', finish="length"))
    assert [r["status"] for r in results] == ["ready"]


@needs_node
def test_openai_node_refuses_a_completion_no_chunk_gave_a_role() -> None:
    """`finalizeChatCompletion` throws "missing role for choice 0" when no delta carried
    `role`, which the wire grammar leaves optional: the call is refused, in the SDK's words."""
    [result] = assemble("openai-node", one_call('{"city": "Paris"}', role=False))
    assert result["status"] == "rejected"
    assert result["detail"] == "OpenAIError: missing role for choice 0"


@needs_node
def test_openai_node_refuses_every_choice_when_one_never_finished() -> None:
    """One choice without a finish reason makes `finalChatCompletion()` throw, so the other
    choice's finished call is refused with it."""
    data = sse(
        chunk(header(0, "call_a", "get_weather", '{"city": "Paris"}'), role="assistant"),
        chunk(header(0, "call_b", "get_weather", '{"city": "Rome"}'), choice=1, role="assistant"),
        chunk(finish="tool_calls"),
    )
    results = assemble("openai-node", data)
    assert [(r["choice"], r["status"]) for r in results] == [(0, "rejected"), (1, "rejected")]
    assert results[0]["detail"] == "OpenAIError: missing finish_reason for choice 1"


@needs_node
@pytest.mark.parametrize("adapter", AI_SDK)
def test_the_ai_sdk_sets_apart_a_call_whose_input_does_not_parse(adapter: str) -> None:
    """`parseToolCall` marks a call whose text is not JSON `invalid`: it is not handed back to
    run, which the contract reads as refused."""
    assert assemble(adapter, one_call('{"city": "Par')) == []


@needs_node
def test_langchain_js_sets_apart_unparseable_arguments() -> None:
    """A group's text that `parsePartialJson` cannot read lands in `invalid_tool_calls`, with
    the one error LangChain gives every call it sets apart, "Malformed args."."""
    [result] = assemble("langchain-openai-js", one_call('{"city": "Paris"} trailing'))
    assert (result["status"], result["detail"]) == ("rejected", "Malformed args.")


@needs_node
@pytest.mark.parametrize("adapter", ["openai-node", "langchain-openai-js"])
def test_an_in_band_error_rejects_the_calls_it_cut_short(adapter: str) -> None:
    """An error payload inside the 200 stream throws the openai SDK's `APIError`."""
    data = sse(
        chunk(header(0, "call_abc", "get_weather", '{"city": '), role="assistant"),
        {"error": {"message": "overloaded", "type": "server_error"}},
        done=False,
    )
    [result] = assemble(adapter, data)
    assert result["status"] == "rejected"


@needs_node
def test_the_matrix_runs_a_js_adapter_beside_a_python_one(tmp_path: Path) -> None:
    """`callstream matrix` runs a JavaScript adapter like a Python one: a column with its
    language, versions and dialects, the rules table, and its report folder."""
    code = main(
        [
            "matrix",
            "--adapters",
            "openai-node,ai-sdk-openai",
            "--js-adapters",
            str(FOLDER),
            "-k",
            "oc-a-openai-single-call-fragmented",
            "--out",
            str(tmp_path),
            "--jobs",
            "1",
        ]
    )
    assert code == 0
    index = json.loads((tmp_path / "matrix.json").read_text())
    columns = {c["adapter"]: c for c in index["columns"]}
    assert columns["openai-node"]["language"] == "javascript"
    assert columns["openai-node"]["dialects"] == ["openai-chat"]
    assert set(columns["ai-sdk-openai"]["versions"]) == {"ai", "@ai-sdk/openai"}
    assert index["not_run"] == []
    text = (tmp_path / "matrix.md").read_text()
    assert "| javascript | openai-chat | openai " in text
    assert (tmp_path / "openai-node" / "report.html").is_file()


def test_an_adapter_whose_packages_are_missing_is_listed_as_not_run(tmp_path: Path) -> None:
    """Without `npm ci` the roster keeps every JavaScript adapter, each with what to run."""
    shutil.copy(FOLDER / "package.json", tmp_path / "package.json")
    entries = [e for e in roster(tmp_path) if e.language == "javascript"]
    assert [e.name for e in entries] == ALL
    assert all(e.missing and "npm ci --prefix" in e.missing for e in entries)


def test_a_javascript_adapter_named_as_a_python_one_is_refused(tmp_path: Path) -> None:
    """Each adapter's report goes to a folder of its name: a JavaScript adapter named as a
    Python one would overwrite its report, so the roster refuses the manifest."""
    manifest = json.loads((FOLDER / "package.json").read_text("utf-8"))
    adapters = manifest["callstream"]["adapters"]
    adapters["langchain"] = adapters.pop("langchain-openai-js")
    (tmp_path / "package.json").write_text(json.dumps(manifest), "utf-8")
    with pytest.raises(UsageError, match="langchain is used twice"):
        roster(tmp_path)


def test_without_node_every_js_adapter_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine without Node.js lists every JavaScript adapter as not run, saying why."""
    monkeypatch.setenv("PATH", str(tmp_path))
    entries = [e for e in roster(FOLDER) if e.language == "javascript"]
    assert entries
    assert all(e.missing and "node is not on PATH" in e.missing for e in entries)


def test_the_matrix_lists_what_could_not_run(tmp_path: Path) -> None:
    """An adapter whose runtime is missing is a line of the matrix, with the reason."""
    js = tmp_path / "js"
    js.mkdir()
    shutil.copy(FOLDER / "package.json", js / "package.json")
    out = tmp_path / "out"
    code = main(
        [
            "matrix",
            "--adapters",
            "openai,openai-node",
            "--js-adapters",
            str(js),
            "-k",
            "oc-a-openai-single-call-fragmented",
            "--out",
            str(out),
            "--jobs",
            "1",
        ]
    )
    assert code == 0
    index = json.loads((out / "matrix.json").read_text())
    assert [c["adapter"] for c in index["columns"]] == ["openai"]
    [missing] = index["not_run"]
    assert (missing["adapter"], missing["language"]) == ("openai-node", "javascript")
    assert "Not run here:" in (out / "matrix.md").read_text()
    assert "npm ci --prefix" in (out / "matrix.html").read_text()


@needs_node
def test_a_number_json_cannot_spell_crosses_the_pipe_as_the_library_parsed_it() -> None:
    """`1e400` parses to Infinity in JavaScript, as in Python; the pipe writes the token Python
    reads, not the `null` of JSON.stringify, so the library is judged on its own parse."""
    [result] = assemble("ai-sdk-openai", one_call('{"city": 1e400}'))
    assert result["arguments"] == {"city": float("inf")}


@needs_node
def test_deeply_nested_arguments_cross_the_pipe_whole() -> None:
    """The pipe's own encoding adds no recursion: the corpus's deeply nested arguments, which
    LangChain.js parses, arrive whole (a replacer in JSON.stringify overflowed the stack)."""
    [scenario] = [
        s
        for s in load_scenarios(corpus_paths([], [])).scenarios
        if s.id == "oc-v-deeply-nested-arguments"
    ]
    [result] = assemble("langchain-openai-js", render(scenario.spec).data, scenario.spec.tools)
    assert result["status"] == "ready"
    assert isinstance(result["arguments"]["blob"], list)


@needs_node
@pytest.mark.parametrize("adapter", sorted(DIALECTS))
def test_a_clean_stream_of_its_dialect_is_handed_back(adapter: str) -> None:
    """Each library of the other dialects gets its own plain stream right, read through the
    request the emulator answers (`POST /v1/messages`, `POST /v1/responses`)."""
    if DIALECTS[adapter] == "anthropic-messages":
        [result] = assemble_scenario(adapter, "am-l-one-call-tool-use")
        assert (result["id"], result["name"]) == ("toolu_014cZKakAghgvhi4Y99XBUru", "search")
        assert result["arguments"] == {"query": "Detroit Tigers schedule"}
    else:
        [result] = assemble_scenario(adapter, "or-l-single-call-completed")
        assert (result["id"], result["name"]) == ("call_1", "get_weather")
        if adapter == "openai-node-responses":
            assert result["arguments_text"] == '{"city": "Paris", "units": "c"}'
        else:
            assert result["arguments"] == {"city": "Paris", "units": "c"}
    assert result["status"] == "ready"


@needs_node
def test_anthropic_sdk_refuses_a_message_that_never_stopped() -> None:
    """Only `message_stop` makes a message: without it `finalMessage()` throws, in the SDK's
    words, and the call of the snapshot is refused; LangChain and the AI SDK, which read no
    `message_stop`, hand the same call back to run."""
    [result] = assemble_scenario("anthropic-sdk", "am-l-eof-without-message-stop")
    assert result["status"] == "rejected"
    assert result["detail"] == (
        "AnthropicError: stream ended without producing a Message with role=assistant"
    )
    for adapter in ("langchain-anthropic-js", "ai-sdk-anthropic"):
        [result] = assemble_scenario(adapter, "am-l-eof-without-message-stop")
        assert (result["status"], result["arguments"]) == ("ready", {"city": "Paris", "units": "c"})


@needs_node
def test_a_call_cut_by_max_tokens_is_run_with_a_partial_parse() -> None:
    """Neither the SDK nor LangChain acts on `max_tokens`: both complete the truncated input
    (the SDK's partial-JSON parser drops the value it was cut in, LangChain's keeps it) and
    hand the call back to run; the AI SDK, whose parse fails, sets it apart."""
    scenario = "am-l-max-tokens-inside-a-value"
    [result] = assemble_scenario("anthropic-sdk", scenario)
    assert (result["status"], result["arguments"]) == ("ready", {})
    [result] = assemble_scenario("langchain-anthropic-js", scenario)
    assert (result["status"], result["arguments"]) == ("ready", {"city": "Par"})
    assert assemble_scenario("ai-sdk-anthropic", scenario) == []


@needs_node
def test_input_that_is_not_json_crashes_the_anthropic_sdk() -> None:
    """The SDK hands input that is not truncated JSON to `JSON.parse` and lets its SyntaxError
    out (wrapped in an AnthropicError, D60): the library's crash. LangChain sets the call apart
    as "Malformed args.", the AI SDK does not hand it back."""
    with pytest.raises(ImplementationReportedError, match="SyntaxError"):
        assemble_scenario("anthropic-sdk", "am-v-invalid-json-at-stop")
    [result] = assemble_scenario("langchain-anthropic-js", "am-v-invalid-json-at-stop")
    assert (result["status"], result["detail"]) == ("rejected", "Malformed args.")
    assert assemble_scenario("ai-sdk-anthropic", "am-v-invalid-json-at-stop") == []


@needs_node
@pytest.mark.parametrize("adapter", ["anthropic-sdk", "langchain-anthropic-js"])
def test_an_anthropic_error_event_rejects_the_call_it_cut_short(adapter: str) -> None:
    """`event: error` throws the SDK's `APIError`, in both the SDK's stream and LangChain's."""
    [result] = assemble_scenario(adapter, "am-q-error-overloaded-error")
    assert result["status"] == "rejected"
    assert "overloaded_error" in result["detail"]


@needs_node
def test_openai_node_hands_back_the_calls_of_an_incomplete_response() -> None:
    """`finalResponse()` resolves with an incomplete response (D72): both calls, the last one
    cut by max_output_tokens, come back to run; an error event rejects every call it saw."""
    results = assemble_scenario(
        "openai-node-responses", "or-l-incomplete-max-output-tokens-last-call"
    )
    assert verdicts(results) == [("call_1", "ready"), ("call_2", "ready")]
    results = assemble_scenario("openai-node-responses", "or-e-nested-error-sequential")
    assert verdicts(results) == [("call_1", "rejected"), ("call_2", "rejected")]
    assert results[0]["detail"].startswith("APIError: ")


@needs_node
def test_the_ai_sdk_responses_model_keeps_the_calls_done_before_an_error() -> None:
    """The Responses model emits a call at its `output_item.done`: the call finished before
    the error event is handed back, the one it cut short is not."""
    results = assemble_scenario("ai-sdk-openai-responses", "or-e-nested-error-sequential")
    assert [(r["id"], r["arguments"]) for r in results] == [("call_1", {"city": "Paris"})]


@needs_node
def test_a_call_the_ai_sdk_sets_apart_keeps_its_place() -> None:
    """The call after one the SDK marks `invalid` is handed back as the second call, never
    taken for the first."""
    data = sse(
        chunk(header(0, "call_a", "get_weather", '{"city": "Par'), role="assistant"),
        chunk(header(1, "call_b", "get_weather", '{"city": "Rome"}')),
        chunk(finish="tool_calls"),
    )
    results = assemble("ai-sdk-openai", data)
    assert [(r["index"], r["id"], r["arguments"]) for r in results] == [
        (1, "call_b", {"city": "Rome"})
    ]

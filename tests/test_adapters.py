"""``http:`` connectables: real client libraries run against the provider emulator, their
assembled calls reported in the contract's terms, right where the library is right and wrong
the way it is really wrong."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from harness.adapters import ADAPTERS, Adapter, installed, load_adapter
from harness.adapters._http import shared_emulator
from harness.connect import load_implementation
from harness.errors import UsageError
from harness.runner import expand
from harness.spec import CallPlan, Scenario, StreamSpec
from reference_impl import Limits, Tool
from tests.helpers import NOW, STOCK, TOOLS, args, chunk, header, sse

ALL = list(ADAPTERS)


def assemble(adapter: str, chunks: Sequence[bytes], tools: Sequence[Tool] = TOOLS) -> list[Any]:
    """Feed ``chunks`` to the adapter as the harness does and return what ``close()`` gives."""
    session = load_implementation(f"http:{adapter}").factory(tools=tools, limits=Limits())
    assert all(session.feed(piece) == [] for piece in chunks)
    results: list[Any] = session.close()
    return results


def one_call(*fragments: str, finish: str = "tool_calls", id_every: bool = False) -> bytes:
    """A stream of one get_weather call whose arguments come in ``fragments``."""
    deltas = [chunk(header(0, "call_abc", "get_weather"), role="assistant")]
    for fragment in fragments:
        delta = args(0, fragment)
        if id_every:
            delta["id"] = "call_abc"
        deltas.append(chunk(delta))
    return sse(*deltas, chunk(finish=finish))


CLEAN = one_call('{"city": ', '"Paris"}')


@pytest.mark.parametrize("adapter", ALL)
def test_a_clean_stream_is_assembled_into_one_ready_call(adapter: str) -> None:
    """Every library gets the plain OpenAI stream right, byte by byte on the wire."""
    pieces = [CLEAN[i : i + 1] for i in range(len(CLEAN))]
    assert assemble(adapter, pieces) == [
        {
            "choice": 0,
            "index": 0,
            "id": "call_abc",
            "name": "get_weather",
            "arguments_text": '{"city": "Paris"}',
            "arguments": {"city": "Paris"},
            "status": "ready",
            "reason": None,
        }
    ]


@pytest.mark.parametrize("adapter", ["openai", "openai-stream-helper"])
def test_the_openai_sdk_doubles_an_id_repeated_on_every_delta(adapter: str) -> None:
    """openai's accumulate_delta concatenates every string field but index and type, so an id
    repeated on each delta (LiteLLM, OpenRouter) comes back doubled, on a ready call."""
    [result] = assemble(adapter, [one_call('{"city": ', '"Paris"}', id_every=True)])
    assert result["id"] == "call_abc" * 3
    assert result["status"] == "ready"


@pytest.mark.parametrize("adapter", ["langchain", "litellm"])
def test_langchain_and_litellm_keep_a_repeated_id(adapter: str) -> None:
    """langchain and litellm merge a repeated id instead of concatenating it."""
    [result] = assemble(adapter, [one_call('{"city": ', '"Paris"}', id_every=True)])
    assert result["id"] == "call_abc"


def test_openai_rejects_a_call_cut_by_length_through_its_documented_error() -> None:
    """get_final_completion() raises LengthFinishReasonError for finish_reason length: the call
    is reported rejected truncated, with the text it had."""
    [result] = assemble("openai", [one_call('{"city": "Par', finish="length")])
    assert (result["status"], result["reason"]) == ("rejected", "truncated")
    assert result["arguments_text"] == '{"city": "Par'


def test_openai_rejects_the_calls_an_in_band_error_cut_short() -> None:
    """An error payload inside the 200 stream raises the SDK's APIError: stream_error."""
    stream = sse(
        chunk(header(0, "call_abc", "get_weather", '{"city": ')),
        {"error": {"message": "overloaded", "type": "server_error"}},
        done=False,
    )
    [result] = assemble("openai", [stream])
    assert (result["status"], result["reason"]) == ("rejected", "stream_error")


def test_the_stream_helper_calls_a_call_done_when_the_next_one_starts() -> None:
    """The helper fires tool_calls.function.arguments.done when the index changes: with
    interleaved calls, call 0 is "done" before its arguments arrived."""
    stream = sse(
        chunk(header(0, "call_w", "get_weather"), header(1, "call_s", "get_stock_price")),
        chunk(args(0, '{"city": "Oslo"}'), args(1, '{"ticker": "SAP"}')),
        chunk(finish="tool_calls"),
    )
    by_raw = {r["index"]: r["arguments_text"] for r in assemble("openai", [stream])}
    by_helper = {
        r["index"]: r["arguments_text"] for r in assemble("openai-stream-helper", [stream])
    }
    assert by_raw == {0: '{"city": "Oslo"}', 1: '{"ticker": "SAP"}'}
    assert by_helper[0] == ""


def test_langchain_repairs_arguments_whose_closing_brace_was_lost() -> None:
    """langchain parses arguments with parse_partial_json, so text missing its closing brace
    comes back as a ready call instead of an invalid one."""
    [result] = assemble("langchain", [one_call('{"city": ', '"Paris"')])
    assert result["arguments_text"] == '{"city": "Paris"'
    assert (result["status"], result["arguments"]) == ("ready", {"city": "Paris"})


def test_langchain_reports_arguments_that_are_not_an_object_as_invalid() -> None:
    """What langchain puts in invalid_tool_calls is rejected malformed_json."""
    [result] = assemble("langchain", [one_call("[1, 2]")])
    assert (result["status"], result["reason"]) == ("rejected", "malformed_json")


def test_litellm_keeps_only_the_last_piece_of_a_fragmented_name() -> None:
    """A name sent as get_ then weather comes back as weather from stream_chunk_builder."""
    stream = sse(
        chunk(header(0, "call_1", "get_")),
        chunk({"index": 0, "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}),
        chunk(finish="tool_calls"),
    )
    [result] = assemble("litellm", [stream])
    assert result["name"] == "weather"


def test_text_that_does_not_parse_is_never_ready() -> None:
    """The SDK hands back text; what json.loads refuses is rejected malformed_json."""
    [result] = assemble("openai", [one_call('{"city": "Paris"')])
    assert (result["status"], result["reason"]) == ("rejected", "malformed_json")


def test_an_undocumented_exception_is_raised_as_the_librarys_crash() -> None:
    """A data line that is not JSON makes the openai SDK raise JSONDecodeError: it is not
    turned into a rejection but raised, for the harness to record."""
    stream = sse(chunk(header(0, "call_1", "get_weather")), "Internal Server Error", done=False)
    with pytest.raises(ValueError, match="Expecting value"):
        assemble("openai", [stream])


def test_every_adapter_is_installed_here_and_none_exposes_release_timing() -> None:
    """The test environment has every library; every result comes out at close(), so no adapter
    exposes incremental release, and none records findings."""
    assert installed() == ALL
    for name in ALL:
        declaration = load_implementation(f"http:{name}").declaration
        assert not declaration.exposes("incremental")
        assert not declaration.exposes("findings")
        assert declaration.exposes("arguments_text")


def test_every_adapter_runs_every_scenario_but_several_choices_where_it_has_one() -> None:
    """Rules never keep a scenario from a library; a single-choice library's multi-choice
    scenarios are unsupported, a visible non-feature."""
    langchain = load_implementation("http:langchain")

    def scenario(rules: tuple[str, ...], choices: int = 1) -> Scenario:
        calls = tuple(
            CallPlan("get_time", "{}", ("{}",), id=f"call_{n}", choice=n) for n in range(choices)
        )
        return Scenario("s", "s", rules, StreamSpec(tools=(NOW,), calls=calls, choices=choices))

    assert langchain.declaration.skips(scenario(("A2", "V2", "C3", "C4"))) is None
    [case, *_] = expand([scenario(("A7",), 2)], langchain.declaration)
    assert case.skipped == (
        "unsupported",
        "the implementation assembles a single choice; the stream has 2",
    )
    assert load_implementation("http:openai").declaration.skips(scenario(("A7",), 2)) is None


def test_an_unknown_or_uninstalled_adapter_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The error lists the adapters, or says which extra installs the missing library."""
    with pytest.raises(UsageError, match="no such http: adapter; known: http:openai"):
        load_adapter("http:gemini")
    monkeypatch.setitem(
        ADAPTERS, "missing", Adapter("harness.adapters.openai_sdk", "raw", "no_such_lib", "x")
    )
    with pytest.raises(UsageError, match=r"pip install 'callstream\[x\]'"):
        load_implementation("http:missing")


@pytest.mark.parametrize("adapter", ALL)
def test_one_streaming_request_offers_the_tools_and_is_never_retried(adapter: str) -> None:
    """Each stream is asked for once, streaming, with the tools offered; a failed request is
    not sent again (retries off) and its error is raised as the library's."""
    emulator = shared_emulator()
    [result] = assemble(adapter, [CLEAN], tools=[STOCK])
    request = emulator.requests[-1]
    assert request["stream"] is True
    assert [tool["function"]["name"] for tool in request["tools"]] == ["get_stock_price"]
    assert (result["name"], result["status"]) == ("get_weather", "ready")  # no name check
    model = emulator.register([b'{"error": {"message": "down"}}'], status=500)
    before = len([r for r in emulator.requests if r.get("model") == model])
    library = load_implementation(f"http:{adapter}").factory
    with pytest.raises(Exception, match=r"down|500|Internal"):
        library.assemble(emulator.base_url, model, TOOLS)
    after = len([r for r in emulator.requests if r.get("model") == model])
    assert after - before == 1

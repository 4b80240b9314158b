"""``http:`` connectables: real client libraries run against the provider emulator the way their
users run them, what the user's code would get reported in the contract's terms, right where the
library is right and wrong the way it is really wrong."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from callstream.connect.adapters import ADAPTERS, Adapter, installed, load_adapter
from callstream.connect.adapters.base import function_tools, openai_tools, shared_emulator
from callstream.connect.connectables import load_implementation
from callstream.core.declaration import OBSERVABLES
from callstream.core.spec import CallPlan, Scenario, StreamSpec
from callstream.errors import UsageError
from callstream.reference import Limits, Tool
from callstream.runner.cases import expand
from tests.helpers import NOW, STOCK, TOOLS, args, chunk, header, sse

ALL = [name for name in ADAPTERS if not name.endswith(("-responses", "-responses-state"))]
"""The chat-completions adapters (tests/test_responses_adapters.py has the Responses ones)."""
FOLDING_OPENAI = ["openai", "openai-state"]
"""The two openai paths that end in ``get_final_completion()``."""


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


def verdict(result: dict[str, Any]) -> tuple[str, str | None]:
    return result["status"], result["reason"]


CLEAN = one_call('{"city": ', '"Paris"}')
IN_BAND_ERROR = sse(
    chunk(header(0, "call_abc", "get_weather", '{"city": ')),
    {"error": {"message": "overloaded", "type": "server_error"}},
    done=False,
)


@pytest.mark.parametrize("adapter", ALL)
def test_a_clean_stream_is_assembled_into_one_ready_call(adapter: str) -> None:
    """Every library gets the plain OpenAI stream right, byte by byte on the wire; only
    langchain and pydantic-ai's agent parse the arguments themselves."""
    pieces = [CLEAN[i : i + 1] for i in range(len(CLEAN))]
    parsed = {"city": "Paris"} if adapter in ("langchain", "pydantic-ai") else None
    assert assemble(adapter, pieces) == [
        {
            "choice": 0,
            "index": 0,
            "id": "call_abc",
            "name": "get_weather",
            "arguments_text": '{"city": "Paris"}',
            "arguments": parsed,
            "status": "ready",
            "reason": None,
        }
    ]


def test_every_adapter_declares_what_it_exposes_and_none_releases_before_close() -> None:
    """The emulator serves a stream only at close(), so no adapter exposes release timing; the
    done-event path hands back calls and nothing else, only langchain and pydantic-ai's agent
    parse arguments, and the done-event path, langchain and the frameworks assemble a single
    choice."""
    assert installed() == list(ADAPTERS)
    exposed = {name: load_implementation(f"http:{name}").declaration.observables for name in ALL}
    assert all(observables <= set(OBSERVABLES) for observables in exposed.values())
    assert not any("incremental" in observables for observables in exposed.values())
    assert exposed["openai-done-events"] == {"arguments_text", "ids"}
    assert [name for name in ALL if "arguments" in exposed[name]] == ["langchain", "pydantic-ai"]
    assert [name for name in ALL if "choices" not in exposed[name]] == [
        "openai-done-events",
        "langchain",
        "pydantic-ai",
        "openai-agents",
    ]
    assert exposed["openai"] == exposed["openai-state"] == exposed["litellm"] | {"reason"}


@pytest.mark.parametrize("adapter", ["langchain", "openai-done-events"])
def test_rules_never_keep_a_scenario_from_a_library_but_choices_can(adapter: str) -> None:
    """Every scenario runs on every library, whatever rules it cites; on a library that
    assembles one choice, a multi-choice scenario is unsupported, a visible non-feature."""
    declaration = load_implementation(f"http:{adapter}").declaration

    def scenario(rules: tuple[str, ...], choices: int = 1) -> Scenario:
        calls = tuple(
            CallPlan("get_time", "{}", ("{}",), id=f"call_{n}", choice=n) for n in range(choices)
        )
        return Scenario("s", "s", rules, StreamSpec(tools=(NOW,), calls=calls, choices=choices))

    assert declaration.skips(scenario(("A2", "V2", "C3", "C4"))) is None
    [case, *_] = expand([scenario(("A7",), 2)], declaration)
    assert case.skipped == (
        "unsupported",
        "the implementation assembles a single choice; the stream has 2",
    )
    assert load_implementation("http:openai").declaration.skips(scenario(("A7",), 2)) is None


@pytest.mark.parametrize("adapter", ["openai", "openai-state", "openai-done-events"])
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


@pytest.mark.parametrize("adapter", FOLDING_OPENAI)
@pytest.mark.parametrize(
    ("finish", "reason"), [("length", "truncated"), ("content_filter", "filtered")]
)
def test_get_final_completion_refuses_a_choice_cut_short(
    adapter: str, finish: str, reason: str
) -> None:
    """get_final_completion() raises LengthFinishReasonError / ContentFilterFinishReasonError:
    the call is reported rejected with the matching reason and the text it had."""
    [result] = assemble(adapter, [one_call('{"city": "Paris"}', finish=finish)])
    assert verdict(result) == ("rejected", reason)
    assert result["arguments_text"] == '{"city": "Paris"}'


def test_the_done_event_fires_on_any_finish_reason_so_a_truncated_call_is_run() -> None:
    """The helper's arguments.done event comes with the finish reason, whatever it is: a call
    cut by length is handed to the caller as done."""
    [result] = assemble("openai-done-events", [one_call('{"city": "Par', finish="length")])
    assert (result["arguments_text"], result["status"]) == ('{"city": "Par', "ready")


@pytest.mark.parametrize("adapter", [*FOLDING_OPENAI, "langchain", "litellm"])
def test_an_in_band_error_rejects_the_calls_it_cut_short(adapter: str) -> None:
    """An error payload inside the 200 stream raises the SDK's APIError (litellm wraps it in
    its MidStreamFallbackError): the call it cut short is rejected stream_error."""
    [result] = assemble(adapter, [IN_BAND_ERROR])
    assert verdict(result) == ("rejected", "stream_error")


def test_litellm_rejects_a_call_cut_by_an_error_it_maps_to_a_timeout() -> None:
    """An error payload with code 504 comes out of litellm as its Timeout, not as its
    MidStreamFallbackError: it fails the stream all the same, so the call is rejected."""
    stream = sse(
        chunk(header(0, "call_abc", "get_weather", '{"city": ')),
        {"error": {"message": "Request timed out.", "type": "timeout", "code": 504}},
        done=False,
    )
    [result] = assemble("litellm", [stream])
    assert verdict(result) == ("rejected", "stream_error")


def test_the_done_event_path_hands_back_nothing_an_error_cut_short() -> None:
    """A call whose done event never came is never handed to the caller."""
    assert assemble("openai-done-events", [IN_BAND_ERROR]) == []


def test_the_stream_helper_skips_chunks_that_are_not_chat_completion_chunks() -> None:
    """.stream() folds only chunks whose object is chat.completion.chunk (it drops Azure's
    asynchronous-filter events); the raw ChatCompletionStreamState pattern folds them all."""
    stray = chunk(args(0, '"Paris"}'))
    stray["object"] = ""
    stream = sse(
        chunk(header(0, "call_abc", "get_weather", '{"city": ')), stray, chunk(finish="stop")
    )
    [helper] = assemble("openai", [stream])
    [state] = assemble("openai-state", [stream])
    assert (helper["arguments_text"], state["arguments_text"]) == ('{"city": ', '{"city": "Paris"}')


def test_the_done_event_path_hands_over_a_call_before_its_arguments_arrive() -> None:
    """The helper fires call 0's done event as soon as a delta names call 1: with interleaved
    calls, call 0 is handed over "done" before any of its arguments arrived."""
    stream = sse(
        chunk(header(0, "call_w", "get_weather"), header(1, "call_s", "get_stock_price")),
        chunk(args(0, '{"city": "Oslo"}'), args(1, '{"ticker": "SAP"}')),
        chunk(finish="tool_calls"),
    )
    folded = assemble("openai", [stream])
    done = assemble("openai-done-events", [stream])
    assert [(r["id"], r["arguments_text"]) for r in folded] == [
        ("call_w", '{"city": "Oslo"}'),
        ("call_s", '{"ticker": "SAP"}'),
    ]
    assert [(r["id"], r["arguments_text"]) for r in done] == [
        ("call_w", ""),
        ("call_s", '{"ticker": "SAP"}'),
    ]


def test_langchain_repairs_arguments_whose_closing_brace_was_lost() -> None:
    """langchain parses arguments with parse_partial_json, so text missing its closing brace
    comes back in the sum's tool_calls instead of its invalid_tool_calls."""
    [result] = assemble("langchain", [one_call('{"city": ', '"Paris"')])
    assert result["arguments_text"] == '{"city": "Paris"'
    assert (result["status"], result["arguments"]) == ("ready", {"city": "Paris"})


def test_langchain_keeps_stream_order_across_valid_and_invalid_calls() -> None:
    """A call langchain sets apart as invalid is rejected malformed_json in its place; the
    calls around it stay ready with their own text."""
    stream = sse(
        chunk(header(0, "call_1", "get_time", "{}")),
        chunk(header(1, "call_2", "get_weather", "[1, 2]")),
        chunk(header(2, "call_3", "get_stock_price", '{"ticker": "SAP"}')),
        chunk(finish="tool_calls"),
    )
    results = assemble("langchain", [stream])
    assert [(r["id"], r["arguments_text"], verdict(r)) for r in results] == [
        ("call_1", "{}", ("ready", None)),
        ("call_2", "[1, 2]", ("rejected", "malformed_json")),
        ("call_3", '{"ticker": "SAP"}', ("ready", None)),
    ]


def test_litellm_keeps_only_the_last_piece_of_a_fragmented_name() -> None:
    """A name sent as get_ then weather comes back as weather from stream_chunk_builder."""
    stream = sse(
        chunk(header(0, "call_1", "get_")),
        chunk({"index": 0, "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}),
        chunk(finish="tool_calls"),
    )
    [result] = assemble("litellm", [stream])
    assert result["name"] == "weather"


def test_litellm_refuses_a_stream_that_ends_without_a_finish_reason() -> None:
    """litellm raises MidStreamFallbackError when the stream ends with no finish reason: the
    call is rejected, where the openai SDK hands it back."""
    stream = sse(chunk(header(0, "call_1", "get_weather", '{"city": "Oslo"}')))
    assert assemble("litellm", [stream])[0]["status"] == "rejected"
    assert assemble("openai", [stream])[0]["status"] == "ready"


@pytest.mark.parametrize("adapter", ["openai", "openai-state", "litellm"])
def test_a_legacy_function_call_is_handed_back_without_an_id(adapter: str) -> None:
    """The openai SDK and litellm fold a legacy delta.function_call into the message's own
    function_call field: it is the message's call, with no id to answer it by."""

    def legacy(function: dict[str, str]) -> dict[str, Any]:
        payload = chunk()
        payload["choices"][0]["delta"] = {"function_call": function}
        return payload

    stream = sse(
        legacy({"name": "get_weather", "arguments": '{"ci'}),
        legacy({"arguments": 'ty": "Paris"}'}),
        chunk(finish="function_call"),
    )
    [result] = assemble(adapter, [stream])
    assert (result["id"], result["name"], result["arguments_text"]) == (
        None,
        "get_weather",
        '{"city": "Paris"}',
    )


def test_a_custom_tool_call_is_handed_back_by_litellm_and_crashes_the_openai_sdk() -> None:
    """litellm rebuilds a custom call with its input verbatim; the openai SDK's
    get_final_completion() logs custom calls by attribute on a dict and raises."""
    custom = {
        "index": 0,
        "id": "call_c",
        "type": "custom",
        "custom": {"name": "run", "input": "ls"},
    }
    stream = sse(chunk(custom), chunk(finish="tool_calls"))
    [result] = assemble("litellm", [stream])
    assert (result["kind"], result["arguments"], result["status"]) == ("custom", "ls", "ready")
    with pytest.raises(AttributeError, match="'dict' object has no attribute 'name'"):
        assemble("openai", [stream])


@pytest.mark.parametrize("adapter", FOLDING_OPENAI)
def test_a_custom_call_cut_by_length_is_rejected_truncated_by_the_openai_sdk(adapter: str) -> None:
    """get_final_completion() refuses a completion that ended on length before it reaches the
    custom call it cannot log: the call it took along is rejected truncated, its input kept."""
    custom = {"index": 0, "id": "call_c", "type": "custom", "custom": {"name": "run", "input": "l"}}
    stream = sse(chunk(custom), chunk(finish="length"))
    [result] = assemble(adapter, [stream], [Tool.custom("run")])
    assert (result["kind"], result["arguments_text"]) == ("custom", "l")
    assert verdict(result) == ("rejected", "truncated")


def test_litellm_calls_are_numbered_by_first_appearance_though_it_lists_them_by_index() -> None:
    """stream_chunk_builder lists calls by wire index; calls sent at indices 2 then 0 come back
    as positions 0 and 1 in the order they came, each with its own id, name and text."""
    stream = sse(
        chunk(header(2, "call_w", "get_weather", '{"city": "Paris"}')),
        chunk(header(0, "call_s", "get_stock_price", '{"ticker": "KO"}')),
        chunk(finish="tool_calls"),
    )
    results = assemble("litellm", [stream])
    assert [(r["index"], r["id"], r["name"], r["arguments_text"]) for r in results] == [
        (0, "call_w", "get_weather", '{"city": "Paris"}'),
        (1, "call_s", "get_stock_price", '{"ticker": "KO"}'),
    ]


def test_a_custom_tool_is_offered_as_a_custom_tool_except_to_langchain() -> None:
    """The openai SDK and litellm are sent chat-completions custom tools with their format;
    langchain's bind_tools takes none, so it is offered a function of the same name."""
    patch = Tool.custom("apply_patch", {"type": "text"})
    assert openai_tools([patch]) == [
        {"type": "custom", "custom": {"name": "apply_patch", "format": {"type": "text"}}}
    ]
    assert function_tools([patch])[0]["function"]["name"] == "apply_patch"


@pytest.mark.parametrize("adapter", ["openai", "litellm"])
def test_a_call_whose_text_is_not_json_is_handed_back_all_the_same(adapter: str) -> None:
    """The openai SDK and litellm parse nothing: a call missing its closing brace is in the
    message for the caller to run, so it is ready, with its text as it came."""
    [result] = assemble(adapter, [one_call('{"city": "Paris"')])
    assert (result["arguments_text"], result["status"]) == ('{"city": "Paris"', "ready")


def test_an_undocumented_exception_is_raised_as_the_librarys_crash() -> None:
    """A data line that is not JSON makes the openai SDK raise JSONDecodeError: it is not
    turned into a rejection but raised, for the harness to record."""
    stream = sse(chunk(header(0, "call_1", "get_weather")), "Internal Server Error", done=False)
    with pytest.raises(ValueError, match="Expecting value"):
        assemble("openai-state", [stream])


def test_an_unknown_or_uninstalled_adapter_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The error lists the adapters, or says which extra installs the missing library."""
    with pytest.raises(UsageError, match="no such http: adapter; known: http:openai"):
        load_adapter("http:gemini")
    monkeypatch.setitem(
        ADAPTERS,
        "missing",
        Adapter("callstream.connect.adapters.openai_sdk", "stream_helper", "no_such_lib", "x"),
    )
    with pytest.raises(UsageError, match=r"pip install 'callstream\[x\]'"):
        load_implementation("http:missing")


@pytest.mark.parametrize("adapter", ALL)
def test_one_streaming_request_offers_the_tools_and_is_never_retried(adapter: str) -> None:
    """Each stream is asked for once, streaming, with the tools offered; a failed request is
    not sent again (retries off) and its error is raised as the library's."""
    emulator = shared_emulator()
    results = assemble(adapter, [CLEAN], tools=[STOCK])
    request = emulator.requests[-1]
    assert request["stream"] is True
    assert [tool["function"]["name"] for tool in request["tools"]] == ["get_stock_price"]
    if adapter == "pydantic-ai":
        assert results == []  # the agent runs no tool it was not given
    else:
        [result] = results
        assert (result["name"], result["status"]) == ("get_weather", "ready")  # no name check
    model = emulator.register([b'{"error": {"message": "down"}}'], status=500)
    before = len([r for r in emulator.requests if r.get("model") == model])
    library: Any = load_implementation(f"http:{adapter}").factory
    with pytest.raises(Exception, match=r"down|500|Internal"):
        library.assemble(emulator.base_url, model, TOOLS)
    after = len([r for r in emulator.requests if r.get("model") == model])
    assert after - before == 1

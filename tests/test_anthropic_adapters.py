"""The ``http:`` adapters of the Anthropic Messages stream: the anthropic SDK (its stream helper
and its accumulator), langchain-anthropic, litellm's Anthropic provider and pydantic-ai's
AnthropicModel, each run on corpus scenarios of the ``anthropic-messages`` dialect the way the
runner runs them, with the verdicts a user of the suite reads: clean streams pass, and each
library fails where it really is wrong, under the rule its failure proves."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from callstream.connect.adapters import ADAPTERS, installed
from callstream.connect.adapters.anthropic_request import anthropic_tools, origin
from callstream.connect.adapters.base import shared_emulator
from callstream.connect.connectables import load_implementation
from callstream.core.case import CaseResult, run_case
from callstream.core.spec import Scenario, Splitting
from callstream.corpus.scenario import default_corpus, load_scenarios
from tests.helpers import STOCK, TOOLS

pytest.importorskip("anthropic")
pytest.importorskip("langchain_anthropic")

SDK = ["anthropic", "anthropic-accumulator"]
"""The anthropic SDK's two paths: they fold the events with the same function."""
ANTHROPIC = [*SDK, "langchain-anthropic", "litellm-anthropic", "pydantic-ai-anthropic"]


@cache
def _corpus() -> dict[str, Scenario]:
    folders = [path for path in default_corpus() if "anthropic-messages" in str(path)]
    return {scenario.id: scenario for scenario in load_scenarios(folders).scenarios}


def judged(adapter: str, scenario_id: str) -> CaseResult:
    """The verdict of the scenario's whole stream on the adapter, as the runner gives it."""
    implementation = load_implementation(f"http:{adapter}")
    scenario = _corpus()[scenario_id]
    assert implementation.declaration.skips(scenario) is None
    return run_case(
        scenario,
        implementation.declaration.profile,
        Splitting("whole"),
        implementation.factory_for(scenario.spec.dialect),
        implementation.declaration.observables,
    )


def broken(result: CaseResult) -> set[tuple[str, tuple[str, ...]]]:
    """(check, rules) of each failure of a verdict."""
    return {(failure.check, tuple(failure.rules)) for failure in result.failures}


def messages(result: CaseResult) -> str:
    return "\n".join(failure.message for failure in result.failures)


def test_every_anthropic_adapter_is_registered_installed_and_declares_the_dialect() -> None:
    """The five adapters read the anthropic-messages dialect only, none exposes release timing
    or choices (a message has one), and each exposes what its library hands back: the SDK its
    parse of an input and no text, pydantic-ai's agent no status (D62), litellm no parse."""
    assert set(ANTHROPIC) <= set(installed()) <= set(ADAPTERS)
    declared = {name: load_implementation(f"http:{name}").declaration for name in ANTHROPIC}
    assert all(d.dialects == ("anthropic-messages",) for d in declared.values())
    exposed = {name: d.observables for name, d in declared.items()}
    assert not any({"incremental", "choices"} & observables for observables in exposed.values())
    assert exposed["anthropic"] == exposed["anthropic-accumulator"]
    assert exposed["anthropic"] == {"status", "reason", "arguments", "ids"}
    assert exposed["langchain-anthropic"] == exposed["anthropic"] | {"arguments_text"}
    assert exposed["litellm-anthropic"] == {"status", "arguments_text", "ids"}
    assert exposed["pydantic-ai-anthropic"] == {"arguments_text", "arguments", "ids"}


@pytest.mark.parametrize("adapter", ANTHROPIC)
@pytest.mark.parametrize(
    "scenario", ["am-l-one-call-tool-use", "am-l-text-then-call", "am-a-cut-one-character-each"]
)
def test_a_clean_stream_passes_on_every_library(adapter: str, scenario: str) -> None:
    """A well-formed tool_use stream, with text before it or cut one character a fragment."""
    result = judged(adapter, scenario)
    assert (result.outcome, result.failures) == ("passed", ())


@pytest.mark.parametrize("adapter", ANTHROPIC)
def test_an_error_event_inside_the_only_call_refuses_it(adapter: str) -> None:
    """An event: error fails the 200 stream: the SDK raises APIStatusError from it (status
    200), which langchain re-raises and pydantic-ai wraps; litellm raises its own. Each library
    refuses the call, so the verdict passes."""
    result = judged(adapter, "am-l-error-inside-the-only-call")
    assert (result.outcome, result.failures) == ("passed", ())


@pytest.mark.parametrize("adapter", ["anthropic", "langchain-anthropic", "litellm-anthropic"])
def test_a_call_cut_by_max_tokens_is_run_by_every_library_but_pydantic_ai(adapter: str) -> None:
    """No library looks at the stop reason: a call cut inside a value by max_tokens comes back
    ready (the SDK even completes it into an object, dropping the unfinished string). C3."""
    result = judged(adapter, "am-l-max-tokens-inside-a-value")
    assert broken(result) == {("safe_release", ("C3",))}
    assert "must be rejected truncated" in messages(result)


def test_pydantic_ai_does_not_run_a_cut_call_as_its_json_check_refuses_the_text() -> None:
    """The agent's validator parses the text that came: cut inside a value, it fails, so the
    call goes back to the model instead of running (D63): no failure, for its own reason."""
    result = judged("pydantic-ai-anthropic", "am-l-max-tokens-inside-a-value")
    assert (result.outcome, result.failures) == ("passed", ())


@pytest.mark.parametrize("adapter", SDK)
def test_the_sdk_raises_a_bare_value_error_on_input_it_cannot_read(adapter: str) -> None:
    """jiter's partial parse fails on a buffer that is not even a JSON prefix, and the SDK
    raises ValueError mid-stream: not one of its own error classes, so the library's crash
    (D60), and the user's loop loses the whole message. V6."""
    result = judged(adapter, "am-v-invalid-json-at-stop")
    assert broken(result) == {("no_crash", ("V6",))}
    assert "ValueError: Unable to parse tool parameter JSON from model" in messages(result)


@pytest.mark.parametrize("adapter", SDK)
def test_the_sdk_runs_the_first_of_two_objects_as_the_input(adapter: str) -> None:
    """jiter in partial mode stops at the end of the first value: an input streamed as two
    objects comes back ready as the first one. V1."""
    result = judged(adapter, "am-v-two-objects")
    assert broken(result) == {("safe_release", ("V1",))}


@pytest.mark.parametrize("adapter", SDK)
def test_the_sdk_crashes_on_a_block_index_it_has_not_started(adapter: str) -> None:
    """The SDK appends each started block and indexes the content list with the event's
    index: a gap in the indices is an IndexError. V6."""
    result = judged(adapter, "am-q-index-gap")
    assert broken(result) == {("no_crash", ("V6",))}
    assert "IndexError" in messages(result)


def test_the_sdk_drops_every_event_without_an_event_line() -> None:
    """The SDK's stream skips an SSE event with no event: name, so nothing is folded: the
    helper's get_final_message() asserts, and the accumulator is never called."""
    helper = judged("anthropic", "am-t-no-event-lines")
    assert broken(helper) == {("no_crash", ("V6",))}
    assert "AssertionError" in messages(helper)
    accumulator = judged("anthropic-accumulator", "am-t-no-event-lines")
    assert broken(accumulator) == {("calls_released", ("T3",))}


def test_litellm_merges_interleaved_tool_use_blocks_into_the_last_one() -> None:
    """litellm numbers tool-call deltas by its own count of tool_use blocks, not by the
    block index: the fragments of two interleaved blocks all go to the last call, and the
    first is handed back ready as {}. A2, A5, A6."""
    result = judged("litellm-anthropic", "am-a-same-tool-twice-interleaved")
    assert ("safe_release", ("A5", "A6")) in broken(result)
    assert "'{}', which does not run as {'city': 'Paris'}" in messages(result)
    assert judged("anthropic", "am-a-same-tool-twice-interleaved").outcome == "passed"


def test_langchain_concatenates_a_start_input_with_the_streamed_one() -> None:
    """langchain-anthropic makes a text chunk of a non-empty start input, then appends the
    streamed fragments: parse_partial_json reads the first object, the start's, so the call
    runs with Lyon where the stream says Paris. A2 (anthropic-messages/A6, D23)."""
    result = judged("langchain-anthropic", "am-q-start-input-differs-from-streamed")
    assert broken(result) == {("safe_release", ("A2",)), ("text_exact", ("A2",))}
    assert "{'city': 'Lyon'} instead of {'city': 'Paris'}" in messages(result)
    assert judged("anthropic", "am-q-start-input-differs-from-streamed").outcome == "passed"


def test_pydantic_ai_refuses_a_start_input_followed_by_streamed_input() -> None:
    """pydantic-ai keeps a non-empty start input as a dict and raises UnexpectedModelBehavior
    when a JSON delta follows: its own refusal of a valid stream, so the call is never run."""
    result = judged("pydantic-ai-anthropic", "am-q-input-in-start-and-streamed")
    assert broken(result) == {("calls_released", ("A5",))}


def test_pydantic_ai_hands_back_the_text_its_tool_manager_parses() -> None:
    """A parameterless block that streamed nothing has no args in pydantic-ai; its agent runs
    it as '{}', which is the text handed back (D66, D22): the scenario passes."""
    result = judged("pydantic-ai-anthropic", "am-l-parameterless-without-any-delta")
    assert (result.outcome, result.failures) == ("passed", ())


def test_the_tools_are_offered_as_anthropic_tools_to_the_messages_route() -> None:
    """Each tool is sent with its input schema; the SDK is given the emulator's origin."""
    assert anthropic_tools([STOCK]) == [
        {"name": "get_stock_price", "input_schema": STOCK.parameters}
    ]
    assert origin("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000"


@pytest.mark.parametrize("adapter", ANTHROPIC)
def test_one_streaming_request_is_sent_and_an_http_error_is_raised_not_retried(
    adapter: str,
) -> None:
    """Each stream is asked for once on /v1/messages with the tools offered; an HTTP status is
    the emulator's, never the stream's: raised, and not asked for again."""
    emulator = shared_emulator()
    assert judged(adapter, "am-l-one-call-tool-use").outcome == "passed"
    request = emulator.requests[-1]
    assert request["stream"] is True
    assert request["max_tokens"] > 0
    offered = _corpus()["am-l-one-call-tool-use"].spec.tools
    sent = [{"name": t["name"], "input_schema": t["input_schema"]} for t in request["tools"]]
    assert sent == anthropic_tools(offered)  # langchain and litellm add a type or description
    model = emulator.register([b'{"error": {"message": "down"}}'], status=500)
    library: Any = load_implementation(f"http:{adapter}").factory
    with pytest.raises(Exception, match=r"down|500|Internal"):
        library.assemble(emulator.base_url, model, TOOLS)
    assert (
        len([r for r in emulator.requests if r.get("model") in (model, f"anthropic/{model}")]) == 1
    )

"""``http:`` connectables on the Responses API: real client libraries read the ``openai-responses``
corpus from the emulator's ``POST /v1/responses`` the way their users do, each scenario judged as
a worker judges it, so the verdicts here are those ``callstream run`` and the matrix show: a pass
where the library is right, and the rule each really breaks where it is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

import callstream.scenarios
from callstream.connect.adapters import ADAPTERS
from callstream.connect.adapters.base import shared_emulator
from callstream.connect.adapters.openai_responses import builtin_refusal, responses_tools
from callstream.connect.connectables import load_implementation
from callstream.core.case import CaseResult, run_case
from callstream.core.declaration import Implementation
from callstream.core.spec import Scenario, Splitting
from callstream.corpus.scenario import load_scenarios
from callstream.matrix.roster import roster
from callstream.reference import Tool

RESPONSES = [
    "openai-responses",
    "openai-responses-state",
    "langchain-responses",
    "litellm-responses",
    "openai-agents-responses",
]
OPENAI = ["openai-responses", "openai-responses-state"]
CORPUS = Path(callstream.scenarios.__file__).parent / "openai-responses"
_LOADED: dict[str, Implementation] = {}


@pytest.fixture(scope="module")
def corpus() -> dict[str, Scenario]:
    """The openai-responses scenarios by id (the dialect's folder only: it loads fast)."""
    return {s.id: s for s in load_scenarios([CORPUS]).scenarios}


def judged(adapter: str, scenario: Scenario) -> CaseResult:
    """The verdict on one scenario sent whole, lenient, as a worker of ``callstream run`` gives."""
    if adapter not in _LOADED:
        _LOADED[adapter] = load_implementation(f"http:{adapter}")
    implementation = _LOADED[adapter]
    return run_case(
        scenario,
        "lenient",
        Splitting("whole"),
        implementation.factory_for(scenario.spec.dialect),
        implementation.declaration.observables,
    )


def broken(result: CaseResult) -> set[tuple[str, str]]:
    """Each (check, rule) the case failed."""
    return {(failure.check, rule) for failure in result.failures for rule in failure.rules}


def test_the_responses_adapters_are_registered_for_the_responses_dialect_only() -> None:
    """Each reads openai-responses and nothing else, and exposes what its library shows: the
    openai SDK and litellm hand back calls ready or refused without a machine-readable reason,
    langchain parses arguments and tells malformed JSON apart, openai-agents' loop hands back
    only what it runs; none exposes release timing or several choices."""
    assert set(RESPONSES) <= set(ADAPTERS)
    exposed = {}
    for name in RESPONSES:
        declaration = load_implementation(f"http:{name}").declaration
        assert declaration.dialects == ("openai-responses",)
        exposed[name] = declaration.observables
    assert exposed["openai-responses"] == exposed["openai-responses-state"]
    assert exposed["openai-responses"] == {"status", "arguments_text", "ids"}
    assert exposed["litellm-responses"] == {"status", "arguments_text", "ids"}
    assert exposed["langchain-responses"] == {
        "status",
        "reason",
        "arguments_text",
        "arguments",
        "ids",
    }
    assert exposed["openai-agents-responses"] == {"arguments_text", "ids"}


def test_tools_are_offered_in_the_responses_shape(corpus: dict[str, Scenario]) -> None:
    """Function tools flat (name and parameters beside the type, not strict), custom tools with
    their format: the shape ``POST /v1/responses`` takes."""
    offered = responses_tools([Tool.custom("apply_patch", {"type": "text"})])
    assert offered == [{"type": "custom", "name": "apply_patch", "format": {"type": "text"}}]
    emulator = shared_emulator()
    judged("litellm-responses", corpus["or-a-zurich-whole"])
    request = emulator.requests[-1]
    assert request["stream"] is True  # litellm streams natively, not a faked stream (D69)
    assert request["tools"][0]["type"] == "function"
    assert "name" in request["tools"][0]


@pytest.mark.parametrize("adapter", RESPONSES)
@pytest.mark.parametrize(
    "scenario", ["or-l-two-sequential-calls-completed", "or-a-emoji-one-char-deltas"]
)
def test_every_library_assembles_a_clean_responses_stream(
    adapter: str, scenario: str, corpus: dict[str, Scenario]
) -> None:
    """Sequential calls with their text in deltas, ended by response.completed: every library
    hands back each call whole, with its call_id."""
    result = judged(adapter, corpus[scenario])
    assert result.outcome == "passed", result.failures


@pytest.mark.parametrize("adapter", OPENAI)
def test_the_openai_sdk_loses_finished_calls_when_the_stream_never_completes(
    adapter: str, corpus: dict[str, Scenario]
) -> None:
    """Without response.completed there is no final response (get_final_response() raises
    "Didn't receive a `response.completed` event."): the calls whose output_item.done came are
    refused with the rest, which D46 keeps ready (openai/openai-python#3538)."""
    result = judged(adapter, corpus["or-l-eof-after-boundaries-keeps-calls"])
    assert broken(result) == {("status", "C1")}
    assert "rejected interrupted, expected ready" in result.failures[0].message


@pytest.mark.parametrize("adapter", OPENAI)
def test_the_openai_sdk_takes_the_calls_from_the_final_output(
    adapter: str, corpus: dict[str, Scenario]
) -> None:
    """The final response is response.completed's own output: an empty one loses the streamed
    call (D48), where openai-agents' run loop falls back on the streamed items."""
    scenario = corpus["or-q-empty-final-output"]
    assert ("calls_released", "A5") in broken(judged(adapter, scenario))
    assert judged("openai-agents-responses", scenario).outcome == "passed"


def test_the_openai_sdk_crashes_on_a_function_delta_for_a_message(
    corpus: dict[str, Scenario],
) -> None:
    """The accumulator asserts that an arguments delta names a function call: an assert is no
    refusal (D68), so the AssertionError is the library's crash."""
    result = judged("openai-responses", corpus["or-q-delta-for-message-item"])
    assert broken(result) == {("no_crash", "V6")}


def test_langchain_splits_interleaved_calls_into_fragments(corpus: dict[str, Scenario]) -> None:
    """langchain numbers tool-call chunks by a running index bumped each time the output index
    changes, so interleaved deltas of parallel calls become many calls with pieces of text."""
    result = judged("langchain-responses", corpus["or-l-parallel-interleaved"])
    assert ("calls_released", "A5") in broken(result)
    assert any("unexpected call" in failure.message for failure in result.failures)


@pytest.mark.parametrize("adapter", ["langchain-responses", "openai-agents-responses"])
def test_an_incomplete_response_is_run_by_langchain_and_refused_by_openai_agents(
    adapter: str, corpus: dict[str, Scenario]
) -> None:
    """response.incomplete (max_output_tokens) after a call whose text happens to parse:
    langchain ends the message on it like on response.completed, so the truncated call is run
    (C3); openai-agents raises ModelBehaviorError and runs nothing."""
    result = judged(adapter, corpus["or-l-incomplete-but-text-parses"])
    if adapter == "langchain-responses":
        assert broken(result) == {("safe_release", "C3")}
    else:
        assert result.outcome == "passed"


def test_langchain_refuses_a_failed_response_with_its_own_value_error(
    corpus: dict[str, Scenario],
) -> None:
    """response.failed makes langchain raise ValueError on purpose (D68): no crash, the call is
    rejected stream_error; the call an output_item.done had finished is refused with it."""
    result = judged("langchain-responses", corpus["or-l-failed-after-nested-error"])
    assert broken(result) == {("status", "T4")}
    assert "rejected stream_error, expected ready" in result.failures[0].message


def test_litellm_fails_a_stream_that_ends_without_a_terminal_event(
    corpus: dict[str, Scenario],
) -> None:
    """litellm raises when the stream ends without a terminal event: the calls finished at
    their boundary are refused with the rest (D46 keeps them)."""
    result = judged("litellm-responses", corpus["or-e-eof-sequential"])
    assert broken(result) == {("status", "C1")}
    assert "rejected stream_error" in result.failures[0].message


def test_openai_agents_hands_back_nothing_of_a_stream_cut_by_an_error(
    corpus: dict[str, Scenario],
) -> None:
    """An error event after one call finished: the run loop raises and runs no call, not even
    the finished one (T4, D50 keeps it)."""
    result = judged("openai-agents-responses", corpus["or-e-flat-error-sequential"])
    assert broken(result) == {("calls_released", "T4")}


def test_only_a_deliberate_raise_of_the_named_file_is_a_refusal() -> None:
    """D68: the exact class, raised by a ``raise`` statement of the library's file; the same
    class raised elsewhere, or a subclass, is a crash."""

    def raised(exc: BaseException) -> BaseException:
        try:
            raise exc
        except BaseException as caught:
            return caught

    here = Path(__file__).name
    assert builtin_refusal(raised(RuntimeError("x")), RuntimeError, here)
    assert not builtin_refusal(raised(RuntimeError("x")), RuntimeError, "_responses.py")
    assert not builtin_refusal(raised(NotImplementedError("x")), RuntimeError, here)
    assert not builtin_refusal(RuntimeError("never raised"), RuntimeError, here)


def test_the_matrix_roster_lists_every_responses_adapter_as_runnable() -> None:
    """``callstream matrix`` runs the registry's adapters: each Responses adapter is a column,
    judged on the scenarios of the dialect it declares (tests/test_matrix.py runs the matrix)."""
    entries = {entry.name: entry for entry in roster(Path("no-js-here"))}
    for name in RESPONSES:
        assert (entries[name].connectable, entries[name].missing) == (f"http:{name}", None)

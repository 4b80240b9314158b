"""The scenario pipeline: plans render to the right wire, the oracle derives the right
expectation, and the checks catch what a broken implementation does."""

from __future__ import annotations

import itertools
import json
from enum import IntEnum
from pathlib import Path
from typing import Any

import pytest

from callstream.core.case import format_repro, run_case
from callstream.core.checks import run_checks
from callstream.core.declaration import OBSERVABLES
from callstream.core.judgement import Failure
from callstream.core.observation import Observation, Observed, Release, observe
from callstream.core.oracle import expect
from callstream.core.rendering import render
from callstream.core.spec import CallPlan, Ending, Noise, Scenario, Splitting, StreamSpec, Transport
from callstream.core.split import DEFAULT_SPLITTINGS, chunkings, cut
from callstream.core.tools import parse_tools
from callstream.corpus.scenario import load_scenarios
from callstream.errors import PlanError, UsageError
from callstream.reference import Assembler, Limits, Tool

WEATHER = Tool(
    "get_weather",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
NOW = Tool("get_time", {"type": "object", "properties": {}})
PATCH = Tool.custom("apply_patch")
DATE = Tool.custom(
    "set_date", {"type": "grammar", "grammar": {"syntax": "regex", "definition": r"\d{4}-\d\d"}}
)
SQL = Tool.custom("run_sql", {"type": "grammar", "grammar": {"syntax": "lark", "definition": "x"}})
TOOLS = (WEATHER, NOW, PATCH, DATE, SQL)


def plan(
    name: str | None = "get_weather",
    arguments: str = '{"city": "Paris"}',
    cuts: tuple[int, ...] = (3, 9),
    call_id: str | None = "call_1",
    **options: Any,
) -> CallPlan:
    bounds = (0, *cuts, len(arguments))
    fragments = tuple(arguments[a:b] for a, b in itertools.pairwise(bounds) if b > a)
    return CallPlan(name=name, arguments=arguments, fragments=fragments, id=call_id, **options)


def reference(profile: str) -> Any:
    def factory(tools: list[Tool], limits: Limits) -> Assembler:
        return Assembler(tools, limits=limits, profile=profile)  # type: ignore[arg-type]

    return factory


# name -> (spec, {profile: [(status, reason)]}, {profile: findings})
PLANS: dict[
    str, tuple[StreamSpec, dict[str, list[tuple[str, str | None]]], dict[str, set[str]]]
] = {
    "plain": (StreamSpec(TOOLS, (plan(),)), {"lenient": [("ready", None)]}, {"lenient": set()}),
    "interleaved": (
        StreamSpec(
            TOOLS,
            (plan(), plan(call_id="call_2", arguments='{"city": "Rome"}')),
            schedule="interleaved",
        ),
        {"lenient": [("ready", None), ("ready", None)]},
        {"lenient": set()},
    ),
    "litellm-repeats": (
        StreamSpec(TOOLS, (plan(id_policy="every", type_every=True, name_policy="every"),)),
        {"lenient": [("ready", None)], "strict": [("ready", None)]},
        {
            "lenient": {"openai-chat/C4", "openai-chat/C5"},
            "strict": {"openai-chat/C4", "openai-chat/C5"},
        },
    ),
    "gemini": (
        StreamSpec(
            TOOLS,
            (plan(omit_index=True, id_policy="empty"),),
            schedule="whole",
            ending=Ending(finish="stop", finish_with_last=True),
        ),
        {"lenient": [("ready", None)], "strict": [("rejected", "protocol_error")]},
        {
            "lenient": {"openai-chat/C1", "openai-chat/C7", "openai-chat/C16"},
            "strict": {"openai-chat/C1", "openai-chat/C16"},
        },
    ),
    "ollama-index-zero": (
        StreamSpec(TOOLS, (plan(index=0), plan(index=0, call_id="call_2")), schedule="whole"),
        {
            "lenient": [("ready", None), ("ready", None)],
            "strict": [("ready", None), ("rejected", "protocol_error")],
        },
        {"lenient": {"openai-chat/C2"}},
    ),
    "length": (
        StreamSpec(TOOLS, (plan(),), ending=Ending(finish="length")),
        {"lenient": [("rejected", "truncated")]},
        {"lenient": set()},
    ),
    "eof-mid-call": (
        StreamSpec(TOOLS, (plan(),), ending=Ending(finish=None, done=False)),
        {"lenient": [("rejected", "interrupted")]},
        {"lenient": set()},
    ),
    "done-before-finish": (
        StreamSpec(TOOLS, (plan(),), ending=Ending(finish=None)),
        {"lenient": [("rejected", "unfinished")]},
        {"lenient": set()},
    ),
    "cut-finish": (
        StreamSpec(TOOLS, (plan(),), ending=Ending(cut=True, done=False)),
        {"lenient": [("rejected", "interrupted")]},
        {"lenient": {"openai-chat/T9"}},
    ),
    "openrouter-error": (
        StreamSpec(TOOLS, (plan(),), ending=Ending(error="openrouter")),
        {"lenient": [("rejected", "stream_error")]},
        {"lenient": set()},
    ),
    "legacy": (
        StreamSpec(TOOLS, (plan(legacy=True),), ending=Ending(finish="function_call")),
        {"lenient": [("ready", None)], "strict": [("rejected", "missing_id")]},
        {"lenient": {"openai-chat/C27", "openai-chat/C7"}, "strict": {"openai-chat/C27"}},
    ),
    "parameterless": (
        StreamSpec(TOOLS, (plan(name="get_time", arguments="", cuts=()),)),
        {"lenient": [("ready", None)]},
        {"lenient": {"openai-chat/C13"}},
    ),
    "noisy": (
        StreamSpec(
            TOOLS,
            (plan(),),
            noise=Noise(role_every=True, usage=True, empty_first=True, keepalive=1),
            ending=Ending(after_finish=("usage_chunk", "duplicate_finish", "late_delta")),
        ),
        {"lenient": [("ready", None)]},
        {"lenient": {"openai-chat/C20", "openai-chat/C21", "openai-chat/C23", "openai-chat/C29"}},
    ),
    "transport": (
        StreamSpec(
            TOOLS,
            (plan(),),
            transport=Transport(newline="mixed", space=False, bom=True, multiline=True),
        ),
        {"lenient": [("ready", None)], "strict": [("ready", None)]},
        {"lenient": set()},
    ),
    "two-choices": (
        StreamSpec(
            TOOLS, (plan(), plan(choice=1, call_id="call_9")), choices=2, schedule="interleaved"
        ),
        {"lenient": [("ready", None), ("ready", None)]},
        {"lenient": set()},
    ),
    "too-large": (
        StreamSpec(TOOLS, (plan(),), limits=Limits(max_argument_bytes=5)),
        {"lenient": [("rejected", "too_large")]},
        {"lenient": set()},
    ),
    "custom-text": (
        StreamSpec(TOOLS, (plan("apply_patch", 'x = "1"\n', kind="custom", cuts=(3,)),)),
        {"lenient": [("ready", None)], "strict": [("ready", None)]},
        {"lenient": set(), "strict": set()},
    ),
    "custom-regex": (
        StreamSpec(
            TOOLS,
            (
                plan("set_date", "2026-12", kind="custom", cuts=(4,)),
                plan("set_date", "12/2026", kind="custom", call_id="call_2", cuts=(4,)),
            ),
        ),
        {"lenient": [("ready", None), ("rejected", "schema_violation")]},
        {"lenient": set()},
    ),
    "custom-kinds-crossed": (
        StreamSpec(
            TOOLS,
            (
                plan("apply_patch", '{"a": 1}', cuts=(2,)),
                plan(kind="custom", call_id="call_2"),
            ),
        ),
        {
            "lenient": [("rejected", "unknown_tool")] * 2,
            "strict": [("rejected", "unknown_tool")] * 2,
        },
        {"lenient": set()},
    ),
    "custom-truncated": (
        StreamSpec(TOOLS, (plan("apply_patch", "--- a", kind="custom"),), ending=Ending("length")),
        {"lenient": [("rejected", "truncated")]},
        {"lenient": set()},
    ),
    "shared-id": (
        StreamSpec(TOOLS, (plan(), plan(arguments='{"city": "Rome"}'))),
        {
            "lenient": [("ready", None), ("ready", None)],
            "strict": [("rejected", "duplicate_id"), ("rejected", "duplicate_id")],
        },
        {"lenient": {"openai-chat/C34"}, "strict": {"openai-chat/C34"}},
    ),
    "shared-id-after-a-gap": (
        StreamSpec(TOOLS, (plan(index=1), plan(index=3, arguments='{"city": "Rome"}'))),
        {
            "lenient": [("ready", None), ("ready", None)],
            "strict": [("rejected", "protocol_error"), ("rejected", "duplicate_id")],
        },
        {
            "lenient": {"openai-chat/C14", "openai-chat/C34"},
            "strict": {"openai-chat/C14", "openai-chat/C34"},
        },
    ),
    "ambiguous-index": (
        StreamSpec(TOOLS, (plan(omit_index=True), plan(omit_index=True, call_id="call_2"))),
        {"lenient": [("rejected", "protocol_error")] * 2},
        {"lenient": {"openai-chat/C1"}},
    ),
}


@pytest.mark.parametrize("name", sorted(PLANS))
def test_oracle_derives_the_documented_outcome(name: str) -> None:
    """For each plan the oracle gives the outcome the requirements give, typed here by hand."""
    spec, outcomes, findings = PLANS[name]
    rendered = render(spec)
    for profile, want in outcomes.items():
        expected = expect(spec, rendered, profile)
        assert [(call.status, call.reason) for call in expected.calls] == want, profile
    for profile, want_findings in findings.items():
        assert expect(spec, rendered, profile).findings == want_findings, profile


@pytest.mark.parametrize("name", sorted(PLANS))
@pytest.mark.parametrize("profile", ["lenient", "strict"])
def test_the_reference_passes_every_plan_under_every_splitting(name: str, profile: str) -> None:
    """The reference meets the oracle's expectation whole, byte by byte, at every two-way split
    and under the random splittings."""
    spec = PLANS[name][0]
    scenario = Scenario(name, name, ("A2",), spec)
    for splitting in DEFAULT_SPLITTINGS:
        result = run_case(scenario, profile, splitting, reference(profile))
        assert result.outcome == "passed", (splitting.label, result.failures, result.repro)


def test_release_offset_is_the_end_of_the_finish_event() -> None:
    """A ready call may first be released by the byte that ends its finish event (C4)."""
    spec = StreamSpec(TOOLS, (plan(),))
    rendered = render(spec)
    (call,) = expect(spec, rendered, "lenient").calls
    finish = rendered.data.index(b'"finish_reason":"tool_calls"')
    assert call.release_offset == rendered.data.index(b"\n\n", finish) + 2


def test_rendered_plan_carries_the_exact_fragments() -> None:
    """Every fragment of the plan is on the wire, in order, as an arguments delta."""
    spec = StreamSpec(TOOLS, (plan(arguments='{"city": "Caf\\u00e9"}', cuts=(14, 16)),))
    payloads = [
        json.loads(line[6:])
        for line in render(spec).data.decode().split("\n")
        if line.startswith("data: {")
    ]
    fragments = [
        entry["function"]["arguments"]
        for payload in payloads
        for choice in payload["choices"]
        for entry in choice["delta"].get("tool_calls", [])
    ]
    assert fragments == ["", '{"city": "Caf\\', "u0", '0e9"}']


def test_a_custom_plan_renders_custom_deltas_with_its_input_fragments() -> None:
    """A custom call goes on the wire as ``type: custom`` with ``custom.name`` in the header
    and the input cut into ``custom.input`` fragments (openai/openai-python#2530)."""
    spec = StreamSpec(TOOLS, (plan("apply_patch", "a\nb", kind="custom", cuts=(1, 2)),))
    entries = [
        entry
        for event in render(spec).events
        if isinstance(event.data, dict)
        for choice in event.data["choices"]
        for entry in choice["delta"].get("tool_calls", [])
    ]
    assert entries == [
        {
            "index": 0,
            "id": "call_1",
            "type": "custom",
            "custom": {"input": "", "name": "apply_patch"},
        },
        {"index": 0, "custom": {"input": "a"}},
        {"index": 0, "custom": {"input": "\n"}},
        {"index": 0, "custom": {"input": "b"}},
    ]


def test_the_oracle_expects_custom_input_verbatim_and_lark_unchecked() -> None:
    """A ready custom call's arguments are its input text; a lark-format call is expected ready
    and flagged not validated."""
    spec = StreamSpec(
        TOOLS,
        (
            plan("apply_patch", '{"a": 1}', kind="custom"),
            plan("run_sql", "SELECT 1;", kind="custom", call_id="call_2", cuts=(2,)),
        ),
    )
    patch, sql = expect(spec, render(spec), "lenient").calls
    assert (patch.arguments, patch.check_arguments, patch.not_validated) == (
        '{"a": 1}',
        True,
        False,
    )
    assert (sql.status, sql.arguments, sql.not_validated) == ("ready", "SELECT 1;", True)


def test_the_oracle_expects_the_wire_index_where_compaction_changed_it() -> None:
    """Wire indices 2 then 0 are positions 0 and 1, and the expectation names the wire index of
    each; a call whose wire index is its position gets none (nothing to compare)."""
    spec = StreamSpec(TOOLS, (plan(index=2), plan(index=0, call_id="call_2")))
    calls = expect(spec, render(spec), "lenient").calls
    assert [(call.index, call.wire_index) for call in calls] == [(0, 2), (1, 0)]
    plain = StreamSpec(TOOLS, (plan(),))
    assert expect(plain, render(plain), "lenient").calls[0].wire_index is None


@pytest.mark.parametrize(("index", "shown"), [(None, "absent"), (4, 4)])
def test_the_reference_dict_shows_the_wire_index_only_where_it_differs(
    index: int | None, shown: Any
) -> None:
    """The contract shape stays as it was for an ordinary call; a compacted one says which
    wire index it came from."""
    asm = Assembler(TOOLS)
    (result,) = asm.feed(render(StreamSpec(TOOLS, (plan(index=index),))).data) + asm.close()
    assert result.to_dict().get("wire_index", "absent") == shown


def test_plans_the_oracle_cannot_predict_are_refused() -> None:
    """A cut that falls on a delta event, and extra chunks after no finish, raise PlanError."""
    cut_delta = StreamSpec(TOOLS, (plan(),), ending=Ending(finish=None, done=False, cut=True))
    with pytest.raises(PlanError):
        expect(cut_delta, render(cut_delta), "lenient")
    after_nothing = StreamSpec(
        TOOLS, (plan(),), ending=Ending(finish=None, after_finish=("usage_chunk",))
    )
    with pytest.raises(PlanError):
        expect(after_nothing, render(after_nothing), "lenient")
    one_index = StreamSpec(TOOLS, (plan(index=0), plan(index=0)))
    with pytest.raises(PlanError, match="one call"):
        expect(one_index, render(one_index), "lenient")


def test_splittings_cover_whole_bytes_pairs_and_seeded_random() -> None:
    """Each splitting yields chunkings that reassemble the stream; random ones are seeded."""
    data = b"data: abc\n\n"
    for splitting in DEFAULT_SPLITTINGS:
        for chunks in chunkings(data, splitting):
            assert b"".join(chunks) == data
    assert len(list(chunkings(data, Splitting("pairs")))) == len(data) - 1
    first = list(chunkings(data, Splitting("random", seed=3)))
    assert first == list(chunkings(data, Splitting("random", seed=3)))
    assert cut(data, [4, 4, 0, 99]) == [b"data", b": abc\n\n"]


def _judge(
    expected: Any,
    seen: Observation,
    kind: str,
    exposed: frozenset[str] = frozenset(OBSERVABLES),
    cited: tuple[str, ...] = (),
) -> tuple[Failure, ...]:
    return run_checks(expected, seen, kind, exposed, cited).failures


def _observation(*results: dict[str, Any], offset: int = 10**6) -> Observation:
    return Observation(
        tuple(Release(0, offset, Observed.from_result(result)) for result in results)
    )


def _ready(**fields: Any) -> dict[str, Any]:
    base = {
        "choice": 0,
        "index": 0,
        "id": "call_1",
        "name": "get_weather",
        "arguments_text": '{"city": "Paris"}',
        "arguments": {"city": "Paris"},
        "status": "ready",
        "reason": None,
    }
    return {**base, **fields}


@pytest.mark.parametrize(
    ("result", "offset", "check"),
    [
        (_ready(id="call_1call_1"), 10**6, "identity"),
        (_ready(arguments_text='{"city": "Paris"} '), 10**6, "text_exact"),
        (_ready(arguments={"city": "Pa"}), 10**6, "safe_release"),
        (_ready(), 5, "no_premature_release"),
        (_ready(index=1), 10**6, "calls_released"),
        (_ready(status="rejected", reason="truncated", arguments=None), 10**6, "status"),
    ],
)
def test_checks_catch_a_broken_result(result: dict[str, Any], offset: int, check: str) -> None:
    """Each check names the mistake it exists to catch."""
    spec = StreamSpec(TOOLS, (plan(),))
    expected = expect(spec, render(spec), "lenient")
    failures = _judge(expected, _observation(result, offset=offset), "must")
    assert check in {failure.check for failure in failures}


def test_a_crash_is_the_implementation_failing() -> None:
    """An exception from the implementation is recorded and reported by no_crash."""

    def crashing(tools: list[Tool], limits: Limits) -> Any:
        raise RuntimeError("boom")

    spec = StreamSpec(TOOLS, (plan(),))
    seen = observe(crashing, TOOLS, Limits(), [render(spec).data])
    failures = _judge(expect(spec, render(spec), "lenient"), seen, "must")
    assert [f.check for f in failures] == ["no_crash"]
    assert "RuntimeError: boom" in failures[0].message


def test_must_not_only_asks_that_nothing_runs() -> None:
    """Under ``must-not`` a rejection with another reason passes; a ready call fails."""
    spec = StreamSpec(TOOLS, (plan(),), ending=Ending(finish="length"))
    expected = expect(spec, render(spec), "lenient")
    other_reason = _observation(_ready(status="rejected", reason="malformed_json", arguments=None))
    assert _judge(expected, other_reason, "must-not") == ()
    assert [f.check for f in _judge(expected, _observation(_ready()), "must-not")] == [
        "safe_release",
        "nothing_ready",
    ]


def test_repro_shows_boundaries_escapes_and_releases() -> None:
    """A repro says how the stream was cut, shows each line with its offset, the boundaries
    inside it (``┊``) and its escapes, and notes each release on the line that caused it."""
    chunks = [b"data: \xc3", b"\xa9\r", b"\n\n"]
    seen = _observation(_ready(), offset=9)
    assert format_repro(chunks, seen).splitlines() == [
        "3 chunks, cut after bytes 7, 9:",
        "      0 data: \\xc3┊\\xa9\\r┊\\n  ◀ after byte 9: call 0 of choice 0 released ready",
        "     10 \\n",
    ]


def test_repro_of_a_long_stream_keeps_the_lines_around_a_release() -> None:
    """One byte per chunk is said once, not marked between every byte; a long stream shows
    its start, its end and the lines around each release."""
    data = b"".join(f"data: {n}\n\n".encode() for n in range(100))
    seen = _observation(_ready(), offset=data.index(b"data: 50") + 5)
    lines = format_repro([data[i : i + 1] for i in range(len(data))], seen).splitlines()
    assert lines[0] == f"{len(data)} chunks of one byte each:"
    assert any("data: 50" in line and "◀ after byte" in line for line in lines)
    assert "        …" in lines
    assert len(lines) < 40


def test_a_failure_is_filed_under_the_rule_its_check_proves() -> None:
    """A truncated call released ready breaks C3, whatever the scenario cites; a wrong text
    breaks A2; where a problem could prove several rules, those the scenario cites win."""
    spec = StreamSpec(TOOLS, (plan(),), ending=Ending(finish="length"))
    expected = expect(spec, render(spec), "lenient")
    [failure] = _judge(expected, _observation(_ready()), "must", cited=("A5", "A6", "E4"))
    assert (failure.check, failure.rules) == ("safe_release", ("C3",))
    spec = StreamSpec(TOOLS, (plan(),))
    expected = expect(spec, render(spec), "lenient")
    [failure] = _judge(
        expected, _observation(_ready(arguments_text='{"city":"Paris"}')), "must", cited=("E4",)
    )
    assert (failure.check, failure.rules) == ("text_exact", ("A2",))
    failures = _judge(expected, _observation(_ready(index=1)), "must", cited=("A6", "C2", "E4"))
    assert {(f.check, f.rules) for f in failures} == {
        ("safe_release", ("A6",)),
        ("calls_released", ("A6",)),
        ("calls_released", ("A6", "C2")),
    }


def test_checks_that_read_what_is_not_exposed_are_not_observable_never_passed() -> None:
    """Results that only come out at close() cannot show release timing: the check is listed
    as not observable, and a release before the signal is not held against the library."""
    spec = StreamSpec(TOOLS, (plan(),))
    expected = expect(spec, render(spec), "lenient")
    hidden = frozenset(OBSERVABLES) - {"incremental", "reason", "findings"}
    judgement = run_checks(expected, _observation(_ready(), offset=5), "must", hidden)
    assert judgement.failures == ()
    assert judgement.not_observable == ("reason", "no_premature_release", "findings")


def test_without_statuses_a_call_handed_back_is_ready_and_one_withheld_is_refused() -> None:
    """A library with no notion of a rejected call: withholding a truncated call passes,
    handing it back is releasing it ready."""
    spec = StreamSpec(TOOLS, (plan(),), ending=Ending(finish="length"))
    expected = expect(spec, render(spec), "lenient")
    no_status = frozenset(OBSERVABLES) - {"status", "reason"}
    assert _judge(expected, _observation(), "must", no_status) == ()
    [failure] = _judge(expected, _observation(_ready()), "must", no_status)
    assert (failure.check, failure.rules) == ("safe_release", ("C3",))
    assert "calls_released" in {f.check for f in _judge(expected, _observation(), "must")}


def test_a_parameterless_call_whose_arguments_never_came_may_read_as_an_empty_object() -> None:
    """The rules complete such a call as ``{}``: handing back "{}" is not an A2 failure."""
    spec = StreamSpec(TOOLS, (plan(name="get_time", arguments="", cuts=()),))
    expected = expect(spec, render(spec), "lenient")
    result = _ready(name="get_time", arguments_text="{}", arguments={})
    assert _judge(expected, _observation(result), "must") == ()
    wrong = _ready(name="get_time", arguments_text="{ }", arguments={})
    assert [f.check for f in _judge(expected, _observation(wrong), "must")] == ["text_exact"]


def test_an_anthropic_block_that_streamed_nothing_may_read_as_no_text() -> None:
    """D22 completes such a block as ``{}``; handing back ``""`` (the concatenation of no
    fragments, A2's own words) is not an A2 failure either, but other text still is."""
    spec = StreamSpec(
        TOOLS, (plan(name="get_time", arguments="", cuts=()),), dialect="anthropic-messages"
    )
    expected = expect(spec, render(spec), "lenient")
    assert [call.arguments_text for call in expected.calls] == ["{}"]
    result = _ready(name="get_time", arguments_text="", arguments={})
    assert _judge(expected, _observation(result), "must") == ()
    wrong = _ready(name="get_time", arguments_text="{ }", arguments={})
    assert [f.check for f in _judge(expected, _observation(wrong), "must")] == ["text_exact"]


def test_a_status_outside_the_contract_is_named_as_such() -> None:
    """``done`` is not "done, expected ready": the message says the contract has no such
    status."""
    spec = StreamSpec(TOOLS, (plan(),))
    expected = expect(spec, render(spec), "lenient")
    failures = _judge(expected, _observation(_ready(status="done")), "must")
    [contract] = [f for f in failures if f.check == "contract"]
    assert "status 'done', which is not in the contract" in contract.message
    assert "None" not in " ".join(f.message for f in failures)


@pytest.mark.parametrize(
    "value",
    [
        "\ud83d\ude00",  # two lone halves, not one character
        "nul\x00 and \ufffe\uffff",
        10**5000,
        float("inf"),
        {"b": 1, "a": [1, {"z": None, "y": "\udfff"}]},
    ],
    ids=["surrogate-halves", "nul-noncharacters", "huge-int", "infinity", "key-order"],
)
def test_an_observation_keeps_every_value_exactly(value: Any) -> None:
    """What an implementation hands back is recorded code point for code point, digit for
    digit, key order kept: no JSON round trip heals a lone surrogate pair."""
    observed = Observed.from_result(_ready(arguments_text=value, arguments=value))
    assert observed.arguments_text == value
    assert type(observed.arguments_text) is type(value)
    if isinstance(value, dict):
        assert list(observed.arguments) == list(value)
        assert observed.arguments == value
    if isinstance(value, str):
        assert len(observed.arguments_text) == len(value)


class _Loud(str):
    def __str__(self) -> str:
        return "not what was sent"


def test_an_observation_keeps_subclassed_values_as_plain_builtins() -> None:
    """A value of a subclass of a builtin (an enum member, a str whose ``str()`` says something
    else, ``True`` as a bool) is recorded as the plain builtin with the same value; a mapping
    with a key that is not a string, or an object that is not JSON, is kept as its repr."""

    class Level(IntEnum):
        HIGH = 3

    arguments = {"level": Level.HIGH, "name": _Loud("Paris"), "on": True, "bad": {1: "one"}}
    observed = Observed.from_result(_ready(arguments=arguments, id=_Loud("call_1")))
    assert observed.arguments == {
        "level": 3,
        "name": "Paris",
        "on": True,
        "bad": "<not JSON: {1: 'one'}>",
    }
    assert [type(value) for value in observed.arguments.values()] == [int, str, bool, str]
    assert (observed.id, type(observed.id)) == ("call_1", str)
    assert Observed.from_result(_ready(arguments=object())).arguments.startswith("<not JSON: ")


def test_request_tools_of_both_kinds_are_read_with_their_formats() -> None:
    """``parse_tools`` reads OpenAI request tools, function and custom (nested and flat), and
    refuses a custom format it cannot read, naming the tool."""
    grammar = {"type": "grammar", "grammar": {"syntax": "regex", "definition": "[a-z]+"}}
    tools = parse_tools(
        {
            "tools": [
                {"type": "function", "function": {"name": "get_weather", "parameters": None}},
                {"type": "custom", "custom": {"name": "apply_patch"}},
                {"type": "custom", "name": "set_word", "format": grammar},
            ]
        }
    )
    assert [(tool.name, tool.kind, tool.format) for tool in tools] == [
        ("get_weather", "function", None),
        ("apply_patch", "custom", None),
        ("set_word", "custom", grammar),
    ]
    broken = {"type": "custom", "custom": {"name": "bad", "format": {"type": "grammar"}}}
    with pytest.raises(UsageError, match=r"tools\[0\].*'bad'.*definition"):
        parse_tools([broken])


def test_a_custom_call_with_a_function_only_option_is_refused_at_its_line(tmp_path: Path) -> None:
    """``snapshots`` (and ``arguments_as_value``, ``legacy``) describe JSON arguments: on a
    custom call the loader names the scenario's line instead of rendering nonsense."""
    path = tmp_path / "custom.yaml"
    path.write_text(
        "id: custom-snapshots\n"
        "title: t\n"
        "rules: [A2]\n"
        "tools: [{name: apply_patch, type: custom}]\n"
        "calls:\n"
        "  - {name: apply_patch, kind: custom, id: c, arguments: ab, snapshots: true}\n"
    )
    loaded = load_scenarios([path])
    assert loaded.scenarios == ()
    assert [str(error) for error in loaded.errors] == [
        f"{path}:6: calls[0].snapshots: snapshots is for function calls: a custom call's input "
        "is text"
    ]


def test_a_made_up_id_is_allowed_never_required_and_never_shared() -> None:
    """V4 lets the lenient profile make up an id (decision D9): handing back none passes; two
    calls sharing a made-up id, or one borrowing a real id, fail V4."""
    spec = StreamSpec(TOOLS, (plan(call_id=None), plan(call_id=None, index=1)))
    expected = expect(spec, render(spec), "lenient")
    none = [_ready(id=None), _ready(id=None, index=1, choice=0)]
    assert _judge(expected, _observation(*none), "must") == ()
    shared = [_ready(id="made_up"), _ready(id="made_up", index=1)]
    [failure] = _judge(expected, _observation(*shared), "must")
    assert (failure.check, failure.rules) == ("identity", ("V4",))
    assert "share id 'made_up'" in failure.message


def test_a_numeric_id_may_come_back_as_the_number_the_wire_sent() -> None:
    """E2's "original call ids" (decision D10): the number itself or its decimal string; any
    other value still fails."""
    spec = StreamSpec(TOOLS, (plan(id_policy="numeric"),))
    expected = expect(spec, render(spec), "lenient")
    (call,) = expected.calls
    assert call.id is not None
    assert _judge(expected, _observation(_ready(id=int(call.id))), "must") == ()
    assert _judge(expected, _observation(_ready(id=call.id)), "must") == ()
    [failure] = _judge(expected, _observation(_ready(id=int(call.id) + 1)), "must")
    assert failure.check == "identity"


def test_a_library_without_parsed_arguments_is_judged_by_what_its_text_runs_as() -> None:
    """Decision D13: where only the text is exposed, a ready call whose text does not decode to
    the true arguments is unsafe in every kind of scenario; a text that decodes to them is
    safe even where it is not byte-exact."""
    spec = StreamSpec(TOOLS, (plan(),))
    expected = expect(spec, render(spec), "lenient")
    text_only = frozenset(OBSERVABLES) - {"arguments"}
    merged = _ready(arguments_text='{"city": "Paris"}{"city": "Rome"}', arguments=None)
    [failure] = _judge(expected, _observation(merged), "impl-defined", text_only)
    assert (failure.check, failure.rules) == ("safe_release", ("A2",))
    assert "does not run as" in failure.message
    spaced = _ready(arguments_text='{ "city" : "Paris" }', arguments=None)
    assert _judge(expected, _observation(spaced), "impl-defined", text_only) == ()


class _FindingsAsMethod:
    """The reference with ``findings`` a method, not a property: a mutant of it."""

    def __init__(self, **kwargs: Any) -> None:
        self._inner = Assembler(**kwargs)
        self.feed = self._inner.feed
        self.close = self._inner.close

    def findings(self) -> tuple[Any, ...]:
        return self._inner.findings


def test_findings_that_cannot_be_read_fail_the_findings_check_not_go_unobserved() -> None:
    """An implementation that has a ``findings`` attribute reports findings; one that is not a
    collection of quirk ids (a method) fails the check instead of hiding it as not observable."""
    spec = StreamSpec(TOOLS, (plan(),))
    rendered = render(spec)
    expected = expect(spec, rendered, "lenient")
    seen = observe(_FindingsAsMethod, spec.tools, spec.limits, [rendered.data])
    assert seen.findings is None
    assert "method" in (seen.findings_unreadable or "")
    [failure] = _judge(expected, seen, "must")
    assert (failure.check, failure.rules) == ("findings", ("R",))
    assert failure.message.startswith("findings cannot be read: its findings, a method")


class _WithoutFindings:
    """The reference without a ``findings`` attribute, declaring (by default) every observable."""

    def __init__(self, **kwargs: Any) -> None:
        inner = Assembler(**kwargs)
        self.feed = inner.feed
        self.close = inner.close


def test_no_findings_at_all_leave_the_check_not_observable_though_declared() -> None:
    """An implementation that keeps no findings list is not failed, nor the case errored, for
    the default declaration's ``findings`` (D92): the check is not observable."""
    spec = StreamSpec(TOOLS, (plan(),))
    rendered = render(spec)
    expected = expect(spec, rendered, "lenient")
    seen = observe(_WithoutFindings, spec.tools, spec.limits, [rendered.data])
    assert (seen.findings, seen.findings_unreadable) == (None, None)
    judgement = run_checks(expected, seen, "must", frozenset(OBSERVABLES))
    assert judgement.failures == ()
    assert judgement.not_observable == ("findings",)

"""The Hypothesis strategies of ``callstream.strategies``: what they generate is sound.

1. Soundness: every generated scenario is one the oracle predicts, and the reference assembler
   passes it under both profiles, however the stream is cut.
2. The pieces keep their promises: argument text parses back to the drawn value, invalid
   arguments are invalid for the reason given, fragments join back to the text, and the
   dangerous cuts (inside a ``\\u`` escape, after a prefix that parses) really are drawn.

Whether the generators find bugs is for ``tests/quality/``: every mutant, from generated streams
alone. Every property here is bounded and derandomised by the test profile.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections import Counter
from functools import partial
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

import callstream.reference
from callstream import strategies
from callstream.core.case import run_case
from callstream.core.oracle import expect
from callstream.core.rendering import render
from callstream.core.spec import (
    CallPlan,
    Ending,
    Noise,
    Scenario,
    Splitting,
    StreamSpec,
    Transport,
)
from callstream.core.wire import data_size
from callstream.coverage import features_of
from callstream.errors import PlanError
from callstream.implementations import reference, reference_strict
from callstream.reference import Limits, Reason, Tool
from callstream.rules import OPENAI_CHAT_QUIRKS, RULES
from callstream.strategies._knobs import flag, knobs, one_in
from callstream.strategies._splittings import BYTE_BY_BYTE_MAX
from tests.mutants._base import StreamFailure
from tests.mutants._responses_base import ResponsesAssembler

Case = tuple[Scenario, Splitting]
pytestmark = pytest.mark.usefixtures("stable_constants")

FIND = settings(
    database=None,
    derandomize=True,
    deadline=None,
    phases=(Phase.generate, Phase.shrink),
    suppress_health_check=list(HealthCheck),
)
"""For ``find``: derandomised, bounded by each test's ``max_examples``, no explain phase."""


def lenient(tools: list[Tool], limits: Limits) -> callstream.reference.Assembler:
    """The reference assembler under the lenient profile."""
    return callstream.reference.Assembler(tools, limits=limits)


def strict(tools: list[Tool], limits: Limits) -> callstream.reference.Assembler:
    """The reference assembler under the strict profile."""
    return callstream.reference.Assembler(tools, limits=limits, profile="strict")


def same_json(one: Any, other: Any) -> bool:
    """Equal as JSON values, types included (``1`` is not ``1.0``, ``True`` is not ``1``)."""
    if type(one) is not type(other):
        return False
    if isinstance(one, dict):
        return one.keys() == other.keys() and all(same_json(one[k], other[k]) for k in one)
    if isinstance(one, list):
        return len(one) == len(other) and all(map(same_json, one, other))
    return bool(one == other)


def cut_points(pieces: tuple[str, ...]) -> set[int]:
    """Where the fragments cut their text."""
    points, at = set(), 0
    for piece in pieces[:-1]:
        at += len(piece)
        points.add(at)
    return points


def strictly_parses(text: str) -> bool:
    """Whether ``text`` is one JSON value (NaN and Infinity refused)."""
    try:
        json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    except ValueError:
        return False
    return True


# --- soundness ------------------------------------------------------------------------------


@settings(max_examples=120, deadline=None)
@given(strategies.cases())
def test_the_reference_passes_every_generated_case(case: Case) -> None:
    """Every generated scenario, cut by every generated splitting, passes on the reference
    assembler under both profiles: the oracle predicts what the strategies plan."""
    scenario, splitting = case
    for profile, factory in (("lenient", lenient), ("strict", strict)):
        result = run_case(scenario, profile, splitting, factory)
        assert result.outcome == "passed", (profile, result.failures, result.repro)


@settings(max_examples=60, deadline=None)
@given(strategies.scenarios())
def test_a_generated_scenario_is_a_well_formed_corpus_entry(scenario: Scenario) -> None:
    """A scenario has a stable ``fuzz-`` id derived from its spec, a title, known rules and
    quirks (the ones the oracle expects findings for), and runs under both profiles."""
    assert re.fullmatch(r"fuzz-[0-9a-f]{12}", scenario.id)
    assert strategies.scenario_for(scenario.spec).id == scenario.id
    assert scenario.title.startswith("fuzz: ")
    assert scenario.rules
    assert set(scenario.rules) <= set(RULES)
    assert set(scenario.quirks) <= set(OPENAI_CHAT_QUIRKS)
    findings = expect(scenario.spec, render(scenario.spec), "lenient").findings
    assert set(scenario.quirks) == findings & set(OPENAI_CHAT_QUIRKS)
    assert scenario.profiles == ("lenient", "strict")
    # A name changed mid-call may be refused or taken as the last (D12): only safety is judged.
    assert scenario.kind == ("impl-defined" if scenario.spec.oddity == "name_changes" else "must")


def test_a_spec_names_the_rules_its_knobs_exercise() -> None:
    """Interleaving is A5, two choices A7, the same function twice A6, a length finish C3,
    CRLF framing T2, a small size limit V5."""
    tool = Tool("f", {"type": "object"})
    call = CallPlan("f", '{"a":1}', ('{"a"', ":1}"), id="call_1")
    other = CallPlan("f", "{}", ("{}",), id="call_2", choice=1)
    spec = StreamSpec(
        tools=(tool,),
        calls=(call, other),
        choices=2,
        schedule="interleaved",
        ending=Ending(finish="length"),
        transport=Transport(newline="crlf"),
        limits=Limits(max_argument_bytes=3),
    )
    rules = strategies.rules_for(spec)
    assert {"A2", "T1", "A5", "A6", "A7", "C3", "T2", "V5"} <= set(rules)
    assert "A3" not in rules
    assert "T3" not in rules


# --- tools, arguments, argument text --------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(strategies.tools(max_size=4))
def test_tools_have_unique_names_and_valid_schemas(tools: tuple[Tool, ...]) -> None:
    """Tool names are unique and every schema is a Draft 2020-12 schema."""
    assert len({tool.name for tool in tools}) == len(tools)
    for tool in tools:
        if tool.parameters is not None:
            Draft202012Validator.check_schema(dict(tool.parameters))


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_argument_text_parses_back_to_a_value_valid_for_the_tool(data: st.DataObject) -> None:
    """Arguments drawn for a tool are a valid object, and every spelling of them parses back
    to exactly that value."""
    (tool,) = data.draw(strategies.tools(max_size=1))
    value = data.draw(strategies.arguments_for(tool))
    assert isinstance(value, dict)
    if tool.parameters is not None:
        assert Draft202012Validator(dict(tool.parameters)).is_valid(value)
    text = data.draw(strategies.argument_text(value))
    text.encode("utf-8")  # never a raw lone surrogate: it must go on the wire
    assert same_json(json.loads(text), value)


@pytest.mark.parametrize(
    ("value", "spelling"),
    [
        ({"a": "é"}, re.compile(r'\{"a": ?"\\u00[eE]9"\}')),
        ({"a": "😀"}, re.compile(r'"\\u[dD]83[dD]\\u[dD][eE]00"')),
        ({"a": "\ud800"}, re.compile(r'"\\u[dD]800"')),
        ({"url": "a/b"}, re.compile(r'"a\\/b"')),
        ({"a": [1, 2]}, re.compile(r"\n")),
    ],
)
def test_argument_text_spells_a_value_in_many_ways(value: Any, spelling: re.Pattern[str]) -> None:
    """Escapes for non-ASCII, surrogate pairs for emoji, lone surrogates escaped, ``\\/`` and
    indentation all come up (while the text always parses back to the value)."""
    text = find(
        strategies.argument_text(value),
        lambda text: bool(spelling.search(text)),
        settings=settings(FIND, max_examples=500),
    )
    assert same_json(json.loads(text), value)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.data())
def test_invalid_arguments_are_refused_for_the_reason_given(data: st.DataObject) -> None:
    """Malformed text never parses to an object; a schema violation parses to an object that
    the tool's schema refuses."""
    (tool,) = data.draw(strategies.tools(max_size=1))
    invalid = data.draw(strategies.invalid_arguments(tool))
    invalid.text.encode("utf-8")
    if invalid.reason == "malformed_json":
        assert not (strictly_parses(invalid.text) and isinstance(json.loads(invalid.text), dict))
    else:
        assert tool.parameters is not None
        value = json.loads(invalid.text)
        assert isinstance(value, dict)
        assert not Draft202012Validator(dict(tool.parameters)).is_valid(value)


# --- fragments and dangerous cuts -----------------------------------------------------------

ESCAPED = '{"city":"Caf\\u00e9","mood":"\\ud83d\\ude00","n":12,"ok":true}'


def test_dangerous_cuts_are_where_the_danger_is() -> None:
    """Cuts inside ``\\u00e9``, between the halves of ``\\ud83d\\ude00``, after the
    backslash, inside ``12`` and ``true``, and right after ``{"city":"Café"`` (which parses
    once closed) are all listed, each where it belongs."""
    cuts = strategies.dangerous_cuts(ESCAPED)
    escape = ESCAPED.index("\\u00e9")
    pair = ESCAPED.index("\\ude00")
    number = ESCAPED.index("12")
    literal = ESCAPED.index("true")
    assert set(range(escape + 2, escape + 6)) <= set(cuts["inside a \\u escape"])
    assert escape + 1 in cuts["after a backslash"]
    assert cuts["between surrogate escapes"] == (pair,)
    assert number + 1 in cuts["inside a number"]
    assert set(range(literal + 1, literal + 4)) == set(cuts["inside a literal"])
    assert ESCAPED.index(',"mood"') in cuts["after a prefix that parses"]
    assert 1 in cuts["after a prefix that parses"]  # "{" reads as "{}"
    assert number + 1 in cuts["after a prefix that parses"]  # "1" before "2"
    assert ESCAPED.index('"city"') + 2 not in cuts["after a prefix that parses"]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_fragments_join_back_to_the_text(data: st.DataObject) -> None:
    """However the text is cut, the fragments concatenate to it."""
    value = data.draw(strategies.arguments_for(Tool("f", None)))
    text = data.draw(st.one_of(strategies.argument_text(value), st.text(max_size=20)))
    pieces = data.draw(strategies.fragments(text))
    assert "".join(pieces) == text


@pytest.mark.parametrize(
    "kind",
    [
        "inside a \\u escape",
        "between surrogate escapes",
        "after a backslash",
        "after a prefix that parses",
        "inside a number",
        "inside a literal",
    ],
)
def test_each_dangerous_cut_is_drawn(kind: str) -> None:
    """``fragments`` does cut inside a ``\\u`` escape, between surrogate escapes, after a
    prefix that parses, and so on."""
    danger = set(strategies.dangerous_cuts(ESCAPED)[kind])
    pieces = find(
        strategies.fragments(ESCAPED),
        lambda pieces: bool(cut_points(pieces) & danger),
        settings=settings(FIND, max_examples=300),
    )
    assert "".join(pieces) == ESCAPED
    assert len(pieces) == 2  # shrunk to the one cut that matters


def test_generated_streams_cut_inside_escapes_and_after_parsing_prefixes() -> None:
    """Through the whole pipeline (schemas, values, spellings, fragments), some call's text is
    cut inside a ``\\u`` escape, and some right after a prefix that already parses."""
    for kind in ("inside a \\u escape", "after a prefix that parses"):

        def cuts_there(spec: StreamSpec, kind: str = kind) -> bool:
            return any(
                cut_points(plan.fragments)
                & set(strategies.dangerous_cuts(plan.arguments).get(kind, ()))
                for plan in spec.calls
            )

        spec = find(
            strategies.stream_specs(),
            cuts_there,
            settings=settings(FIND, max_examples=1000, phases=(Phase.generate,)),
        )
        assert cuts_there(spec)


def test_dangerous_offsets_are_the_fragile_bytes_of_a_stream() -> None:
    """Inside the BOM, right after ``data:``, inside a two-byte character, between CR and LF
    and inside a ``\\u`` escape."""
    data = '\ufeffdata: {"a":"é\\u00e9"}\r\n\r\n'.encode()
    offsets = strategies.dangerous_offsets(data)
    body = data.index(b"data:")
    assert {1, 2, 3} <= set(offsets)
    assert body + len("data:") in offsets
    assert body + len("data: ") in offsets
    assert data.index("é".encode()) + 1 in offsets
    assert data.index(b"\r\n") + 1 in offsets
    assert data.index(b"\\u00e9") + 3 in offsets
    assert all(0 < offset < len(data) for offset in offsets)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_offset_splittings_stay_inside_the_stream(data: st.DataObject) -> None:
    """Offsets drawn for a stream's bytes are sorted, unique and inside it."""
    payload = data.draw(st.binary(min_size=2, max_size=200))
    splitting = data.draw(strategies.splittings(payload))
    if splitting.kind == "offsets":
        assert list(splitting.offsets) == sorted(set(splitting.offsets))
        assert all(0 < offset < len(payload) for offset in splitting.offsets)


def test_a_stream_up_to_the_bound_is_cut_byte_by_byte() -> None:
    """Streams up to ``BYTE_BY_BYTE_MAX`` bytes are drawn cut one byte at a time."""
    short = b"x" * BYTE_BY_BYTE_MAX
    assert find(strategies.splittings(short), lambda s: s.kind == "bytes", settings=FIND)


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(st.data())
def test_a_longer_stream_is_never_cut_byte_by_byte(data: st.DataObject) -> None:
    """A stream past ``BYTE_BY_BYTE_MAX`` bytes (258 calls) is never cut one byte at a time:
    the draw that would is cut at many places instead (26 000 chunks cost a hundred streams)."""
    splitting = data.draw(strategies.splittings(b"x" * (BYTE_BY_BYTE_MAX + 1)))
    assert splitting.kind != "bytes"


def test_knobs_drawn_together_come_as_often_as_each_says() -> None:
    """Knobs folded into one index are each on about as often as their weights say, whatever
    the others are, when the bytes drawn are uniform (as Hypothesis draws a byte)."""
    together = knobs(flag(30), one_in("plain", ("odd", "odder"), 20), flag(5), percent=40)
    bytes_drawn = random.Random(14)
    drawn = [together.draw(lambda _: bytes_drawn.randrange(256)) for _ in range(20_000)]
    share = Counter(drawn)
    on = 1 - share[(False, "plain", False)] / len(drawn)
    assert abs(sum(first for first, _, _ in drawn) / len(drawn) - 0.4 * 0.3) < 0.01
    assert abs(sum(second == "odder" for _, second, _ in drawn) / len(drawn) - 0.04) < 0.01
    assert abs(sum(third for _, _, third in drawn) / len(drawn) - 0.02) < 0.005
    assert 0.4 * (1 - 0.7 * 0.8 * 0.95) - 0.015 < on < 0.4 * (1 - 0.7 * 0.8 * 0.95) + 0.015


def test_named_knobs_come_as_the_fields_of_one_value() -> None:
    """``names`` gives each knob's value its field name, drawn exactly as ``draw`` draws it;
    a name too many or too few is refused when the table is built."""
    named = knobs(flag(30), one_in("plain", ("odd",), 20), names="loud style")
    first, second = random.Random(3), random.Random(3)
    for _ in range(200):
        values = named.draw(lambda _: first.randrange(256))
        fields = named.fields(lambda _: second.randrange(256))
        assert fields == {"loud": values[0], "style": values[1]}
    with pytest.raises(ValueError, match="1 names for 2 knobs"):
        knobs(flag(30), flag(5), names="loud")


def test_a_stream_shrinks_to_ordinary_noise_ending_and_transport() -> None:
    """Every folded knob shrinks to its ordinary value: the simplest stream drawn has the
    default noise, ending and transport, one call, sequential, in one choice."""
    spec = find(strategies.stream_specs(), lambda spec: True, settings=FIND)
    assert (spec.noise, spec.ending, spec.transport) == (Noise(), Ending(), Transport())
    assert (len(spec.calls), spec.schedule, spec.choices) == (1, "sequential", 1)


# --- limits drawn from the stream's own sizes -------------------------------------------------


def _past_the_first_call(under: int) -> StreamSpec:
    """A stream over several ``data:`` lines whose ``max_event_size`` is ``under`` characters
    under the data of the first event that carries a call."""
    spec = StreamSpec(
        tools=(Tool("f", {"type": "object"}),),
        calls=(CallPlan("f", '{"a":1}', ('{"a":1}',), id="call_1"),),
        schedule="whole",
        transport=Transport(multiline=True),
    )
    first = next(e for e in render(spec).events if "tool_calls" in json.dumps(e.data))
    size = data_size(first, spec.transport)
    return dataclasses.replace(spec, limits=Limits(max_event_size=size - under))


@pytest.mark.parametrize("under", [1, 5])
def test_an_event_past_the_size_limit_that_opens_the_first_call_releases_nothing(
    under: int,
) -> None:
    """The stream fails at the event (V5, too_large) before any call begins: nothing is
    released, under both profiles, and the reference passes it however it is cut."""
    spec = _past_the_first_call(under)
    scenario = strategies.scenario_for(spec)
    for profile, factory in (("lenient", reference), ("strict", reference_strict)):
        assert expect(spec, render(spec), profile).calls == ()
        for splitting in (Splitting("whole"), Splitting("bytes")):
            assert run_case(scenario, profile, splitting, factory).outcome == "passed"


def test_an_event_past_the_size_limit_after_a_call_began_is_no_plan() -> None:
    """Past the limit where a call is already open, what the stream becomes depends on the
    event: the oracle refuses the plan rather than guess."""
    spec = _past_the_first_call(0)
    longer = '{"a":"' + "x" * 99 + '"}'
    second = dataclasses.replace(spec.calls[0], id="call_2", arguments=longer, fragments=(longer,))
    assert strategies.predictable(spec)
    assert not strategies.predictable(dataclasses.replace(spec, calls=(*spec.calls, second)))


def test_role_on_every_delta_of_a_stream_without_calls_is_sent_once_and_not_recorded() -> None:
    """With no call and an error for an ending, the role rides on one delta only: no repeat
    (quirk C29) is there to record."""
    spec = StreamSpec(
        tools=(Tool("f", {"type": "object"}),),
        noise=Noise(role_every=True),
        ending=Ending(error="nested"),
    )
    assert "openai-chat/C29" not in expect(spec, render(spec), "lenient").findings
    scenario = strategies.scenario_for(spec)
    assert run_case(scenario, "lenient", Splitting("whole"), reference).outcome == "passed"


def _below_the_next(spec: StreamSpec) -> int | None:
    """The number of the first call sent at an unused index below the next one of its choice
    (indices that go down), if any. A legacy ``function_call`` has no index, nor has a call
    sent without one; a call without a planned index is sent at its position in its choice."""
    seen: dict[int, list[int]] = {}
    positions: dict[int, int] = {}
    for number, plan in enumerate(spec.calls):
        position = positions.get(plan.choice, 0)
        positions[plan.choice] = position + 1
        before = seen.setdefault(plan.choice, [])
        if plan.legacy or plan.omit_index:
            continue
        wire = position if plan.index is None else plan.index
        if wire not in before and wire < len(before):
            return number
        before.append(wire)
    return None


def _named(spec: StreamSpec, number: int | None) -> bool:
    """Whether call ``number`` carries its id and its name plainly, so that nothing but its
    index is wrong with it (a call without an id is rejected ``missing_id`` first)."""
    plan = spec.calls[number or 0]
    return (
        plan.id is not None
        and plan.id_policy in ("once", "every")
        and plan.name is not None
        and plan.name_policy in ("once", "every")
    )


def test_the_generators_draw_indices_that_go_down_and_strict_rejects_the_call_below() -> None:
    """A call at an index an earlier gap skipped, below the next one, is quirk C14 as a gap is;
    the strict profile rejects it (``protocol_error``), the lenient one keeps it."""
    found = find(
        strategies.stream_specs(dialect="openai-chat"),
        lambda spec: _below_the_next(spec) is not None and _named(spec, _below_the_next(spec)),
        settings=settings(FIND, max_examples=3000),
    )
    number = _below_the_next(found)
    assert number is not None
    strict = expect(found, render(found), "strict")
    assert "openai-chat/C14" in strict.findings
    assert (strict.calls[number].status, strict.calls[number].reason) == (
        "rejected",
        "protocol_error",
    )


class ComparesIndicesByIdentity(ResponsesAssembler):
    """Checks an event's ``output_index`` against its call's with ``is not``: true of two equal
    ints past 256, which CPython keeps as two objects, so it refuses every such call."""

    def route_item(self, payload: dict[str, Any]) -> Any:
        call = super().route_item(payload)
        index = payload.get("output_index")
        if type(index) is int and index is not call.wire:
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        return call


def test_the_generators_draw_call_items_far_down_the_output_list() -> None:
    """Responses call items past output_index 256 (a long response's): the reference keeps them
    ready under both profiles, and a reader that compares the indices by identity fails them."""
    found = find(
        strategies.scenarios(dialect="openai-responses"),
        lambda scenario: (
            any((plan.index or 0) > 256 and plan.arguments for plan in scenario.spec.calls)
            and scenario.spec.oddity is None
        ),
        settings=settings(FIND, max_examples=3000),
    )
    assert "index.gap" in features_of(found.spec, render(found.spec).data)
    for profile, factory in (("lenient", reference), ("strict", reference_strict)):
        result = run_case(
            found, profile, Splitting("whole"), partial(factory, dialect=found.spec.dialect)
        )
        assert result.outcome == "passed", (profile, result.failures)
    caught = run_case(found, "lenient", Splitting("whole"), ComparesIndicesByIdentity)
    assert caught.outcome == "failed"


def test_an_event_past_the_size_limit_after_a_finish_is_not_predicted() -> None:
    """A late delta after the finish may be the first event that carries a call: past
    ``max_event_size`` it fails the stream there, with the finish and its repeat already
    recorded (C20). The oracle predicts the findings before an oversized event only where
    nothing comes after a finish, so it refuses this plan rather than predict too few."""
    tool = Tool("note", {"type": "object", "properties": {"text": {"type": "string"}}})
    spec = StreamSpec(
        (tool,),
        (),
        noise=Noise(role=True),
        ending=Ending(finish="stop", after_finish=("duplicate_finish", "late_delta")),
        transport=Transport(multiline=True),
        limits=Limits(max_event_size=265),
    )
    with pytest.raises(PlanError, match="max_event_size"):
        expect(spec, render(spec), "lenient")


def test_a_call_without_index_named_again_without_its_id_is_no_plan_the_oracle_predicts() -> None:
    """Without an index a delta is routed by its id: a later delta that names the tool but
    carries no id opens a call of its own in the reference (C1), so a plan that sends one is
    refused rather than predicted as one call (the numeric-id oddity once made such a plan,
    and the fuzzer of the snapshots route caught the false failure)."""
    plan = CallPlan(
        "get_weather",
        '{"city":"Paris"}',
        ('{"city":', '"Paris"}'),
        id="call_0",
        omit_index=True,
        id_policy="numeric",
        name_policy="every",
    )
    weather = Tool("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}})
    spec = StreamSpec(tools=(weather,), calls=(plan,))
    with pytest.raises(PlanError, match="names a call of its own"):
        expect(spec, render(spec), "lenient")
    assert not strategies.predictable(spec)
    recorded = callstream.reference.Assembler((weather,))
    released = [*recorded.feed(render(spec).data), *recorded.close()]
    assert len(released) == 3  # its header and each of its two fragments, a call each

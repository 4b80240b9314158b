"""``py+events:module:factory``: an event-level assembler behind callstream's SSE decoder.

The reference fed events (its ``Assembler.feed_event``) earns the verdicts the reference fed
bytes earns on every scenario that is applicable to it; the scenarios that prove only the SSE
framing or the decoder's limits are not applicable, and say why; an event-level assembler with
a bug fails the scenario of its rule; the decoder's own findings (T9, T11) are added once; a
connectable that cannot be run so is a usage error naming it; the fuzzer finds nothing in the
reference fed events.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from callstream.connect.check import check_in_process
from callstream.connect.connectables import load_implementation
from callstream.connect.events import EventFed
from callstream.core.case import run_case, splittings_of
from callstream.core.declaration import Implementation
from callstream.core.spec import Scenario
from callstream.corpus.scenario import default_corpus, load_scenarios
from callstream.errors import UsageError
from callstream.fuzz import fuzz
from callstream.reference import DIALECTS, Assembler, Finding, Limits, Tool
from callstream.reports import load_report
from callstream.runner.cases import expand

EVENT_FED = "py+events:callstream.implementations:"
CONTRACT = Path(__file__).resolve().parent.parent / "docs" / "contract.md"
WEATHER = Tool("get_weather", {"type": "object"})


@cache
def corpus() -> tuple[Scenario, ...]:
    loaded = load_scenarios(default_corpus())
    assert not loaded.errors, "\n".join(map(str, loaded.errors))
    return tuple(loaded.scenarios)


def scenario(scenario_id: str) -> Scenario:
    return next(known for known in corpus() if known.id == scenario_id)


def verdicts(implementation: Implementation, scenario: Scenario) -> dict[str, list[str]]:
    """Each splitting but ``pairs`` of ``scenario`` on ``implementation``: its failures' messages
    by splitting label, for those that did not pass."""
    factory = implementation.factory_for(scenario.spec.dialect)
    failed = {}
    for splitting in splittings_of(scenario):
        if splitting.kind == "pairs":
            continue
        result = run_case(
            scenario,
            implementation.declaration.profile,
            splitting,
            factory,
            implementation.declaration.observables,
        )
        if result.outcome != "passed":
            failed[splitting.label] = [failure.message for failure in result.failures]
    return failed


# -- the corpus ------------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["reference", "reference_strict"])
def test_the_reference_fed_events_passes_every_applicable_case_of_the_corpus(route: str) -> None:
    """Every case a run of ``py+events:…reference`` runs passes (``pairs`` left out, as in
    tests/test_corpus.py); the framing-only and limit scenarios, and only those, are reported
    not applicable, naming the decoder."""
    implementation = load_implementation(EVENT_FED + route)
    assert implementation.declaration.reads == "events"
    bytes_fed = load_implementation("py:callstream.implementations:" + route).declaration
    failed: dict[str, list[str]] = {}
    the_decoders: dict[str, str] = {}
    for known in corpus():
        skipped = implementation.declaration.skips(known)
        if skipped is None:
            if failing := verdicts(implementation, known):
                failed[known.id] = next(iter(failing.values()))
        elif bytes_fed.skips(known) is None:
            the_decoders[known.id] = skipped[1]
    assert failed == {}
    framing = [why for why in the_decoders.values() if "SSE framing rules (T1, T2, T3)" in why]
    limits = [why for why in the_decoders.values() if "a limit of callstream's SSE decoder" in why]
    assert len(framing) > 40
    assert len(limits) > 5
    assert len(framing) + len(limits) == len(the_decoders)
    assert all(
        "callstream's SSE decoder" in why and "reads the bytes for it" in why
        for why in the_decoders.values()
    )
    cases = expand(corpus(), implementation.declaration)
    not_applicable = [case for case in cases if case.scenario.id in the_decoders]
    assert all(
        case.skipped == ("not_applicable", the_decoders[case.scenario.id])
        for case in not_applicable
    )


def test_only_scenarios_that_cite_framing_rules_alone_or_set_a_decoder_limit_are_skipped() -> None:
    """T1 and T3 alone: the decoder's; T3 with V6: run; a ``max_event_size``: the decoder's, the
    limit named; a bytes-fed implementation runs them all."""
    events = load_implementation(EVENT_FED + "reference").declaration
    bytes_fed = load_implementation("py:callstream.implementations:reference").declaration
    framing = scenario("oc-m-cr-then-tab-line-in-next-chunk")
    joined = scenario("oc-s-single-newline-events-lenient")
    sized = scenario("oc-m-first-event-exactly-at-size-limit")
    assert (set(framing.rules), set(joined.rules)) == ({"T1", "T3"}, {"T3", "V6"})
    assert events.skips(framing) == (
        "not_applicable",
        "the implementation reads decoded events: callstream's SSE decoder reads the bytes for "
        "it, so the SSE framing rules (T1, T2, T3) are the decoder's",
    )
    assert events.skips(joined) is None
    assert events.skips(sized) == (
        "not_applicable",
        "the implementation reads decoded events; the scenario sets max_event_size 273, a limit "
        "of callstream's SSE decoder, which reads the bytes for it: the implementation never "
        "sees a line or an event's size",
    )
    assert [bytes_fed.skips(known) for known in (framing, joined, sized)] == [None] * 3
    assert events.to_dict()["reads"] == "events"
    assert "reads" not in bytes_fed.to_dict()


# -- an event-level assembler of one's own: the documented example ---------------------------------


@pytest.fixture
def mymodule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The example of docs/contract.md ("Event-level assemblers"), importable as ``mymodule``."""
    section = CONTRACT.read_text("utf-8").split("\n## Event-level assemblers\n")[1]
    section = section.split("\n## ")[0]
    example = next(
        block for block in re.findall(r"```python\n(.*?)```", section, re.S) if "def make(" in block
    )
    (tmp_path / "mymodule.py").write_text(example, "utf-8")
    monkeypatch.syspath_prepend(tmp_path)
    yield importlib.import_module("mymodule")
    del sys.modules["mymodule"]


def test_the_documented_example_has_the_shape_and_passes_plain_streams(
    mymodule: ModuleType,
) -> None:
    """``callstream check`` finds its shape right, and it passes a finished stream of two
    calls and one cut off before its finish reason, under every splitting."""
    implementation = load_implementation("py+events:mymodule:make")
    assert check_in_process(implementation).ok
    for known in ("oc-l-finish-tool-calls-then-done", "oc-l-no-finish-then-eof"):
        assert verdicts(implementation, scenario(known)) == {}


def test_an_event_level_assembler_that_takes_the_end_for_completion_fails_c2(
    mymodule: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The example with a bug, releasing ready at ``close()`` what no finish reason completed,
    fails the scenario of a stream cut off before its finish reason, on C2 or C3."""

    class TrustsTheEnd(mymodule.EventAssembler):  # type: ignore[name-defined,misc]
        def close(self) -> list[dict[str, Any]]:
            released: list[dict[str, Any]] = self._release(None)
            return released

    monkeypatch.setattr(
        mymodule, "trusting", lambda *, tools, limits: TrustsTheEnd(tools, limits), raising=False
    )
    implementation = load_implementation("py+events:mymodule:trusting")
    cut_off = scenario("oc-l-no-finish-then-eof")
    result = run_case(
        cut_off, "lenient", splittings_of(cut_off)[0], implementation.factory, ("status", "reason")
    )
    assert result.outcome == "failed"
    assert {"C2", "C3"} & {rule for failure in result.failures for rule in failure.rules}


# -- the wrapper -----------------------------------------------------------------------------------


CHUNK = (
    '{"id":"c","object":"chat.completion.chunk","created":1,"choices":[{"index":0,"delta":'
    '{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather",'
    '"arguments":"{\\"city\\": \\"Paris\\"}"}}]},"finish_reason":null}]}'
)


def data_event(data: str) -> bytes:
    """An event whose data is ``data``, one ``data:`` line per line of it."""
    return "".join(f"data: {line}\n" for line in data.split("\n")).encode() + b"\n"


def test_the_decoders_findings_are_added_once_as_the_reference_records_them() -> None:
    """Invalid UTF-8 in three reads and a stream cut inside its last event: the object's
    findings gain one T11 and one T9, ``Finding`` objects with qualified ids, and read as the
    reference's fed the same bytes."""
    chunks = [b": caf\xe9\n", b": \xff\n\n", f"data: {CHUNK}\n\n".encode(), b": \xfe\n", b"data: {"]
    fed = EventFed(Assembler([WEATHER]), Limits(), "openai-chat")
    bytes_fed = Assembler([WEATHER])
    for chunk in chunks:
        assert fed.feed(chunk) == bytes_fed.feed(chunk)
    assert fed.close() == bytes_fed.close()
    assert [(type(found), found.quirk) for found in fed.findings] == [
        (Finding, "openai-chat/T11"),
        (Finding, "openai-chat/T9"),
    ]
    assert sorted(map(str, fed.findings)) == sorted(map(str, bytes_fed.findings))


class _Recorder:
    """An event-level object that hands back, for each event, the results it was told to, and
    keeps ``findings`` as it was given."""

    def __init__(self, answers: list[Any], findings: Any = None) -> None:
        self.answers = answers
        self.handed: list[tuple[Any, str]] = []
        self.closed = 0
        if findings is not None:
            self.findings = findings

    def feed_event(self, payload: Any, *, event: str = "message") -> Any:
        self.handed.append((payload, event))
        return self.answers.pop(0) if self.answers else []

    def close(self) -> list[Any]:
        self.closed += 1
        return []


def test_findings_are_the_objects_own_when_it_keeps_none_or_none_that_read() -> None:
    """No ``findings`` stays none (not observable); a ``findings`` that is no list (a method)
    is passed as it is, for the findings check to fail as it would on ``py:``."""
    for findings in (None, print):
        fed = EventFed(_Recorder([], findings), Limits(), "openai-chat")
        fed.feed(b": \xff\n")
        fed.close()
        assert fed.findings is findings


def test_each_event_is_handed_over_with_its_name_and_its_data_decoded_or_as_text() -> None:
    """A JSON object comes decoded; ``[DONE]``, empty data, an array and text that is no JSON
    come as their text, unchanged; the event name is ``message`` without an ``event:`` line."""
    recorder = _Recorder([])
    fed = EventFed(recorder, Limits(), "openai-chat")
    fed.feed(b'data: {"a": NaN, "a": 1}\n\nevent: error\ndata: [DONE]\n\ndata:\n\n')
    fed.feed(b"data: [1]\n\ndata: {not json}\n\n")
    assert recorder.handed == [
        ({"a": 1}, "message"),
        ("[DONE]", "error"),
        ("", "message"),
        ("[1]", "message"),
        ("{not json}", "message"),
    ]


def test_the_results_of_one_feed_come_in_call_order_each_events_own_order_kept() -> None:
    """Two events of one ``feed()`` that finish call 1, then call 0, are handed back 0, 1 (E4);
    one event that hands back 1, 0 is handed back so, for the check to see."""
    first, second = {"choice": 0, "index": 1}, {"choice": 0, "index": 0}
    fed = EventFed(_Recorder([[first], [second]]), Limits(), "openai-chat")
    assert fed.feed(b"data: {}\n\ndata: {}\n\n") == [second, first]
    fed = EventFed(_Recorder([[first, second]]), Limits(), "openai-chat")
    assert fed.feed(b"data: {}\n\n") == [first, second]


def test_an_event_past_a_decoder_limit_closes_the_object_there() -> None:
    """The events before it are handed over, then the object is closed and nothing more is
    read: the open call comes out rejected, as a stream that ended there leaves it."""
    fed = EventFed(Assembler([WEATHER]), Limits(max_event_size=len(CHUNK)), "openai-chat")
    assert fed.feed(f"data: {CHUNK}\n\n".encode()) == []
    released = fed.feed(f"data: {CHUNK}x\n\n".encode())
    assert [(result.status, result.reason) for result in released] == [("rejected", "interrupted")]
    assert fed.feed(b"data: [DONE]\n\n") == []
    assert fed.close() == []


@pytest.mark.parametrize(
    "data",
    [
        '{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":NaN}',
        '{"choices":[],"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}',
        '{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"n":1' + "0" * 5000 + "}",
        "[" * 100_000 + "]" * 100_000,
        '{"a": 1}\n{"b": 2}',
        "",
        '"a string"',
    ],
    ids=["nan", "duplicate-keys", "huge-integer", "deep-nesting", "joined", "empty", "string"],
)
def test_data_is_read_as_the_reference_reads_it(data: str) -> None:
    """After a call's header, an event's data that JSON reads oddly gives the reference fed
    events the results and findings the reference fed bytes gives."""
    body = f"data: {CHUNK}\n\n".encode() + data_event(data)
    fed = EventFed(Assembler([WEATHER]), Limits(), "openai-chat")
    bytes_fed = Assembler([WEATHER])
    assert fed.feed(body) + fed.close() == bytes_fed.feed(body) + bytes_fed.close()
    assert list(map(str, fed.findings)) == list(map(str, bytes_fed.findings))


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_the_reference_reads_a_text_payload_as_it_reads_the_same_data(dialect: str) -> None:
    """Empty data and two documents joined by a newline, handed to ``feed_event`` as text, fail
    the stream or not, and are recorded, as the same data fed as bytes."""
    for data in ("", '{"a": 1}\n{"b": 2}'):
        events, bytes_fed = Assembler(dialect=dialect), Assembler(dialect=dialect)
        events.feed_event(data)
        bytes_fed.feed(data_event(data))
        assert (events.failure is None, [f.quirk for f in events.findings]) == (
            bytes_fed.failure is None,
            [f.quirk for f in bytes_fed.findings],
        )


# -- loading ---------------------------------------------------------------------------------------


@pytest.fixture
def module() -> Iterator[Any]:
    """A throwaway implementation module, importable as ``fake_events``."""
    fake = ModuleType("fake_events")
    sys.modules["fake_events"] = fake
    yield fake
    del sys.modules["fake_events"]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("py+events:harness", "a py+events: connectable is py+events:module:factory"),
        ("py+events:no_such_module_anywhere:make", "no module named no_such_module_anywhere"),
        ("py+events:callstream.implementations:nothing", "has no attribute nothing"),
    ],
)
def test_a_bad_connectable_is_a_usage_error_naming_it(spec: str, says: str) -> None:
    """The mistakes of ``py:`` connectables, each named with the connectable."""
    with pytest.raises(UsageError, match="^" + re.escape(repr(spec))) as raised:
        load_implementation(spec)
    assert says in str(raised.value)


class _BytesLevel:
    """An assembler of the bytes contract: ``feed`` and ``close``, no ``feed_event``."""

    def feed(self, data: bytes) -> list[Any]:
        return []

    def close(self) -> list[Any]:
        return []


def test_a_factory_whose_object_has_no_feed_event_is_a_usage_error(module: Any) -> None:
    """A bytes-level assembler is pointed to ``py:``; an object with neither method is told
    what an event-level one has."""
    module.bytes_level = lambda *, tools, limits: _BytesLevel()
    module.nothing = lambda *, tools, limits: 42
    module.CALLSTREAM = {"dialect": "openai-chat"}
    with pytest.raises(UsageError) as raised:
        load_implementation("py+events:fake_events:bytes_level")
    assert str(raised.value).startswith(
        "'py+events:fake_events:bytes_level': fake_events:bytes_level made a _BytesLevel, which "
        "has no feed_event"
    )
    assert str(raised.value).endswith(
        "it has feed(bytes): connect it as py:fake_events:bytes_level"
    )
    with pytest.raises(UsageError, match="made an int, which has no feed_event or close: an "):
        load_implementation("py+events:fake_events:nothing")


# -- the fuzzer ------------------------------------------------------------------------------------


def test_the_fuzzer_finds_nothing_in_the_reference_fed_events(tmp_path: Path) -> None:
    """200 examples of the ci profile, seed 0: nothing found, nothing saved; the report says
    the implementation reads decoded events."""
    result = fuzz(
        load_implementation(EVENT_FED + "reference"),
        profile="ci",
        max_examples=200,
        seed=0,
        save_regressions=tmp_path / "regressions",
        out=tmp_path / "report",
    )
    assert (result.found, result.examples) == (None, 200)
    assert not (tmp_path / "regressions").exists()
    declared = load_report(tmp_path / "report").header["implementation"]["declaration"]
    assert declared["reads"] == "events"
    assert declared["dialects"] == list(DIALECTS)

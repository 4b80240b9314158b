"""The oddities (``StreamSpec.oddity``): the corners of the wire format a plan sends once. Each is
rendered so that the stream shows the wire feature it is for, the reference passes it under
both profiles (the oracle predicts it from the rule), and an assembler that ignores that rule
fails it. The generators draw them rarely (``callstream.strategies._oddities``); the sample that
proves they are drawn is ``tests/quality/test_generator_coverage.py``'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, settings

from callstream import strategies
from callstream.core.case import run_case
from callstream.core.oracle import expect
from callstream.core.rendering import render
from callstream.core.spec import CallPlan, Ending, Oddity, Splitting, StreamSpec, Transport
from callstream.corpus.regressions import write_regression
from callstream.corpus.scenario import load_scenarios
from callstream.coverage import features_of
from callstream.errors import PlanError
from callstream.implementations import reference, reference_strict
from callstream.reference import Reason, SSEDecoder, Tool
from callstream.strategies._oddities import with_oddity
from tests.mutants._anthropic_base import AnthropicAssembler
from tests.mutants._base import BaseAssembler, StreamFailure
from tests.mutants._responses_base import ResponsesAssembler

WEATHER = Tool("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}})
CALLS = (
    CallPlan("get_weather", '{"city":"Paris"}', ('{"ci', 'ty":"Paris"}'), id="call_1"),
    CallPlan("get_weather", '{"city":"Rome"}', ('{"ci', 'ty":"Rome"}'), id="call_2"),
)
SPLITTINGS = (Splitting("whole"), Splitting("bytes"), Splitting("random", seed=2))
pytestmark = pytest.mark.usefixtures("stable_constants")

FIND = settings(
    database=None,
    derandomize=True,
    deadline=None,
    max_examples=3000,
    phases=(Phase.generate, Phase.shrink),
    suppress_health_check=list(HealthCheck),
)
"""For ``find``: derandomised, bounded, no explain phase."""


# -- assemblers that ignore one rule -----------------------------------------------------------


class ReadsPastDone(BaseAssembler):
    """Takes ``[DONE]`` for one more event, so a finish after it completes the calls (T4)."""

    def on_done(self) -> None:
        return


class RequiresDelta(BaseAssembler):
    """Reads ``choice["delta"]`` as if every choice had one (C22): a KeyError."""

    def on_choice(self, raw: dict[str, Any]) -> None:
        if raw["delta"] is not None:
            super().on_choice(raw)


class TextOrTools(BaseAssembler):
    """Reads a delta's text or its tool calls, never both (``if content: … elif tool_calls``)."""

    def on_choice(self, raw: dict[str, Any]) -> None:
        if (raw.get("delta") or {}).get("content"):
            raw = {key: value for key, value in raw.items() if key != "delta"}
        super().on_choice(raw)


class NullErases(BaseAssembler):
    """Takes ``"id": null`` as an update that erases the id (A4)."""

    def on_tool_delta(self, choice: int, entry: dict[str, Any]) -> None:
        super().on_tool_delta(choice, entry)
        call = self.positions.get((choice, entry.get("index")))
        if call is not None and "id" in entry and entry["id"] is None:
            call.id = None


_KNOWN_EVENTS = frozenset(
    {
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)


class RefusesUnknownEvents(AnthropicAssembler):
    """Fails the stream on an event type it does not know (A4: ignored, recorded)."""

    def on_typed(self, kind: str, payload: dict[str, Any]) -> None:
        if kind not in _KNOWN_EVENTS:
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        super().on_typed(kind, payload)


class RefusesUnknownDeltas(AnthropicAssembler):
    """Fails the stream on a delta type it does not know (A4: ignored, recorded)."""

    def on_block_delta(self, payload: dict[str, Any]) -> None:
        kind = (payload.get("delta") or {}).get("type")
        if kind not in ("input_json_delta", "text_delta", "thinking_delta", "signature_delta"):
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        super().on_block_delta(payload)


class IgnoresStrayDeltas(AnthropicAssembler):
    """Drops a delta for a block never started, where A3 fails the stream."""

    def on_block_delta(self, payload: dict[str, Any]) -> None:
        if payload.get("index") not in self.blocks:
            return
        super().on_block_delta(payload)


class ReadsPastMessageStop(AnthropicAssembler):
    """Reads on after ``message_stop``, so a block after it makes a call (D35)."""

    def on_typed(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "message_stop":
            self.stopped = True
            return
        super().on_typed(kind, payload)


def _by_event_name(event: str, data: str) -> str:
    """The data with its payload's ``type`` replaced by the ``event:`` name (T8: trusted)."""
    if event in ("message", "error") or not data.startswith("{"):
        return data
    return json.dumps({**json.loads(data), "type": event})


class AnthropicTrustsEventNames(AnthropicAssembler):
    """Routes an event by its ``event:`` name, not by its payload's ``type`` (D31)."""

    def on_event(self, event: str, data: str) -> None:
        super().on_event(event, _by_event_name(event, data))


class ResponsesTrustsEventNames(ResponsesAssembler):
    """Routes an event by its ``event:`` name, not by its payload's ``type`` (T8)."""

    def on_event(self, event: str, data: str) -> None:
        super().on_event(event, _by_event_name(event, data))


class AnthropicParsesEveryLine(AnthropicAssembler):
    """Parses every event's data as JSON, ``[DONE]`` included, before anything else."""

    def on_event(self, event: str, data: str) -> None:
        json.loads(data)
        super().on_event(event, data)


class ResponsesParsesEveryLine(ResponsesAssembler):
    """Parses every event's data as JSON, ``[DONE]`` included, before anything else."""

    def on_event(self, event: str, data: str) -> None:
        json.loads(data)
        super().on_event(event, data)


class ChatErrorMustBeJson(BaseAssembler):
    """Parses an ``event: error``'s data as JSON and fails the stream ``protocol_error`` when
    it is not, where T4 fails it as a stream error whatever the data."""

    def on_event(self, event: str, data: str) -> None:
        if event == "error" and not data.startswith("{"):
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        super().on_event(event, data)


class AnthropicErrorMustBeJson(AnthropicAssembler):
    """Parses an ``event: error``'s data as JSON and fails the stream ``protocol_error`` when
    it is not, where T4 fails it as a stream error whatever the data."""

    def on_event(self, event: str, data: str) -> None:
        if event == "error" and not data.startswith("{"):
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        super().on_event(event, data)


class RequiresCreated(ResponsesAssembler):
    """Raises when the stream does not open with ``response.created`` (openai-python's
    ``ResponseStreamState``), where R12 is only recorded."""

    def on_event(self, event: str, data: str) -> None:
        if not getattr(self, "opened", False):
            self.opened = True
            if json.loads(data).get("type") != "response.created":
                raise RuntimeError("expected response.created as the first event")
        super().on_event(event, data)


class _ReadsAsObject:
    """Reads one field of one type of event as an object (``.get`` on it), and so crashes where
    the field is null or text, which the rules read all the same."""

    EVENT: str
    FIELD: str
    KEY: str

    def on_event(self, event: str, data: str) -> None:
        payload = json.loads(data) if data.startswith("{") else None
        if isinstance(payload, dict) and payload.get("type") == self.EVENT:
            payload[self.FIELD].get(self.KEY)
        super().on_event(event, data)  # type: ignore[misc]


class ReadsCreatedResponse(_ReadsAsObject, ResponsesAssembler):
    """The response of ``response.created``, where a null one changes nothing (A4)."""

    EVENT, FIELD, KEY = "response.created", "response", "id"


class ReadsTheMessage(_ReadsAsObject, AnthropicAssembler):
    """``message_start``'s message, where a null one changes nothing (A4)."""

    EVENT, FIELD, KEY = "message_start", "message", "id"


class ReadsTheErrorObject(_ReadsAsObject, AnthropicAssembler):
    """An error event's error, where one sent as text is a stream error all the same (T4)."""

    EVENT, FIELD, KEY = "error", "error", "message"


class RejectsNullInput(AnthropicAssembler):
    """Takes a null ``partial_json`` for a broken delta, where it is no fragment (A4)."""

    def on_input(self, block: Any, fragment: Any) -> None:
        if fragment is None:
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        super().on_input(block, fragment)


class RunsServerTools(AnthropicAssembler):
    """Takes a ``server_tool_use`` block for one of the client's calls (D21: never)."""

    def on_block_start(self, payload: dict[str, Any]) -> None:
        block = payload.get("content_block") or {}
        if block.get("type") == "server_tool_use":
            payload = {**payload, "content_block": {**block, "type": "tool_use"}}
        super().on_block_start(payload)


class BoundaryOnlyAtStop(AnthropicAssembler):
    """Completes a tool_use block at its ``content_block_stop`` only: a block the stop reason
    ends without one is never completed (C5)."""

    def on_stop_reason(self, reason: Any) -> None:
        self.blocks = {index: block for index, block in self.blocks.items() if not block.open}
        super().on_stop_reason(reason)


class RoutesByItemIdOnly(ResponsesAssembler):
    """Routes an event by its ``item_id`` alone, failing one without it (D40 routes it by
    ``output_index``)."""

    def route_item(self, payload: dict[str, Any]) -> Any:
        if not payload.get("item_id"):
            raise StreamFailure(Reason.PROTOCOL_ERROR)
        return super().route_item(payload)


class AddsEveryItem(ResponsesAssembler):
    """Opens a call for every ``output_item.added``, an item id it already holds included,
    where the same item added twice fails the stream (A5)."""

    def on_added(self, payload: dict[str, Any]) -> None:
        self.added.discard((payload.get("item") or {}).get("id"))
        super().on_added(payload)


class TakesAnEmptyName(AnthropicAssembler):
    """Takes a tool_use block's ``"name": ""`` for its name, where an empty field is no name
    (A4): the call is refused as an unknown tool, not as one that never received a name (V4)."""

    def on_block_start(self, payload: dict[str, Any]) -> None:
        super().on_block_start(payload)
        block = self.blocks[max(self.blocks)]
        if block.call is not None and (payload.get("content_block") or {}).get("name") == "":
            block.call.name = ""


class FailsOpenCallsAtCompleted(ResponsesAssembler):
    """Takes a call item still open at ``response.completed`` for one the response failed,
    where the completed response completes it (D47)."""

    def on_terminal(self, kind: str, response: dict[str, Any]) -> None:
        if kind == "response.completed":
            for call in self.calls:
                if not call.final:
                    self.reject(call, Reason.STREAM_ERROR)
        super().on_terminal(kind, response)


class UntypedIsError(ResponsesAssembler):
    """Reads an object without ``type`` as an ``error`` event (a stream error), where it is no
    Responses event at all (T3: protocol_error)."""

    def on_event(self, event: str, data: str) -> None:
        if data.startswith("{") and '"type"' not in data:
            raise StreamFailure(Reason.STREAM_ERROR)
        super().on_event(event, data)


class ErrorsByTypeOnly(AnthropicAssembler):
    """Takes an event for an error by its payload's ``type`` alone, where ``event: error`` makes
    it one whatever the payload (T4): an untyped error object is no event of any type."""

    def on_event(self, event: str, data: str) -> None:
        super().on_event("message" if event == "error" else event, data)


class LastRestatementWins(ResponsesAssembler):
    """Takes each whole restatement for the text, the later over the earlier, where two that
    disagree refuse the call (D42)."""

    def restate(self, call: Any, text: Any) -> None:
        if isinstance(text, str) and not call.final:
            call.restated = None
        super().restate(call, text)


class ReadsCreated(BaseAssembler):
    """Reads every chunk's ``created`` (the response's timestamp) as if each carried one, where
    metadata that changes between chunks, absent included, is only recorded (quirk C30)."""

    def on_chunk(self, payload: dict[str, Any]) -> None:
        if payload.get("choices"):
            int(payload["created"])
        super().on_chunk(payload)


class DecodesStringChoices(BaseAssembler):
    """Decodes a choice sent as a JSON string and reads it, where a choice that is not an
    object fails the stream (A7, V6): a finish encoded twice completes the calls."""

    def on_chunk(self, payload: dict[str, Any]) -> None:
        choices = payload.get("choices")
        if isinstance(choices, list):
            decoded = [json.loads(c) if isinstance(c, str) else c for c in choices]
            payload = {**payload, "choices": decoded}
        super().on_chunk(payload)


class ReadsEitherKind(BaseAssembler):
    """Appends a delta's text whichever object carries it, ``function.arguments`` or
    ``custom.input``, where a call whose deltas change kind is refused (D90)."""

    def on_tool_delta(self, choice: int, entry: dict[str, Any]) -> None:
        custom = entry.get("custom")
        if isinstance(custom, dict) and "function" not in entry:
            function = {"arguments": custom.get("input"), "name": custom.get("name")}
            entry = {**entry, "function": {k: v for k, v in function.items() if v is not None}}
        super().on_tool_delta(choice, entry)


class ChatErrorsByPayloadOnly(BaseAssembler):
    """Takes an event for an error by its payload alone, where ``event: error`` makes it one
    whatever the payload (T4): an error object neither nested nor marked is read as a chunk."""

    def on_event(self, event: str, data: str) -> None:
        super().on_event("message" if event == "error" else event, data)


class _SkipsNonObjectData:
    """Skips data that is no JSON object outside ``event: error`` (a JSON string, a keep-alive
    as text), where it is no event of the dialect and fails the stream (T4)."""

    def on_event(self, event: str, data: str) -> None:
        if event != "error" and not data.startswith("{"):
            return
        super().on_event(event, data)  # type: ignore[misc]


class AnthropicSkipsNonObjectData(_SkipsNonObjectData, AnthropicAssembler):
    """:class:`_SkipsNonObjectData` reading Anthropic Messages."""


class ResponsesSkipsNonObjectData(_SkipsNonObjectData, ResponsesAssembler):
    """:class:`_SkipsNonObjectData` reading the Responses API."""


# -- the cases ---------------------------------------------------------------------------------


Mutant = Callable[..., Any]
ODDITIES: list[tuple[Oddity, str, Ending, str, Mutant, str]] = [
    # oddity, dialect, ending, the wire feature it shows, a mutant it catches, under profile
    ("after_done", "openai-chat", Ending(finish=None), "done.not-last", ReadsPastDone, "lenient"),
    ("delta_missing", "openai-chat", Ending(), "chat.delta-missing", RequiresDelta, "lenient"),
    ("text_with_call", "openai-chat", Ending(), "chat.text-and-tool", TextOrTools, "lenient"),
    ("null_fields", "openai-chat", Ending(), "chat.null-call-field", NullErases, "lenient"),
    (
        "error_text",
        "openai-chat",
        Ending(error="event"),
        "sse.non-json-data",
        ChatErrorMustBeJson,
        "lenient",
    ),
    (
        "error_text",
        "anthropic-messages",
        Ending(error="event"),
        "sse.non-json-data",
        AnthropicErrorMustBeJson,
        "lenient",
    ),
    (
        "unknown_event",
        "anthropic-messages",
        Ending(),
        "anthropic.unknown-event",
        RefusesUnknownEvents,
        "lenient",
    ),
    (
        "unknown_delta",
        "anthropic-messages",
        Ending(),
        "anthropic.unknown-delta",
        RefusesUnknownDeltas,
        "lenient",
    ),
    (
        "stray_delta",
        "anthropic-messages",
        Ending(),
        "anthropic.unknown-block-delta",
        IgnoresStrayDeltas,
        "lenient",
    ),
    (
        "after_stop",
        "anthropic-messages",
        Ending(),
        "end.after-message-stop",
        ReadsPastMessageStop,
        "lenient",
    ),
    (
        "event_mismatch",
        "anthropic-messages",
        Ending(),
        "sse.event-mismatch",
        AnthropicTrustsEventNames,
        "lenient",
    ),
    (
        "done_line",
        "anthropic-messages",
        Ending(),
        "done.present",
        AnthropicParsesEveryLine,
        "lenient",
    ),
    (
        "event_mismatch",
        "openai-responses",
        Ending(),
        "sse.event-mismatch",
        ResponsesTrustsEventNames,
        "lenient",
    ),
    (
        "done_line",
        "openai-responses",
        Ending(),
        "done.present",
        ResponsesParsesEveryLine,
        "lenient",
    ),
    (
        "no_created",
        "openai-responses",
        Ending(),
        "responses.no-created",
        RequiresCreated,
        "lenient",
    ),
    (
        "no_block_stop",
        "anthropic-messages",
        Ending(),
        "anthropic.unstopped-block",
        BoundaryOnlyAtStop,
        "lenient",
    ),
    (
        "no_item_id",
        "openai-responses",
        Ending(),
        "responses.item-without-id",
        RoutesByItemIdOnly,
        "lenient",
    ),
    (
        "empty_item_id",
        "openai-responses",
        Ending(),
        "responses.item-id-empty",
        RoutesByItemIdOnly,
        "lenient",
    ),
    (
        "null_created",
        "openai-responses",
        Ending(),
        "responses.created-null",
        ReadsCreatedResponse,
        "lenient",
    ),
    (
        "no_event_item_id",
        "openai-responses",
        Ending(),
        "responses.event-without-item-id",
        RoutesByItemIdOnly,
        "lenient",
    ),
    (
        "added_twice",
        "openai-responses",
        Ending(),
        "responses.item-added-twice",
        AddsEveryItem,
        "lenient",
    ),
    (
        "untyped_event",
        "openai-responses",
        Ending(),
        "responses.untyped-event",
        UntypedIsError,
        "lenient",
    ),
    (
        "empty_name",
        "anthropic-messages",
        Ending(),
        "anthropic.empty-name",
        TakesAnEmptyName,
        "lenient",
    ),
    (
        "no_item_done",
        "openai-responses",
        Ending(),
        "responses.completed-over-open-call",
        FailsOpenCallsAtCompleted,
        "lenient",
    ),
    (
        "restated_otherwise",
        "openai-responses",
        Ending(),
        "responses.restatements-differ",
        LastRestatementWins,
        "lenient",
    ),
    (
        "string_data",
        "openai-responses",
        Ending(),
        "responses.non-object-data",
        ResponsesSkipsNonObjectData,
        "lenient",
    ),
    (
        "untyped_error",
        "openai-chat",
        Ending(error="event"),
        "error.untyped",
        ChatErrorsByPayloadOnly,
        "lenient",
    ),
    (
        "untyped_error",
        "anthropic-messages",
        Ending(error="event"),
        "error.untyped",
        ErrorsByTypeOnly,
        "lenient",
    ),
    (
        "created_late",
        "openai-chat",
        Ending(),
        "chat.metadata-changes",
        ReadsCreated,
        "lenient",
    ),
    (
        "choice_not_object",
        "openai-chat",
        Ending(error="nested"),
        "chat.choice-not-object",
        DecodesStringChoices,
        "lenient",
    ),
    ("kind_changes", "openai-chat", Ending(), "chat.kind-changes", ReadsEitherKind, "lenient"),
    (
        "string_data",
        "anthropic-messages",
        Ending(),
        "anthropic.non-object-data",
        AnthropicSkipsNonObjectData,
        "lenient",
    ),
    (
        "null_message",
        "anthropic-messages",
        Ending(),
        "anthropic.message-not-object",
        ReadsTheMessage,
        "lenient",
    ),
    (
        "string_error",
        "anthropic-messages",
        Ending(error="event"),
        "error.not-object",
        ReadsTheErrorObject,
        "lenient",
    ),
    (
        "text_data",
        "anthropic-messages",
        Ending(),
        "sse.non-json-data",
        AnthropicSkipsNonObjectData,
        "lenient",
    ),
    (
        "null_fields",
        "anthropic-messages",
        Ending(),
        "anthropic.null-partial-json",
        RejectsNullInput,
        "lenient",
    ),
    (
        "server_tool",
        "anthropic-messages",
        Ending(),
        "anthropic.server-tool",
        RunsServerTools,
        "lenient",
    ),
    (
        "text_data",
        "openai-responses",
        Ending(),
        "sse.non-json-data",
        ResponsesSkipsNonObjectData,
        "lenient",
    ),
    # An assembler that takes a call's name from output_item.added alone (R3: .done restates it).
    ("late_name", "openai-responses", Ending(), "name.late", ResponsesAssembler, "lenient"),
    # An assembler that never looks at sequence_number, judged by the strict profile (D51).
    (
        "sequence_gap",
        "openai-responses",
        Ending(),
        "responses.sequence-gap",
        ResponsesAssembler,
        "strict",
    ),
    (
        "sequence_repeat",
        "openai-responses",
        Ending(),
        "responses.sequence-gap",
        ResponsesAssembler,
        "strict",
    ),
]


def _spec(oddity: Oddity | None, dialect: str, ending: Ending) -> StreamSpec:
    return StreamSpec(tools=(WEATHER,), calls=CALLS, ending=ending, dialect=dialect, oddity=oddity)


@pytest.mark.parametrize(
    ("oddity", "dialect", "ending", "feature", "mutant", "profile"),
    ODDITIES,
    ids=[f"{dialect}-{oddity}" for oddity, dialect, *_ in ODDITIES],
)
def test_an_oddity_shows_its_feature_and_catches_an_assembler_that_ignores_its_rule(
    oddity: Oddity, dialect: str, ending: Ending, feature: str, mutant: Mutant, profile: str
) -> None:
    """The stream shows the feature; the reference passes it under both profiles, however it
    is cut; an assembler that ignores the rule the oddity tests fails it."""
    spec = _spec(oddity, dialect, ending)
    rendered = render(spec)
    assert feature in features_of(spec, rendered.data)
    assert feature not in features_of(
        replace(spec, oddity=None), render(replace(spec, oddity=None)).data
    )
    scenario = strategies.scenario_for(spec)
    for splitting in SPLITTINGS:
        for judged, factory in (("lenient", reference), ("strict", reference_strict)):
            result = run_case(scenario, judged, splitting, partial(factory, dialect=dialect))
            assert result.outcome == "passed", (judged, splitting, result.failures)
    caught = run_case(scenario, profile, Splitting("whole"), mutant)
    assert caught.outcome == "failed", caught


def test_a_finish_after_done_changes_nothing() -> None:
    """``[DONE]`` is final (T4, quirk openai-chat/C20): calls it left without a finish reason are
    unfinished, whatever follows, and what follows is recorded."""
    spec = _spec("after_done", "openai-chat", Ending(finish=None))
    expected = expect(spec, render(spec), "lenient")
    assert {call.reason for call in expected.calls} == {"unfinished"}
    assert "openai-chat/C20" in expected.findings


def test_a_stray_delta_fails_the_open_calls_and_keeps_the_completed_ones() -> None:
    """A delta for a block never started fails the stream there (quirk anthropic-messages/A3):
    the first call, complete at its own stop before it, stays ready; the last, still open, is
    rejected ``protocol_error``."""
    spec = _spec("stray_delta", "anthropic-messages", Ending())
    for profile in ("lenient", "strict"):
        first, last = expect(spec, render(spec), profile).calls
        assert (first.status, last.status, last.reason) == ("ready", "rejected", "protocol_error")


def test_a_sequence_gap_fails_the_open_calls_only_strictly() -> None:
    """A gap in ``sequence_number`` is recorded (R4); the strict profile fails what is open at
    the gap (D51), the lenient one goes on."""
    spec = _spec("sequence_gap", "openai-responses", Ending())
    lenient = expect(spec, render(spec), "lenient")
    strict = expect(spec, render(spec), "strict")
    assert [call.status for call in lenient.calls] == ["ready", "ready"]
    assert [(call.status, call.reason) for call in strict.calls] == [
        ("ready", None),
        ("rejected", "protocol_error"),
    ]
    assert "openai-responses/R4" in lenient.findings & strict.findings


@pytest.mark.parametrize(
    ("dialect", "oddity"),
    [
        ("openai-chat", "stray_delta"),
        ("anthropic-messages", "no_created"),
        ("openai-responses", "after_done"),
    ],
)
def test_a_dialect_refuses_an_oddity_it_does_not_send(dialect: str, oddity: Oddity) -> None:
    """A plan cannot ask a dialect for what it has no way to send."""
    spec = _spec(oddity, dialect, Ending())
    with pytest.raises(PlanError, match="sends no oddity"):
        expect(spec, render(spec), "lenient")


def test_an_oddity_survives_a_scenario_file(tmp_path: Path) -> None:
    """A regression with an oddity is written as ``oddity:`` and loads back the same."""
    scenario = strategies.scenario_for(_spec("stray_delta", "anthropic-messages", Ending()))
    path = write_regression(scenario, tmp_path)
    assert "oddity: stray_delta" in path.read_text(encoding="utf-8")
    (loaded,) = load_scenarios([path]).scenarios
    assert loaded.spec == scenario.spec


@pytest.mark.parametrize(
    ("oddity", "dialect"), sorted({(oddity, dialect) for oddity, dialect, *_ in ODDITIES})
)
def test_the_generators_draw_each_oddity_and_shrink_it_to_one_call(
    oddity: Oddity, dialect: str
) -> None:
    """``stream_specs`` draws the oddity (where the oracle predicts it), and a stream that has
    it shrinks to a single call, keeping it."""
    found = find(
        strategies.stream_specs(dialect=dialect),
        lambda spec: spec.oddity == oddity,
        settings=FIND,
    )
    assert found.oddity == oddity
    assert len(found.calls) <= 1
    for profile in ("lenient", "strict"):
        expect(found, render(found), profile)


def test_a_copy_of_a_call_without_its_id_at_its_index_is_no_plan_the_oracle_predicts() -> None:
    """The ``shared id`` oddity copies a lone call to its own index: where the id is never sent
    the copy's deltas continue the first call (C2 needs a new id and a name), so the oracle
    refuses the plan, and the generators draw the stream without the oddity."""
    first = replace(CALLS[0], id_policy="omit", index=1)
    spec = StreamSpec(tools=(WEATHER,), calls=(first, first))
    with pytest.raises(PlanError, match="used index"):
        expect(spec, render(spec), "lenient")
    assert not strategies.predictable(spec)


# -- transport corners: an unknown field, bytes that are not UTF-8 ------------------------------


class CaseBlindFields(BaseAssembler):
    """Matches SSE field names whatever their case, where ``Event:`` is an unknown field,
    ignored (T3): the first chunk is taken for an error event."""

    def on_line(self, line: str) -> None:
        name, colon, value = line.partition(":")
        super().on_line(name.lower() + colon + value)


class StripsLines(BaseAssembler):
    """Strips each line before reading its field, where a field's name is all before its colon
    (T3): ``\tdata: [DONE]``, an unknown field, is taken for the end of the stream."""

    def on_line(self, line: str) -> None:
        super().on_line(line.strip())


class StrictUtf8(BaseAssembler):
    """Decodes the body as strict UTF-8, where bytes that are not UTF-8 become U+FFFD (T11)."""

    def decode_chunk(self, data: bytes) -> str:
        return data.decode("utf-8")


class _UnflushedDecoder(SSEDecoder):
    """Never flushes its UTF-8 decoder at the end of the stream, so an incomplete character
    there is dropped unnoticed."""

    def close(self) -> bool:
        self._utf8.reset()
        return super().close()


def unflushed(**kwargs: Any) -> Any:
    """The reference with the decoder above: a character cut off at the end of the stream is
    neither replaced nor recorded (T11)."""
    assembler = reference(**kwargs)
    assembler._sse = _UnflushedDecoder()
    return assembler


TRANSPORTS: list[tuple[Transport, Ending, str, Mutant]] = [
    (Transport(id_lines=True), Ending(), "sse.unknown-field", CaseBlindFields),
    (Transport(id_lines=True), Ending(), "sse.indented-field", StripsLines),
    (Transport(invalid_utf8=True), Ending(), "sse.invalid-utf8", StrictUtf8),
    (Transport(invalid_utf8=True), Ending(cut=True), "sse.invalid-utf8", unflushed),
]


@pytest.mark.parametrize(
    ("transport", "ending", "feature", "mutant"),
    TRANSPORTS,
    ids=["unknown-field", "indented-field", "invalid-utf8", "invalid-utf8-at-the-cut"],
)
def test_a_transport_corner_shows_its_feature_and_catches_a_reader_that_ignores_its_rule(
    transport: Transport, ending: Ending, feature: str, mutant: Mutant
) -> None:
    """The bytes show the feature; the reference passes the stream under both profiles however
    it is cut, in every dialect; a reader that ignores T3 or T11 fails it."""
    for dialect in ("openai-chat", "anthropic-messages", "openai-responses"):
        spec = replace(_spec(None, dialect, ending), oddity=None, transport=transport)
        if dialect != "openai-chat":
            spec = replace(spec, calls=CALLS[:1])  # a cut cuts an event after the calls'
        rendered = render(spec)
        assert feature in features_of(spec, rendered.data)
        scenario = strategies.scenario_for(spec)
        for splitting in SPLITTINGS:
            for judged, factory in (("lenient", reference), ("strict", reference_strict)):
                result = run_case(scenario, judged, splitting, partial(factory, dialect=dialect))
                assert result.outcome == "passed", (dialect, judged, splitting, result.failures)
    chat = strategies.scenario_for(replace(_spec(None, "openai-chat", ending), transport=transport))
    caught = run_case(chat, "lenient", Splitting("whole"), mutant)
    assert caught.outcome == "failed", caught


class KeepsTheFirstName(BaseAssembler):
    """Keeps a call's first name when a later delta names another tool, taking the change for
    a repeat, where a changed name may be refused or taken as the last, never run as the first
    (D12)."""

    def set_identity(self, call: Any, field: Any, value: str | None) -> None:
        if field == "name" and call.name is not None:
            return
        super().set_identity(call, field, value)


def test_a_name_changed_mid_call_is_impl_defined_and_never_runs_under_the_first_name() -> None:
    """``name_changes``: the first call's last delta names the other offered tool (``find``,
    sorting before ``get_weather``). Refusing it (the reference) or running it as ``find``
    passes; running it as ``get_weather`` fails A3 (D12)."""
    find_tool = Tool("find", {"type": "object", "properties": {"city": {"type": "string"}}})
    spec = replace(_spec("name_changes", "openai-chat", Ending()), tools=(WEATHER, find_tool))
    rendered = render(spec)
    assert "name.changed" in features_of(spec, rendered.data)
    scenario = strategies.scenario_for(spec)
    assert scenario.kind == "impl-defined"
    first = expect(spec, rendered, "lenient").calls[0]
    assert (first.status, first.name) == ("ready", "find")
    for splitting in SPLITTINGS:
        for judged, factory in (("lenient", reference), ("strict", reference_strict)):
            result = run_case(scenario, judged, splitting, partial(factory, dialect="openai-chat"))
            assert result.outcome == "passed", (judged, splitting, result.failures)
    caught = run_case(scenario, "lenient", Splitting("whole"), KeepsTheFirstName)
    assert caught.outcome == "failed", caught
    assert any("A3" in failure.rules for failure in caught.failures), caught.failures


class KeepsTheLastId(BaseAssembler):
    """Keeps the last of a call's ids where each delta brings a new one, as litellm's
    ``stream_chunk_builder`` does: allowed (D15)."""

    def set_identity(self, call: Any, field: Any, value: str | None) -> None:
        if field == "id" and value is not None and call.id is not None:
            call.id = value
            return
        super().set_identity(call, field, value)


def test_a_call_whose_id_changes_on_every_delta_may_come_back_with_any_of_its_ids() -> None:
    """D15: the lenient expectation of a call whose id changes on every delta names no id, so a
    reader that keeps the last id (of ids that sort after the first and before it in turn)
    passes as the reference, which keeps the first, does."""
    calls = tuple(replace(plan, id_policy="changing") for plan in CALLS)
    spec = replace(_spec(None, "openai-chat", Ending()), calls=calls)
    scenario = strategies.scenario_for(spec)
    assert [call.id for call in expect(spec, render(spec), "lenient").calls] == [None, None]
    for factory in (reference, KeepsTheLastId):
        result = run_case(scenario, "lenient", Splitting("whole"), factory)
        assert result.outcome == "passed", result.failures


def test_the_many_calls_oddity_sends_indices_past_256_and_the_reference_passes_it() -> None:
    """``many calls`` (drawn in under 1 % of openai-chat streams) sends 258 calls at indices 0
    to 257 under a ``max_calls`` that allows them: the stream shows indices past 256, and the
    reference assembles every call, in order, under both profiles."""
    spec = with_oddity("many calls", _spec(None, "openai-chat", Ending()))
    assert len(spec.calls) == 258
    rendered = render(spec)
    assert "chat.index-past-256" in features_of(spec, rendered.data)
    scenario = strategies.scenario_for(spec)
    for judged, factory in (("lenient", reference), ("strict", reference_strict)):
        result = run_case(scenario, judged, Splitting("whole"), factory)
        assert result.outcome == "passed", (judged, result.failures)
    expected = expect(spec, rendered, "lenient")
    assert [call.index for call in expected.calls] == list(range(258))
    assert {call.status for call in expected.calls} == {"ready"}

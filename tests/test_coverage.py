"""Wire features (``callstream.coverage``): read from a stream's bytes, alike for a planned spec
and the same stream written literally, named from each dialect's table, and counted by
``callstream fuzz --coverage`` and ``callstream lint --features``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from callstream.cli import main
from callstream.core.dialects import DIALECTS
from callstream.core.rendering import render
from callstream.core.spec import CallPlan, Ending, StreamSpec, Transport
from callstream.coverage import FEATURES, FeatureTally, features_of
from callstream.reference import Tool
from callstream.rules import RULES, quirk_id

TOOLS = (Tool("get_weather", {"type": "object"}),)
CALL = CallPlan("get_weather", '{"city": "Paris"}', ('{"ci', 'ty": "Paris"}'), id="call_0")


def chunk(tool_call: dict[str, object]) -> str:
    delta = {"tool_calls": [tool_call]}
    return json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": None}]})


def literal(sse: str, dialect: str = "openai-chat") -> StreamSpec:
    return StreamSpec(TOOLS, literal_sse=sse.encode(), dialect=dialect)


@pytest.mark.parametrize("dialect", list(FEATURES))
def test_every_feature_is_named_once_and_serves_a_rule_or_quirk(dialect: str) -> None:
    """A dialect's table names each feature once, each serving rules or its dialect's quirks."""
    ids = [feature.id for feature in FEATURES[dialect]]
    assert len(ids) == len(set(ids))
    quirks = set(DIALECTS[dialect].quirks)
    for feature in FEATURES[dialect]:
        assert feature.serves, feature.id
        for served in feature.serves:
            assert served in RULES or quirk_id(dialect, served) in quirks, (feature.id, served)


def test_the_transport_is_read_from_the_bytes() -> None:
    """CRLF endings, ``data:`` without a space, a comment, a BOM and a last event never
    dispatched are what the bytes show; nothing else of the SSE layer is claimed."""
    body = chunk({"index": 0, "id": "call_0", "function": {"name": "get_weather"}})
    sse = f"\ufeff: keep-alive\r\n\r\ndata:{body}\r\n\r\ndata: [DONE]"
    features = features_of(literal(sse))
    sse_features = {feature for feature in features if feature.startswith("sse.")}
    assert sse_features == {
        "sse.bom",
        "sse.comment",
        "sse.crlf",
        "sse.data-no-space",
        "sse.data-space",
        "sse.no-final-blank-line",
    }
    assert "done.absent" in features  # [DONE] was never dispatched


def test_a_planned_stream_and_its_literal_bytes_show_the_same_features() -> None:
    """The classifier reads bytes, not knobs: a plan and the same bytes as a literal stream
    are classified alike."""
    planned = StreamSpec(
        TOOLS,
        (CALL,),
        ending=Ending(finish="length", done=False),
        transport=Transport(newline="cr", multiline=True),
    )
    features = features_of(planned)
    assert features == features_of(literal(render(planned).data.decode()))
    assert {"sse.cr", "sse.multiline-data", "finish.length", "done.absent"} <= features


def test_an_id_changed_mid_call_is_not_a_new_call_at_a_reused_index() -> None:
    """A new id without a name continues the call (C3); a new id with a name at the same
    index is a new call there (C2)."""
    first = chunk({"index": 0, "id": "call_0", "function": {"name": "get_weather"}})
    changed = chunk({"index": 0, "id": "call_9", "function": {"arguments": "{}"}})
    renamed = chunk({"index": 0, "id": "call_9", "function": {"name": "get_weather"}})
    continued = features_of(literal(f"data: {first}\n\ndata: {changed}\n\n"))
    reused = features_of(literal(f"data: {first}\n\ndata: {renamed}\n\n"))
    assert ("id.changed" in continued, "index.reused" in continued) == (True, False)
    assert ("id.changed" in reused, "index.reused" in reused) == (False, True)
    assert "calls.two" in reused


@pytest.mark.parametrize("unnamed", [True, False])
def test_anthropic_events_without_event_lines(unnamed: bool) -> None:
    """An Anthropic stream sent without ``event:`` lines (T7) shows it; one with them, not."""
    spec = StreamSpec(
        TOOLS, (CALL,), transport=Transport(unnamed=unnamed), dialect="anthropic-messages"
    )
    features = features_of(spec)
    assert ("sse.no-event-lines" in features) is unnamed
    assert ("sse.event-lines" in features) is not unnamed
    assert {"stop.tool_use", "end.message-stop", "calls.one"} <= features


def test_anthropic_error_and_citations_are_read_as_anthropic_sends_them() -> None:
    """An ``event: error`` whose data is not JSON is the provider's error (the reference fails
    the stream ``stream_error``), and ``citations_delta`` is a delta type Anthropic documents:
    neither is read as something unknown."""
    start = {"type": "message_start", "message": {"id": "msg_1", "content": []}}
    text = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}
    cited = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "citations_delta", "citation": {"type": "char_location"}},
    }
    events = [
        ("message_start", start),
        ("content_block_start", text),
        ("content_block_delta", cited),
    ]
    sse = "".join(f"event: {name}\ndata: {json.dumps(body)}\n\n" for name, body in events)
    features = features_of(
        literal(sse + "event: error\ndata: upstream timed out\n\n", "anthropic-messages")
    )
    assert "error.event" in features
    assert "end.bare-eof" not in features
    assert "anthropic.unknown-delta" not in features


def test_the_tally_counts_streams_and_features_per_dialect() -> None:
    """Shares are per dialect; the table marks what was never seen."""
    tally = FeatureTally()
    tally.add("openai-chat", {"sse.lf"})
    tally.add("openai-chat", {"sse.lf", "sse.crlf"})
    assert tally.share("openai-chat", "sse.crlf") == 0.5
    assert tally.to_dict()["openai-chat"] == {
        "streams": 2,
        "features": {feature.id: 0 for feature in FEATURES["openai-chat"]}
        | {"sse.lf": 2, "sse.crlf": 1},
    }
    table = tally.table()
    assert "openai-chat: 2 streams" in table
    assert "anthropic-messages" not in table
    assert table.splitlines()[-1].endswith(
        f"{len(FEATURES['openai-chat']) - 2} never seen (-), 0 more under 1% (<)"
    )


def test_fuzz_coverage_shows_the_table_and_writes_it_in_the_footer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``callstream fuzz --coverage`` counts the features of every example drawn: the table at
    the end, per dialect, and the counts in the report's footer."""
    code = main(
        [
            *("fuzz", "--profile", "ci", "--max-examples", "15", "--coverage"),
            *("--save-regressions", str(tmp_path / "regressions")),
            *("--out", str(tmp_path / "report")),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    footer = json.loads((tmp_path / "report" / "report.jsonl").read_text().splitlines()[-1])
    drawn = footer["features"]
    assert sum(counted["streams"] for counted in drawn.values()) == int(out.split(" examples")[0])
    for dialect, counted in drawn.items():
        assert f"{dialect}: {counted['streams']} streams" in out
        assert set(counted["features"]) == {feature.id for feature in FEATURES[dialect]}


def test_lint_features_counts_the_scenarios_linted(capsys: pytest.CaptureFixture[str]) -> None:
    """``callstream lint --features`` shows the wire features of the scenarios it loaded."""
    corpus = Path(__file__).parent.parent / "scenarios" / "anthropic-messages" / "transport.yaml"
    assert main(["lint", "--features", str(corpus)]) == 0
    out = capsys.readouterr().out
    assert "anthropic-messages: " in out
    assert "sse.no-event-lines" in out
    assert "openai-chat" not in out

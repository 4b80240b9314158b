"""The reference's openai-responses dialect, event by event (docs/rules.md D40–D59): routing by
item_id, text restated by .done and output_item.done, the per-call boundary, and every ending."""

from __future__ import annotations

from typing import Any

import pytest

from callstream.reference import Assembler, CallResult, Tool

WEATHER = Tool(
    "get_weather",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
PARIS = '{"city": "Paris"}'


class Stream:
    """Feeds numbered Responses events to one assembler and keeps what it released."""

    def __init__(self, profile: str = "lenient") -> None:
        self.assembler = Assembler([WEATHER], dialect="openai-responses", profile=profile)  # type: ignore[arg-type]
        self.number = 0
        self.results: list[CallResult] = []

    def send(self, kind: str, **fields: Any) -> list[CallResult]:
        payload = {"type": kind, "sequence_number": self.number, **fields}
        self.number += 1
        out = self.assembler.feed_event(payload, event=kind)
        self.results += out
        return out

    def start(self) -> Stream:
        self.send(
            "response.created", response={"id": "resp_1", "status": "in_progress", "output": []}
        )
        return self

    def add(self, n: int, arguments: str = "", *, index: int | None = None, **item: Any) -> None:
        fields = {
            "id": f"fc_{n}",
            "type": "function_call",
            "status": "in_progress",
            "call_id": f"call_{n}",
            "name": "get_weather",
            "arguments": arguments,
            **item,
        }
        self.send(
            "response.output_item.added", output_index=n if index is None else index, item=fields
        )

    def delta(self, n: int, text: str, *, index: int | None = None, item_id: Any = "") -> None:
        self.send(
            "response.function_call_arguments.delta",
            item_id=f"fc_{n}" if item_id == "" else item_id,
            output_index=n if index is None else index,
            delta=text,
        )

    def done(self, n: int, text: str) -> None:
        self.send(
            "response.function_call_arguments.done",
            item_id=f"fc_{n}",
            output_index=n,
            arguments=text,
        )

    def item_done(
        self, n: int, text: str, status: str = "completed", **more: Any
    ) -> list[CallResult]:
        item = {
            "id": f"fc_{n}",
            "type": "function_call",
            "status": status,
            "call_id": f"call_{n}",
            "name": "get_weather",
            "arguments": text,
            **more,
        }
        return self.send("response.output_item.done", output_index=n, item=item)

    def call(self, n: int, text: str, pieces: int = 2) -> list[CallResult]:
        self.add(n)
        cut = len(text) // pieces
        self.delta(n, text[:cut])
        self.delta(n, text[cut:])
        self.done(n, text)
        return self.item_done(n, text)

    def close(self) -> list[tuple[str, str | None, str | None, str]]:
        self.results += self.assembler.close()
        return [
            (r.status.value, r.reason and r.reason.value, r.id, r.arguments_text)
            for r in self.results
        ]

    @property
    def findings(self) -> set[str]:
        return {finding.quirk for finding in self.assembler.findings}


def test_a_call_is_released_at_its_output_item_done_with_its_call_id() -> None:
    stream = Stream().start()
    released = stream.call(0, PARIS)
    assert [(r.id, r.arguments, r.wire_index) for r in released] == [
        ("call_0", {"city": "Paris"}, 0)
    ]
    stream.send("response.completed", response={"status": "completed", "output": []})
    assert stream.close() == [("ready", None, "call_0", PARIS)]
    assert stream.findings == set()


def test_done_arguments_are_compared_never_appended() -> None:
    stream = Stream().start()
    stream.call(0, PARIS)
    assert stream.close()[0][3] == PARIS


@pytest.mark.parametrize("profile", ["lenient", "strict"])
def test_a_done_that_differs_from_the_deltas_wins_leniently_and_is_refused_strictly(
    profile: str,
) -> None:
    stream = Stream(profile).start()
    stream.add(0)
    stream.delta(0, '{"city": "Par"}')
    stream.done(0, PARIS)
    stream.item_done(0, PARIS)
    expected = ("ready", None) if profile == "lenient" else ("rejected", "protocol_error")
    assert stream.close()[0][:2] == expected
    assert "openai-responses/R1" in stream.findings


def test_two_restatements_that_disagree_are_refused_in_both_profiles() -> None:
    stream = Stream().start()
    stream.add(0)
    stream.delta(0, PARIS)
    stream.done(0, PARIS)
    stream.item_done(0, '{"city": "Oslo"}')
    assert stream.close()[0][:2] == ("rejected", "protocol_error")


def test_arguments_in_output_item_added_are_restarted_by_the_deltas() -> None:
    stream = Stream().start()
    stream.add(0, PARIS)
    stream.delta(0, PARIS[:5])
    stream.delta(0, PARIS[5:])
    stream.item_done(0, PARIS)
    assert stream.close() == [("ready", None, "call_0", PARIS)]
    assert "openai-responses/R2" in stream.findings


def test_items_sharing_an_output_index_are_told_apart_by_item_id() -> None:
    stream = Stream().start()
    stream.add(0, index=0)
    stream.add(1, index=0)
    stream.delta(0, PARIS, index=0)
    stream.delta(1, '{"city": "Oslo"}', index=0)
    stream.item_done(0, PARIS)
    stream.send("response.completed", response={"status": "completed"})
    outcome = stream.close()
    assert [o[3] for o in outcome] == [PARIS, '{"city": "Oslo"}']
    assert "openai-responses/R8" in stream.findings


def test_an_event_for_no_known_item_fails_the_stream() -> None:
    stream = Stream().start()
    stream.add(0)
    stream.delta(0, "{", index=7, item_id="fc_9")
    assert stream.close()[0][:2] == ("rejected", "protocol_error")


@pytest.mark.parametrize("profile", ["lenient", "strict"])
def test_a_sequence_gap_is_recorded_leniently_and_fails_strictly(profile: str) -> None:
    stream = Stream(profile).start()
    stream.add(0)
    stream.number += 1  # an event was lost
    stream.delta(0, PARIS)
    stream.item_done(0, PARIS)
    assert stream.close()[0][0] == ("ready" if profile == "lenient" else "rejected")
    assert "openai-responses/R4" in stream.findings


def test_response_incomplete_rejects_the_open_call_and_keeps_the_finished_one() -> None:
    stream = Stream().start()
    stream.call(0, PARIS)
    stream.add(1)
    stream.delta(1, '{"city": "Os')
    stream.item_done(1, '{"city": "Os', status="incomplete")
    stream.send(
        "response.incomplete",
        response={"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
    )
    assert [o[:2] for o in stream.close()] == [("ready", None), ("rejected", "truncated")]


def test_end_of_file_without_a_terminal_keeps_finished_calls() -> None:
    stream = Stream().start()
    stream.call(0, PARIS)
    stream.add(1)
    stream.delta(1, PARIS)
    assert [o[:2] for o in stream.close()] == [("ready", None), ("rejected", "interrupted")]


@pytest.mark.parametrize("nested", [True, False])
def test_an_error_event_of_either_shape_rejects_open_calls(nested: bool) -> None:
    stream = Stream().start()
    stream.add(0)
    stream.delta(0, PARIS)
    error = (
        {"error": {"code": "rate_limit_exceeded", "message": "slow down"}}
        if nested
        else {"code": "server_error", "message": "boom"}
    )
    stream.send("error", **error)
    assert stream.close()[0][:2] == ("rejected", "stream_error")
    assert ("openai-responses/R7" in stream.findings) is nested


@pytest.mark.parametrize(("profile", "status"), [("lenient", "ready"), ("strict", "rejected")])
def test_response_done_is_an_alias_only_leniently(profile: str, status: str) -> None:
    stream = Stream(profile).start()
    stream.add(0)
    stream.delta(0, PARIS)
    stream.send("response.done", response={"status": "completed"})
    assert stream.close()[0][0] == status
    assert "openai-responses/R5" in stream.findings


def test_an_empty_final_output_does_not_erase_streamed_calls() -> None:
    stream = Stream().start()
    stream.add(0)
    stream.delta(0, PARIS)
    stream.send("response.completed", response={"status": "completed", "output": []})
    assert stream.close() == [("ready", None, "call_0", PARIS)]


def test_a_call_without_call_id_is_refused_strictly_and_given_one_leniently() -> None:
    for profile, status in (("lenient", "ready"), ("strict", "rejected")):
        stream = Stream(profile).start()
        stream.add(0, call_id="")
        stream.delta(0, PARIS)
        stream.item_done(0, PARIS, call_id="")
        assert stream.close()[0][0] == status


def test_a_custom_tool_call_streams_its_input() -> None:
    assembler = Assembler([Tool.custom("apply_patch")], dialect="openai-responses")
    events = [
        {"type": "response.created", "response": {"id": "r"}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {
                "id": "ctc_0",
                "type": "custom_tool_call",
                "call_id": "call_0",
                "name": "apply_patch",
                "input": "",
            },
        },
        {
            "type": "response.custom_tool_call_input.delta",
            "item_id": "ctc_0",
            "output_index": 0,
            "delta": "*** Begin",
        },
        {
            "type": "response.custom_tool_call_input.delta",
            "item_id": "ctc_0",
            "output_index": 0,
            "delta": " Patch",
        },
        {
            "type": "response.custom_tool_call_input.done",
            "item_id": "ctc_0",
            "output_index": 0,
            "input": "*** Begin Patch",
        },
        {"type": "response.completed", "response": {"status": "completed"}},
    ]
    out = [
        result for event in events for result in assembler.feed_event(event, event=event["type"])
    ]
    out += assembler.close()
    assert [(r.kind, r.status.value, r.arguments) for r in out] == [
        ("custom", "ready", "*** Begin Patch")
    ]


def test_a_stream_that_does_not_open_with_response_created_is_recorded() -> None:
    stream = Stream()
    stream.call(0, PARIS)
    assert stream.close()[0][0] == "ready"
    assert "openai-responses/R12" in stream.findings

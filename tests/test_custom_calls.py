"""Custom tool calls, duplicate ids, synthesised ids and wire indices in the reference.

Chat Completions custom calls arrive as ``{"index", "id", "type": "custom", "custom": {"name",
"input"}}`` deltas (openai/openai-python#2530, openai/openai-openapi#576); their input is text,
never JSON, checked against the tool's format. Every stream here is also assembled cut every
way (``assemble_every_way``), so none of it depends on where the network splits the bytes.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from callstream.reference import Assembler, Reason, Status, Tool, ToolSchemaError
from tests.helpers import WEATHER, args, assemble, assemble_every_way, chunk, header, quirks, sse

PROFILES = ("lenient", "strict")
PARIS = '{"city": "Paris"}'
PATCH = '*** Begin Patch\n*** Update File: a.py\n-x = "1"\n+x = {"a": 1}\n*** End Patch\n'
"""Input that is not JSON, with quotes, braces and newlines that must arrive untouched."""


def regex(definition: str) -> dict[str, Any]:
    """A Chat Completions grammar format with regex syntax."""
    return {"type": "grammar", "grammar": {"syntax": "regex", "definition": definition}}


APPLY_PATCH = Tool.custom("apply_patch")
DATE = Tool.custom("set_date", regex(r"\d{4}-\d{2}-\d{2}"))
SQL = Tool.custom(
    "run_sql",
    {"type": "grammar", "grammar": {"syntax": "lark", "definition": "start: SELECT"}},
)
CUSTOM_TOOLS = [APPLY_PATCH, DATE, SQL, WEATHER]


def custom_header(index: int, call_id: str | None, name: str, text: str = "") -> dict[str, Any]:
    """The first delta of a custom call."""
    entry: dict[str, Any] = {"index": index, "type": "custom", "custom": {"name": name}}
    if call_id is not None:
        entry["id"] = call_id
    if text:
        entry["custom"]["input"] = text
    return entry


def more_input(index: int, fragment: str) -> dict[str, Any]:
    """A later delta of a custom call: its index and an input fragment."""
    return {"index": index, "custom": {"input": fragment}}


def custom_call(name: str, text: str, *, cuts: int = 3, finish: str = "tool_calls") -> bytes:
    """One custom call whose input is cut into ``cuts`` fragments."""
    size = max(1, -(-len(text) // cuts))
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    return sse(
        chunk(custom_header(0, "call_c", name), role="assistant"),
        *(chunk(more_input(0, piece)) for piece in pieces),
        chunk(finish=finish),
    )


# --- custom calls ---------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_a_custom_call_is_ready_with_its_input_verbatim(profile: str) -> None:
    """The input, cut anywhere (inside quotes, across the newline), comes back byte for byte as
    both ``arguments_text`` and ``arguments``: a custom call has no JSON to parse."""
    results, findings = assemble_every_way(
        custom_call("apply_patch", PATCH), CUSTOM_TOOLS, profile=profile
    )
    (result,) = results
    assert (result.status, result.kind, result.name, result.id) == (
        Status.READY,
        "custom",
        "apply_patch",
        "call_c",
    )
    assert result.arguments_text == result.arguments == PATCH
    assert result.not_validated is None
    assert findings == ()


def test_the_input_may_ride_in_the_header_and_a_whole_call_in_one_delta() -> None:
    """Like function arguments (quirk C9, C8), input in the first delta is part of the text."""
    results, _ = assemble_every_way(
        sse(chunk(custom_header(0, "call_c", "apply_patch", PATCH)), chunk(finish="tool_calls")),
        CUSTOM_TOOLS,
    )
    assert [r.arguments for r in results] == [PATCH]


def test_custom_and_function_calls_interleaved_keep_their_own_kind_and_text() -> None:
    """A5 across kinds: fragments of a custom call and a function call alternate; each call
    keeps its kind, its text and its validation."""
    results, _ = assemble_every_way(
        sse(
            chunk(custom_header(0, "call_c", "apply_patch")),
            chunk(header(1, "call_f", "get_weather")),
            chunk(more_input(0, PATCH[:10])),
            chunk(args(1, PARIS[:5])),
            chunk(more_input(0, PATCH[10:])),
            chunk(args(1, PARIS[5:])),
            chunk(finish="tool_calls"),
        ),
        CUSTOM_TOOLS,
    )
    assert [(r.kind, r.arguments) for r in results] == [
        ("custom", PATCH),
        ("function", {"city": "Paris"}),
    ]


@pytest.mark.parametrize(
    ("text", "status"),
    [("2026-12-01", Status.READY), ("1 December 2026", Status.REJECTED), ("", Status.REJECTED)],
)
def test_a_regex_format_must_match_the_whole_input(text: str, status: Status) -> None:
    """V2 for custom tools: the input must match the regex from start to end."""
    results, _ = assemble_every_way(custom_call("set_date", text), CUSTOM_TOOLS)
    (result,) = results
    assert result.status is status
    if status is Status.REJECTED:
        assert result.reason is Reason.SCHEMA_VIOLATION
        assert result.detail is not None
        assert "regex" in result.detail
        assert result.arguments_text == text


def test_a_regex_is_checked_in_linear_time_on_hostile_input() -> None:
    """A backtracking engine takes exponential time on ``(a+)+$`` against ``aaaa…b``; the
    reference's automaton settles 50,000 characters of it as a plain mismatch."""
    evil = Tool.custom("evil", regex("(a+)+$"))
    asm = Assembler([evil])
    results = asm.feed(custom_call("evil", "a" * 50_000 + "b", cuts=1)) + asm.close()
    assert [(r.status, r.reason) for r in results] == [(Status.REJECTED, Reason.SCHEMA_VIOLATION)]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_lark_grammar_is_reported_not_validated_never_valid(profile: str) -> None:
    """The reference cannot run lark: the call is ready, as OpenAI constrains the model with the
    grammar, but ``not_validated`` says the input was not checked, in the dict form too."""
    results, _ = assemble_every_way(custom_call("run_sql", "DROP TABLE x"), CUSTOM_TOOLS)
    (result,) = results
    assert result.ready
    assert result.not_validated is not None
    assert "lark" in result.not_validated
    assert result.to_dict()["not_validated"] == result.not_validated


def test_a_regex_feature_the_engine_does_not_run_is_not_validated() -> None:
    """Look-around is outside the engine's dialect: not validated, with the reason."""
    results, _ = assemble_every_way(custom_call("x", "abc"), [Tool.custom("x", regex("(?=a)abc"))])
    assert results[0].ready
    assert results[0].not_validated is not None
    assert "look-around" in results[0].not_validated


@pytest.mark.parametrize(
    ("fmt", "message"),
    [
        (regex("(unclosed"), "missing"),
        ({"type": "grammar", "grammar": {"syntax": "ebnf", "definition": "x"}}, "syntax"),
        ({"type": "json"}, "format type"),
    ],
)
def test_a_malformed_format_is_refused_naming_the_tool(fmt: dict[str, Any], message: str) -> None:
    """A format the reference cannot read is the caller's mistake, raised at construction."""
    with pytest.raises(ToolSchemaError, match=f"'bad'.*{message}"):
        Assembler([Tool.custom("bad", fmt)])


@pytest.mark.parametrize(
    ("stream", "detail"),
    [
        (
            sse(chunk(header(0, "call_f", "apply_patch", PARIS)), chunk(finish="tool_calls")),
            "custom tool, but this is a function call",
        ),
        (custom_call("get_weather", PARIS), "function tool, but this is a custom call"),
    ],
)
def test_a_call_of_the_wrong_kind_names_no_offered_tool(stream: bytes, detail: str) -> None:
    """V3: a function call to a custom tool, or a custom call to a function tool, calls a tool
    the request never offered; it is rejected ``unknown_tool`` in both profiles."""
    for profile in PROFILES:
        results, _ = assemble_every_way(stream, CUSTOM_TOOLS, profile=profile)
        (result,) = results
        assert result.reason is Reason.UNKNOWN_TOOL
        assert result.detail is not None
        assert detail in result.detail


def test_a_call_that_changes_kind_midway_is_a_protocol_error() -> None:
    """A function delta for a call that began as custom cannot be routed with confidence."""
    results, _ = assemble_every_way(
        sse(
            chunk(custom_header(0, "call_c", "apply_patch")),
            chunk(args(0, PARIS)),
            chunk(finish="tool_calls"),
        ),
        CUSTOM_TOOLS,
    )
    assert [(r.status, r.reason) for r in results] == [(Status.REJECTED, Reason.PROTOCOL_ERROR)]


def test_an_empty_custom_object_on_a_function_delta_changes_nothing() -> None:
    """Some gateways echo ``custom: {}`` on every function delta (earendil-works/pi#8504): the
    call stays a function call with its arguments."""
    results, _ = assemble_every_way(
        sse(
            chunk({**header(0, "call_f", "get_weather"), "custom": {}}),
            chunk({**args(0, PARIS), "custom": {}}),
            chunk(finish="tool_calls"),
        ),
        CUSTOM_TOOLS,
    )
    assert [(r.kind, r.arguments) for r in results] == [("function", {"city": "Paris"})]


def test_a_custom_call_cut_by_the_token_limit_is_truncated() -> None:
    """C3 holds for custom calls: ``length`` leaves the input incomplete, never ready, even when
    what arrived would pass the format."""
    results, _ = assemble_every_way(custom_call("apply_patch", PATCH[:20], finish="length"))
    assert [(r.status, r.reason, r.arguments_text) for r in results] == [
        (Status.REJECTED, Reason.TRUNCATED, PATCH[:20])
    ]


# --- duplicate ids (quirk C34) ----------------------------------------------------------------

SHARED_ID = sse(
    chunk(header(0, "call_dup", "get_weather", PARIS)),
    chunk(header(1, "call_dup", "get_weather", '{"city": "Rome"}')),
    chunk(finish="tool_calls"),
)


def test_lenient_keeps_both_calls_that_share_an_id_and_records_c34() -> None:
    """Two distinct calls at wire indices 0 and 1 with one id are both ready, with a finding."""
    results, findings = assemble_every_way(SHARED_ID, profile="lenient")
    assert [(r.index, r.id, r.status) for r in results] == [
        (0, "call_dup", Status.READY),
        (1, "call_dup", Status.READY),
    ]
    assert [(f.quirk, f.index) for f in findings] == [("openai-chat/C34", 1)]


def test_strict_rejects_both_calls_that_share_an_id() -> None:
    """Neither call can be answered unambiguously by id (E2): both are ``duplicate_id``."""
    results, findings = assemble_every_way(SHARED_ID, profile="strict")
    assert [(r.index, r.reason) for r in results] == [
        (0, Reason.DUPLICATE_ID),
        (1, Reason.DUPLICATE_ID),
    ]
    assert quirks(findings) == {"openai-chat/C34"}


def test_the_same_id_in_two_choices_is_not_a_duplicate() -> None:
    """A7: each choice is its own assistant message, so the ids of two choices never meet."""
    results, findings = assemble_every_way(
        sse(
            chunk(header(0, "call_1", "get_weather", PARIS), choice=0),
            chunk(header(0, "call_1", "get_weather", PARIS), choice=1),
            chunk(choice=0, finish="tool_calls"),
            chunk(choice=1, finish="tool_calls"),
        ),
        profile="strict",
    )
    assert [r.ready for r in results] == [True, True]
    assert findings == ()


# --- synthesised ids --------------------------------------------------------------------------


def anonymous(response: str, *texts: str) -> bytes:
    """Calls without ids in the response with id ``response``."""
    return sse(
        *(
            chunk(
                {"index": n, "type": "function", "function": {"name": "get_weather"}},
                id=response,
            )
            for n in range(len(texts))
        ),
        *(chunk(args(n, text), id=response) for n, text in enumerate(texts)),
        chunk(finish="tool_calls", id=response),
    )


def test_synthesised_ids_differ_across_responses_and_are_stable_within_one() -> None:
    """V4: made-up ids are derived from the response id, so another response gets others and
    the same response, however split, gets the same; nine alphanumerics, as Mistral needs."""
    first, _ = assemble_every_way(anonymous("chatcmpl-1", PARIS, PARIS))
    again, _ = assemble([anonymous("chatcmpl-1", PARIS, PARIS)])
    other, _ = assemble([anonymous("chatcmpl-2", PARIS, PARIS)])
    ids = [r.id or "" for r in first]
    assert all(re.fullmatch("[A-Za-z0-9]{9}", i) for i in ids)
    assert len(set(ids)) == 2
    assert ids == [r.id for r in again]
    assert not set(ids) & {r.id for r in other}


def test_a_synthesised_id_never_equals_a_real_id_of_the_stream() -> None:
    """Whatever the derivation gives, an id the provider used is skipped."""
    plain, _ = assemble([anonymous("chatcmpl-1", PARIS)])
    taken = plain[0].id or ""
    results, _ = assemble_every_way(
        sse(
            chunk(header(0, taken, "get_weather", '{"city": "Rome"}'), id="chatcmpl-1"),
            chunk(
                {"index": 1, "type": "function", "function": {"name": "get_weather"}},
                id="chatcmpl-1",
            ),
            chunk(args(1, PARIS), id="chatcmpl-1"),
            chunk(finish="tool_calls", id="chatcmpl-1"),
        )
    )
    assert results[0].id == taken
    assert results[1].synthetic_id
    assert results[1].id not in (None, taken)


# --- wire index -------------------------------------------------------------------------------


def test_every_result_keeps_its_wire_index_beside_the_compacted_index() -> None:
    """Indices 5 then 2 on the wire (quirk C14) become positions 0 and 1; each result still
    says which wire index it came from, and its dict form shows it where they differ."""
    results, _ = assemble_every_way(
        sse(
            chunk(header(5, "call_a", "get_weather", PARIS)),
            chunk(header(2, "call_b", "get_weather", '{"city": "Rome"}')),
            chunk(finish="tool_calls"),
        )
    )
    assert [(r.index, r.wire_index, r.id) for r in results] == [(0, 5, "call_a"), (1, 2, "call_b")]
    assert [r.to_dict()["wire_index"] for r in results] == [5, 2]


def test_the_wire_index_is_none_when_the_provider_sent_none() -> None:
    """Gemini's OpenAI endpoint sends no index (quirk C1): the call is at position 0 and its
    wire index is None."""
    results, _ = assemble_every_way(
        sse(
            chunk({"id": "call_g", "type": "function", "function": {"name": "get_weather"}}),
            chunk({"id": "call_g", "function": {"arguments": PARIS}}),
            chunk(finish="tool_calls"),
        )
    )
    assert [(r.index, r.wire_index) for r in results] == [(0, None)]

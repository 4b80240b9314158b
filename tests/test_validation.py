"""Validation before execution (REQUIREMENTS.md V1–V6) and the Assembler's constructor errors.

A completed call is parsed once (V1), checked against its tool's schema (V2), its tool must be
exposed (V3), it needs a name and, under the strict profile, an id (V4); limits keep a runaway
stream bounded (V5); and every rejection says why (V6).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import Any

import pytest

from callstream.reference import (
    Assembler,
    CallResult,
    ConfigurationError,
    Limits,
    Reason,
    SchemaRefError,
    Status,
    Tool,
    ToolSchemaError,
    _validate,
)
from tests.helpers import (
    TOOLS,
    args,
    assemble,
    assemble_events,
    assemble_every_way,
    chunk,
    header,
    quirks,
    simple_call,
    sse,
)

DONE = "[DONE]"
PARIS = '{"city": "Paris"}'

Payload = dict[str, Any] | str


def complete(
    arguments: str,
    name: str = "get_weather",
    tools: Sequence[Tool] | None = TOOLS,
    **options: Any,
) -> CallResult:
    """The single result of a clean stream whose one call has ``arguments``."""
    results, _ = assemble_events(
        [*simple_call(name=name, arguments=arguments), DONE], tools, **options
    )
    assert len(results) == 1
    return results[0]


# -- V1: parse once, completely ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where"),
    [
        pytest.param('{"city": "Paris",}', "character 17", id="trailing-comma"),
        pytest.param('{"city" "Paris"}', "character 8", id="missing-colon"),
        pytest.param('{"city": "Paris"} x', "character 18", id="trailing-garbage"),
        pytest.param('{"city": "Par', "character 9", id="unterminated-string"),
    ],
)
def test_malformed_json_keeps_the_raw_text_and_says_where(text: str, where: str) -> None:
    """Malformed arguments make a failed call, never a partial success: the exact text is kept
    and the detail names the character where parsing broke."""
    result = complete(text)
    assert (result.status, result.reason) == (Status.REJECTED, Reason.MALFORMED_JSON)
    assert result.arguments_text == text
    assert result.arguments is None
    assert where in (result.detail or "")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(constant: str) -> None:
    """Python's json accepts NaN and Infinity; JSON does not, so the call is malformed."""
    result = complete(f'{{"city": "Paris", "units": {constant}}}', tools=None)
    assert (result.status, result.reason) == (Status.REJECTED, Reason.MALFORMED_JSON)
    assert constant in (result.detail or "")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_rejections_say_where(constant: str) -> None:
    """The NaN/Infinity rejection, like every malformed-JSON rejection, names the character
    where the bad token starts (``ArgumentsError``: "the message says where")."""
    result = complete(f'{{"city": "Paris", "units": {constant}}}', tools=None)
    assert "character 27" in (result.detail or "")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        pytest.param('[{"city": "Paris"}]', "array", id="array"),
        pytest.param('"Paris"', "string", id="string"),
        pytest.param("42", "number", id="number"),
        pytest.param("null", "null", id="null"),
        pytest.param("true", "boolean", id="boolean"),
    ],
)
def test_a_json_value_that_is_not_an_object_is_malformed(text: str, kind: str) -> None:
    """Arguments must be a JSON object; other valid JSON is rejected, saying what it was."""
    result = complete(text, tools=None)
    assert (result.status, result.reason) == (Status.REJECTED, Reason.MALFORMED_JSON)
    assert result.arguments_text == text
    assert f"JSON {kind}" in (result.detail or "")


def test_whitespace_around_the_object_is_valid_and_kept_verbatim() -> None:
    """Leading and trailing whitespace is JSON; the text is not trimmed (A2)."""
    result = complete(' {"city": "Paris"}\n')
    assert result.ready
    assert result.arguments == {"city": "Paris"}
    assert result.arguments_text == ' {"city": "Paris"}\n'


# -- V2: schema check -------------------------------------------------------------------------

TRIP = Tool(
    "plan_trip",
    {
        "type": "object",
        "properties": {
            "trip": {
                "type": "object",
                "properties": {
                    "stops": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                            "required": ["city"],
                        },
                    }
                },
            }
        },
    },
)


@pytest.mark.parametrize(
    ("name", "text", "path", "message"),
    [
        pytest.param(
            "get_weather", '{"units": "c"}', "at $:", "'city' is a required", id="required"
        ),
        pytest.param("get_weather", '{"city": 5}', "at $.city:", "not of type 'string'", id="type"),
        pytest.param(
            "get_weather",
            '{"city": "Paris", "units": "k"}',
            "at $.units:",
            "'k' is not one of",
            id="enum",
        ),
        pytest.param(
            "plan_trip",
            '{"trip": {"stops": [{"city": "Oslo"}, {"city": 3}]}}',
            "at $.trip.stops[1].city:",
            "not of type 'string'",
            id="nested",
        ),
        pytest.param(
            "get_weather",
            '{"city": "Paris", "extra": 1}',
            "at $:",
            "'extra' was unexpected",
            id="additional-properties",
        ),
    ],
)
def test_a_schema_violation_is_reported_with_its_path(
    name: str, text: str, path: str, message: str
) -> None:
    """Parsed arguments that break the tool's schema are rejected ``schema_violation``; the
    detail gives the JSON path of the offending value and what is wrong with it."""
    result = complete(text, name=name, tools=[*TOOLS, TRIP])
    assert (result.status, result.reason) == (Status.REJECTED, Reason.SCHEMA_VIOLATION)
    assert (result.id, result.name, result.arguments_text, result.arguments) == (
        "call_1",
        name,
        text,
        None,
    )
    assert path in (result.detail or "")
    assert message in (result.detail or "")


def test_arguments_that_match_the_schema_are_ready() -> None:
    """A valid call with an optional enum field is ready, arguments parsed."""
    result = complete('{"city": "Paris", "units": "c"}')
    assert result.ready
    assert result.arguments == {"city": "Paris", "units": "c"}


# -- V3: known tools only ---------------------------------------------------------------------


def test_a_name_that_is_not_an_exposed_tool_is_rejected() -> None:
    """A call to a tool that was not offered is ``unknown_tool``, naming the tool."""
    result = complete(PARIS, name="delete_everything")
    assert (result.status, result.reason) == (Status.REJECTED, Reason.UNKNOWN_TOOL)
    assert result.name == "delete_everything"
    assert "delete_everything" in (result.detail or "")


def test_an_empty_tool_list_exposes_no_tool() -> None:
    """``tools=[]`` means nothing may be called (unlike ``None``)."""
    result = complete(PARIS, tools=[])
    assert (result.status, result.reason) == (Status.REJECTED, Reason.UNKNOWN_TOOL)


def test_without_a_tool_list_any_name_and_any_object_is_accepted() -> None:
    """``tools=None`` skips the name and schema checks, but arguments must still be an object."""
    result = complete('{"path": ["/", 1]}', name="anything_at_all", tools=None)
    assert result.ready
    assert (result.name, result.arguments) == ("anything_at_all", {"path": ["/", 1]})


# -- V4: identity -----------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["lenient", "strict"])
def test_a_call_that_never_received_a_name_is_rejected(profile: str) -> None:
    """A call without a name cannot be run or matched to a tool: ``missing_name``."""
    stream = [
        chunk({"index": 0, "id": "call_1", "type": "function", "function": {"arguments": PARIS}}),
        chunk(finish="tool_calls"),
        DONE,
    ]
    results, _ = assemble_events(stream, profile=profile)
    assert [(r.id, r.name, r.arguments_text, r.status, r.reason) for r in results] == [
        ("call_1", None, PARIS, Status.REJECTED, Reason.MISSING_NAME)
    ]


NO_IDS = [
    chunk(
        {"index": 0, "type": "function", "function": {"name": "get_weather", "arguments": PARIS}},
        {
            "index": 1,
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
        },
    ),
    chunk(finish="tool_calls"),
    DONE,
]


def test_strict_rejects_calls_without_an_id() -> None:
    """The strict profile makes up nothing: each id-less call is ``missing_id``."""
    results, _ = assemble_events(NO_IDS, profile="strict")
    assert [(r.index, r.id, r.status, r.reason, r.synthetic_id) for r in results] == [
        (0, None, Status.REJECTED, Reason.MISSING_ID, False),
        (1, None, Status.REJECTED, Reason.MISSING_ID, False),
    ]


def test_lenient_synthesises_unique_flagged_ids_and_records_c7() -> None:
    """The lenient profile gives each id-less call its own id, flags it as synthesised and
    records C7 per call, so tool results can still be matched."""
    results, findings = assemble_events(NO_IDS, profile="lenient")
    assert all(r.ready and r.synthetic_id for r in results)
    ids = [r.id for r in results]
    assert None not in ids
    assert len(set(ids)) == 2
    assert sorted((f.quirk, f.index) for f in findings if f.quirk == "openai-chat/C7") == [
        ("openai-chat/C7", 0),
        ("openai-chat/C7", 1),
    ]


def test_synthetic_ids_are_nine_alphanumerics_mistral_accepts_back() -> None:
    """Mistral rejects history ids that are not ``[a-zA-Z0-9]{9}`` (§6.7, §7 C7)."""
    results, _ = assemble_events(NO_IDS, profile="lenient")
    for result in results:
        assert re.fullmatch("[A-Za-z0-9]{9}", result.id or "")


def test_synthetic_ids_are_stable_across_runs_and_splits() -> None:
    """The same stream gets the same ids every time, however its bytes arrive, so a retried
    turn can be deduplicated by id."""
    data = sse(*NO_IDS[:-1])
    first, _ = assemble_every_way(data, profile="lenient")
    second, _ = assemble([data], profile="lenient")
    assert [r.id for r in first] == [r.id for r in second]


def test_a_synthetic_id_never_collides_with_a_provider_id() -> None:
    """When the provider already used the id the synthesiser would pick, another is chosen."""
    stream = [
        chunk(
            header(0, "call00001", "get_weather", PARIS),
            {
                "index": 1,
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
            },
        ),
        chunk(finish="tool_calls"),
        DONE,
    ]
    results, _ = assemble_events(stream, profile="lenient")
    assert [r.synthetic_id for r in results] == [False, True]
    assert results[0].id == "call00001"
    assert results[1].id not in {None, "call00001"}


def test_a_rejected_call_handed_back_with_a_made_up_id_flags_it() -> None:
    """A call without an id whose arguments turn out broken or invalid is rejected after its id
    was made up; the result says the id is made up, as a ready call's does (D91)."""
    stream = [
        chunk(
            {
                "index": 0,
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": Paris}'},
            },
            {
                "index": 1,
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"town": "Rome"}'},
            },
        ),
        chunk(finish="tool_calls"),
        DONE,
    ]
    results, _ = assemble_events(stream, profile="lenient")
    assert [(r.reason, r.synthetic_id, bool(r.id)) for r in results] == [
        (Reason.MALFORMED_JSON, True, True),
        (Reason.SCHEMA_VIOLATION, True, True),
    ]


# -- V5: bounded ------------------------------------------------------------------------------


def test_arguments_past_the_size_limit_are_rejected_at_once_and_cut() -> None:
    """Passing ``max_argument_bytes`` rejects the call ``too_large`` in the very feed that
    passed it (no waiting for the finish); the text is cut at the limit, and later fragments
    are no longer buffered."""
    asm = Assembler(TOOLS, limits=Limits(max_argument_bytes=12))
    assert asm.feed_event(chunk(header(0, "call_1", "get_weather"))) == []
    assert asm.feed_event(chunk(args(0, '{"city": "'))) == []
    [result] = asm.feed_event(chunk(args(0, 'Paris"}')))
    assert (result.id, result.status, result.reason) == (
        "call_1",
        Status.REJECTED,
        Reason.TOO_LARGE,
    )
    assert result.arguments_text == '{"city": "Pa'
    assert "12 bytes" in (result.detail or "")
    assert asm.preview() == []
    assert asm.feed_event(chunk(args(0, "x" * 10_000))) == []
    assert asm.feed_event(chunk(finish="tool_calls")) == []
    assert asm.close() == []


def test_arguments_exactly_at_the_size_limit_are_accepted() -> None:
    """The limit is inclusive: 13 bytes of arguments pass a 13-byte limit."""
    result = complete('{"city": "P"}', limits=Limits(max_argument_bytes=13))
    assert result.ready


def test_the_size_limit_counts_utf8_bytes_and_never_cuts_a_character() -> None:
    """``ü`` is two bytes: a limit falling inside it keeps the text before it, valid UTF-8."""
    result = complete('{"city": "Zürich"}', limits=Limits(max_argument_bytes=12))
    assert result.reason == Reason.TOO_LARGE
    assert result.arguments_text == '{"city": "Z'


def test_more_calls_than_the_limit_rejects_the_open_ones() -> None:
    """Opening a call past ``max_calls`` fails the stream ``too_large``: calls still open are
    rejected, a call already ready stays ready, and later input is ignored."""
    asm = Assembler(TOOLS, limits=Limits(max_calls=2))
    results = asm.feed_event(chunk(header(0, "call_a", "get_weather", PARIS), finish="tool_calls"))
    assert [(r.id, r.status) for r in results] == [("call_a", Status.READY)]
    assert (
        asm.feed_event(chunk(header(0, "call_b", "get_weather", '{"city": "Rome"}'), choice=1))
        == []
    )
    results = asm.feed_event(
        chunk(header(1, "call_c", "get_weather", '{"city": "Oslo"}'), choice=1)
    )
    assert [(r.choice, r.id, r.status, r.reason) for r in results] == [
        (1, "call_b", Status.REJECTED, Reason.TOO_LARGE)
    ]
    assert "2 calls" in (results[0].detail or "")
    assert asm.failure is not None
    assert asm.feed_event(chunk(finish="tool_calls", choice=1)) == []
    assert asm.close() == []


LINE_LIMITS = Limits(max_line_length=400)
EVENT_LIMITS = Limits(max_event_size=400)
OPEN_CALL = sse(chunk(header(0, "call_1", "get_weather")), done=False)
LONG_LINE = (
    b"data: " + json.dumps(chunk(args(0, '{"city": "' + "x" * 600 + '"}'))).encode() + b"\n\n"
)
BIG_EVENT = b"data: 0123456789\n" * 40 + b"\n"
LATER_CALL = sse(chunk(header(1, "call_2", "get_weather", PARIS)), chunk(finish="tool_calls"))


@pytest.mark.parametrize(
    ("oversized", "limits", "what"),
    [
        pytest.param(LONG_LINE, LINE_LIMITS, "line", id="line"),
        pytest.param(BIG_EVENT, EVENT_LIMITS, "event", id="event"),
    ],
)
@pytest.mark.parametrize("byte_at_a_time", [False, True])
def test_an_oversized_sse_line_or_event_rejects_the_stream(
    oversized: bytes, limits: Limits, what: str, byte_at_a_time: bool
) -> None:
    """A line past ``max_line_length`` or an event past ``max_event_size`` rejects the open
    call ``too_large`` (detail says which), whether it arrives whole or one byte at a time;
    the stream then stops: nothing fed afterwards produces a call."""
    asm = Assembler(TOOLS, limits=limits)
    assert asm.feed(OPEN_CALL) == []
    pieces = (
        [oversized[i : i + 1] for i in range(len(oversized))] if byte_at_a_time else [oversized]
    )
    results = []
    for piece in pieces:
        results += asm.feed(piece)
    assert [(r.id, r.status, r.reason) for r in results] == [
        ("call_1", Status.REJECTED, Reason.TOO_LARGE)
    ]
    assert what in (results[0].detail or "")
    assert asm.failure is not None
    assert asm.feed(LATER_CALL) == []
    assert asm.close() == []


@pytest.mark.parametrize(
    ("oversized", "limits"),
    [
        pytest.param(LONG_LINE, LINE_LIMITS, id="line"),
        pytest.param(BIG_EVENT, EVENT_LIMITS, id="event"),
    ],
)
def test_a_call_completed_before_an_oversized_line_in_the_same_read_is_still_reported(
    oversized: bytes, limits: Limits
) -> None:
    """Events dispatched before the limit was passed were valid: a call they completed is
    reported ready whether the bytes arrive in one read or a byte at a time (T1: a chunk
    boundary may fall anywhere)."""
    data = sse(*simple_call(), done=False) + oversized
    for pieces in ([data], [data[i : i + 1] for i in range(len(data))]):
        results, _ = assemble(pieces, limits=limits)
        assert [(r.id, r.status) for r in results] == [("call_1", Status.READY)], len(pieces)


# -- V6: every rejection says why -------------------------------------------------------------

CANCEL = object()
WEATHER_HEADER = chunk(header(0, "call_1", "get_weather"))

REJECTIONS: dict[Reason, tuple[list[Any], dict[str, Any]]] = {
    Reason.TRUNCATED: ([*simple_call(finish="length"), DONE], {}),
    Reason.FILTERED: ([*simple_call(finish="content_filter"), DONE], {}),
    Reason.PROVIDER_FINISH: ([*simple_call(finish="insufficient_system_resource"), DONE], {}),
    Reason.STREAM_ERROR: ([*simple_call(finish=None), {"error": {"message": "boom"}}], {}),
    Reason.UNFINISHED: ([*simple_call(finish=None), DONE], {}),
    Reason.INTERRUPTED: (simple_call(finish=None), {}),
    Reason.CANCELLED: ([WEATHER_HEADER, CANCEL], {}),
    Reason.MALFORMED_JSON: ([*simple_call(arguments="{"), DONE], {}),
    Reason.SCHEMA_VIOLATION: ([*simple_call(arguments="{}"), DONE], {}),
    Reason.UNKNOWN_TOOL: ([*simple_call(name="nope"), DONE], {}),
    Reason.MISSING_ID: (
        [
            chunk({"index": 0, "function": {"name": "get_weather", "arguments": PARIS}}),
            chunk(finish="tool_calls"),
            DONE,
        ],
        {"profile": "strict"},
    ),
    Reason.MISSING_NAME: (
        [
            chunk({"index": 0, "id": "call_1", "function": {"arguments": PARIS}}),
            chunk(finish="tool_calls"),
            DONE,
        ],
        {},
    ),
    Reason.DUPLICATE_ID: (
        [
            chunk(header(0, "call_1", "get_weather", PARIS), header(1, "call_1", "get_weather")),
            chunk(finish="tool_calls"),
            DONE,
        ],
        {"profile": "strict"},
    ),
    Reason.TOO_LARGE: ([*simple_call(), DONE], {"limits": Limits(max_argument_bytes=4)}),
    Reason.PROTOCOL_ERROR: (
        [
            WEATHER_HEADER,
            chunk({"index": 0, "function": {"name": "get_time"}}),
            chunk(finish="tool_calls"),
            DONE,
        ],
        {},
    ),
}


def test_every_rejection_reason_is_exercised_below() -> None:
    """A new ``Reason`` must get a stream in ``REJECTIONS``, or V6 is not checked for it."""
    assert set(REJECTIONS) == set(Reason)


@pytest.mark.parametrize("reason", list(REJECTIONS), ids=str)
def test_every_rejection_carries_a_reason_a_detail_and_the_call(reason: Reason) -> None:
    """Each way a call can fail yields a rejected result with the machine-readable reason, a
    non-empty detail for a person, and the call's name and id (when the provider sent one)."""
    payloads, options = REJECTIONS[reason]
    asm = Assembler(TOOLS, **options)
    results: list[CallResult] = []
    for payload in payloads:
        if payload is CANCEL:
            results += asm.cancel()
            break
        results += asm.feed_event(payload)
    else:
        results += asm.close()
    # Two calls sharing one id are both rejected: each is half of the ambiguity.
    twins = 2 if reason is Reason.DUPLICATE_ID else 1
    assert [(r.status, r.reason) for r in results] == [(Status.REJECTED, reason)] * twins
    result = results[0]
    assert isinstance(result.reason, Reason)
    assert result.detail
    assert result.detail.strip()
    assert result.name == {Reason.MISSING_NAME: None, Reason.UNKNOWN_TOOL: "nope"}.get(
        reason, "get_weather"
    )
    assert result.id == (None if reason is Reason.MISSING_ID else "call_1")
    assert result.arguments is None


# -- constructor errors -----------------------------------------------------------------------


def test_an_invalid_tool_schema_raises_naming_the_tool() -> None:
    """A tool whose parameters are not a valid JSON Schema is a caller mistake, raised at
    construction with the tool's name."""
    bad = Tool("broken_tool", {"type": "objekt"})
    with pytest.raises(ToolSchemaError, match="broken_tool"):
        Assembler([*TOOLS, bad])


def test_tool_parameters_that_are_not_json_raise_naming_the_tool() -> None:
    """Parameters that cannot even be serialised as JSON are rejected the same way."""
    with pytest.raises(ToolSchemaError, match="odd_tool"):
        Assembler([Tool("odd_tool", {"type": "object", "enum": {1, 2}})])


def test_a_tool_schema_error_is_a_configuration_error_and_a_value_error() -> None:
    """Callers can catch it as ``ConfigurationError`` or plain ``ValueError``."""
    with pytest.raises(ConfigurationError):
        Assembler([Tool("broken_tool", {"required": "city"})])
    with pytest.raises(ValueError, match="broken_tool"):
        Assembler([Tool("broken_tool", {"required": "city"})])


@pytest.mark.parametrize(
    ("option", "value"),
    [
        pytest.param("dialect", "anthropic-messagez", id="dialect"),
        pytest.param("profile", "loose", id="profile"),
    ],
)
def test_an_unknown_dialect_or_profile_raises_a_configuration_error(
    option: str, value: str
) -> None:
    """An unknown dialect or profile is refused up front, naming the bad value."""
    with pytest.raises(ConfigurationError, match=value):
        Assembler(TOOLS, **{option: value})


@pytest.mark.parametrize(
    "field", ["max_argument_bytes", "max_calls", "max_line_length", "max_event_size"]
)
@pytest.mark.parametrize("value", [0, -1, True, 1.5])
def test_limits_must_be_positive_integers(field: str, value: Any) -> None:
    """``Limits(max_calls=0)`` and the like raise ``ValueError`` naming the field."""
    with pytest.raises(ValueError, match=field):
        Limits(**{field: value})


def test_a_schema_violation_records_no_wire_quirk() -> None:
    """Validation failures are about the call, not the wire: a schema violation on a clean
    stream records no quirk."""
    _, findings = assemble_events([*simple_call(arguments='{"city": 5}'), DONE])
    assert quirks(findings) == set()


def test_more_choices_than_the_limit_fail_the_stream() -> None:
    """A stream that keeps opening new choices is stopped at ``max_choices`` (V5): every open
    call is rejected ``too_large`` and nothing more is buffered."""
    payloads = [chunk(header(0, f"call_{n}", "get_weather"), choice=n) for n in range(4)]
    results, _ = assemble_events(payloads, limits=Limits(max_choices=3))
    assert [(r.choice, r.status, r.reason) for r in results] == [
        (n, Status.REJECTED, Reason.TOO_LARGE) for n in range(3)
    ]
    assert results[0].detail == "more than 3 choices in one stream"


# -- hostile schemas and arguments: no I/O, nothing raised, bounded work ---------------------


def checked(schema: dict[str, Any], arguments: str) -> CallResult:
    """The single result of a clean stream calling tool ``t`` with ``schema``."""
    return complete(arguments, name="t", tools=[Tool("t", schema)])


def holding(value_schema: dict[str, Any]) -> dict[str, Any]:
    """An object schema whose property ``v`` has ``value_schema``."""
    return {"type": "object", "properties": {"v": value_schema}}


@pytest.mark.parametrize(
    "ref",
    [
        pytest.param("http://127.0.0.1:9/schema.json", id="http"),
        pytest.param("https://example.com/schema.json#/$defs/a", id="https"),
        pytest.param("file:///dev/zero", id="file"),
        pytest.param("other.json", id="relative-file"),
        pytest.param("#/$defs/missing", id="dangling-pointer"),
        pytest.param("https://json-schema.org/draft/2020-12/schema", id="metaschema"),
    ],
)
def test_a_ref_that_does_not_resolve_inside_the_schema_is_a_configuration_error(ref: str) -> None:
    """A ``$ref`` is never fetched: anything it cannot find inside the schema itself is a
    SchemaRefError (a ToolSchemaError, a ValueError) naming the tool and the reference, raised
    when the tool is given."""
    schema = {"type": "object", "properties": {"a": {"$ref": ref}}, "$defs": {"b": {}}}
    with pytest.raises(SchemaRefError) as raised:
        Assembler([Tool("fetcher", schema)])
    assert isinstance(raised.value, ToolSchemaError)
    assert isinstance(raised.value, ValueError)
    assert (raised.value.tool, raised.value.ref) == ("fetcher", ref)
    assert "fetcher" in str(raised.value)
    assert ref in str(raised.value)


def test_a_ref_to_a_schema_bundled_under_its_own_id_resolves() -> None:
    """References by pointer, by anchor and by the ``$id`` of a bundled subschema resolve, and
    the referenced schemas are applied."""
    schema = {
        "$id": "https://example.com/trip",
        "type": "object",
        "properties": {
            "when": {"$ref": "https://example.com/moment"},
            "where": {"$ref": "#place"},
            "count": {"$ref": "#/$defs/count"},
        },
        "$defs": {
            "moment": {"$id": "https://example.com/moment", "type": "string"},
            "place": {"$anchor": "place", "type": "string"},
            "count": {"type": "integer"},
        },
    }
    assert checked(schema, '{"when": "now", "where": "Oslo", "count": 2}').ready
    rejected = checked(schema, '{"when": 5}')
    assert (rejected.reason, rejected.detail) == (
        Reason.SCHEMA_VIOLATION,
        "at $.when: 5 is not of type 'string'",
    )


@pytest.mark.parametrize("digits", [4301, 100_000])
def test_an_integer_of_any_length_is_parsed_and_validated(digits: int) -> None:
    """Integers past CPython's 4300-digit conversion limit parse as ints and meet ``integer``,
    ``minimum`` and ``multipleOf`` correctly; the interpreter's limit is left as it was."""
    limit = sys.get_int_max_str_digits()
    number = "7" * digits
    schema = holding({"type": "integer", "minimum": 0, "multipleOf": 7})
    ready = checked(schema, f'{{"v": {number}}}')
    assert ready.ready
    assert ready.arguments["v"] == 7 * (10**digits - 1) // 9
    assert f"<integer of {digits} digits>" in repr(ready)
    below = checked(schema, f'{{"v": -{number}}}')
    assert (below.reason, below.detail) == (
        Reason.SCHEMA_VIOLATION,
        f"at $.v: -<integer of {digits} digits> is less than the minimum of 0",
    )
    assert checked(holding({"multipleOf": 0.5}), f'{{"v": {number}1}}').ready
    assert not checked(holding({"multipleOf": 10}), f'{{"v": {number}1}}').ready
    assert sys.get_int_max_str_digits() == limit


def test_a_number_too_large_for_a_float_is_a_multiple_of_nothing() -> None:
    """``1e400`` parses as infinity (as ``json.loads`` does); it meets ``type: number`` but no
    ``multipleOf`` and no finite ``maximum``."""
    assert checked(holding({"type": "number"}), '{"v": 1e400}').ready
    assert checked(holding({"multipleOf": 0.5}), '{"v": 1e400}').reason is Reason.SCHEMA_VIOLATION
    assert checked(holding({"maximum": 10**300}), '{"v": 1e400}').reason is Reason.SCHEMA_VIOLATION


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        pytest.param(holding({"pattern": "^(a+)+$"}), {"v": "a" * 50_000 + "!"}, id="pattern"),
        pytest.param(
            {"patternProperties": {"^(a|aa)+$": {}}, "additionalProperties": False},
            {"a" * 50_000 + "!": 1},
            id="additional-properties",
        ),
        pytest.param(
            {"patternProperties": {"^(a+)+$": {}}, "unevaluatedProperties": False},
            {"a" * 50_000 + "!": 1},
            id="unevaluated-properties",
        ),
    ],
)
def test_a_catastrophic_pattern_is_matched_in_linear_time(
    schema: dict[str, Any], value: dict[str, Any]
) -> None:
    """Patterns that backtrack exponentially in a backtracking engine are matched by RE2; the
    long non-matching text is rejected and the detail shows it abbreviated."""
    result = checked(schema, json.dumps(value))
    assert result.reason is Reason.SCHEMA_VIOLATION
    assert "…(50001 characters)" in (result.detail or "")
    assert len(result.detail or "") < 400


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param("^(?=a)", id="lookahead"),
        pytest.param("(?<!a)b", id="lookbehind"),
        pytest.param(r"^(a)\1$", id="backreference"),
        pytest.param("^a{1001}$", id="repetition-past-1000"),
    ],
)
def test_a_pattern_re2_cannot_run_is_a_configuration_error(pattern: str) -> None:
    """A pattern needing backtracking is refused when the tool is given, naming the tool and
    the pattern, rather than left unchecked on model output."""
    for schema in (holding({"pattern": pattern}), {"patternProperties": {pattern: {}}}):
        with pytest.raises(ToolSchemaError, match="regex_tool") as raised:
            Assembler([Tool("regex_tool", schema)])
        assert repr(pattern) in str(raised.value)


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        pytest.param(r"^caf\u00e9$", "café", True, id="unicode-escape"),
        pytest.param(r"^\uD83D\uDE00$", "😀", True, id="surrogate-pair-escape"),
        pytest.param(r"^a\\u$", "a\\u", True, id="escaped-backslash"),
        pytest.param("^a$", "a\n", False, id="dollar-is-the-end"),
        pytest.param(r"^\d+$", "١٢", False, id="ascii-digits"),
        pytest.param("^[^x]$", "\ud800", True, id="lone-surrogate"),
        pytest.param("^[a-z]$", "\ud800", False, id="lone-surrogate-outside-a-class"),
    ],
)
def test_patterns_follow_ecma_262(pattern: str, text: str, matches: bool) -> None:
    """``\\uXXXX`` escapes work, ``$`` is the end of the text and ``\\d`` is ASCII (ECMA-262,
    where Python's ``re`` differs); a lone surrogate in the text is one character, as in
    ECMA-262's UTF-16 strings."""
    result = checked(holding({"pattern": pattern}), json.dumps({"v": text}))
    assert result.ready is matches


@pytest.mark.parametrize(
    ("items", "unique"),
    [
        pytest.param([{"k": i} for i in range(5_000)], True, id="many-objects"),
        pytest.param([{"k": i} for i in range(5_000)] + [{"k": 7.0}], False, id="1-equals-1.0"),
        pytest.param([1, True, 0, False, None, "1", [1], {"1": 1}], True, id="kinds-differ"),
        pytest.param([[1, {"a": [True]}], [1, {"a": [1]}]], True, id="nested-true-is-not-1"),
        pytest.param([i * (2**61 - 1) for i in range(20_000)], True, id="one-hash"),
    ],
)
def test_unique_items_follows_json_equality_without_comparing_every_pair(
    items: list[Any], unique: bool
) -> None:
    """``uniqueItems`` treats 1 and 1.0 as equal and true and 1 as different, at any depth, and
    sorts rather than comparing all pairs (or trusting hashes an adversary can make collide)."""
    result = checked(holding({"uniqueItems": True}), json.dumps({"v": items}))
    assert result.ready is unique


def test_unevaluated_keywords_keep_their_meaning_on_large_arguments() -> None:
    """``unevaluatedProperties`` and ``unevaluatedItems`` see what ``properties``,
    ``patternProperties``, ``items`` and applicators evaluated, on a couple of thousand members."""
    properties = {
        "type": "object",
        "patternProperties": {"^p": {}},
        "allOf": [{"properties": {"a": {}}}],
        "unevaluatedProperties": False,
    }
    members = {f"p{i}": i for i in range(2_000)}
    assert checked(properties, json.dumps({**members, "a": 1})).ready
    extra = checked(properties, json.dumps({**members, "b": 1}))
    assert extra.detail == "at $: Unevaluated properties are not allowed ('b' was unexpected)"
    items = holding(
        {"prefixItems": [{}], "contains": {"type": "string"}, "unevaluatedItems": False}
    )
    assert checked(items, json.dumps({"v": [0] + ["s"] * 2_000})).ready
    assert checked(items, json.dumps({"v": [0, "s", 2]})).reason is Reason.SCHEMA_VIOLATION


def test_a_schema_whose_work_multiplies_is_rejected_too_large() -> None:
    """Applicators that re-evaluate the same data (here 2**depth times) run out of a budget
    proportional to the arguments' size: the call is rejected ``too_large``, not checked for
    hours; the same schema on shallow data is checked as usual."""
    tree = {"type": "array", "items": {"$ref": "#/$defs/tree"}}
    schema = {
        "$defs": {"tree": {"anyOf": [{**tree, "minItems": 2}, tree]}},
        "type": "object",
        "properties": {"v": {"$ref": "#/$defs/tree"}},
    }
    deep = checked(schema, '{"v": ' + "[" * 40 + "]" * 40 + "}")
    assert deep.reason is Reason.TOO_LARGE
    assert (deep.detail or "").startswith("at $: not validated: the schema took more than")
    assert checked(schema, '{"v": [[], [[]]]}').ready
    assert checked(schema, '{"v": [1]}').reason is Reason.SCHEMA_VIOLATION


# -- remembered verdicts ------------------------------------------------------------------------


def test_a_remembered_verdict_belongs_to_its_schema_and_its_text() -> None:
    """The same argument text checked again gets the same verdict, and the same text under
    another schema of the same tool name gets that schema's own verdict."""
    text = '{"v": 3}'
    assert checked(holding({"type": "integer"}), text).ready
    assert checked(holding({"type": "integer"}), text).ready
    assert checked(holding({"type": "string"}), text).reason is Reason.SCHEMA_VIOLATION
    assert checked(holding({"type": "integer"}), '{"v": "3"}').reason is Reason.SCHEMA_VIOLATION
    assert checked(holding({"type": "integer"}), text).ready


def test_remembered_verdicts_stay_bounded() -> None:
    """However many distinct calls are checked, at most VERDICTS verdicts are kept, and none
    on a text longer than VERDICT_TEXT: memory stays flat."""
    schema = holding({"type": "string"})
    for number in range(_validate.VERDICTS + 50):
        assert checked(schema, json.dumps({"v": str(number)})).ready
    assert len(_validate._verdicts) == _validate.VERDICTS
    long_text = json.dumps({"v": "x" * _validate.VERDICT_TEXT})
    assert checked(schema, long_text).ready
    assert all(text != long_text for _, text in _validate._verdicts)


def test_a_schema_changed_in_place_is_read_afresh_by_the_next_assembler() -> None:
    """Compiled validators are shared by schema content, never by the object: a tool whose
    schema dict was changed since an assembler used it is checked against what it says now."""
    schema = holding({"type": "integer"})
    tool = Tool("t", schema)
    text = '{"v": "3"}'
    assert complete(text, name="t", tools=[tool]).reason is Reason.SCHEMA_VIOLATION
    schema["properties"]["v"] = {"type": "string"}
    assert complete(text, name="t", tools=[tool]).ready
    schema["required"] = ["w"]
    assert complete(text, name="t", tools=[tool]).reason is Reason.SCHEMA_VIOLATION


class _Name(str):
    """A str subclass, as a schema built by a library may hold."""


def test_a_schema_holding_subclasses_of_builtins_is_compiled_and_applied() -> None:
    """A schema whose strings are a subclass of str is read through its JSON as any other,
    every time."""
    schema = {"type": "object", "properties": {_Name("v"): {"type": _Name("integer")}}}
    for _ in range(2):
        assert checked(schema, '{"v": 3}').ready
        assert checked(schema, '{"v": "3"}').reason is Reason.SCHEMA_VIOLATION


def test_compiled_validators_shared_by_content_stay_bounded() -> None:
    """However many distinct schemas are given, at most _BY_CONTENT are kept by content."""
    for number in range(_validate._BY_CONTENT + 20):
        assert checked(holding({"type": "integer", "minimum": number}), '{"v": 100000}').ready
    assert len(_validate._by_content) == _validate._BY_CONTENT

"""Hostile tool schemas and arguments against the reference assembler (issue 11).

The promise is h11's: peer data never raises anything but a result, and it never takes time or
memory out of proportion to its size. Configuration may be refused, but only with a declared
error (ToolSchemaError) when the tool is given, and without I/O: a schema's ``$ref`` is never
fetched. ``CATALOGUE`` keeps each hostile input found so far as a named case; the property then
mixes the same ingredients in arbitrary chunkings.

Time is CPU time of this process (not wall time, which other processes share), against a bound
of ``SECONDS_BASE`` plus ``SECONDS_PER_BYTE`` per byte of input: generous for linear work, and
orders of magnitude short of what a backtracking pattern or a quadratic ``uniqueItems`` take on
the same input. Memory is the tracemalloc peak, against a bound proportional to the input.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callstream.reference import Assembler, CallResult, Status, Tool, ToolSchemaError
from tests.helpers import args, chunk, header, sse

SECONDS_BASE = 5.0
SECONDS_PER_BYTE = 20e-6
MEMORY_BASE = 32 << 20
MEMORY_PER_BYTE = 32

LONG = 20_000
"""Characters in a long string: enough for a backtracking pattern to run for ages."""


def holding(value_schema: dict[str, Any]) -> dict[str, Any]:
    """An object schema whose property ``v`` has ``value_schema``."""
    return {"type": "object", "properties": {"v": value_schema}}


def stream(arguments: str, finish: str | None = "tool_calls", cuts: int = 3) -> bytes:
    """One call to tool ``t`` whose arguments arrive in ``cuts`` fragments."""
    size = max(1, -(-len(arguments) // cuts))
    fragments = [arguments[i : i + size] for i in range(0, len(arguments), size)]
    events = [chunk(header(0, "call_1", "t"), role="assistant")]
    events += [chunk(args(0, fragment)) for fragment in fragments]
    if finish is not None:
        events.append(chunk(finish=finish))
    return sse(*events)


class IOAttempted(AssertionError):
    """The reference tried to read a file or open a connection while handling data."""


_WATCHING = False
_WATCHED_EVENTS = ("socket.", "urllib.", "http.", "ftplib.")


def _audit(event: str, arguments: tuple[Any, ...]) -> None:
    if not _WATCHING:
        return
    if event.startswith(_WATCHED_EVENTS) or (
        event == "open" and isinstance(arguments[0], str) and arguments[0].startswith("/dev/")
    ):
        raise IOAttempted(f"{event}{arguments[:2]!r}")


sys.addaudithook(_audit)  # audit hooks cannot be removed; this one acts only while watching


@dataclass
class Outcome:
    """What one hostile input came to."""

    refused: ToolSchemaError | None
    results: list[CallResult]
    seconds: float
    peak: int


def run(schema: dict[str, Any] | None, data: bytes, pieces: list[int] | None = None) -> Outcome:
    """Give the tool, feed ``data`` (cut at ``pieces``) and close, watching for I/O, CPU time
    and memory; assert the input's bounds."""
    global _WATCHING
    cuts = sorted({0, len(data), *(cut % (len(data) + 1) for cut in pieces or [])})
    tracemalloc.start()
    started = time.process_time()
    _WATCHING = True
    try:
        try:
            assembler = Assembler([Tool("t", schema)])
        except ToolSchemaError as exc:
            refused, results = exc, []
        else:
            refused, results = None, []
            for start, end in itertools.pairwise(cuts):
                results += assembler.feed(data[start:end])
            results += assembler.close()
    finally:
        _WATCHING = False
        seconds = time.process_time() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    outcome = Outcome(refused, results, seconds, peak)
    size = len(data) + len(json.dumps(schema))
    assert seconds <= SECONDS_BASE + SECONDS_PER_BYTE * size, outcome.seconds
    assert peak <= MEMORY_BASE + MEMORY_PER_BYTE * size, outcome.peak
    for result in results:
        assert result.status in (Status.READY, Status.REJECTED)
        assert result.ready or result.reason is not None
        repr(result)  # printing a result never fails, whatever its arguments hold
    return outcome


# -- the catalogue ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Hostile:
    """One hostile input and what must come of it."""

    schema: dict[str, Any] | None
    data: bytes
    expect: str
    """``refused`` (ToolSchemaError when the tool is given), ``ready``, or a rejection reason."""


def _hostile() -> Iterator[Any]:
    def case(name: str, schema: Any, arguments: str, expect: str, **options: Any) -> Any:
        return pytest.param(Hostile(schema, stream(arguments, **options), expect), id=name)

    anything = {"type": "object"}
    long_a = json.dumps({"v": "a" * LONG + "!"})
    for name, ref in [
        ("ref-http", "http://127.0.0.1:9/schema.json"),
        ("ref-https", "https://127.0.0.1:9/schema.json#/$defs/a"),
        ("ref-file", "file:///dev/zero"),
        ("ref-relative-file", "../../../../dev/zero"),
        ("ref-dangling", "#/$defs/nothing"),
        ("dynamic-ref-http", None),
    ]:
        keyword = {"$dynamicRef": "http://127.0.0.1:9/x#node"} if ref is None else {"$ref": ref}
        yield case(name, holding(keyword), '{"v": 1}', "refused")
    for name, pattern in [
        ("pattern-lookahead", "^(?=a)a+$"),
        ("pattern-backreference", r"^(a)\1$"),
        ("pattern-huge-repetition", "^(a{1000}){1000}$"),
    ]:
        yield case(name, holding({"pattern": pattern}), '{"v": "a"}', "refused")
    yield case("schema-nested-deeply", _nested_schema(300), "{}", "refused")
    for name, pattern in [
        ("pattern-nested-plus", "^(a+)+$"),
        ("pattern-alternation", "^(a|aa)+$"),
        ("pattern-overlapping", "^(a|a?)+$"),
        ("pattern-star-star", "^(a*)*$"),
        ("pattern-email-like", r"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+$"),
    ]:
        yield case(name, holding({"pattern": pattern}), long_a, "schema_violation")
        yield case(
            name.replace("pattern", "key"),
            {"patternProperties": {pattern: {}}, "additionalProperties": False},
            json.dumps({"a" * LONG + "!": 1}),
            "schema_violation",
        )
    yield case(
        "key-unevaluated-properties",
        {"patternProperties": {"^(a+)+$": {}}, "unevaluatedProperties": False},
        json.dumps({"a" * LONG + "!": 1}),
        "schema_violation",
    )
    for digits in (4_301, 100_000):
        number = "9" * digits
        yield case(
            f"int-{digits}-digits", holding({"type": "integer"}), f'{{"v": {number}}}', "ready"
        )
        yield case(
            f"int-{digits}-digits-below-minimum",
            holding({"minimum": 0}),
            f'{{"v": -{number}}}',
            "schema_violation",
        )
        yield case(
            f"int-{digits}-digits-multiple-of-a-float",
            holding({"multipleOf": 0.25}),
            f'{{"v": {number}}}',
            "ready",
        )
        yield case(f"int-{digits}-digits-no-schema", anything, f'{{"v": [{number}]}}', "ready")
    yield case(
        "int-object-repeated-twice",
        anything,
        ('{"v": ' + "9" * 5_000 + "}") * 2,
        "malformed_json",
    )
    for name, number in [("float-1e400", "1e400"), ("float-minus-1e400", "-1e400")]:
        yield case(name, holding({"multipleOf": 0.1}), f'{{"v": {number}}}', "schema_violation")
        yield case(name + "-number", holding({"type": "number"}), f'{{"v": {number}}}', "ready")
    yield case("float-1e-400", holding({"multipleOf": 3}), '{"v": 1e-400}', "ready")
    yield case(
        "float-many-digits",
        holding({"multipleOf": 0.001}),
        '{"v": 0.' + "3" * 50_000 + "}",
        "schema_violation",
    )
    yield case(
        "multiple-of-tiny", holding({"multipleOf": 1e-300}), '{"v": 1e300}', "schema_violation"
    )
    for count in (5_000,):
        objects = [{"k": i, "s": str(i)} for i in range(count)]
        yield case(
            f"unique-{count}-objects",
            holding({"uniqueItems": True}),
            json.dumps({"v": objects}),
            "ready",
        )
        yield case(
            f"unique-{count}-objects-one-repeat",
            holding({"uniqueItems": True}),
            json.dumps({"v": [*objects, {"s": "7", "k": 7.0}]}),
            "schema_violation",
        )
        yield case(
            f"unique-{count}-ints-one-hash",
            holding({"uniqueItems": True}),
            json.dumps({"v": [i * (2**61 - 1) for i in range(count)]}),
            "ready",
        )
        yield case(
            f"unevaluated-items-{count}",
            holding({"prefixItems": [{}], "items": {}, "unevaluatedItems": False}),
            json.dumps({"v": list(range(count))}),
            "ready",
        )
        yield case(
            f"unevaluated-properties-{count}",
            holding({"additionalProperties": {}, "unevaluatedProperties": False}),
            json.dumps({"v": {str(i): i for i in range(count)}}),
            "ready",
        )
    tree = {"type": "array", "items": {"$ref": "#/$defs/tree"}}
    doubling = {
        "$defs": {"tree": {"anyOf": [{**tree, "minItems": 2}, tree]}},
        "type": "object",
        "properties": {"v": {"$ref": "#/$defs/tree"}},
    }
    yield case(
        "anyof-doubling-per-level", doubling, '{"v": ' + "[" * 60 + "]" * 60 + "}", "too_large"
    )
    self_ref = {"$defs": {"x": {"$ref": "#/$defs/x"}}, **holding({"$ref": "#/$defs/x"})}
    yield case("ref-to-itself", self_ref, '{"v": 1}', "schema_violation")
    recursive = {"$defs": {"x": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/x"}}]}}}
    yield case(
        "deep-value-huge-string",
        recursive | holding({"$ref": "#/$defs/x"}),
        '{"v": ' + "[" * 150 + json.dumps("x" * 500_000) + "]" * 150 + "}",
        "schema_violation",
    )
    yield case(
        "nesting-100000", anything, '{"v": ' + "[" * 100_000 + "]" * 100_000 + "}", "malformed_json"
    )
    yield case(
        "nesting-100000-unclosed",
        anything,
        '{"v": ' + "[" * 100_000,
        "malformed_json",
    )
    for name, text in [
        ("string-lone-surrogate", '{"v": "\\ud800"}'),
        ("string-inverted-surrogates", '{"v": "\\udc00\\ud800"}'),
        ("string-escaped-nul", '{"v": "a\\u0000b"}'),
    ]:
        yield case(name, holding({"pattern": "^[^x]+$"}), text, "ready")
    yield case("string-raw-nul", anything, '{"v": "a\x00b"}', "malformed_json")
    yield case(
        "key-lone-surrogate",
        {"propertyNames": {"pattern": "^a"}},
        '{"\\ud800": 1}',
        "schema_violation",
    )
    yield case("length-cut", holding({"pattern": "^(a+)+$"}), long_a, "truncated", finish="length")
    yield case("no-finish", holding({"pattern": "^(a+)+$"}), long_a, "unfinished", finish=None)
    yield case("nesting-5000-cut", anything, '{"v": ' + "[" * 5_000 + "1", "malformed_json")


def _nested_schema(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    for _ in range(depth):
        schema = {"items": schema}
    return schema


CATALOGUE = list(_hostile())
INVALID_UTF8 = [
    pytest.param(b"\xff", id="byte-ff"),
    pytest.param(b"\xc0\xaf", id="overlong-slash"),
    pytest.param(b"\xed\xa0\x80", id="encoded-surrogate"),
    pytest.param(b"\xf4\x90\x80\x80", id="past-u10ffff"),
    pytest.param(b"\x00", id="raw-nul"),
]


@pytest.mark.parametrize("hostile", CATALOGUE)
def test_a_hostile_input_comes_to_a_result_or_a_declared_error_in_bounded_work(
    hostile: Hostile,
) -> None:
    """Each catalogued input is refused when the tool is given (a declared ToolSchemaError, no
    I/O) or becomes the expected result, within time and memory bounded by its size."""
    outcome = run(hostile.schema, hostile.data)
    if hostile.expect == "refused":
        assert outcome.refused is not None
        return
    assert outcome.refused is None
    (result,) = outcome.results
    assert (result.reason or "ready") == hostile.expect, result.detail


@pytest.mark.parametrize("bad", INVALID_UTF8)
def test_invalid_utf8_inside_the_arguments_is_a_result(bad: bytes) -> None:
    """Bytes that are not UTF-8 inside an argument string come to a result, however split."""
    data = stream('{"v": "abc"}').replace(b"abc", b"a" + bad + b"c", 1)
    for cut in range(0, len(data), 7):
        (result,) = run(holding({"pattern": "^a"}), data, [cut, cut + 1]).results
        assert result.status in (Status.READY, Status.REJECTED)


# -- the property ----------------------------------------------------------------------------

_PATTERNS = ["^(a+)+$", "^(a|aa)+$", "^(a*)*b$", "a", "^[^x]*$", r"^\d+$", "(?=a)", r"(a)\1"]


def _value_schemas() -> st.SearchStrategy[dict[str, Any]]:
    leaf = st.one_of(
        st.sampled_from(_PATTERNS).map(lambda pattern: {"pattern": pattern}),
        st.just({"uniqueItems": True}),
        st.sampled_from([0.1, 0.25, 3, 10**30, 1e-300]).map(lambda d: {"multipleOf": d}),
        st.sampled_from([{"type": "integer"}, {"type": "number"}, {"type": "string"}]),
        st.integers(-(10**20), 10**20).map(lambda n: {"minimum": n}),
        st.sampled_from(
            [
                {"$ref": "#/$defs/tree"},
                {"$ref": "http://127.0.0.1:9/x.json"},
                {"$ref": "file:///dev/zero"},
                {"$ref": "#/$defs/missing"},
            ]
        ),
        st.just({"items": {"$ref": "#/$defs/tree"}, "unevaluatedItems": False}),
        st.sampled_from(_PATTERNS).map(
            lambda pattern: {"patternProperties": {pattern: {}}, "unevaluatedProperties": False}
        ),
    )
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.lists(inner, min_size=1, max_size=3).map(lambda all_of: {"allOf": all_of}),
            st.lists(inner, min_size=1, max_size=3).map(lambda any_of: {"anyOf": any_of}),
            inner.map(lambda items: {"items": items}),
            inner.map(lambda each: {"additionalProperties": each}),
        ),
        max_leaves=6,
    )


def _schemas() -> st.SearchStrategy[dict[str, Any]]:
    tree = {"type": "array", "items": {"$ref": "#/$defs/tree"}}
    defs = {"tree": {"anyOf": [{**tree, "minItems": 2}, tree, {"type": "integer"}]}}
    return _value_schemas().map(lambda value: {"$defs": defs, **holding(value)})


def _values(long: int) -> st.SearchStrategy[str]:
    """JSON text of hostile values (as text: integers of any length have no int to dump)."""
    scalar = st.one_of(
        st.integers(1, 60_000).map(lambda digits: "-" * (digits % 2) + "9" * digits),
        st.sampled_from(["1e400", "-1e400", "1e-400", "0." + "3" * 20_000, "true", "null"]),
        st.integers(0, long).map(lambda n: json.dumps("a" * n + "!")),
        st.sampled_from(['"\\ud800"', '"\\udc00\\ud800"', '"a\\u0000b"', '"\\ud83d\\ude00"']),
        st.integers(0, 5_000).map(lambda n: "[" + ",".join(str(i % 97) for i in range(n)) + "]"),
        st.integers(0, 3_000).map(
            lambda n: json.dumps([{"k": i % 1_000} for i in range(n)], separators=(",", ":"))
        ),
        st.integers(0, 3_000).map(lambda depth: "[" * depth + "]" * depth),
    )
    return st.recursive(
        scalar,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3).map(lambda items: "[" + ",".join(items) + "]"),
            st.lists(
                st.tuples(st.sampled_from(["a", "aaaa!", "\\ud800", "k"]), inner), max_size=3
            ).map(lambda members: "{" + ",".join(f'"{k}":{v}' for k, v in members) + "}"),
        ),
        max_leaves=4,
    )


@st.composite
def _hostile_streams(draw: st.DrawFn) -> tuple[dict[str, Any], bytes, list[int]]:
    schema = draw(_schemas())
    arguments = '{"v": ' + draw(_values(long=draw(st.sampled_from([10, 2_000, LONG])))) + "}"
    if draw(st.booleans()):
        arguments = arguments[: draw(st.integers(0, len(arguments)))]  # cut anywhere
    finish = draw(st.sampled_from(["tool_calls", "tool_calls", "length", None]))
    data = stream(arguments, finish=finish, cuts=draw(st.integers(1, 40)))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(data)))
        data = (
            data[:at]
            + draw(st.sampled_from([b"\xff", b"\xed\xa0\x80", b"\x00", b"\r"]))
            + data[at:]
        )
    pieces = draw(st.lists(st.integers(0, len(data)), max_size=6))
    return schema, data, pieces


@settings(max_examples=40)
@given(_hostile_streams())
def test_hostile_schemas_and_arguments_in_any_chunking_give_results_in_bounded_work(
    case: tuple[dict[str, Any], bytes, list[int]],
) -> None:
    """Adversarial schemas (catastrophic patterns, remote and dangling refs, multiplying
    applicators, uniqueItems, multipleOf) meet adversarial arguments (integers of any length,
    floats past the double range, deep nesting, long strings, lone surrogates, NUL, invalid
    UTF-8, cut anywhere) fed in arbitrary pieces: a ToolSchemaError when the tool is given, or
    one final result per call, never an exception, within bounded time and memory."""
    schema, data, pieces = case
    outcome = run(schema, data, pieces)
    assert len(outcome.results) <= 1  # none when a bad byte broke the call's first event

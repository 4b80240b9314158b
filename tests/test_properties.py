"""Properties of the reference assembler over generated streams (Hypothesis).

1. Chunking never matters: any valid stream, cut anywhere, gives what it gives whole, and a
   stream that finishes with ``tool_calls`` gives back exactly the calls that were sent.
2. No byte string, random or a damaged valid stream, makes the assembler raise; every result
   is final (ready, or rejected with a known reason) and reported once.
3. No sequence of JSON values passed to ``feed_event`` makes it raise.

Each property is bounded so the whole file runs in well under 30 seconds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import chain, pairwise
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from callstream.reference import Assembler, CallResult, Reason, Status
from tests.helpers import TOOLS, args, assemble, chunk, header, simple_call, sse

# --- strategies -------------------------------------------------------------------------------

CHARACTERS = st.one_of(
    st.characters(codec="utf-8"),
    st.sampled_from(['"', "\\", "/", "\n", "\t", "\x00", "é", "中", "\u2028", "😀", "🎉"]),
)
TEXT = st.text(CHARACTERS, max_size=8)
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**18), max_value=10**18),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
ARGUMENTS = st.dictionaries(TEXT, JSON_SCALARS, max_size=4)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


@dataclass(frozen=True)
class SentCall:
    """A call as the provider meant it: what a correct assembler must give back."""

    id: str
    name: str
    text: str
    value: dict[str, Any]


@dataclass(frozen=True)
class GeneratedStream:
    """A valid stream and what it means."""

    calls: list[SentCall]
    finish: str | None
    done: bool
    data: bytes


def spans(size: int, points: list[int]) -> list[tuple[int, int]]:
    """The non-empty spans of ``range(size)`` cut at ``points`` (taken modulo ``size``)."""
    bounds = [0, *sorted({p % size for p in points if size}), size]
    return [(a, b) for a, b in pairwise(bounds) if b > a]


def cut(text: str, points: list[int], utf16: bool) -> list[str]:
    """``text`` cut at ``points``, counted in code points or, like a JavaScript server, in
    UTF-16 code units (so a cut may fall between the halves of a surrogate pair)."""
    if utf16:
        units = text.encode("utf-16-le")
        return [
            units[2 * a : 2 * b].decode("utf-16-le", "surrogatepass")
            for a, b in spans(len(units) // 2, points)
        ]
    return [text[a:b] for a, b in spans(len(text), points)]


def inside_surrogate_pairs(text: str) -> list[int]:
    """The UTF-16 positions of ``text`` that fall between the halves of a surrogate pair."""
    positions, unit = [], 0
    for char in text:
        unit += 1
        if ord(char) > 0xFFFF:
            positions.append(unit)
            unit += 1
    return positions


@st.composite
def streams(draw: st.DrawFn) -> GeneratedStream:
    """A valid OpenAI chat stream of 1–3 calls, fragmented (maybe inside surrogate pairs), maybe
    interleaved, maybe repeating the call header on every delta, several deltas per chunk."""
    calls = []
    deltas: list[list[dict[str, Any]]] = []
    for index, value in enumerate(draw(st.lists(ARGUMENTS, min_size=1, max_size=3))):
        text = json.dumps(
            value, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1]))
        )
        call = SentCall(
            f"call_{index}", draw(st.sampled_from(["get_weather", "lookup"])), text, value
        )
        calls.append(call)
        points = draw(st.lists(st.integers(min_value=0, max_value=10_000), max_size=6))
        utf16 = draw(st.booleans())
        if utf16 and draw(st.booleans()):
            points += inside_surrogate_pairs(text)
        fragments = cut(text, points, utf16)
        if any(_HIGH <= fragment[-1:] <= _LOW_END for fragment in fragments[:-1]):
            event("a fragment ends between the halves of a surrogate pair")
        in_header = fragments.pop(0) if draw(st.booleans()) else ""
        repeats_header = draw(st.booleans())  # id, type and name on every delta (C4, C5)
        deltas.append(
            [header(index, call.id, call.name, in_header)]
            + [
                header(index, call.id, call.name, f) if repeats_header else args(index, f)
                for f in fragments
            ]
        )
    order = interleaving(draw, deltas) if draw(st.booleans()) else list(chain.from_iterable(deltas))
    payloads: list[dict[str, Any]] = []
    while order:
        size = draw(st.integers(min_value=1, max_value=3))
        payloads.append(chunk(*order[:size], role="assistant" if not payloads else None))
        order = order[size:]
    finish = draw(st.sampled_from(["tool_calls", "length", None]))
    if finish is not None:
        if draw(st.booleans()):
            payloads[-1]["choices"][0]["finish_reason"] = finish
        else:
            payloads.append(chunk(finish=finish))
    ascii_wire = draw(st.booleans()) or not _encodable(json.dumps(payloads, ensure_ascii=False))
    done = draw(st.booleans())
    event(f"{len(calls)} call(s), finish {finish}, {'[DONE]' if done else 'EOF'}")
    data = sse(*(json.dumps(p, ensure_ascii=ascii_wire) for p in payloads), done=done)
    return GeneratedStream(calls, finish, done, data)


def interleaving(draw: st.DrawFn, deltas: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """A random merge of each call's deltas, keeping each call's own order and opening the
    calls in index order (so positions by first appearance are the wire indices)."""
    queues = [list(call) for call in deltas]
    opened = 0
    merged = []
    while any(queues):
        candidates = [i for i in range(opened) if queues[i]]
        if opened < len(queues):
            candidates.append(opened)
        pick = draw(st.sampled_from(candidates))
        opened = max(opened, pick + 1)
        merged.append(queues[pick].pop(0))
    return merged


_HIGH, _LOW_END = "\ud800", "\udbff"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def pieces_of(data: bytes, points: list[int]) -> list[bytes]:
    """``data`` cut at ``points`` (taken modulo its length)."""
    return [data[a:b] for a, b in spans(len(data), points)]


CUTS = st.lists(st.integers(min_value=0, max_value=100_000), max_size=12)

# --- 1. chunking never matters ----------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(streams(), CUTS)
def test_any_split_gives_what_the_whole_stream_gives(
    stream: GeneratedStream, cuts: list[int]
) -> None:
    """A2, A5, T1, C1–C3: cutting the bytes anywhere changes nothing, and the calls come back
    exactly as sent: ready with their exact text for ``tool_calls``, else rejected."""
    whole = assemble([stream.data], tools=None)
    assert assemble(pieces_of(stream.data, cuts), tools=None) == whole
    results, _ = whole
    assert [(r.index, r.id, r.name) for r in results] == [
        (index, call.id, call.name) for index, call in enumerate(stream.calls)
    ]
    if stream.finish == "tool_calls":
        for result, call in zip(results, stream.calls, strict=True):
            assert result.ready, result
            assert result.arguments_text == call.text
            assert result.arguments == call.value
    else:
        expected = {
            "length": Reason.TRUNCATED,
            None: Reason.UNFINISHED if stream.done else Reason.INTERRUPTED,
        }[stream.finish]
        assert {result.reason for result in results} == {expected}


# --- 2. bytes never make it raise -------------------------------------------------------------

SEEDS = [
    sse(*simple_call()),
    sse(
        chunk(header(0, "call_w", "get_weather"), role="assistant"),
        chunk(header(1, "call_s", "get_stock_price")),
        chunk(args(0, '{"city": "Z\\u00fc')),
        chunk(args(1, '{"ticker": "ACME"}')),
        chunk(args(0, 'rich 😀"}')),
        chunk(finish="tool_calls"),
    ),
    sse(*simple_call(finish=None), {"error": {"message": "boom", "code": 500}}, done=False),
    b'\xef\xbb\xbfevent: error\r\ndata: {"message": "x"}\r\n\r\n: ping\rdata: [DONE]\r\r',
]


@st.composite
def damaged_streams(draw: st.DrawFn) -> bytes:
    """A valid stream with bytes flipped, deleted and duplicated."""
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        at = draw(st.integers(min_value=0, max_value=len(data) - 1)) if data else 0
        span = draw(st.integers(min_value=1, max_value=12))
        kind = draw(st.sampled_from(["flip", "delete", "duplicate"]))
        if kind == "flip" and data:
            data[at] = draw(st.integers(min_value=0, max_value=255))
        elif kind == "delete":
            del data[at : at + span]
        else:
            data[at:at] = data[at : at + span]
    return bytes(data)


def returned_list(returned: object) -> list[CallResult]:
    """``returned``, checked to be a list as the contract says."""
    assert isinstance(returned, list), returned
    return returned


def check_results(results: list[CallResult]) -> None:
    """Every result is final and consistent, and no call is reported twice."""
    for result in results:
        assert isinstance(result, CallResult)
        if result.status is Status.READY:
            assert result.reason is None
            assert isinstance(result.arguments, dict)
        else:
            assert result.status is Status.REJECTED
            assert isinstance(result.reason, Reason)
    positions = [(result.choice, result.index) for result in results]
    assert len(positions) == len(set(positions)), positions


@settings(max_examples=600, deadline=None)
@given(
    st.one_of(st.binary(max_size=400), damaged_streams()),
    CUTS,
    st.sampled_from(["lenient", "strict"]),
)
def test_no_bytes_make_the_assembler_raise(data: bytes, cuts: list[int], profile: str) -> None:
    """T1–T4, V6: random or damaged bytes, fed in random pieces, never raise: ``feed``,
    ``preview`` and ``close`` return final results with known reasons, each call once."""
    asm = Assembler(TOOLS, profile=profile)  # type: ignore[arg-type]
    results: list[CallResult] = []
    for piece in pieces_of(data, cuts):
        results += returned_list(asm.feed(piece))
        asm.preview()
    results += returned_list(asm.close())
    check_results(results)


# --- 3. decoded events never make it raise ----------------------------------------------------

TOOL_CALL_DELTAS = st.fixed_dictionaries(
    {},
    optional={
        "index": st.integers(min_value=-1, max_value=3) | JSON_VALUES,
        "id": st.sampled_from(["call_1", "call_2", ""]) | JSON_VALUES,
        "type": st.just("function") | JSON_VALUES,
        "function": st.fixed_dictionaries(
            {},
            optional={
                "name": st.sampled_from(["get_weather", "get_time", ""]) | JSON_VALUES,
                "arguments": st.sampled_from(['{"city": ', '"Paris"}', "{}", ""]) | JSON_VALUES,
            },
        )
        | JSON_VALUES,
    },
)
CHUNKS = st.fixed_dictionaries(
    {},
    optional={
        "id": st.just("chatcmpl-1") | JSON_VALUES,
        "object": st.sampled_from(["chat.completion.chunk", "error"]) | JSON_VALUES,
        "error": JSON_VALUES,
        "usage": JSON_VALUES,
        "choices": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "index": st.integers(min_value=0, max_value=2) | JSON_VALUES,
                    "delta": st.fixed_dictionaries(
                        {},
                        optional={
                            "role": st.just("assistant") | JSON_VALUES,
                            "content": JSON_VALUES,
                            "tool_calls": st.lists(TOOL_CALL_DELTAS, max_size=3) | JSON_VALUES,
                            "function_call": JSON_VALUES,
                        },
                    )
                    | JSON_VALUES,
                    "finish_reason": st.sampled_from(
                        [None, "tool_calls", "stop", "length", "error", "x"]
                    )
                    | JSON_VALUES,
                },
            )
            | JSON_VALUES,
            max_size=2,
        )
        | JSON_VALUES,
    },
)
EVENTS = st.tuples(
    st.one_of(CHUNKS, JSON_VALUES, st.just("[DONE]")),
    st.sampled_from(["message", "message", "message", "error"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(EVENTS, max_size=8), st.sampled_from(["lenient", "strict"]))
def test_no_json_values_make_feed_event_raise(events: list[tuple[Any, str]], profile: str) -> None:
    """V6: any sequence of JSON values (chunk-shaped or not, with any field of any type) passed
    to ``feed_event`` never raises, and every result is final and reported once."""
    asm = Assembler(TOOLS, profile=profile)  # type: ignore[arg-type]
    results: list[CallResult] = []
    for payload, kind in events:
        results += returned_list(asm.feed_event(payload, event=kind))
        asm.preview()
    results += returned_list(asm.close())
    check_results(results)


# --- regressions the random search is unlikely to reach ---------------------------------------


def test_a_deeply_nested_chunk_does_not_raise() -> None:
    """V6: a chunk nested deeper than the JSON parser's recursion limit is a broken stream
    (rejected), not a ``RecursionError`` escaping ``feed``."""
    asm = Assembler(TOOLS)
    results = asm.feed(sse(*simple_call(finish=None), done=False))
    results += asm.feed(b"data: " + b"[" * 100_000 + b"\n\n")
    results += asm.close()
    check_results(results)
    assert [result.reason for result in results] == [Reason.PROTOCOL_ERROR]


def test_deeply_nested_arguments_do_not_raise() -> None:
    """V1, V6: argument text nested deeper than the parser's recursion limit is rejected as
    malformed (or too large), never raised from ``preview``, ``feed`` or ``close``."""
    asm = Assembler(TOOLS)
    results: list[CallResult] = []
    for payload in simple_call(arguments='{"city": ' + "[" * 100_000, finish=None):
        results += asm.feed_event(payload)
        asm.preview()
    results += asm.feed_event(chunk(finish="tool_calls"))
    results += asm.close()
    check_results(results)
    assert [result.ready for result in results] == [False]


def test_a_tool_call_index_in_non_ascii_digits_does_not_raise() -> None:
    """V6: an index string like ``"²"`` (a digit to ``str.isdigit`` but not to ``int``) is a
    broken chunk, never a ``ValueError`` escaping ``feed``."""
    asm = Assembler(TOOLS)
    delta = header(0, "call_1", "get_weather", '{"city": "Paris"}')
    delta["index"] = "²"
    results = asm.feed(sse(chunk(delta, finish="tool_calls")))
    results += asm.close()
    check_results(results)
    assert not any(result.ready for result in results)

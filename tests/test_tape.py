"""The generators' knobs read from bytes (``callstream.strategies._tape``): a stream is drawn from
a handful of Hypothesis choices, zero bytes read as the ordinary value of every knob, and what a
tape reads is what the strategy it stands for draws."""

from __future__ import annotations

import json
import math
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from callstream import strategies
from callstream.core.spec import Transport
from callstream.reference import Limits
from callstream.strategies._arguments import _FLOATS, _INTEGERS, _any_objects, json_scalars
from callstream.strategies._json_text import SURROGATE, strings
from callstream.strategies._knobs import COIN, between, knobs, one_in, rarely, sampled, sometimes
from callstream.strategies._schemas import _TOOL_NAMES, KEYS
from callstream.strategies._tape import CHUNK, Tape
from tests.test_strategies import FIND

pytestmark = pytest.mark.usefixtures("stable_constants")

DIALECTS = ("openai-chat", "anthropic-messages", "openai-responses")


def zeros(strategy: st.SearchStrategy[Any]) -> bytes:
    """A draw function that has only zero bytes to give (a tape's chunks, all zero)."""
    return bytes(4096)


def seeded(seed: int) -> Tape:
    """A tape over random bytes (what Hypothesis draws for a tape, but for the shrinking)."""
    rng = random.Random(seed)
    return Tape(lambda strategy: rng.randbytes(4096))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_stream_is_drawn_from_a_few_chunks_of_bytes(dialect: str) -> None:
    """Every knob of a stream comes from a tape: Hypothesis makes a bytes choice for the
    stream's knobs and one for each call's (a few more where a unit reads past its first
    chunk), and no other choice, whatever the stream holds. A strategy a tape cannot read, drawn
    per knob, would cost a choice each (about twenty microseconds, whatever the value)."""
    seen: list[tuple[int, int]] = []

    @given(data=st.data())
    @settings(
        max_examples=150,
        derandomize=True,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    def draw(data: st.DataObject) -> None:
        spec = data.draw(strategies.stream_specs(dialect=dialect))
        choices = data.conjecture_data.choices
        assert all(isinstance(choice, bytes) for choice in choices), choices
        calls = len({plan.id for plan in spec.calls}) if len(spec.calls) > 3 else len(spec.calls)
        seen.append((len(choices), calls))

    draw()
    # First chunks fit what most units read (``_tape.STREAM_BYTES``...): a stream takes about
    # four choices; one with long strings a few chunks more, never a dozen.
    assert max(count - calls for count, calls in seen) <= 12, seen
    assert sum(count for count, _ in seen) / len(seen) <= 5.0


def test_zero_bytes_read_as_the_ordinary_value_of_every_knob() -> None:
    """What the shrinker leaves (zero bytes) reads as the value each strategy shrinks to: the
    first of a table, the integer nearest zero, False, no text, ``0.0``."""
    tape = Tape(zeros)
    assert tape(between(-100, 0)) == 0
    assert tape(between(5, 9)) == 5
    assert tape(between(-(2**53), 2**53)) == 0
    assert tape(between(10, 2**40)) == 10
    assert tape(rarely(30)) is False
    assert tape(COIN) is False
    assert tape(sampled(("first", "second"))) == "first"
    assert tape(sometimes("ordinary", ("odd",), 40)) == "ordinary"
    assert tape(strings()) == ""
    assert tape(strings(min_size=2)) == "00"
    assert tape(_FLOATS) == 0.0
    assert tape(_INTEGERS) == 0
    assert tape(json_scalars(False)) is None
    assert tape(_any_objects(False)) == {}
    assert tape(KEYS) == "a"
    assert tape(_TOOL_NAMES) == "get_weather"
    assert knobs(one_in("plain", ("odd", "odder"), 50), ((False, 3), (True, 1))).draw(tape) == (
        "plain",
        False,
    )


def test_the_simplest_stream_is_the_ordinary_stream() -> None:
    """The stream Hypothesis shrinks to (every tape zero bytes): one call, sent sequentially in
    one fragment, finished ``tool_calls`` with ``[DONE]``, plain LF framing, no oddity, no
    limit."""
    spec = find(
        strategies.stream_specs(), lambda spec: True, settings=settings(FIND, max_examples=50)
    )
    assert len(spec.calls) == 1
    assert spec.calls[0].fragments == (spec.calls[0].arguments,)
    assert spec.schedule == "sequential"
    assert spec.oddity is None
    assert spec.ending.finish == "tool_calls"
    assert spec.ending.done
    assert not spec.ending.cut
    assert spec.transport == Transport()
    assert spec.limits == Limits()


_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")


@pytest.mark.parametrize("seed", range(300))
def test_a_tape_reads_only_what_the_strategy_draws(seed: int) -> None:
    """Random bytes read as values the strategy itself could draw: integers within their
    bounds, finite floats, text within its length and alphabet (no lone surrogate unless asked
    for, and never one a JSON value could not carry as an escape), JSON values that are JSON,
    tool names within OpenAI's rule."""
    tape = seeded(seed)
    assert -100 <= tape(between(-100, 0)) <= 0
    assert 10 <= tape(between(10, 2**40)) <= 2**40
    assert -(2**53) <= tape(_INTEGERS) <= 2**53
    assert math.isfinite(tape(_FLOATS))
    text = tape(strings(min_size=1, max_size=4))
    assert 1 <= len(text) <= 4
    assert not SURROGATE.search(text)
    text.encode("utf-8")
    lone = tape(strings(max_size=10, lone_surrogates=True))
    assert len(lone) <= 10
    assert not re.search("[\ud800-\udbff][\udc00-\udfff]", lone)  # never a pair in disguise
    value = tape(_any_objects(False))
    assert isinstance(value, dict)
    assert json.loads(json.dumps(value)) == value
    assert _NAME.match(tape(_TOOL_NAMES))
    key = tape(KEYS)
    assert isinstance(key, str)
    assert 1 <= len(key) <= 10


def test_knobs_on_a_tape_take_the_same_bytes_whatever_they_read() -> None:
    """A table of knobs takes as many bytes from a tape whatever it reads, so that a byte the
    shrinker lowers changes its own knob and leaves the next knob's bytes where they were."""
    table = knobs(
        one_in("plain", ("a", "b", "c"), 5),
        ((False, 97), (True, 3)),
        ((False, 99), (True, 1)),
    )
    for seed in range(200):
        tape = seeded(seed)
        table.draw(tape)
        after = tape.byte()
        again = seeded(seed)
        for _ in range(table.width):
            again.byte()
        assert again.byte() == after


def test_a_unit_reads_past_its_first_chunk_from_chunks_of_its_own() -> None:
    """A tape whose first chunk is used up draws another, so a long unit reads on (rather than
    reading zeros), and the read goes on where the last chunk ended."""
    handed: list[int] = []

    def draw(strategy: st.SearchStrategy[Any]) -> bytes:
        chunk = bytes(range(8)) if not handed else bytes(range(10, 10 + CHUNK))
        handed.append(len(chunk))
        return chunk

    tape = Tape(draw, 8)
    read = [tape.byte() for _ in range(12)]
    assert read == [*range(8), *range(10, 14)]
    assert handed == [8, CHUNK]


def test_a_draw_bytes_of_another_signature_falls_back_to_a_strategy() -> None:
    """Where the draw function's ConjectureData draws bytes another way (an older Hypothesis:
    ``draw_bytes(n)``), the tape draws its chunks as a strategy instead, and reads the same."""
    drawn: list[st.SearchStrategy[Any]] = []

    class OldData:
        def draw_bytes(self, n: int, forced: bytes | None = None) -> bytes:
            raise AssertionError("never called with a size alone")

        def draw(self, strategy: st.SearchStrategy[Any]) -> bytes:
            drawn.append(strategy)
            return bytes(range(1, 9))

    tape = Tape(OldData().draw, 8)
    assert [tape.byte() for _ in range(3)] == [1, 2, 3]
    assert len(drawn) == 1

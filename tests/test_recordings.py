"""The shipped recordings, typed out from real captures, assemble to the right calls and findings
whole, one byte at a time and at every two-way split."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from callstream import load_tools
from callstream.reference import Reason, Status
from tests.helpers import assemble_every_way, quirks

RECORDINGS = Path(__file__).parent.parent / "scenarios" / "recordings" / "openai-chat"
TOOLS = load_tools(RECORDINGS / "tools.json")

SYNTHESISED = "<synthesised>"
"""Stands for an id the assembler made up: its value is unique per response, not fixed."""

# name -> (expected calls as (index, id, name, status, reason, arguments), expected quirk ids)
EXPECTED: dict[str, tuple[list[tuple[Any, ...]], set[str]]] = {
    "openai-parallel-calls": (
        [
            (
                0,
                "call_JMW1whyEaYG438VE1OIflxA2",
                "GetWeatherArgs",
                Status.READY,
                None,
                {"city": "Edinburgh", "country": "UK", "units": "c"},
            ),
            (
                1,
                "call_DNYTawLBoN8fj3KN6qU9N1Ou",
                "get_stock_price",
                Status.READY,
                None,
                {"ticker": "AAPL", "exchange": "NASDAQ"},
            ),
        ],
        set(),
    ),
    "mistral-whole-arguments": (
        [
            (
                0,
                "yBvJuId6u",
                "search",
                Status.READY,
                None,
                {"query": "Detroit Tigers game time today"},
            ),
            (1, "ihQrVBDfy", "weather", Status.READY, None, {"city": "Detroit"}),
        ],
        {"openai-chat/C23"},
    ),
    "gemini-compat-no-index": (
        [
            (
                0,
                SYNTHESISED,
                "set_in_user_memory",
                Status.READY,
                None,
                {"argument_1": "favourite colour", "argument_2": "False", "argument_3": "teal"},
            )
        ],
        {
            "openai-chat/C1",
            "openai-chat/C7",
            "openai-chat/C16",
            "openai-chat/C21",
            "openai-chat/C23",
        },
    ),
    "openrouter-comments-usage-after-finish": (
        [(0, "call_Qm2pX8vKc3LbT9nHd4Rf", "get_current_time", Status.READY, None, {})],
        {"openai-chat/C4", "openai-chat/C20", "openai-chat/C23", "openai-chat/C29"},
    ),
    "openai-in-band-error": (
        [
            (
                0,
                "call_8sTq3vWnYc1pLrXk2ZdM5aJf",
                "read_github_file",
                Status.REJECTED,
                Reason.STREAM_ERROR,
                None,
            )
        ],
        set(),
    ),
    "litellm-repeated-id": (
        [
            (
                0,
                "toolu_01HxV9qK3mZpT7wLc2NbRy5E",
                "get_weather",
                Status.READY,
                None,
                {"city": "Paris", "units": "c"},
            )
        ],
        {"openai-chat/C4"},
    ),
    "vllm-length-mid-arguments": (
        [
            (
                0,
                "chatcmpl-tool-4c8e0d1a9f2b4e7c8a1d3f5b6e7c9d0a",
                "write_file",
                Status.REJECTED,
                Reason.TRUNCATED,
                None,
            )
        ],
        {"openai-chat/C23"},
    ),
}


def test_every_recording_has_an_expectation() -> None:
    """No recording ships without a test saying what it must assemble to."""
    assert {path.stem for path in RECORDINGS.glob("*.sse")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recording_assembles_the_same_however_it_is_split(name: str) -> None:
    """Each recording gives its calls and findings, whatever the transport chunking."""
    calls, expected_quirks = EXPECTED[name]
    results, findings = assemble_every_way((RECORDINGS / f"{name}.sse").read_bytes(), TOOLS)
    got = [
        (r.index, SYNTHESISED if r.synthetic_id else r.id, r.name, r.status, r.reason, r.arguments)
        for r in results
    ]
    assert got == calls
    assert quirks(findings) == expected_quirks


def test_in_band_error_keeps_the_provider_message_and_the_raw_text() -> None:
    """A call cut off by an error payload says what the provider said and keeps what arrived."""
    results, _ = assemble_every_way((RECORDINGS / "openai-in-band-error.sse").read_bytes(), TOOLS)
    (result,) = results
    assert result.detail is not None
    assert "The server had an error while processing your request" in result.detail
    assert result.arguments_text == '{"repo":"coder/aibridge","path":"'


def test_truncated_recording_keeps_the_partial_arguments() -> None:
    """A call cut by finish_reason length keeps its text for the log and never parses."""
    results, _ = assemble_every_way(
        (RECORDINGS / "vllm-length-mid-arguments.sse").read_bytes(), TOOLS
    )
    (result,) = results
    assert result.arguments is None
    assert result.arguments_text.endswith("2. Draft the ")

"""The route checks as a table: every row of a certificate has a check of an answer behind it,
and each check files its findings only under the rows it declares, whatever the stream."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from callstream.certification import ROUTE_CHECKS, load_probes
from callstream.certification.route_checks import (
    NONSTREAM_CHECKS,
    STREAM_CHECKS,
    AnswerCheck,
    Profile,
)
from callstream.certification.route_checks.answer import (
    Answer,
    Asked,
    read_completion,
    read_streamed,
    twin_of,
)
from callstream.core.rendering import render
from callstream.core.spec import Scenario
from callstream.corpus.cassette import Chunk, Ended, RecordedRequest, RecordedResponse, Recording
from callstream.corpus.scenario import default_corpus, load_scenarios
from callstream.emulator import chat_completion

PROBES = {probe.name: probe for probe in load_probes()}
ABORTED = ("idle", "deadline", "too-large", "error")
PROFILES: tuple[Profile, ...] = ("strict", "lenient")
A = TypeVar("A", bound=Answer)


def tool_entries(scenario: Scenario) -> list[dict[str, Any]]:
    """The scenario's tools as a request offers them."""
    return [
        {"type": "custom", "custom": {"name": tool.name, "format": tool.format}}
        if tool.kind == "custom"
        else {"type": "function", "function": {"name": tool.name, "parameters": tool.parameters}}
        for tool in scenario.spec.tools
    ]


def answer(
    probe: str,
    body: bytes,
    *,
    stream: bool,
    tools: list[dict[str, Any]],
    status: int | None = 200,
    how: str = "eof",
    kind: str | None = None,
) -> Recording:
    """``body`` as the route's answer to ``probe`` offering ``tools``, with ``status`` (None:
    no response at all), sent as ``kind`` (by default, the right content type) and ended
    ``how``."""
    request = {**PROBES[probe].body("m", stream=stream), "tools": tools}
    kind = kind or ("text/event-stream" if stream else "application/json")
    return Recording(
        probe=probe,
        title=probe,
        repeat=1,
        stream=stream,
        calls=PROBES[probe].calls,
        request=RecordedRequest("POST", "http://127.0.0.1:9/v1/chat/completions", {}, request),
        response=None if status is None else RecordedResponse(status, {"content-type": kind}, 0.01),
        chunks=(Chunk(0.02, body),),
        ended=Ended(how, 0.03, None if how == "eof" else "stopped"),
        context={"timeout": 1.0},
    )


def runs() -> Iterator[tuple[Recording, Recording | None]]:
    """Every scenario of the corpus as the streamed answer to each probe in turn, with the
    scenario's non-streaming completion where it has one; every seventh also aborted, and
    a few answers that are no answer at all."""
    names = sorted(PROBES)
    for n, scenario in enumerate(load_scenarios(default_corpus()).scenarios):
        probe, tools = names[n % len(names)], tool_entries(scenario)
        data = render(scenario.spec).data
        completion = chat_completion(scenario)
        nonstream = None
        if completion is not None:
            nonstream = answer(probe, json.dumps(completion).encode(), stream=False, tools=tools)
        yield answer(probe, data, stream=True, tools=tools), nonstream
        if n % 7 == 0:
            how = ABORTED[n // 7 % len(ABORTED)]
            cut = None if nonstream is None else replace(nonstream, ended=Ended(how, 0.03, "x"))
            yield answer(probe, data, stream=True, tools=tools, how=how), cut
    for status, how in (
        (None, "no-connection"),
        (None, "no-response"),
        (None, "error"),
        (200, "encoded"),
        (500, "eof"),
    ):
        yield (
            answer("parameterless", b"", stream=True, tools=[], status=status, how=how),
            answer("parameterless", b"", stream=False, tools=[], status=status, how=how),
        )
    html = answer("parameterless", b"<html>", stream=False, tools=[], kind="text/html")
    yield answer("parameterless", b"<html>", stream=True, tools=[], kind="text/html"), html


def test_every_route_check_is_reported_by_a_check_of_an_answer() -> None:
    """No row of a certificate is left without a check behind it, and no check reports under a
    row the certificate does not have."""
    reported = {name for check in (*STREAM_CHECKS, *NONSTREAM_CHECKS) for name in check.reports}
    assert reported == {check.name for check in ROUTE_CHECKS}


def filed(checks: Sequence[AnswerCheck[A]], answer: A, into: dict[str, set[str]]) -> None:
    """Run each check that applies to ``answer`` on its own, noting under which route checks
    it filed its findings."""
    for check in checks:
        if check.needs(answer):
            names = into.setdefault(check.function.__name__, set())
            names.update(finding.check for finding in check.function(answer))


def test_each_check_files_its_findings_under_the_route_checks_it_reports() -> None:
    """Over the corpus, under both profiles, each check of an answer files findings under
    exactly the route checks it declares in the table: none other, and each of them."""
    stream_filed: dict[str, set[str]] = {}
    nonstream_filed: dict[str, set[str]] = {}
    for stream, nonstream in runs():
        for profile in PROFILES:
            asked = Asked.of(stream)
            streamed = read_streamed(stream, profile, asked)
            filed(STREAM_CHECKS, streamed, stream_filed)
            if nonstream is not None:
                completion = read_completion(nonstream, profile, asked, twin_of(streamed))
                filed(NONSTREAM_CHECKS, completion, nonstream_filed)
    for checks, found in ((STREAM_CHECKS, stream_filed), (NONSTREAM_CHECKS, nonstream_filed)):
        declared = {check.function.__name__: set(check.reports) for check in checks}
        assert found == declared

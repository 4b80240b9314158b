"""One case: a scenario, under one profile, torn apart by one splitting, run on one
implementation, judged by the checks. Everything here is in-process and deterministic; the
runner adds processes and timeouts around it."""

from __future__ import annotations

import marshal
import re
from bisect import bisect_right
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .checks import CHECKS, run_checks
from .declaration import OBSERVABLES
from .judgement import Failure, call_name
from .observation import Observation, Recording, record
from .oracle import expect
from .rendering import render
from .spec import Expected, Scenario, Splitting
from .split import DEFAULT_SPLITTINGS, chunkings

__all__ = [
    "OUTCOMES",
    "CaseResult",
    "Outcome",
    "format_repro",
    "line_spans",
    "run_case",
    "splittings_of",
]

Outcome = Literal["passed", "failed", "errored", "unsupported", "not_applicable"]
"""A case's verdict: ``unsupported`` is a declared non-feature (one choice only),
``not_applicable`` a scenario written for another profile or dialect; neither ran."""
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "errored", "unsupported", "not_applicable")


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The verdict on one case."""

    scenario: str
    title: str
    rules: tuple[str, ...]
    tags: tuple[str, ...]
    kind: str
    profile: str
    splitting: str
    outcome: Outcome
    chunkings: int = 0
    """How many chunkings were run (``pairs`` runs one per byte)."""
    failures: tuple[Failure, ...] = ()
    repro: str | None = None
    """The first failing chunking, boundaries marked and escapes visible."""
    detail: str | None = None
    """Why the case did not run, or errored."""
    not_observable: tuple[str, ...] = ()
    """Checks that applied but read what the implementation does not expose."""
    elapsed: float = 0.0
    source: str = ""

    @classmethod
    def of(
        cls, scenario: Scenario, profile: str, splitting: Splitting, outcome: Outcome, **fields: Any
    ) -> CaseResult:
        """The verdict on ``scenario`` under ``profile`` and ``splitting``; ``fields`` fill in the
        rest (failures, repro, detail, chunkings, elapsed)."""
        return cls(
            scenario.id,
            scenario.title,
            scenario.rules,
            scenario.tags,
            scenario.kind,
            profile,
            splitting.label,
            outcome,
            source=scenario.source,
            **fields,
        )

    def to_dict(self) -> dict[str, Any]:
        """The result line of ``report.jsonl``."""
        return {
            "type": "result",
            "scenario": self.scenario,
            "title": self.title,
            "rules": list(self.rules),
            "tags": list(self.tags),
            "kind": self.kind,
            "profile": self.profile,
            "splitting": self.splitting,
            "outcome": self.outcome,
            "chunkings": self.chunkings,
            "failures": [
                {"check": f.check, "rules": list(f.rules), "message": f.message}
                for f in self.failures
            ],
            "repro": self.repro,
            "detail": self.detail,
            "not_observable": list(self.not_observable),
            "elapsed": round(self.elapsed, 6),
            "source": self.source,
        }


def splittings_of(scenario: Scenario) -> tuple[Splitting, ...]:
    """The splittings a scenario runs under."""
    return scenario.splittings or DEFAULT_SPLITTINGS


def run_case(
    scenario: Scenario,
    profile: str,
    splitting: Splitting,
    factory: Callable[..., Any],
    exposed: Collection[str] = tuple(OBSERVABLES),
) -> CaseResult:
    """Run every chunking of ``splitting`` until one fails, judging what the implementation
    ``exposed`` (see ``callstream.core.declaration.OBSERVABLES``); the verdict with its repro."""
    spec = scenario.spec
    rendered = render(spec)
    expected = expect(spec, rendered, profile, scenario.opt_ins)
    bounds = _release_bounds(expected)
    runs = 0
    elapsed = 0.0
    unobserved: set[str] = set()
    passed: set[Hashable] = set()
    for chunks in chunkings(rendered.data, splitting):
        runs += 1
        recording = record(factory, spec.tools, spec.limits, chunks, spec.dialect)
        elapsed += recording.elapsed
        key = _identity(recording, bounds)
        if key in passed:
            continue
        seen = recording.observation()
        judgement = run_checks(expected, seen, scenario.kind, exposed, scenario.rules)
        unobserved.update(judgement.not_observable)
        if judgement.failures:
            return CaseResult.of(
                scenario,
                profile,
                splitting,
                "failed",
                chunkings=runs,
                failures=judgement.failures,
                repro=format_repro(chunks, seen),
                elapsed=elapsed,
                not_observable=_in_check_order(unobserved),
            )
        if len(passed) < _JUDGED:
            passed.add(key)
    return CaseResult.of(
        scenario,
        profile,
        splitting,
        "passed",
        chunkings=runs,
        elapsed=elapsed,
        not_observable=_in_check_order(unobserved),
    )


_JUDGED = 256
"""Distinct passing chunkings of one case whose identity is kept, so that those to come like
them are not judged again."""


def _release_bounds(expected: Expected) -> list[int]:
    """The offsets the checks compare a release's offset with: each expected call's
    ``release_offset``, sorted."""
    return sorted(
        {call.release_offset for call in expected.calls if call.release_offset is not None}
    )


def _identity(recording: Recording, bounds: Sequence[int]) -> Hashable:
    """Everything the checks read of a chunking, as one hashable value: two chunkings of a case
    with the same identity get the same judgement, so it is made once (most chunkings of
    ``pairs`` hand back exactly what the whole stream does), and a chunking whose identity
    passed needs no judging. A finer identity only costs a recheck.

    A result's values are plain builtins (``Observed.from_result``), whose marshal bytes tell
    apart every value and type a check can tell apart (``1``, ``1.0`` and ``True``, key order,
    each code point); version 2, without the back-references of later versions, which depend
    on how the objects are shared. A release's offset is read by ``no_premature_release`` alone,
    which compares it with the release offset of the expected call (its message shows the
    offset, but a failing judgement ends the case): so the offset stands as the number of
    ``bounds`` at or before it, the same for every offset on the same side of each.
    """
    releases = tuple(
        (chunk, bisect_right(bounds, offset), marshal.dumps(values, 2))
        for chunk, offset, values in recording.releases
    )
    return (
        releases,
        recording.error,
        recording.timed_out,
        recording.findings,
        recording.findings_unreadable,
    )


def _in_check_order(names: set[str]) -> tuple[str, ...]:
    return tuple(check.name for check in CHECKS if check.name in names)


def format_repro(chunks: Sequence[bytes], seen: Observation | None = None) -> str:
    """A failing chunking as a person reads it: how the stream was cut, then the stream line by
    line with each line's offset, chunk boundaries marked ``┊`` inside the lines and escapes
    visible (``\\r``, ``\\xc3``), each release noted on the line whose byte released it, and
    what the implementation raised. Long streams keep the lines around the releases."""
    data = b"".join(chunks)
    bounds: list[int] = []
    offset = 0
    for chunk in chunks[:-1]:
        offset += len(chunk)
        bounds.append(offset)
    one_byte = len(chunks) > 1 and all(len(chunk) == 1 for chunk in chunks)
    if len(chunks) == 1:
        head = f"1 chunk of {len(data)} bytes"
    elif one_byte:
        head = f"{len(chunks)} chunks of one byte each"
    else:
        shown = ", ".join(map(str, bounds[:20])) + (", …" if len(bounds) > 20 else "")
        head = f"{len(chunks)} chunks, cut after bytes {shown}"
    marks: dict[int, list[str]] = {}
    lines = line_spans(data)
    if seen is not None:
        for release in seen.releases:
            where = max(0, min(release.offset, len(data)) - 1)
            number = next((n for n, (a, b) in enumerate(lines) if a <= where < b), len(lines) - 1)
            result = release.result
            state = "with no status" if result.status is None else str(result.status)
            if result.reason is not None:
                state += f" {result.reason}"
            when = "at close()" if release.chunk == len(chunks) else f"after byte {release.offset}"
            marks.setdefault(number, []).append(
                f"◀ {when}: {call_name(result.key)} released {state}"
            )
    keep = _lines_to_show(len(lines), marks)
    out = [head + ":"]
    previous = -1
    for number in keep:
        if number != previous + 1:
            out.append("        …")
        start, stop = lines[number]
        cuts = [] if one_byte else [b for b in bounds if start < b < stop]
        pieces = [data[a:b] for a, b in zip([start, *cuts], [*cuts, stop], strict=True)]
        text = "┊".join(repr(piece)[2:-1] for piece in pieces)
        out.append(f"{start:>7} {text}" + "".join(f"  {mark}" for mark in marks.get(number, [])))
        previous = number
    if seen is not None and not seen.releases:
        out.append("nothing was released")
    if seen is not None and seen.error:
        out += ["raised:", seen.error.rstrip()]
    return "\n".join(out)


def line_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, stop) of each line of ``data``, line endings included."""
    spans = []
    start = 0
    for match in re.finditer(rb"\r\n|\r|\n", data):
        spans.append((start, match.end()))
        start = match.end()
    if start < len(data):
        spans.append((start, len(data)))
    return spans or [(0, 0)]


def _lines_to_show(count: int, marks: dict[int, list[str]], limit: int = 60) -> list[int]:
    if count <= limit:
        return list(range(count))
    keep = set(range(8)) | set(range(count - 4, count))
    for number in marks:
        keep |= set(range(max(0, number - 4), min(count, number + 3)))
    return sorted(keep)

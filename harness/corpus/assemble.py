"""``callstream assemble``: run a recorded stream through the reference assembler."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from callstream.reference import Assembler, CallResult, Finding, Tool

__all__ = ["READ_SIZE", "AssembleRun", "Release", "assemble_stream"]

READ_SIZE = 64 << 10
"""Bytes read and fed at a time from a recorded stream, unless told otherwise."""


@dataclass(frozen=True, slots=True)
class Release:
    """A result and the stream offset at which the assembler released it."""

    result: CallResult
    after_byte: int | None
    """Bytes fed when it was released; None when close() released it."""

    def to_dict(self) -> dict[str, Any]:
        """The result in the contract shape, plus when it was released."""
        return {**self.result.to_dict(), "released_after_byte": self.after_byte}


@dataclass(frozen=True, slots=True)
class AssembleRun:
    """What the reference made of one recorded stream."""

    releases: list[Release]
    findings: tuple[Finding, ...]
    usage: Any
    failure: str | None
    size: int
    profile: str
    tools: int | None = field(default=None)
    dialect: str = "openai-chat"

    @property
    def results(self) -> list[CallResult]:
        """Every result, in release order."""
        return [release.result for release in self.releases]

    @property
    def all_ready(self) -> bool:
        """True when every call is ready to execute (a stream with no calls counts as ready)."""
        return all(result.ready for result in self.results) and self.failure is None

    def summary(self) -> dict[str, Any]:
        """The run's closing record: counts, findings, usage and any stream failure."""
        ready = sum(result.ready for result in self.results)
        return {
            "summary": {
                "calls": len(self.releases),
                "ready": ready,
                "rejected": len(self.releases) - ready,
                "bytes": self.size,
                "profile": self.profile,
                "dialect": self.dialect,
            },
            "findings": [finding.to_dict() for finding in self.findings],
            "usage": self.usage,
            "stream_failure": self.failure,
        }


def assemble_stream(
    pieces: Iterable[bytes],
    tools: Sequence[Tool] | None = None,
    *,
    dialect: str = "openai-chat",
    profile: Literal["strict", "lenient"] = "lenient",
    snapshots: bool = False,
    repair_json: bool = False,
) -> AssembleRun:
    """Feed ``pieces`` (the transport chunks of one response) to the reference and close it.
    ``pieces`` is consumed lazily, one at a time, and no further once the stream has failed
    (nothing after can change the results): an endless or enormous input is never held."""
    asm = Assembler(
        tools, dialect=dialect, profile=profile, snapshots=snapshots, repair_json=repair_json
    )
    releases: list[Release] = []
    offset = 0
    for piece in pieces:
        offset += len(piece)
        releases += [Release(result, offset) for result in asm.feed(piece)]
        if asm.failure is not None:
            break
    releases += [Release(result, None) for result in asm.close()]
    return AssembleRun(
        releases,
        asm.findings,
        asm.usage,
        asm.failure,
        offset,
        profile,
        None if tools is None else len(tools),
        dialect,
    )

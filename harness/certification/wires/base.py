"""What certifying needs of a dialect: how a probe is asked in its shape, and how an answer in
its shape is read where the reference assembler does not read it (the finish, the usage, the
non-streaming answer's calls).

A probe is written once, in the chat shape of ``probes.yaml``; each dialect's :class:`Wire`
turns it into its own request (path, headers, body) and reads back, from that request, what the
probe asked for (:class:`Asked`). The streamed answer is read by the reference assembler in the
same dialect (``callstream.reference``), so every deviation is a quirk id of that dialect.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ...rules import QuirkId, quirk_id
from ..probes import Probe

__all__ = ["Asked", "Usage", "Wire", "checks_of_quirks", "qualified"]


@dataclass(frozen=True, slots=True)
class Asked:
    """What the probe asked of the route: its streamed request, and the calls it wants."""

    named: str | None
    """The function a named ``tool_choice`` forces, if any."""
    required: bool
    """``tool_choice`` forces a call to some tool."""
    limited: bool
    """The probe caps the tokens."""
    wants_usage: bool
    """The answer must report its usage."""
    calls: int
    """How many calls the probe asks the model for."""


Usage = tuple[int, Mapping[str, Any]] | None
"""The usage an answer reported last: the number (from 0) of the event that carried it, and
its token counts; None when no event carried one."""


class Wire(Protocol):
    """One dialect, as certify asks and reads it."""

    @property
    def name(self) -> str:
        """As scenarios and cassettes spell it: ``openai-chat``."""

    @property
    def path(self) -> str:
        """Where the requests go, after the base URL: ``/chat/completions``."""

    @property
    def quirks(self) -> tuple[QuirkId, ...]:
        """The quirk ids of the dialect (``callstream.rules``)."""

    @property
    def check_of_quirk(self) -> Mapping[str, str]:
        """Which route check reports each quirk the reference records in this dialect; any
        other, ``chunk_envelope``. (A quirk certify itself names, such as a stream error, is
        filed by the check that finds it.)"""

    @property
    def aliases(self) -> Mapping[str, str]:
        """The dialect's own code for a chat quirk code certify names (``C17`` is ``A1`` in
        anthropic-messages)."""

    @property
    def finish_field(self) -> str:
        """What the dialect calls an answer's finish: ``finish_reason``."""

    @property
    def usage_missing(self) -> str:
        """The title of a stream that reported no usage although it had to."""

    @property
    def token_counts(self) -> tuple[str, ...]:
        """The integer counts a usage object must carry."""

    @property
    def completing(self) -> frozenset[str]:
        """The finishes of an answer that was not cut."""

    @property
    def calls_finish(self) -> str | None:
        """The finish that promises calls (``tool_calls``), if the dialect has one."""

    @property
    def completion_noun(self) -> str:
        """What a non-streaming answer is: ``a chat.completion``."""

    @property
    def unfinished(self) -> str:
        """The title of a stream that ended before it said how it finished."""

    def headers(self, api_key: str | None) -> dict[str, str]:
        """The headers that carry the key and the dialect's version, if any."""

    def body(self, probe: Probe, model: str, *, stream: bool) -> dict[str, Any]:
        """The probe's request body in this dialect."""

    def asked(self, body: Mapping[str, Any], calls: int) -> Asked:
        """What a request body of this dialect asked for."""

    def finishes(self, payloads: Sequence[Any]) -> dict[int, str]:
        """The first finish of each choice in a stream's payloads."""

    def usage(self, payloads: Sequence[Any]) -> Usage:
        """The usage the stream reported last."""

    def restated(self, payloads: Sequence[Any]) -> list[str | None] | None:
        """The names of the calls the stream's final event restates (the Responses terminal
        response's ``output``); None when the dialect restates none, or the stream did not."""

    def unclosed(self, payloads: Sequence[Any]) -> list[str]:
        """The calls whose own closing events never came (a Responses item without ``.done``
        or ``output_item.done``, a ``tool_use`` block without ``content_block_stop``), each
        described; none in a dialect whose calls have no closing event."""

    def is_error(self, payload: Any) -> bool:
        """A payload that carries an error (beyond an ``error`` event or ``error`` key)."""

    def completion(self, body: Any) -> tuple[list[tuple[str | None, str]], str | None] | None:
        """A non-streaming answer's calls (name and argument text) and its finish; None when
        it is not an answer of this dialect."""


def checks_of_quirks(dialect: str, codes_of_check: Mapping[str, str]) -> dict[str, str]:
    """A wire's ``check_of_quirk`` table from each certify check's quirk codes, written as a
    space-separated list (``{"sse_framing": "T6 T9"}``): every code qualified by ``dialect``."""
    return {
        quirk_id(dialect, code): check
        for check, codes in codes_of_check.items()
        for code in codes.split()
    }


def qualified(wire: Wire, code: str) -> QuirkId | None:
    """The dialect's quirk id for ``code`` (``C25``), when the dialect has that quirk."""
    quirk = QuirkId(f"{wire.name}/{wire.aliases.get(code, code)}")
    return quirk if quirk in wire.quirks else None

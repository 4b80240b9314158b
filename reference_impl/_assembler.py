"""The Assembler: the one public entry point that takes a peer's bytes or events.

Everything the peer sends is handled here or below, and turned into results and findings; the
only exceptions that leave are the caller's own mistakes (see ``_errors``). A failure of the
whole stream (a broken chunk, an error event, a passed limit) is raised inside as
``StreamFailure`` and converted once, here: every call not yet final is rejected and further
input is ignored, so buffering stops (h11's strategy for peer errors).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from ._calls import CallBook, StreamFailure
from ._errors import AssemblerClosedError, ConfigurationError
from ._model import CallPreview, CallResult, Finding, Limits, Reason, Tool
from ._preview import parse_partial
from ._quirks import FindingLog
from ._sse import SSEDecoder, SSELimitError
from .dialects import DIALECTS

__all__ = ["PROFILES", "Assembler"]

PROFILES = ("strict", "lenient")
_SLICE = 1 << 16


class Assembler:
    """Assembles the tool calls of one streamed response, sans I/O.

    Create one per response with the tools that were offered, feed it the response body as it
    arrives (``feed``) or already-decoded event payloads (``feed_event``), then ``close()`` when
    the connection ends. Each call returns the results that became final, in (choice, index)
    order; ``ready`` results are safe to execute, ``rejected`` ones never are.
    """

    def __init__(
        self,
        tools: Iterable[Tool] | None = None,
        *,
        dialect: str = "openai-chat",
        profile: Literal["strict", "lenient"] = "lenient",
        limits: Limits | None = None,
        snapshots: bool = False,
        repair_json: bool = False,
    ) -> None:
        """``tools=None`` accepts any name and skips schema checks; a list enforces V2 and V3.
        ``snapshots`` (C10) and ``repair_json`` (C11, C12) are per-route opt-ins, off by default.
        """
        if dialect not in DIALECTS:
            raise ConfigurationError(f"unknown dialect {dialect!r}; known: {', '.join(DIALECTS)}")
        if profile not in PROFILES:
            raise ConfigurationError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
        self.limits = limits if limits is not None else Limits()
        self.dialect = dialect
        self.profile = profile
        tool_list = None if tools is None else list(tools)
        self._findings = FindingLog(dialect)
        self._book = CallBook(
            tool_list,
            self.limits,
            self._findings,
            strict=profile == "strict",
            snapshots=snapshots,
            repair_json=repair_json,
        )
        self._wire = DIALECTS[dialect](self._book)
        self._sse = SSEDecoder(
            max_line_length=self.limits.max_line_length, max_event_size=self.limits.max_event_size
        )
        self._failed: str | None = None
        self._closed = False

    # -- input --------------------------------------------------------------------------------

    def feed(self, data: bytes) -> list[CallResult]:
        """Feed bytes of the response body; returns the results made final by them."""
        self._check_open()
        if self._failed is not None:
            return []
        receive = self._wire.receive

        def run() -> None:
            # A large body is decoded a slice at a time, so it is never held as one string.
            view = memoryview(data)
            try:
                for start in range(0, len(view), _SLICE):
                    try:
                        events = self._sse.feed(view[start : start + _SLICE])
                    except SSELimitError as exc:
                        # Events completed before the limit was passed are real: handle them.
                        for event in exc.events:
                            receive(event.event, event.data)
                        raise
                    for event in events:
                        receive(event.event, event.data)
            finally:
                # Bytes decoded before an event that fails the stream were read all the same:
                # the finding must not depend on where the transport cut the body.
                self._note_invalid_utf8()

        return self._guard(run)

    def feed_event(
        self, payload: Mapping[str, Any] | str, *, event: str = "message"
    ) -> list[CallResult]:
        """Feed one decoded event payload (a chunk dict, or ``"[DONE]"``), for callers that do
        their own SSE. ``event="error"`` marks an SSE error event."""
        self._check_open()
        if self._failed is not None:
            return []
        return self._guard(lambda: self._wire.receive_payload(event, payload))

    def close(self) -> list[CallResult]:
        """The connection ended: settle every call still open and return them."""
        self._check_open()
        self._closed = True
        if self._failed is not None:
            return self._book.drain()
        if self._sse.close():
            self._findings.record("T9", "the stream ended inside an event, which was discarded")
        self._note_invalid_utf8()
        return self._guard(self._wire.end)

    def cancel(self) -> list[CallResult]:
        """Abandon assembly (C6): every open call is rejected ``cancelled`` and returned."""
        self._check_open()
        self._closed = True
        self._book.fail(Reason.CANCELLED, "assembly was cancelled")
        return self._book.drain()

    # -- views --------------------------------------------------------------------------------

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Deviations from the strict profile seen so far, by quirk id."""
        return self._findings.snapshot()

    @property
    def usage(self) -> Any:
        """The last usage object the stream reported, or None."""
        return self._wire.usage

    @property
    def failure(self) -> str | None:
        """Why the whole stream failed, if it did."""
        return self._failed

    def preview(self) -> list[CallPreview]:
        """Calls still being assembled, with a best-effort parse of their text so far (A8).

        For display only: computed from copies, it never changes what a call becomes.
        """
        return [
            CallPreview(
                slot.choice, slot.index, slot.id, slot.name, slot.text, parse_partial(slot.text)
            )
            for slot in self._book.open_slots()
        ]

    # -- the one place peer errors are converted ----------------------------------------------

    def _guard(self, step: Callable[[], None]) -> list[CallResult]:
        try:
            step()
        except StreamFailure as failure:
            self._fail(failure.reason, failure.detail)
        except SSELimitError as exc:
            self._fail(Reason.TOO_LARGE, f"{exc} (at byte {exc.offset})")
        return self._book.drain()

    def _fail(self, reason: Reason, detail: str) -> None:
        self._failed = detail
        self._book.fail(reason, detail)

    def _note_invalid_utf8(self) -> None:
        # Once, so the finding does not depend on how the bytes were split.
        if self._sse.invalid_utf8 and "T11" not in self._findings:
            self._findings.record("T11", "invalid UTF-8 replaced by U+FFFD")

    def _check_open(self) -> None:
        if self._closed:
            raise AssemblerClosedError("this assembler was closed; create one per response")

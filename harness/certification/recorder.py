"""Recording one answer of a route: the request sent through httpx and the answer read as it
arrives, chunk by chunk with its time, bounded (:class:`Limits`) because the route is not trusted,
and scrubbed of every secret before anything looks at it."""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from callstream.reference import SSEDecoder, SSELimitError

from ..corpus.cassette import Chunk, Ended, RecordedRequest, RecordedResponse, Recording
from ..scrub import Scrubber
from .probes import Probe
from .wires import Wire

__all__ = ["DEFAULT_LIMITS", "MAX_BYTES", "Limits", "Recorder", "utc_now"]

MAX_BYTES = 4 << 20
"""The most bytes of one answer read by default: a hundred times a long answer, and half the
longest line the SSE decoder takes."""
_IDENTITY = ("", "identity")


@dataclass(frozen=True, slots=True)
class Limits:
    """How long and how much of one answer is waited for and read."""

    timeout: float = 30.0
    """Seconds to connect, to the response, and between two data events."""
    deadline: float = 120.0
    """Seconds for the whole answer, from sending the request to its last byte."""
    max_bytes: int = MAX_BYTES
    """Bytes of the body read at most."""


DEFAULT_LIMITS = Limits()
"""What one answer is waited for and read up to, unless told otherwise."""


class Recorder:
    """Sends probe requests and records the answers, bounded and scrubbed."""

    def __init__(
        self,
        endpoint: str,
        headers: Mapping[str, str],
        scrubber: Scrubber,
        context: Mapping[str, Any],
        limits: Limits,
        wire: Wire,
    ) -> None:
        self.wire = wire
        """The dialect the probes are asked in."""
        self.endpoint = endpoint
        self.headers = headers
        self.scrubber = scrubber
        self.context = context
        self.limits = limits

    def record(self, client: httpx.Client, probe: Probe, number: int, *, stream: bool) -> Recording:
        """Send one request of ``probe`` and record its answer, as it arrives, until it ends or
        is abandoned."""
        body = self.wire.body(probe, str(self.context["route"]["model"]), stream=stream)
        headers = {**self.headers, "accept": "text/event-stream" if stream else "application/json"}
        recorded = utc_now()
        clock = time.monotonic()

        def now() -> float:
            return round(time.monotonic() - clock, 6)

        chunks: list[Chunk] = []
        response: RecordedResponse | None = None
        watchdog = _Watchdog(self.limits.deadline)
        try:
            with (
                watchdog,
                client.stream(
                    "POST",
                    self.endpoint,
                    headers=headers,
                    json=body,
                    extensions={"trace": watchdog.trace},
                ) as answer,
            ):
                response = RecordedResponse(
                    answer.status_code, self.scrubber.headers(answer.headers), now()
                )
                ended = self._read(answer, chunks, now, watchdog, stream=stream)
        except httpx.HTTPError as exc:
            ended = self._failed(exc, now(), watchdog.fired, answered=response is not None)
        return Recording(
            probe=probe.name,
            title=probe.title,
            repeat=number,
            stream=stream,
            calls=probe.calls,
            request=RecordedRequest(
                "POST", self.scrubber.url(self.endpoint), self.scrubber.headers(headers), body
            ),
            response=response,
            chunks=_masked(chunks, self.scrubber),
            ended=ended,
            context={**self.context, "recorded": recorded},
        )

    def _read(
        self,
        answer: httpx.Response,
        chunks: list[Chunk],
        now: Callable[[], float],
        watchdog: _Watchdog,
        *,
        stream: bool,
    ) -> Ended:
        """Read the body chunk by chunk, as sent (never decoded), abandoning it when it stops
        making progress or passes a limit."""
        limits = self.limits
        encoding = answer.headers.get("content-encoding", "").strip().lower()
        if encoding not in _IDENTITY:
            return Ended(
                "encoded",
                now(),
                f"the body came {encoding[:40]}-encoded although identity was asked for; "
                "it was not read",
            )
        events = SSEDecoder() if stream else None
        progressed = 0.0  # when the last data event (or, not streaming, any byte) came
        received = 0
        for data in answer.iter_raw():
            t = now()
            room = limits.max_bytes - received
            if len(data) > room:
                if room:
                    chunks.append(Chunk(t, data[:room]))
                return Ended(
                    "too-large",
                    t,
                    f"the answer passed {limits.max_bytes} bytes (--max-bytes); reading stopped",
                )
            chunks.append(Chunk(t, data))
            received += len(data)
            try:
                if events is None or events.feed(data):
                    progressed = t
            except SSELimitError as exc:
                return Ended("too-large", t, f"{exc}; reading stopped")
            if t > limits.deadline:
                return Ended("deadline", t, f"the response took longer than {limits.deadline} s")
            if t - progressed > limits.timeout:
                return Ended(
                    "idle",
                    t,
                    f"no data event for {t - progressed:.2f} s (timeout {limits.timeout} s)",
                )
        if watchdog.fired:  # a body read to the connection's end: the watchdog ended it
            return Ended("deadline", now(), f"the response took longer than {limits.deadline} s")
        return Ended("eof", now())

    def _failed(self, exc: httpx.HTTPError, t: float, late: bool, *, answered: bool) -> Ended:
        """How an answer ended that httpx gave up on (or the watchdog cut)."""
        described = self._describe(exc)
        if late:
            return Ended(
                "deadline",
                t,
                f"the response took longer than {self.limits.deadline} s ({described})",
            )
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.UnsupportedProtocol):
            return Ended("no-connection", t, described)
        if isinstance(exc, httpx.TimeoutException):
            return Ended(
                "idle" if answered else "no-response",
                t,
                f"{described} (timeout {self.limits.timeout} s)",
            )
        return Ended("error", t, described)

    def _describe(self, exc: Exception) -> str:
        return self.scrubber.text(f"{type(exc).__name__}: {exc}".rstrip(": "))


class _Watchdog:
    """Shuts an answer's connection down when its deadline passes, so that a read blocked on a
    route that trickles its bytes (or its headers) ends then: the read timeout alone restarts
    with every byte. Learns the connection from httpcore's ``trace`` extension."""

    def __init__(self, deadline: float) -> None:
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(deadline, self._fire)
        self._timer.daemon = True

    def trace(self, event: str, info: Mapping[str, Any]) -> None:
        """The ``trace`` extension: note the socket of each connection made."""
        if event.endswith((".connect_tcp.complete", ".start_tls.complete")):
            sock = info["return_value"].get_extra_info("socket")
            with self._lock:
                if sock is not None:
                    self._sockets.append(sock)
                if self.fired:
                    self._shut()

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            self._shut()

    def _shut(self) -> None:
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _masked(chunks: list[Chunk], scrubber: Scrubber) -> tuple[Chunk, ...]:
    """The chunks with every secret masked, even one cut in two by a chunk boundary."""
    body = scrubber.stream(b"".join(chunk.data for chunk in chunks))
    ends = itertools.accumulate(len(chunk.data) for chunk in chunks)
    starts = itertools.chain([0], itertools.accumulate(len(chunk.data) for chunk in chunks))
    return tuple(
        Chunk(chunk.t, body[start:end])
        for chunk, start, end in zip(chunks, starts, ends, strict=False)
    )


def utc_now() -> str:
    """Now, in ISO 8601 to the microsecond, UTC: when a certification or a recording began."""
    return datetime.now(UTC).isoformat(timespec="microseconds")

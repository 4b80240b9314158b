"""``callstream certify``: certify a live OpenAI-compatible route; ``callstream replay``:
re-check its cassettes offline.

Theory of operation. :func:`certify` sends each probe (``callstream.certification.probes``)
``repeat`` times through httpx, streaming, and, for the probes that compare, once more without
streaming. Each answer is read as it arrives and recorded chunk by chunk with its time
(:class:`~callstream.corpus.cassette.Recording`). The route is not trusted, so every answer is
bounded (:class:`Limits`) and the clock is ours: the connection must be made and the response start
within ``timeout`` seconds, a data event must come at least every ``timeout`` seconds
(keep-alive comments are not progress), and the whole answer, headers included, must end within
``deadline`` seconds: a watchdog shuts the connection down at the deadline however slowly its
bytes trickle. At most ``max_bytes`` of a body are read; a line or an event past the SSE
decoder's limits ends the reading too. The body is asked for and read as identity: a
compressed body is never decoded. Each of these ends the answer with a ``how`` the checks turn
into a finding, and the certification goes on. Each answer has a connection of its own, so an
abandoned one never delays the next. The API key is read by the caller and given here; it goes
into the ``Authorization`` header and nowhere else: every recording is scrubbed
(``callstream.scrub``) before anything looks at it, so cassettes, certificates, reports and
messages are all made from scrubbed data. Each run of a
probe is judged by ``callstream.certification.route_checks`` and the runs become a
:class:`~callstream.certification.certificate.Certificate`. If the route cannot be reached, does
not answer a streamed request at all, or refuses the key (401, 403) or the path (404), the
remaining probes are not sent: they would only wait for the same.

:func:`replay` loads cassettes, pairs each streamed answer with its non-streaming twin, and
judges them again with the same checks, so the same cassettes give the same findings.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import httpx

from callstream.reference import SSEDecoder, SSELimitError

from ..corpus.cassette import (
    SUFFIX,
    Chunk,
    Ended,
    RecordedRequest,
    RecordedResponse,
    Recording,
    load_cassette,
    write_cassette,
)
from ..errors import UsageError
from ..reports import callstream_version
from ..scrub import Scrubber, secrets_of_url
from .certificate import Certificate, ProbeRun
from .probes import Probe
from .route_checks import RouteFinding, check_probe, timing_of

__all__ = ["MAX_BYTES", "Limits", "Target", "certify", "replay"]

Profile = Literal["strict", "lenient"]
_REFUSING = {
    401: "refused the credentials",
    403: "refused the credentials",
    404: "has no such path",
}
"""Statuses that every further probe would get too: stop there."""
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


class Target:
    """The route to certify: its base URL (``…/v1``), the model, and the API key, if any."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None) -> None:
        secrets = secrets_of_url(base_url) + ([api_key] if api_key else [])
        self.scrubber = Scrubber(secrets)
        """Masks the key, and whatever secret the base URL carries (its user info, key-like
        query parameters), in anything shown or written."""
        shown = self.scrubber.url(base_url)
        try:
            url = httpx.URL(base_url)
        except httpx.InvalidURL as exc:
            problem = self.scrubber.text(str(exc))
            raise UsageError(f"--base-url {shown!r} is not a URL: {problem}") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise UsageError(f"--base-url {shown!r} is not an http:// or https:// URL")
        self.base_url = base_url
        self.model = model
        self.api_key = api_key
        self.endpoint = str(url.copy_with(path=url.path.rstrip("/") + "/chat/completions"))
        """Where the requests go: the base URL's path plus ``/chat/completions``, its query
        (``api-version``, ``key``…) kept."""


def certify(
    target: Target,
    probes: Sequence[Probe],
    *,
    profile: Profile = "lenient",
    repeat: int = 1,
    limits: Limits = Limits(),
    out: Path,
    progress: Callable[[str], None] | None = None,
) -> Certificate:
    """Run every probe ``repeat`` times against ``target``, each answer within ``limits``,
    write each answer as a cassette under ``out/cassettes/``, and return the certificate (not
    yet written: see ``callstream.certification.certificate.write_certificate``). ``progress`` is
    told about each run."""
    if repeat < 1:
        raise UsageError(f"--repeat must be at least 1, not {repeat}")
    if limits.max_bytes < 1:
        raise UsageError(f"--max-bytes must be at least 1, not {limits.max_bytes}")
    scrubber = target.scrubber
    started = time.monotonic()
    shown_url = scrubber.url(target.base_url)
    context = {
        "callstream": callstream_version(),
        "session": _now(),
        "route": {"base_url": shown_url, "model": target.model},
        "profile": profile,
        "timeout": limits.timeout,
        "deadline": limits.deadline,
        "max_bytes": limits.max_bytes,
    }
    headers = {
        "content-type": "application/json",
        "accept-encoding": "identity",
        "user-agent": f"callstream/{context['callstream']}",
    }
    if target.api_key:
        headers["authorization"] = f"Bearer {target.api_key}"
    runs: list[ProbeRun] = []
    skipped: list[tuple[str, str]] = []
    stop: str | None = None
    recorder = _Recorder(target.endpoint, headers, scrubber, context, limits)
    timeouts = httpx.Timeout(limits.timeout, connect=min(limits.timeout, limits.deadline))
    # No connection is kept alive: each answer's connection is its own, watched from its
    # start, and one abandoned in the middle of a response never delays the next.
    pool = httpx.Limits(max_keepalive_connections=0)
    with httpx.Client(timeout=timeouts, limits=pool) as client:
        for probe in probes:
            if stop is not None:
                skipped.append((probe.name, stop))
                continue
            for number in range(1, repeat + 1):
                stream = recorder.record(client, probe, number, stream=True)
                stop = _stopper(stream)
                nonstream = None
                if probe.compare and stop is None:
                    nonstream = recorder.record(client, probe, number, stream=False)
                run = _judge(stream, nonstream, profile, out, scrubber)
                runs.append(run)
                if progress is not None:
                    progress(_progress_line(run))
                if stop is not None:
                    break
    return Certificate(
        base_url=shown_url,
        model=target.model,
        profile=profile,
        date=str(context["session"]),
        callstream=str(context["callstream"]),
        runs=tuple(runs),
        skipped=tuple(skipped),
        elapsed=time.monotonic() - started,
    )


def replay(
    paths: Iterable[Path],
    *,
    profile: Profile | None = None,
    progress: Callable[[str], None] | None = None,
) -> Certificate:
    """Judge cassettes again, offline: files, or folders holding ``*.cassette.jsonl``. Each
    streamed answer is paired with the non-streaming answer of the same run; ``profile``
    defaults to the one they were recorded under."""
    started = time.monotonic()
    files = _cassette_files(paths)
    if not files:
        raise UsageError("no cassettes to replay (files named *.cassette.jsonl, or folders)")
    pairs: dict[tuple[Any, str, int], dict[bool, tuple[Recording, Path]]] = {}
    for path in files:
        recording = load_cassette(path)
        key = (recording.context.get("session"), recording.probe, recording.repeat)
        pairs.setdefault(key, {})[recording.stream] = (recording, path)
    ordered = sorted(pairs.values(), key=lambda pair: _recorded(pair))
    runs = []
    first: Recording | None = None
    for pair in ordered:
        if True not in pair:
            recording, path = pair[False]
            raise UsageError(
                f"{path}: a non-streaming answer is replayed with its streamed twin "
                f"({recording.probe} run {recording.repeat}), which is not among the cassettes"
            )
        stream, stream_path = pair[True]
        first = first or stream
        nonstream, nonstream_path = pair.get(False, (None, None))
        chosen = profile or stream.context.get("profile", "lenient")
        names = tuple(str(p) for p in (stream_path, nonstream_path) if p is not None)
        run = _run(stream, nonstream, chosen, names)
        runs.append(run)
        if progress is not None:
            progress(_progress_line(run))
    assert first is not None
    route = first.context.get("route", {})
    return Certificate(
        base_url=str(route.get("base_url", "?")),
        model=str(route.get("model", "?")),
        profile=profile or first.context.get("profile", "lenient"),
        date=str(first.context.get("session", "?")),
        callstream=callstream_version(),
        runs=tuple(runs),
        elapsed=time.monotonic() - started,
    )


# -- recording ----------------------------------------------------------------------------------


class _Recorder:
    """Sends probe requests and records the answers, bounded and scrubbed."""

    def __init__(
        self,
        endpoint: str,
        headers: Mapping[str, str],
        scrubber: Scrubber,
        context: Mapping[str, Any],
        limits: Limits,
    ) -> None:
        self.endpoint = endpoint
        self.headers = headers
        self.scrubber = scrubber
        self.context = context
        self.limits = limits

    def record(self, client: httpx.Client, probe: Probe, number: int, *, stream: bool) -> Recording:
        """Send one request of ``probe`` and record its answer, as it arrives, until it ends or
        is abandoned."""
        body = probe.body(str(self.context["route"]["model"]), stream=stream)
        headers = {**self.headers, "accept": "text/event-stream" if stream else "application/json"}
        recorded = _now()
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


def _stopper(stream: Recording) -> str | None:
    """Why no further probe is worth sending, if this answer shows it."""
    if stream.response is None:
        what = "cannot be reached" if stream.ended.how == "no-connection" else "does not answer"
        return f"the route {what} ({stream.ended.error})"
    if stream.response is not None and stream.response.status in _REFUSING:
        status = stream.response.status
        return f"the route {_REFUSING[status]} ({status} on {stream.probe})"
    return None


def _judge(
    stream: Recording, nonstream: Recording | None, profile: Profile, out: Path, scrubber: Scrubber
) -> ProbeRun:
    cassettes = []
    for recording in (stream, nonstream):
        if recording is not None:
            kind = "stream" if recording.stream else "nonstream"
            name = f"{recording.probe}-r{recording.repeat}-{kind}{SUFFIX}"
            write_cassette(out / "cassettes" / name, recording, scrubber)
            cassettes.append(f"cassettes/{name}")
    return _run(stream, nonstream, profile, tuple(cassettes), scrubber)


def _run(
    stream: Recording,
    nonstream: Recording | None,
    profile: Profile,
    cassettes: tuple[str, ...],
    scrubber: Scrubber | None = None,
) -> ProbeRun:
    """One run of a probe, judged. The findings are scrubbed too: a secret the body held in
    pieces (split across two events, or across argument fragments) is whole in the calls the
    checks assemble from it."""
    findings = check_probe(stream, nonstream, profile)
    return ProbeRun(
        stream.probe,
        stream.title,
        stream.repeat,
        tuple(findings if scrubber is None else (_scrubbed(f, scrubber) for f in findings)),
        timing_of(stream),
        None if nonstream is None else timing_of(nonstream),
        cassettes,
        stream,
    )


def _scrubbed(finding: RouteFinding, scrubber: Scrubber) -> RouteFinding:
    excerpt = None if finding.excerpt is None else scrubber.text(finding.excerpt)
    return replace(finding, detail=scrubber.text(finding.detail), excerpt=excerpt)


def _progress_line(run: ProbeRun) -> str:
    timing = run.stream
    answers = f"stream {timing.total:.2f} s, {timing.bytes} B, {timing.events} events"
    if run.nonstream is not None:
        answers += f"; non-stream {run.nonstream.total:.2f} s"
    severities = [finding.severity for finding in run.findings]
    worst = next((s for s in ("error", "warning") if s in severities), None)
    mark = "✓" if worst is None else ("✗" if worst == "error" else "⚠")
    tally = ", ".join(
        f"{severities.count(s)} {s}{'s' if severities.count(s) > 1 else ''}"
        for s in ("error", "warning", "info")
        if s in severities
    )
    return f"  {mark} {run.probe:<24} r{run.repeat}  {answers}" + (f"  ({tally})" if tally else "")


def _cassette_files(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(path.rglob(f"*{SUFFIX}"))
        else:
            files.append(path)
    return list(dict.fromkeys(files))


def _recorded(pair: Mapping[bool, tuple[Recording, Path]]) -> str:
    recording = (pair.get(True) or pair[False])[0]
    return str(recording.context.get("recorded", ""))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")

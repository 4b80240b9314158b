"""``callstream certify``: certify a live OpenAI-compatible route; ``callstream replay``:
re-check its cassettes offline.

Theory of operation. :func:`certify` sends each probe (``harness.probes``) ``repeat`` times
through httpx, streaming, and, for the probes that compare, once more without streaming. Each
answer is read as it arrives and recorded chunk by chunk with its time
(:class:`~harness.cassette.Recording`); the clock is ours: a response must start within
``timeout`` seconds, bring a data event at least every ``timeout`` seconds (keep-alive comments
are not progress) and end within ``deadline`` seconds, or it is abandoned, so nothing hangs. The
API key is read by the caller and given here; it goes into the ``Authorization`` header and
nowhere else: every recording is scrubbed (``harness.scrub``) before anything looks at it, so
cassettes, certificates, reports and messages are all made from scrubbed data. Each run of a
probe is judged by ``harness.route_checks`` and the runs become a
:class:`~harness.certificate.Certificate`. If the route cannot be reached, does not answer a
streamed request at all, or refuses the key (401, 403) or the path (404), the remaining probes
are not sent: they would only wait for the same.

:func:`replay` loads cassettes, pairs each streamed answer with its non-streaming twin, and
judges them again with the same checks, so the same cassettes give the same findings.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import httpx

from reference_impl import SSEDecoder

from .cassette import (
    SUFFIX,
    Chunk,
    Ended,
    RecordedRequest,
    RecordedResponse,
    Recording,
    load_cassette,
    write_cassette,
)
from .certificate import Certificate, ProbeRun
from .errors import UsageError
from .probes import Probe
from .report import _version
from .route_checks import check_probe, timing_of
from .scrub import Scrubber

__all__ = ["Target", "certify", "replay"]

Profile = Literal["strict", "lenient"]
_REFUSING = {
    401: "refused the credentials",
    403: "refused the credentials",
    404: "has no such path",
}
"""Statuses that every further probe would get too: stop there."""


class Target:
    """The route to certify: its base URL (``…/v1``), the model, and the API key, if any."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None) -> None:
        try:
            url = httpx.URL(base_url)
        except httpx.InvalidURL as exc:
            raise UsageError(f"--base-url {base_url!r} is not a URL: {exc}") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise UsageError(f"--base-url {base_url!r} is not an http:// or https:// URL")
        self.base_url = base_url
        self.model = model
        self.api_key = api_key
        self.scrubber = Scrubber([api_key] if api_key else [])
        """Masks the key, and credentials in URLs, in anything shown or written."""
        self.endpoint = str(url.copy_with(path=url.path.rstrip("/") + "/chat/completions"))
        """Where the requests go: the base URL's path plus ``/chat/completions``, its query
        (``api-version``, ``key``…) kept."""


def certify(
    target: Target,
    probes: Sequence[Probe],
    *,
    profile: Profile = "lenient",
    repeat: int = 1,
    timeout: float = 30.0,
    deadline: float = 120.0,
    out: Path,
    progress: Callable[[str], None] | None = None,
) -> Certificate:
    """Run every probe ``repeat`` times against ``target``, write each answer as a cassette
    under ``out/cassettes/``, and return the certificate (not yet written: see
    ``harness.certificate.write_certificate``). ``progress`` is told about each run."""
    if repeat < 1:
        raise UsageError(f"--repeat must be at least 1, not {repeat}")
    scrubber = target.scrubber
    started = time.monotonic()
    shown_url = scrubber.url(target.base_url)
    context = {
        "callstream": _version(),
        "session": _now(),
        "route": {"base_url": shown_url, "model": target.model},
        "profile": profile,
        "timeout": timeout,
        "deadline": deadline,
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
    recorder = _Recorder(target.endpoint, headers, scrubber, context, timeout, deadline)
    with httpx.Client(timeout=httpx.Timeout(timeout)) as client:
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
        callstream=_version(),
        runs=tuple(runs),
        elapsed=time.monotonic() - started,
    )


# -- recording ----------------------------------------------------------------------------------


class _Recorder:
    """Sends probe requests and records the answers, scrubbed."""

    def __init__(
        self,
        endpoint: str,
        headers: Mapping[str, str],
        scrubber: Scrubber,
        context: Mapping[str, Any],
        timeout: float,
        deadline: float,
    ) -> None:
        self.endpoint = endpoint
        self.headers = headers
        self.scrubber = scrubber
        self.context = context
        self.timeout = timeout
        self.deadline = deadline

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
        try:
            with client.stream("POST", self.endpoint, headers=headers, json=body) as answer:
                response = RecordedResponse(
                    answer.status_code, self.scrubber.headers(answer.headers), now()
                )
                ended = self._read(answer, chunks, now, stream=stream)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol) as exc:
            ended = Ended("no-connection", now(), self._describe(exc))
        except httpx.TimeoutException as exc:
            late = self._describe(exc) + f" (timeout {self.timeout} s)"
            ended = Ended("no-response" if response is None else "idle", now(), late)
        except httpx.HTTPError as exc:
            ended = Ended("error", now(), self._describe(exc))
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
        *,
        stream: bool,
    ) -> Ended:
        """Read the body chunk by chunk, abandoning it when it stops making progress."""
        events = SSEDecoder() if stream else None
        progressed = 0.0  # when the last data event (or, not streaming, any byte) came
        for data in answer.iter_bytes():
            t = now()
            chunks.append(Chunk(t, data))
            if events is None or events.feed(data):
                progressed = t
            if t > self.deadline:
                return Ended("deadline", t, f"the response took longer than {self.deadline} s")
            if t - progressed > self.timeout:
                return Ended(
                    "idle",
                    t,
                    f"no data event for {t - progressed:.2f} s (timeout {self.timeout} s)",
                )
        return Ended("eof", now())

    def _describe(self, exc: Exception) -> str:
        return self.scrubber.text(f"{type(exc).__name__}: {exc}".rstrip(": "))


def _masked(chunks: list[Chunk], scrubber: Scrubber) -> tuple[Chunk, ...]:
    """The chunks with every secret masked, even one cut in two by a chunk boundary."""
    body = scrubber.data(b"".join(chunk.data for chunk in chunks))
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
    return _run(stream, nonstream, profile, tuple(cassettes))


def _run(
    stream: Recording, nonstream: Recording | None, profile: Profile, cassettes: tuple[str, ...]
) -> ProbeRun:
    """One run of a probe, judged."""
    return ProbeRun(
        stream.probe,
        stream.title,
        stream.repeat,
        tuple(check_probe(stream, nonstream, profile)),
        timing_of(stream),
        None if nonstream is None else timing_of(nonstream),
        cassettes,
        stream,
    )


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

"""``callstream certify``: certify a live route (OpenAI Chat Completions, Anthropic Messages or
OpenAI Responses); ``callstream replay``: re-check its cassettes offline.

Theory of operation. :func:`certify` sends each probe (``callstream.certification.probes``)
``repeat`` times through httpx, streaming, and, for the probes that compare, once more without
streaming, each request in the route's dialect (``callstream.certification.wires``: its path,
its headers, its body). Each answer is read as it arrives and recorded chunk by chunk with its time
(``recorder``: a :class:`~callstream.corpus.cassette.Recording`). The route is not trusted, so
every answer is
bounded (:class:`Limits`) and the clock is ours: the connection must be made and the response start
within ``timeout`` seconds, a data event must come at least every ``timeout`` seconds
(keep-alive comments are not progress), and the whole answer, headers included, must end within
``deadline`` seconds: a watchdog shuts the connection down at the deadline however slowly its
bytes trickle. At most ``max_bytes`` of a body are read; a line or an event past the SSE
decoder's limits ends the reading too. The body is asked for and read as identity: a
compressed body is never decoded. Each of these ends the answer with a ``how`` the checks turn
into a finding, and the certification goes on. Each answer has a connection of its own, so an
abandoned one never delays the next. The API key is read by the caller and given here; it goes
into the ``Authorization`` header (``x-api-key`` for Anthropic) and nowhere else: every
recording is scrubbed (``callstream.scrub``) before anything looks at it, so cassettes,
certificates, reports and messages are all made from scrubbed data. Each run of a
probe is judged by ``callstream.certification.route_checks`` and the runs become a
:class:`~callstream.certification.certificate.Certificate`. If the route cannot be reached, does
not answer a streamed request at all, or refuses the key (401, 403) or the path (404), the
remaining probes are not sent: they would only wait for the same.

:func:`replay` loads cassettes, pairs each streamed answer with its non-streaming twin, and
judges them again with the same checks, in the dialect each cassette's header names, so the
same cassettes give the same findings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from ..corpus.cassette import (
    SUFFIX,
    Recording,
    load_cassette,
    write_cassette,
)
from ..errors import UsageError
from ..reports import callstream_version
from ..scrub import Scrubber, secrets_of_url
from .certificate import Certificate, ProbeRun
from .probes import Probe
from .recorder import DEFAULT_LIMITS, MAX_BYTES, Limits, Recorder, utc_now
from .route_checks import Profile, RouteFinding, check_probe, timing_of
from .wires import DEFAULT_WIRE, wire, wire_of

__all__ = ["MAX_BYTES", "Limits", "Target", "certify", "replay"]

_REFUSING = {
    401: "refused the credentials",
    403: "refused the credentials",
    404: "has no such path",
}
"""Statuses that every further probe would get too: stop there."""


class Target:
    """The route to certify: its base URL (``…/v1``), the model, the API key, if any, and the
    dialect it speaks."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dialect: str = DEFAULT_WIRE,
    ) -> None:
        self.wire = wire(dialect)
        """The dialect the probes are asked and the answers read in."""
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
        self.endpoint = str(url.copy_with(path=url.path.rstrip("/") + self.wire.path))
        """Where the requests go: the base URL's path plus the dialect's
        (``/chat/completions``, ``/messages``, ``/responses``), its query (``api-version``,
        ``key``…) kept."""


def certify(
    target: Target,
    probes: Sequence[Probe],
    *,
    profile: Profile = "lenient",
    repeat: int = 1,
    limits: Limits = DEFAULT_LIMITS,
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
        "session": utc_now(),
        "route": {"base_url": shown_url, "model": target.model},
        "dialect": target.wire.name,
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
    headers.update(target.wire.headers(target.api_key))
    runs: list[ProbeRun] = []
    skipped: list[tuple[str, str]] = []
    stop: str | None = None
    recorder = Recorder(target.endpoint, headers, scrubber, context, limits, target.wire)
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
        dialect=target.wire.name,
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
        dialect=wire_of(first.context).name,
        profile=profile or first.context.get("profile", "lenient"),
        date=str(first.context.get("session", "?")),
        callstream=callstream_version(),
        runs=tuple(runs),
        elapsed=time.monotonic() - started,
    )


# -- recording ----------------------------------------------------------------------------------


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

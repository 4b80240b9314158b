"""``callstream certify`` against hostile routes on 127.0.0.1: whatever the route does, every
answer ends within its limits (connect and read timeouts, the total deadline, the byte cap),
nothing compressed is decoded, every limit passed becomes a finding, and the certificate is
written: no hang, no unbounded memory, no traceback."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from callstream.cli import main
from callstream.corpus.cassette import load_cassette

Handler = Callable[[socket.socket, threading.Event], None]
EVENT = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"content":"la"},"finish_reason":null}]}\n\n'
)


class HostileRoute:
    """A TCP server on 127.0.0.1 whose every connection is answered by ``handler`` (given the
    socket, after the request was read, and an event set when the test ends)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.done = threading.Event()
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.connections = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.getsockname()[1]}/v1"

    def __enter__(self) -> HostileRoute:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.done.set()
        self.server.close()

    def _accept(self) -> None:
        while not self.done.is_set():
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            try:
                _read_request(connection)
                self.handler(connection, self.done)
            except OSError:  # the client went away: what a hostile route hopes for
                pass


def _read_request(connection: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += connection.recv(65536)


def head(*extra: bytes) -> bytes:
    """A response head with no length: the body runs until the connection closes."""
    lines = [b"HTTP/1.1 200 OK", b"content-type: text/event-stream", *extra, b"connection: close"]
    return b"\r\n".join(lines) + b"\r\n\r\n"


def trickled_head(pause: float) -> Handler:
    """The response head a byte at a time: 300 bytes, a minute at 0.2 s a byte."""

    def handler(connection: socket.socket, done: threading.Event) -> None:
        for byte in head(b"x-padding: " + b"p" * 200):
            if done.wait(pause):
                return
            connection.sendall(bytes([byte]))

    return handler


def endless(piece: bytes, start: bytes = b"") -> Handler:
    def handler(connection: socket.socket, done: threading.Event) -> None:
        connection.sendall(head() + start)
        block = piece * max(1, 65536 // len(piece))
        while not done.is_set():
            connection.sendall(block)

    return handler


def compressed(encoding: bytes, body: bytes) -> Handler:
    def handler(connection: socket.socket, done: threading.Event) -> None:
        connection.sendall(head(b"content-encoding: " + encoding) + body)

    return handler


def trickled_body(pause: float) -> Handler:
    """A data line a byte at a time, never finished: bytes, but never an event."""

    def handler(connection: socket.socket, done: threading.Event) -> None:
        connection.sendall(head() + b"data: ")
        while not done.wait(pause):
            connection.sendall(b"x")

    return handler


def certify(
    capsys: pytest.CaptureFixture[str], route: HostileRoute, out: Path, *extra: str
) -> tuple[int, dict[str, Any], float, str]:
    clock = time.monotonic()
    argv = ["certify", "--base-url", route.base_url, "--model", "m", "--out", str(out)]
    code = main([*argv, *extra])
    elapsed = time.monotonic() - clock
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    certificate = json.loads((out / "certificate.json").read_text("utf-8"))
    return code, certificate, elapsed, captured.out


def findings(certificate: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f["probe"], f["check"], f["title"]) for f in certificate["findings"]]


@pytest.fixture
def hostile() -> Iterator[Callable[[Handler], HostileRoute]]:
    routes: list[HostileRoute] = []

    def start(handler: Handler) -> HostileRoute:
        routes.append(HostileRoute(handler).__enter__())
        return routes[-1]

    yield start
    for route in routes:
        route.__exit__()


def test_headers_trickled_a_byte_at_a_time_stop_at_the_deadline(
    hostile: Callable[[Handler], HostileRoute], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Each byte comes well within the read timeout, so only the deadline can end it: it does,
    in the middle of the headers (which would take a minute), and the run stops there (the
    route does not answer)."""
    route = hostile(trickled_head(0.2))
    code, certificate, elapsed, _ = certify(
        capsys, route, tmp_path, "--timeout", "0.6", "--deadline", "1.2"
    )
    assert code == 1
    assert elapsed < 30  # unbounded, the head alone takes 60 s
    assert findings(certificate) == [
        ("long-arguments", "progress", "no response within the deadline")
    ]
    assert len(certificate["skipped"]) == 7
    assert route.connections == 1
    ended = load_cassette(tmp_path / "cassettes" / "long-arguments-r1-stream.cassette.jsonl").ended
    assert ended.how == "deadline"
    assert 1.2 <= ended.t < 2.2


def test_a_body_that_trickles_without_an_event_is_abandoned_after_the_timeout(
    hostile: Callable[[Handler], HostileRoute], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Bytes keep coming, but no event: no progress, abandoned after the timeout."""
    route = hostile(trickled_body(0.1))
    code, certificate, elapsed, _ = certify(
        capsys, route, tmp_path, "--probes", "tool-choice-required", "--timeout", "0.5"
    )
    assert code == 1
    assert elapsed < 30  # unbounded, it never ends
    assert findings(certificate)[0] == (
        "tool-choice-required",
        "progress",
        "no progress: no data event within the timeout",
    )


def test_an_endless_fast_stream_stops_at_the_byte_cap_and_the_cassette_holds_no_more(
    hostile: Callable[[Handler], HostileRoute], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Events as fast as the socket takes them, for ever, with a generous deadline: reading
    stops at --max-bytes, which is a finding; the cassette holds exactly the cap."""
    route = hostile(endless(EVENT))
    code, certificate, elapsed, _ = certify(
        capsys, route, tmp_path, "--probes", "tool-choice-required", "--max-bytes", "300000"
    )
    assert code == 1
    assert elapsed < 30  # unbounded, it never ends
    assert ("tool-choice-required", "size", "the answer passed a size limit") in findings(
        certificate
    )
    size = next(f for f in certificate["findings"] if f["check"] == "size")
    assert "passed 300000 bytes (--max-bytes)" in size["detail"]
    path = tmp_path / "cassettes" / "tool-choice-required-r1-stream.cassette.jsonl"
    cassette = load_cassette(path)
    assert (cassette.ended.how, len(cassette.body)) == ("too-large", 300_000)
    assert path.stat().st_size < 2 * 300_000
    assert {check["name"]: check["status"] for check in certificate["checks"]}["size"] == "failed"


def test_a_line_past_the_decoders_limit_is_a_finding_and_the_certificate_is_written(
    hostile: Callable[[Handler], HostileRoute], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """One data line that never ends (a 1 GB line, as far as the route is concerned): the SSE
    decoder's 8 MiB line limit ends the reading, under a byte cap above it."""
    route = hostile(endless(b"x" * 4096, start=EVENT + b"data: "))
    code, certificate, elapsed, stdout = certify(
        capsys, route, tmp_path, "--probes", "tool-choice-required", "--max-bytes", "16777216"
    )
    assert code == 1
    assert elapsed < 30  # unbounded, it never ends
    size = next(f for f in certificate["findings"] if f["check"] == "size")
    assert "SSE line passed 8388608 characters" in size["detail"]
    assert stdout.startswith("FAIL:")
    body = load_cassette(tmp_path / "cassettes" / "tool-choice-required-r1-stream.cassette.jsonl")
    assert 8 << 20 < len(body.body) <= 16 << 20


BOMB = 32 << 20
"""Zeros, compressed to about 32 KiB."""


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [(b"gzip", gzip.compress), (b"deflate", zlib.compress), (b"identity, gzip", gzip.compress)],
    ids=["gzip", "deflate", "gzip-after-identity"],
)
def test_a_compressed_body_is_a_finding_and_never_decoded(
    hostile: Callable[[Handler], HostileRoute],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    encoding: bytes,
    compress: Callable[[bytes], bytes],
) -> None:
    """A compression bomb sent although identity was asked for: one finding per answer,
    streamed and not, and nothing of the body read."""
    route = hostile(compressed(encoding, compress(bytes(BOMB))))
    code, certificate, _, _ = certify(capsys, route, tmp_path, "--probes", "parameterless")
    assert code == 1
    title = "a compressed body although identity was asked for"
    assert findings(certificate) == [
        ("parameterless", "content_encoding", title),
        ("parameterless", "content_encoding", title),
    ]
    assert encoding.decode().split(", ")[-1] in certificate["findings"][0]["detail"]
    for kind in ("stream", "nonstream"):
        cassette = load_cassette(tmp_path / "cassettes" / f"parameterless-r1-{kind}.cassette.jsonl")
        assert (cassette.ended.how, cassette.body) == ("encoded", b"")


def test_identity_is_asked_for(
    hostile: Callable[[Handler], HostileRoute], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The request says Accept-Encoding: identity, and the cassette records it."""
    route = hostile(compressed(b"gzip", b""))
    certify(capsys, route, tmp_path, "--probes", "tool-choice-required")
    path = tmp_path / "cassettes" / "tool-choice-required-r1-stream.cassette.jsonl"
    cassette = load_cassette(path)
    assert cassette.request.headers["accept-encoding"] == "identity"


def test_the_cassettes_of_bounded_answers_replay_to_the_same_findings(
    hostile: Callable[[Handler], HostileRoute], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A capped answer replays offline with the same size finding."""
    route = hostile(endless(EVENT))
    certify(capsys, route, tmp_path / "live", "--probes", "parameterless", "--max-bytes", "5000")
    live = json.loads((tmp_path / "live" / "certificate.json").read_text("utf-8"))
    code = main(["replay", str(tmp_path / "live" / "cassettes"), "--out", str(tmp_path / "again")])
    replayed = json.loads((tmp_path / "again" / "certificate.json").read_text("utf-8"))
    assert code == 1
    assert findings(replayed) == findings(live)
    assert ("parameterless", "size", "the answer passed a size limit") in findings(live)

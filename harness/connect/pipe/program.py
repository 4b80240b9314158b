"""One running program of a ``cmd:`` connectable: started, asked one request at a time with a
deadline, its stderr drained, stopped or killed with everything it started.

Every read and write waits in ``poll`` with a deadline, so a program that stops answering never
blocks the harness: after ``timeout`` seconds it is killed and the stream fails as hung
(:class:`~callstream.errors.StreamTimeout`, check ``no_hang``). A program that exits, or writes
a line that is not the answer asked for, fails its stream with an error that quotes the line
and ends with the tail of its stderr (drained by a thread into a bounded buffer); it is killed
and the next stream starts a fresh one. The program runs in its own process group (a
terminal's ^C is the harness's to handle) and, on Linux, dies with the thread that started it
(``PR_SET_PDEATHSIG``), so a worker process killed by the runner never leaves it behind; at
exit a process stops the programs it started. Whenever a program ends, whether it was stopped,
killed or exited by itself, what it started ends too: its process group, and on Linux every
process carrying its scope mark, daemons that left the group included
(``callstream.connect.processes``).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import math
import multiprocessing.util
import os
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import IO, Any, NoReturn

from ...errors import (
    HarnessError,
    ImplementationError,
    ImplementationExited,
    ImplementationHung,
    ImplementationReportedError,
    ProtocolError,
)
from ..processes import SCOPE_VARIABLE, kill_group, kill_marked, new_scope
from .codec import PROTOCOL_VERSION, QUOTED, encode, loads, protocol_problem, quote

__all__ = ["Program"]

_START_TIMEOUT = 30.0
"""Seconds a freshly started program may take to answer ``start``."""
_STOP_GRACE = 1.0
"""Seconds a program asked to stop may take to exit before it is killed."""
_STDERR_KEPT = 64 << 10
_LINE_LIMIT = 256 << 20


class Program:
    """One run of the program: its pipes, its stderr tail, one request at a time."""

    def __init__(self, argv: Sequence[str], *, validate: bool, timeout: float) -> None:
        """Start ``argv``; with ``validate``, check every message against the schema; a
        request must be answered within ``timeout`` seconds (``start`` within at least 30)."""
        self.validate = validate
        self.timeout = timeout
        self.owner = os.getpid()
        self.command = shlex.join(argv)
        self.scope = new_scope()
        try:
            self.process = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                env={**os.environ, SCOPE_VARIABLE: self.scope},
                # A process group, not a session: on Linux a new session is a new scheduler
                # autogroup, which makes every round trip several times slower under load.
                process_group=0,
                preexec_fn=_dies_with_parent(),
            )
        except OSError as exc:
            raise ImplementationExited(
                f"cannot start {self.command}: {exc.strerror or exc}"
            ) from None
        stdin, stdout, stderr = self.process.stdin, self.process.stdout, self.process.stderr
        assert stdin is not None
        assert stdout is not None
        assert stderr is not None
        self._in = stdin.fileno()
        self._out = stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._reading = select.poll()  # poll, not selectors: this is the per-chunk hot path
        self._reading.register(self._out, select.POLLIN)
        self._both = select.poll()
        self._both.register(self._out, select.POLLIN)
        self._both.register(self._in, select.POLLOUT)
        self._pending = bytearray()
        self._stderr = _Tail(stderr)
        self._closed = False
        _track(self)

    def usable(self) -> bool:
        """True while the program runs, in the process that started it."""
        return not self._closed and self.owner == os.getpid() and self.process.poll() is None

    def handshake(self) -> dict[str, Any]:
        """Send ``start``; the ``implementation`` of its answer."""
        described: dict[str, Any] = self.request({"cmd": "start", "version": PROTOCOL_VERSION})[
            "implementation"
        ]
        return described

    def begin_stream(self) -> None:
        """A stream begins: stderr from here on belongs to it."""
        self._stderr.mark()

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``message`` and return its answer, checking the answer's shape, its ``seq`` and,
        with validation on, the schema both ways."""
        try:
            return self._request(message)
        except ImplementationError as exc:
            # The harness's own frames say nothing about the program: leave them out.
            raise exc.with_traceback(None) from None

    def _request(self, message: dict[str, Any]) -> dict[str, Any]:
        cmd = message["cmd"]
        if self.validate and (problem := protocol_problem(message, "request")) is not None:
            raise HarnessError(f"callstream sent a request that breaks its own schema {problem}")
        deadline = time.monotonic() + self._timeout_for(cmd)
        self._expect_silence()
        self._write(encode(message), cmd, deadline)
        line = self._read_line(cmd, deadline)
        try:
            answer = loads(line.decode())
        except ValueError as exc:
            self.fail(
                ProtocolError,
                f"answered {cmd} with a line that is not JSON ({exc}): {quote(line)}",
            )
        if not isinstance(answer, dict):
            self.fail(
                ProtocolError,
                f"answered {cmd} with a JSON {type(answer).__name__}, not an object: "
                + quote(line),
            )
        if cmd == "start" or self.validate:  # the start answer is always checked
            problem = protocol_problem(answer, cmd)
            if problem is not None:
                self.fail(
                    ProtocolError,
                    f"answered {cmd} with a message that breaks the schema {problem}: "
                    + quote(line),
                )
        if cmd == "start":
            if answer["version"] != PROTOCOL_VERSION:
                self.fail(
                    ProtocolError,
                    f"speaks protocol version {answer['version']}; "
                    f"callstream speaks {PROTOCOL_VERSION}",
                )
            return answer
        if answer.get("seq") != message["seq"]:
            self.fail(
                ProtocolError,
                f"answered {cmd} with seq {json.dumps(answer.get('seq'))}, "
                f"not {message['seq']}: {quote(line)}",
            )
        error = answer.get("error")
        if error is not None:
            # The program is still in step: it keeps running for the next stream.
            said = error if isinstance(error, dict) else {"message": error}
            trace = said.get("traceback")
            raise ImplementationReportedError(
                f"the program answered {cmd} with an error: {said.get('message')}",
                self._stderr.text(),
                trace if isinstance(trace, str) else "",
            )
        if cmd in ("feed", "close") and not isinstance(answer.get("results"), list):
            self.fail(ProtocolError, f"answered {cmd} without a results list: {quote(line)}")
        findings = answer.get("findings")
        if findings is not None and (
            not isinstance(findings, list) or not all(isinstance(f, str) for f in findings)
        ):
            self.fail(
                ProtocolError,
                f"answered {cmd} with findings that are not a list of quirk ids: {quote(line)}",
            )
        return answer

    def fail(self, error: type[ImplementationError], summary: str) -> NoReturn:
        """Kill the program (the next stream starts a fresh one) and raise ``error``."""
        self.kill()
        raise error(f"the program {summary}", self._stderr.text())

    def stop(self) -> None:
        """Ask the program to exit; kill it if it does not within a second."""
        if self._closed:
            return
        with contextlib.suppress(OSError):
            os.write(self._in, b'{"cmd":"stop"}\n')
        with contextlib.suppress(OSError):
            self.process.stdin.close()  # type: ignore[union-attr]
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(_STOP_GRACE)
        self.kill()

    def kill(self) -> None:
        """End the program and everything it started, now; release its pipes."""
        if self._closed:
            return
        self._closed = True
        _RUNNING.discard(self)
        # Even when the program has exited, what it started may live on in its group. The
        # group's id cannot be taken by another process while a member is left.
        kill_group(self.process.pid)
        self.process.wait()
        kill_marked(self.scope)
        self._stderr.finish()
        for pipe in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]

    # -- reading and writing with a deadline ----------------------------------------------------

    def _expect_silence(self) -> None:
        """Anything on stdout before a request is sent is a line nobody asked for."""
        if not self._pending and self._reading.poll(0):
            self._receive("the previous request")
        if self._pending:
            line = bytes(self._pending).partition(b"\n")[0]
            self.fail(ProtocolError, f"wrote a line nobody asked for: {quote(line)}")

    def _write(self, data: bytes, cmd: str, deadline: float) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._in, view)
            except BlockingIOError:
                written = 0
            except (BrokenPipeError, ConnectionResetError):
                self._exited(cmd)
            view = view[written:]
            # Until the program has read it all, take in what it writes meanwhile, so neither
            # side blocks on a full pipe.
            if view and any(fd == self._out for fd, _ in self._wait(self._both, cmd, deadline)):
                self._receive(cmd)

    def _read_line(self, cmd: str, deadline: float) -> bytes:
        while (end := self._pending.find(b"\n")) < 0:
            if len(self._pending) > _LINE_LIMIT:
                self.fail(
                    ProtocolError,
                    f"answered {cmd} with a line longer than {_LINE_LIMIT} bytes: "
                    f"{quote(bytes(self._pending[:QUOTED]))}",
                )
            if self._wait(self._reading, cmd, deadline):
                self._receive(cmd)
        line = bytes(self._pending[:end])
        del self._pending[: end + 1]
        return line

    def _wait(self, poll: select.poll, cmd: str, deadline: float) -> list[tuple[int, int]]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            self.fail(
                ImplementationHung, f"did not answer {cmd} within {self._timeout_for(cmd):g} s"
            )
        return poll.poll(math.ceil(remaining * 1000))

    def _receive(self, cmd: str) -> None:
        try:
            chunk = os.read(self._out, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            self._exited(cmd)
        self._pending += chunk

    def _exited(self, cmd: str) -> NoReturn:
        try:
            code = self.process.wait(_STOP_GRACE)
        except subprocess.TimeoutExpired:
            self.fail(ImplementationExited, f"closed its stdout while answering {cmd}")
        how = (
            f"was killed by {signal.Signals(-code).name}"
            if code < 0
            else f"exited with code {code}"
        )
        self.fail(ImplementationExited, f"{how} while answering {cmd}")

    def _timeout_for(self, cmd: str) -> float:
        return max(self.timeout, _START_TIMEOUT) if cmd == "start" else self.timeout


class _Tail:
    """Drains a program's stderr on a thread into a bounded buffer, so a program that writes a
    lot to stderr never blocks, and its last words can be quoted."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._kept = bytearray()
        self._total = 0
        self._mark = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="callstream-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        fd = self._stream.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._kept += chunk
                self._total += len(chunk)
                if len(self._kept) > _STDERR_KEPT:
                    del self._kept[: len(self._kept) - _STDERR_KEPT]

    def mark(self) -> None:
        """From now on, :meth:`text` shows only what comes next."""
        with self._lock:
            self._mark = self._total

    def text(self) -> str:
        """What arrived since the mark (as much of it as is kept)."""
        with self._lock:
            fresh = min(self._total - self._mark, len(self._kept))
            data = bytes(self._kept[len(self._kept) - fresh :]) if fresh else b""
        return data.decode("utf-8", "replace")

    def finish(self) -> None:
        """The program is gone: read what it left, then close the pipe."""
        self._thread.join(_STOP_GRACE)
        if not self._thread.is_alive():
            with contextlib.suppress(OSError):
                self._stream.close()


# -- process hygiene ----------------------------------------------------------------------------

_RUNNING: set[Program] = set()
_CLEANUP_IN: set[int] = set()


def _track(program: Program) -> None:
    """Stop ``program`` when this process exits: atexit in a main process, a multiprocessing
    finalizer in a worker (workers skip atexit)."""
    _RUNNING.add(program)
    if program.owner not in _CLEANUP_IN:
        _CLEANUP_IN.add(program.owner)
        atexit.register(_stop_all)
        multiprocessing.util.Finalize(None, _stop_all, exitpriority=0)


def _stop_all() -> None:
    for program in list(_RUNNING):
        if program.owner == os.getpid():
            program.stop()


def _dies_with_parent() -> Callable[[], None] | None:
    """On Linux, a ``preexec_fn`` that has the kernel kill the program when the thread that
    started it ends (PR_SET_PDEATHSIG), so a worker the runner kills takes it along."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork
    parent = os.getpid()

    def die_with_parent() -> None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the line above
            os._exit(1)

    return die_with_parent

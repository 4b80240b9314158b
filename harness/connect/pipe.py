"""The ``cmd:`` connectable: an implementation in any language, run as a program that speaks
callstream's pipe protocol (after Bowtie's IHOP).

The protocol, version 1, is described by ``harness/schemas/pipe.schema.json`` and
``docs/pipe-protocol.md``: one JSON object per line, requests on the program's stdin, one
answer per request on its stdout, flushed at once; stderr is the program's own and is
captured. Expectations are never sent::

    → {"cmd": "start", "version": 1}
    ← {"version": 1, "implementation": {"name": …, "version": …, "language": …,
                                        "dialects": [...], "rules": [...], "profile": …}}
    → {"cmd": "run", "seq": S, "tools": [...], "limits": {...}, "dialect": …, "profile": …}
    ← {"seq": S, "ok": true}
    → {"cmd": "feed", "seq": S, "data": "<base64 of one transport chunk>"}   once per chunk
    ← {"seq": S, "results": [result, …]}           the calls this chunk made final
    → {"cmd": "close", "seq": S}
    ← {"seq": S, "results": [...], "findings": [...]}   findings (quirk ids) are optional
    → {"cmd": "stop"}                                no answer: the program exits

Any answer may instead be ``{"seq": S, "error": {"message": …, "traceback": …}}``.

Theory of operation. :func:`load_command` starts the program once to read its declaration from the
``start`` answer, then stops it. The factory it returns keeps one long-lived program per
process, started on first use and reused stream after stream; each stream is one ``run``, a
``feed`` per chunk and a ``close``, so what a chunk releases stays observable. Every read and
write waits in ``poll`` with a deadline, so a program that stops answering never blocks the
harness: after ``timeout`` seconds it is killed and the stream fails as hung
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

``cmd+validate:PROGRAM`` (what ``--validate-protocol`` asks for) also checks every message,
both ways, against the schema, to help people writing an adapter.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import ctypes
import dataclasses
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
import weakref
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import IO, Any, NoReturn

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource

from callstream.reference import Limits, Tool
from callstream.reference.validate import outside_strings

from ..core.declaration import SCENARIO_DIALECT, Declaration, Implementation, declaration_from
from ..errors import (
    HarnessError,
    ImplementationError,
    ImplementationExited,
    ImplementationHung,
    ImplementationReportedError,
    ProtocolError,
    UsageError,
)
from .processes import SCOPE_VARIABLE, kill_group, kill_marked, new_scope

__all__ = [
    "DEFAULT_TIMEOUT",
    "PROTOCOL_VERSION",
    "CommandFactory",
    "PipeStream",
    "load_command",
    "pipe_schema",
    "protocol_problem",
    "with_protocol_validation",
]

PROTOCOL_VERSION = 1
DEFAULT_TIMEOUT = 10.0
"""Seconds the program may take to answer one request before it is deemed hung."""
_START_TIMEOUT = 30.0
"""Seconds a freshly started program may take to answer ``start``."""
_STOP_GRACE = 1.0
"""Seconds a program asked to stop may take to exit before it is killed."""
_STDERR_KEPT = 64 << 10
_LINE_LIMIT = 256 << 20
_QUOTED = 300
_DEPTH = 500
"""Nesting kept when an answer is too deep for Python's JSON decoder."""
_KINDS = {"cmd": False, "cmd+validate": True}
"""Connectable kinds handled here, and whether each validates the protocol."""


def with_protocol_validation(spec: str) -> str:
    """The connectable ``spec`` with protocol validation on (``cmd+validate:…``), which worker
    processes load again as is; a :class:`UsageError` for a connectable that is not ``cmd:``."""
    kind, colon, command = spec.partition(":")
    if kind not in _KINDS or not colon:
        raise UsageError(
            f"--validate-protocol checks the pipe protocol of cmd: connectables; "
            f"{spec!r} is not one"
        )
    return f"cmd+validate:{command}"


def load_command(spec: str, *, timeout: float = DEFAULT_TIMEOUT) -> Implementation:
    """Load ``cmd:PROGRAM ARGS`` (or ``cmd+validate:…``): start the program once to read its
    name and declaration from its ``start`` answer, and return the implementation whose factory
    runs each stream over one long-lived program. A :class:`UsageError` says what is wrong."""
    kind, _, command = spec.partition(":")
    validate = _KINDS[kind]
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UsageError(f"{spec!r}: the command does not parse as shell words: {exc}") from None
    if not argv:
        raise UsageError(f"{spec!r}: a cmd: connectable names a program, e.g. cmd:'node a.js'")
    try:
        program = _Program(argv, validate=validate, timeout=timeout)
    except ImplementationError as exc:
        raise UsageError(f"{spec!r}: {exc.summary}") from None
    try:
        described = program.handshake()
    except ImplementationError as exc:
        raise UsageError(f"{spec!r}: {exc.summary}\n{exc.details()}") from None
    finally:
        program.stop()
    dialects = described["dialects"]
    declared = {
        "profile": described["profile"],
        "dialect": SCENARIO_DIALECT if SCENARIO_DIALECT in dialects else dialects[0],
    }
    if "observables" in described:
        declared["observables"] = described["observables"]
    declaration = declaration_from(declared, f"{spec!r}: the start answer")
    name = f"{described['name']} {described['version']} ({described['language']})"
    factory = CommandFactory(argv, declaration, validate=validate, timeout=timeout)
    return Implementation(spec, name, factory, declaration)


class CommandFactory:
    """The contract's factory for a program: one :class:`PipeStream` per stream, all over one
    program per process, started on first use and started afresh after it failed."""

    def __init__(
        self,
        argv: Sequence[str],
        declaration: Declaration,
        *,
        validate: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        """Run ``argv`` as the program; ``declaration`` gives each stream's profile and
        dialect."""
        self.argv = list(argv)
        self.declaration = declaration
        self.validate = validate
        self.timeout = timeout
        self._program: _Program | None = None
        self._seq = 0

    def __call__(self, *, tools: Sequence[Tool], limits: Limits) -> PipeStream:
        """Begin a stream offering ``tools`` under ``limits`` (the ``run`` request)."""
        program = self._program
        if program is None or not program.usable():
            self._program = None
            program = _Program(self.argv, validate=self.validate, timeout=self.timeout)
            program.handshake()
            self._program = program
            weakref.finalize(self, program.stop)  # a factory dropped takes its program along
        self._seq += 1
        program.begin_stream()
        program.request(
            {
                "cmd": "run",
                "seq": self._seq,
                "tools": [_tool_message(tool) for tool in tools],
                "limits": dataclasses.asdict(limits),
                "dialect": self.declaration.dialect,
                "profile": self.declaration.profile,
            }
        )
        return PipeStream(program, self._seq)

    @property
    def pid(self) -> int | None:
        """The process id of the running program, if one runs."""
        program = self._program
        return None if program is None or not program.usable() else program.process.pid

    def stop(self) -> None:
        """Stop the program, if one runs (it would be stopped at exit anyway)."""
        if self._program is not None:
            self._program.stop()
            self._program = None


class PipeStream:
    """One stream on the program: ``feed`` and ``close`` as the contract has them."""

    def __init__(self, program: _Program, seq: int) -> None:
        self._program = program
        self._seq = seq
        self.findings: list[str] | None = None
        """The quirk ids the program reported at ``close``, if it reports any."""

    def feed(self, data: bytes) -> list[Any]:
        """Send one chunk; the results it made final."""
        encoded = base64.b64encode(data).decode("ascii")
        results: list[Any] = self._program.request(
            {"cmd": "feed", "seq": self._seq, "data": encoded}
        )["results"]
        return results

    def close(self) -> list[Any]:
        """The connection ended; every result still to come."""
        answer = self._program.request({"cmd": "close", "seq": self._seq})
        self.findings = answer.get("findings")
        results: list[Any] = answer["results"]
        return results


# -- the schema ---------------------------------------------------------------------------------


@cache
def pipe_schema() -> dict[str, Any]:
    """The protocol's JSON Schema (``harness/schemas/pipe.schema.json``)."""
    text = resources.files("callstream").joinpath("schemas/pipe.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator(definition: str) -> Draft202012Validator:
    schema = pipe_schema()
    registry: Registry[Any] = Registry().with_resource(
        schema["$id"], Resource.from_contents(schema)
    )
    return Draft202012Validator({"$ref": f"{schema['$id']}#/$defs/{definition}"}, registry=registry)


def protocol_problem(message: Any, kind: str) -> str | None:
    """What is wrong with ``message`` by the protocol's schema, or None. ``kind`` is
    ``request``, or the command an answer answers (``start``, ``run``, ``feed``, ``close``)."""
    definition = "request" if kind == "request" else f"answers/{kind}"
    error = best_match(_validator(definition).iter_errors(message))
    if error is None:
        return None
    return f"at {error.json_path}: {error.message}"


# -- one running program ------------------------------------------------------------------------


class _Program:
    """One run of the program: its pipes, its stderr tail, one request at a time."""

    def __init__(self, argv: Sequence[str], *, validate: bool, timeout: float) -> None:
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
        self._write(_ENCODER.encode(message).encode() + b"\n", cmd, deadline)
        line = self._read_line(cmd, deadline)
        try:
            answer = _loads(line.decode())
        except ValueError as exc:
            self.fail(
                ProtocolError,
                f"answered {cmd} with a line that is not JSON ({exc}): {_quote(line)}",
            )
        if not isinstance(answer, dict):
            self.fail(
                ProtocolError,
                f"answered {cmd} with a JSON {type(answer).__name__}, not an object: "
                + _quote(line),
            )
        if cmd == "start" or self.validate:  # the start answer is always checked
            problem = protocol_problem(answer, cmd)
            if problem is not None:
                self.fail(
                    ProtocolError,
                    f"answered {cmd} with a message that breaks the schema {problem}: "
                    + _quote(line),
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
                f"not {message['seq']}: {_quote(line)}",
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
            self.fail(ProtocolError, f"answered {cmd} without a results list: {_quote(line)}")
        findings = answer.get("findings")
        if findings is not None and (
            not isinstance(findings, list) or not all(isinstance(f, str) for f in findings)
        ):
            self.fail(
                ProtocolError,
                f"answered {cmd} with findings that are not a list of quirk ids: {_quote(line)}",
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
            self.fail(ProtocolError, f"wrote a line nobody asked for: {_quote(line)}")

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
                    f"{_quote(bytes(self._pending[:_QUOTED]))}",
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

_RUNNING: set[_Program] = set()
_CLEANUP_IN: set[int] = set()


def _track(program: _Program) -> None:
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


def _plain(value: Any) -> Any:
    """JSON for the mappings and sequences tool schemas may be made of."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


_ENCODER = json.JSONEncoder(separators=(",", ":"), default=_plain)


def _int(digits: str) -> int:
    """An integer of any length: CPython refuses to convert more than 4300 digits by default,
    and a program may hand back arguments holding such a number."""
    try:
        return int(digits)
    except ValueError:
        limit = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            return int(digits)
        finally:
            sys.set_int_max_str_digits(limit)


def _loads(text: str) -> Any:
    """The JSON value of ``text``, every integer read whole; values nested deeper than Python's
    decoder can go (it recurses) are replaced by a string that says so, keeping the rest of the
    answer."""
    try:
        return json.loads(text, parse_int=_int)
    except RecursionError:
        pass
    out: list[str] = []
    depth = start = 0
    cut: int | None = None
    for at, char in outside_strings(text):
        if char is None:
            break
        if char in "[{":
            depth += 1
            if depth == _DEPTH and cut is None:
                cut = at
        elif char in "]}":
            if depth == _DEPTH and cut is not None:
                out += [text[start:cut], f'"<nested deeper than {_DEPTH} levels>"']
                start, cut = at + 1, None
            depth -= 1
    out.append(text[start:])
    return json.loads("".join(out), parse_int=_int)


def _quote(line: bytes) -> str:
    text = line.decode("utf-8", "backslashreplace")
    return repr(text if len(text) <= _QUOTED else text[:_QUOTED] + "…")


def _tool_message(tool: Tool) -> dict[str, Any]:
    """A tool as the ``run`` request offers it; a custom tool also says so, with its format
    (only then, so a function tool's message is what it always was)."""
    if tool.kind == "custom":
        return {"name": tool.name, "parameters": None, "type": "custom", "format": tool.format}
    return {"name": tool.name, "parameters": tool.parameters}

"""The ``cmd:`` connectable as the contract sees it: :func:`load_command` reads a program's
declaration, and its :class:`CommandFactory` runs each stream (a ``run``, a ``feed`` per chunk,
a ``close``) as a :class:`PipeStream` over one long-lived program per process."""

from __future__ import annotations

import base64
import dataclasses
import shlex
import weakref
from collections.abc import Sequence
from typing import Any

from callstream.reference import Limits, Tool

from ...core.declaration import (
    Declaration,
    Implementation,
    declaration_from,
)
from ...core.dialects import DIALECTS
from ...errors import ImplementationError, UsageError
from ...rules import listed_opt_ins
from .codec import tool_message
from .program import Program

__all__ = [
    "DEFAULT_TIMEOUT",
    "CommandFactory",
    "PipeStream",
    "load_command",
    "with_protocol_validation",
]

DEFAULT_TIMEOUT = 10.0
"""Seconds the program may take to answer one request before it is deemed hung."""
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
        program = Program(argv, validate=validate, timeout=timeout)
    except ImplementationError as exc:
        raise UsageError(f"{spec!r}: {exc.summary}") from None
    try:
        described = program.handshake()
    except ImplementationError as exc:
        raise UsageError(f"{spec!r}: {exc.summary}\n{exc.details()}") from None
    finally:
        program.stop()
    # The dialects it reads that callstream renders; one it renders none of reads nothing here.
    dialects = [name for name in described["dialects"] if name in DIALECTS]
    declared = {
        "profile": described["profile"],
        "dialects": dialects or described["dialects"][:1],
    }
    for optional in ("observables", "opt_ins"):
        if optional in described:
            declared[optional] = described[optional]
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
        """Run ``argv`` as the program; ``declaration`` gives each stream's profile, dialect
        and route opt-ins."""
        self.argv = list(argv)
        self.declaration = declaration
        self.validate = validate
        self.timeout = timeout
        self._program: Program | None = None
        self._seq = 0

    def __call__(
        self, *, tools: Sequence[Tool], limits: Limits, dialect: str | None = None
    ) -> PipeStream:
        """Begin a stream in ``dialect`` (default: the first the program reads) offering
        ``tools`` under ``limits`` (the ``run`` request)."""
        program = self._program
        if program is None or not program.usable():
            self._program = None
            program = Program(self.argv, validate=self.validate, timeout=self.timeout)
            program.handshake()
            self._program = program
            weakref.finalize(self, program.stop)  # a factory dropped takes its program along
        self._seq += 1
        program.begin_stream()
        run: dict[str, Any] = {
            "cmd": "run",
            "seq": self._seq,
            "tools": [tool_message(tool) for tool in tools],
            "limits": dataclasses.asdict(limits),
            "dialect": dialect or self.declaration.dialects[0],
            "profile": self.declaration.profile,
        }
        if self.declaration.opt_ins:
            # Told like the profile; a plain route's request stays as it always was.
            run["opt_ins"] = listed_opt_ins(self.declaration.opt_ins)
        program.request(run)
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

    def __init__(self, program: Program, seq: int) -> None:
        """The stream numbered ``seq`` on ``program``, whose ``run`` was answered."""
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

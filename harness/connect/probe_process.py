"""The checking process: every probe run in one process of its own, as a run's workers run
their cases, watched by the clock, so that an implementation that hangs or ends its process
costs at most the timeout, never the command."""

from __future__ import annotations

import contextlib
import signal
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from ..errors import HarnessError
from .connectables import load_in_worker
from .processes import REAP_TIMEOUT, WorkerContext, end_worker, worker_context
from .shape_probes import PROBES, Probe, StreamShape, run_probes

__all__ = ["probe_apart"]

_LOAD_TIMEOUT = 120.0
"""Seconds the checking process may take to load the implementation, as a run's worker may."""


def probe_apart(
    connectable: str, timeout: float, context: WorkerContext | None
) -> list[StreamShape]:
    """Every probe, run in one process of its own; a probe that overruns ``timeout`` or ends
    the process is the last, reported as what its stream did."""
    context = context or worker_context(__name__)
    conn, child = context.Pipe()
    process = context.Process(target=_serve, args=(connectable, child), name="callstream-check")
    process.start()
    child.close()
    try:
        loaded = _next(conn, _LOAD_TIMEOUT)
        if loaded[0] != "ready":
            why = {
                "refused": loaded[-1],
                "ended": "it ended before it loaded it",
                "overran": f"it did not load it within {_LOAD_TIMEOUT:g} s",
            }[loaded[0]]
            raise HarnessError(f"a worker could not load {connectable}: {why}")
        streams: list[StreamShape] = []
        for stream in PROBES:
            said = _next(conn, timeout)
            shape = said[1] if said[0] == "seen" else _stopped(stream, said[0], process, timeout)
            streams.append(shape)
            if shape.hung or said[0] != "seen":
                break
        return streams
    finally:
        end_worker(process)
        conn.close()


def _stopped(stream: Probe, how: str, process: BaseProcess, timeout: float) -> StreamShape:
    """The probe during which the checking process ``ended`` or ``overran`` the timeout."""
    if how == "overran":
        return StreamShape(
            stream.name, trouble=f"did not finish within the timeout ({timeout:g} s)", hung=True
        )
    process.join(REAP_TIMEOUT)  # the keeper first kills what the implementation left
    return StreamShape(
        stream.name, trouble=f"ended the process it ran in ({_how(process.exitcode)})"
    )


def _next(conn: Connection, timeout: float) -> tuple[Any, ...]:
    """The checking process's next message: ``("ready",)``, ``("refused", why)``,
    ``("seen", StreamShape)``, or ``("ended",)`` when it ended, ``("overran",)`` when it said
    nothing within ``timeout`` seconds."""
    if not conn.poll(timeout):
        return ("overran",)
    try:
        message: tuple[Any, ...] = conn.recv()
    except (EOFError, OSError):
        return ("ended",)
    return message


def _serve(connectable: str, conn: Connection) -> None:
    """The checking process: load the implementation, then send what each probe showed. On
    Linux the process called splits first, as a run's worker does: it stays behind as the
    keeper of the rest, so nothing the implementation starts outlives the check."""
    implementation = load_in_worker(connectable, conn)
    if implementation is None:
        return
    for shape in run_probes(implementation):
        conn.send(("seen", shape))


def _how(code: int | None) -> str:
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"

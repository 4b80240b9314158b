"""Process hygiene: finding and ending every process an implementation started.

An implementation may start helpers of its own: a child that outlives a stream, a program's
helper, a daemon that forks twice and calls ``setsid`` to leave its parent's session. None of
them may outlive the run. Three handles reach them, strongest first:

- **descendants** (Linux): a process that is a *child subreaper* (``PR_SET_CHILD_SUBREAPER``)
  adopts every orphan below it, so while it lives, everything started beneath it, daemons
  included, stays in its tree, which :func:`kill_tree` freezes and kills through ``/proc``.
- **a scope mark** (Linux): a program is started with ``CALLSTREAM_SCOPE=<token>`` in its
  environment; every process forked or executed below it keeps the mark in
  ``/proc/<pid>/environ`` (unless it executes a program with a scrubbed environment), whoever
  its parent is by then, and :func:`kill_marked` ends them all.
- **the process group** (POSIX): each implementation process leads its own group, which
  :func:`kill_group` ends; it misses only what called ``setsid`` or ``setpgid``.

Elsewhere than on Linux only the process group is available.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import secrets
import signal
import sys
import threading
from collections.abc import Iterator
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext, SpawnContext
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import NoReturn

__all__ = [
    "REAP_TIMEOUT",
    "SCOPE_VARIABLE",
    "become_subreaper",
    "end_worker",
    "exit_with_parent",
    "keep",
    "kill_group",
    "kill_marked",
    "kill_tree",
    "new_scope",
    "reap_children",
    "start_worker",
    "worker_context",
]

REAP_TIMEOUT = 5.0
"""Seconds a worker that has finished (closed its pipe, reported, or ended) may take to exit
and be reaped before it is killed: its keeper first kills what the implementation left."""

WorkerContext = ForkServerContext | SpawnContext

SCOPE_VARIABLE = "CALLSTREAM_SCOPE"
"""The environment variable that marks a program and everything it starts."""
_PROC = Path("/proc")
_PR_SET_CHILD_SUBREAPER = 36
_FREEZE_ROUNDS = 100
"""Scans for new descendants before the tree is killed as it stands (a fork bomb)."""


def new_scope() -> str:
    """A fresh token for :data:`SCOPE_VARIABLE`, unique to this run of one program."""
    return f"{os.getpid()}-{secrets.token_hex(8)}"


def become_subreaper() -> bool:
    """Make this process adopt the orphans of its descendants (Linux); False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    return bool(prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def keep(server: int) -> NoReturn:
    """Be the keeper of ``server``, a child forked after :func:`become_subreaper`: reap the
    orphans this process adopts until ``server`` ends, then kill every process left below it
    and end as ``server`` ended (its exit code, or its signal)."""
    while True:
        pid, status = os.wait()
        if pid == server:
            break
    kill_tree(os.getpid(), including_root=False)
    with contextlib.suppress(ChildProcessError):
        while True:
            os.wait()
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code if code >= 0 else 128 - code)


def exit_with_parent() -> None:
    """End this worker process when its parent dies, even while the implementation hangs (run
    it in a daemon thread)."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        parent.join()
        os._exit(1)


def start_worker(conn: Connection) -> None:
    """Make this process a worker that runs an implementation: ^C is left to the parent, the
    worker leads its own process group, and it ends when its parent does. On Linux the process
    splits first: the one called stays behind as the keeper of whatever the implementation
    starts (:func:`keep`, which never returns) and its child returns here to serve, so the
    parent sees ``conn`` close when the serving process ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.setpgid(0, 0)
    if become_subreaper():
        server = os.fork()
        if server:
            conn.close()
            keep(server)
    threading.Thread(target=exit_with_parent, daemon=True).start()


def end_worker(process: BaseProcess, *, grace: float = 0.0) -> None:
    """End a worker started with :func:`start_worker`, and everything it started: give it
    ``grace`` seconds to exit by itself (its keeper first kills what the implementation left),
    kill it with its tree if it has not, reap it, then kill what is left in its process group."""
    pid = process.pid
    if pid is None:  # never started: there is nothing to end
        return
    process.join(grace)
    if process.exitcode is None:
        kill_tree(pid)
        process.join()
    # The group outlives its leader while a member is left, and its id cannot be reused then.
    kill_group(pid)


def kill_group(pgid: int) -> None:
    """Kill every process left in process group ``pgid``, if any is."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def kill_tree(root: int, *, including_root: bool = True) -> None:
    """Kill every descendant of ``root`` (and ``root`` itself, unless told not to).

    The tree is frozen first (``SIGSTOP``, scan after scan until no new process appears), so a
    process cannot fork a child that escapes the kill, then every process is killed at once.
    Without ``/proc`` only ``root`` is killed.
    """
    frozen: set[int] = set()
    if including_root:
        _signal(root, signal.SIGSTOP)
        frozen.add(root)
    for _ in range(_FREEZE_ROUNDS):
        fresh = _descendants(root) - frozen
        if not fresh:
            break
        for pid in fresh:
            _signal(pid, signal.SIGSTOP)
        frozen |= fresh
    for pid in frozen:
        _signal(pid, signal.SIGKILL)


def kill_marked(token: str) -> None:
    """Kill every process whose environment carries ``CALLSTREAM_SCOPE=token``."""
    mark = f"{SCOPE_VARIABLE}={token}".encode()
    for _ in range(_FREEZE_ROUNDS):
        found = [pid for pid in _pids() if mark in _environ(pid)]
        if not found:
            return
        for pid in found:
            _signal(pid, signal.SIGKILL)


def reap_children() -> None:
    """Wait for every child of this process that has ended, without blocking."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def _pids() -> Iterator[int]:
    """Every live process but this one (and none without ``/proc``)."""
    own = os.getpid()
    with contextlib.suppress(OSError):
        for entry in os.scandir(_PROC):
            if entry.name.isdigit() and int(entry.name) != own:
                yield int(entry.name)


def _descendants(root: int) -> set[int]:
    """The processes below ``root`` now, by their parent ids in ``/proc`` (zombies left out:
    they have ended, and their children already have a new parent)."""
    children: dict[int, list[int]] = {}
    for pid in _pids():
        parent = _parent(pid)
        if parent is not None:
            children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _parent(pid: int) -> int | None:
    """The parent of a live process, or None for a zombie or a process gone meanwhile."""
    try:
        stat = (_PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    # "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last.
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 2 or fields[0] == b"Z":
        return None
    return int(fields[1])


def _environ(pid: int) -> bytes:
    try:
        return (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return b""


def worker_context(preload: str) -> WorkerContext:
    """The way to start worker processes: forkserver where there is one (workers fork from a
    clean server that has ``preload`` imported, not from a parent that may run threads), spawn
    elsewhere."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([preload])
        return context
    return multiprocessing.get_context("spawn")

"""A ``cmd:`` program that first starts a helper of its own, then becomes ``program.py``::

    python tests/fauxmplementations/spawning.py KIND MODE --pids FILE

KIND is ``child`` (a forked process that sleeps, in the program's group) or ``daemon`` (one that
forks twice and calls ``setsid``, leaving the group); MODE is ``program.py``'s (``well``,
``hang``, ``crash``, …). The helper's pid goes to FILE before the program's own, so a test can
check that neither outlives the harness. :func:`spawn` is ``forking.py``'s too.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import NoReturn


def main() -> None:
    kind, mode, _, pids = sys.argv[1:5]
    helper = spawn(daemon=kind == "daemon")
    with open(pids, "a") as file:
        file.write(f"{helper}\n")
    program = str(Path(__file__).with_name("program.py"))
    os.execv(sys.executable, [sys.executable, program, mode, "--pids", pids])


def spawn(*, daemon: bool) -> int:
    """Fork a process that sleeps until killed (a daemon: forking twice, with ``setsid``
    between), its standard streams on ``/dev/null`` as a daemon's are; its pid, once it runs."""
    read, write = os.pipe()
    first = os.fork()
    if first == 0:
        os.close(read)
        null = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):
            os.dup2(null, stream)
        if daemon:
            os.setsid()
            if os.fork():
                os._exit(0)
        _sleep(write)
    os.close(write)
    with os.fdopen(read, "rb") as said:
        pid = int(said.read())
    if daemon:
        os.waitpid(first, 0)
    return pid


def _sleep(pipe: int) -> NoReturn:
    os.write(pipe, str(os.getpid()).encode())
    os.close(pipe)
    while True:
        time.sleep(60)


if __name__ == "__main__":
    main()

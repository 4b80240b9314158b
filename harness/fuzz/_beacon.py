"""How a worker keeps its supervisor told what it runs without sending a word: when its stream
started, in shared memory, and the choices of its example, in a file."""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

_BUSY, _EXAMPLE = 0, 1
"""The slots of a worker's shared array: when its current stream started (``time.time()``, 0
between streams), and the number of the example it is running."""


class _Beacon:
    """What a worker keeps its supervisor told without a message: when the stream it runs
    started (to notice a hang no signal ends) and the choices of the example it runs (to
    replay one that ends the process). Cheap enough for every example: a store into shared
    memory, and a few hundred pickled choices written to a file."""

    def __init__(self, shared: Any, path: str) -> None:
        self.shared = shared
        self.file = open(path, "wb")  # noqa: SIM115 (kept open for the life of the worker)

    def example(self, number: int, choices: Sequence[object]) -> None:
        """Write down the example about to run (every draw made): its ``choices``, Hypothesis's
        own record of it, those of its test case that drew it alone, so that they replay as a
        test case of their own."""
        written = pickle.dumps(choices, protocol=pickle.HIGHEST_PROTOCOL)
        os.pwrite(self.file.fileno(), written, 0)
        os.ftruncate(self.file.fileno(), len(written))
        self.shared[_EXAMPLE] = number

    @contextmanager
    def running(self) -> Iterator[None]:
        """The clock the supervisor watches, while a stream runs."""
        self.shared[_BUSY] = time.time()
        try:
            yield
        finally:
            self.shared[_BUSY] = 0.0

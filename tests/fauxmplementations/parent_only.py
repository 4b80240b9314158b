"""An implementation module that cannot be imported in a worker process, so the harness's own
failure (exit code 3) can be tested: the parent loads it, its workers cannot."""

from __future__ import annotations

import multiprocessing

from callstream.reference import Assembler

if multiprocessing.parent_process() is not None:
    raise ImportError("fauxmplementation: refuses to load in a worker process")

factory = Assembler

"""Running a corpus against an implementation: every case (scenario × profile × splitting) in
worker processes, each stream within a timeout, written to the report as it comes.

- ``execution`` — :func:`run`, ``callstream run`` and the summary it prints;
- ``shard`` — one run split across CI jobs (``--shard K/N``).
"""

from .execution import RunSummary, default_timeout, run, run_command, select_scenarios
from .shard import Shard, corpus_fingerprint

__all__ = [
    "RunSummary",
    "Shard",
    "corpus_fingerprint",
    "default_timeout",
    "run",
    "run_command",
    "select_scenarios",
]

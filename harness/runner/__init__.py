"""Running a corpus against an implementation: every case (scenario × profile × splitting) in
worker processes, each stream within a timeout, written to the report as it comes.

- ``execution`` — :func:`run` and ``callstream run``;
- ``cases`` — the cases of a run, and the scenarios ``-k`` selects;
- ``workers`` — the worker processes that run the cases, watched by the clock;
- ``ledger`` — verdicts written in case order, however they arrive;
- ``progress`` — a run's progress, as a bar or as lines;
- ``summary`` — what a run did, and what is printed after it;
- ``shard`` — one run split across CI jobs (``--shard K/N``).
"""

from .cases import Case, expand, select_scenarios
from .execution import default_timeout, run, run_command
from .progress import make_progress
from .shard import Shard, corpus_fingerprint
from .summary import RunSummary, describe_failing, explain

__all__ = [
    "Case",
    "RunSummary",
    "Shard",
    "corpus_fingerprint",
    "default_timeout",
    "describe_failing",
    "expand",
    "explain",
    "make_progress",
    "run",
    "run_command",
    "select_scenarios",
]

"""``callstream fuzz``: generated streams against an implementation, shrunk finds kept as YAML.
Needs the ``fuzz`` extra (Hypothesis).

- ``search`` — the search, its workers and their supervisor, shrinking and minimising a find.
"""

from ._progress import FuzzProgress, make_fuzz_progress
from .search import FUZZ_PROFILES, FuzzResult, database_for, describe, fuzz, minimise, settings_for

__all__ = [
    "FUZZ_PROFILES",
    "FuzzProgress",
    "FuzzResult",
    "database_for",
    "describe",
    "fuzz",
    "make_fuzz_progress",
    "minimise",
    "settings_for",
]

"""``callstream fuzz``: generated streams against an implementation, shrunk finds kept as YAML.
Needs the ``fuzz`` extra (Hypothesis).

- ``search`` — the search, its workers and their supervisor, shrinking and minimising a find.
"""

from ._profiles import FUZZ_PROFILES, database_for, settings_for
from ._progress import FuzzProgress, make_fuzz_progress
from .search import FuzzResult, describe, fuzz, minimise

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

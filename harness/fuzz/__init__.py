"""``callstream fuzz``: generated streams against an implementation, shrunk finds kept as YAML.
Needs the ``fuzz`` extra (Hypothesis).

- ``search`` — the search, its workers and their supervisor, shrinking and minimising a find.
"""

from ._minimising import minimise
from ._profiles import FUZZ_PROFILES, database_for, settings_for
from ._progress import FuzzProgress, make_fuzz_progress

# How a search runs one case, in this process or alone in a process of its own, for the bench
# that times the two and the tests that aim implementations at them. Out of ``__all__`` on
# purpose: Hypothesis mixes the string literals of local modules, ``__all__``'s included, into
# what it draws, so a new name there would change the examples a derandomised search draws.
from ._result import FuzzResult, describe
from ._running import InProcess as InProcess
from ._running import Isolated as Isolated
from .search import fuzz

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

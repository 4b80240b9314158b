"""``callstream fuzz``: generated streams against an implementation, shrunk finds kept as YAML.
Needs the ``fuzz`` extra (Hypothesis).

The generators (``callstream.strategies``) draw a Scenario and a splitting; the same oracle, checks
and case runner as ``callstream run`` judge it. Hypothesis shrinks a failure to a minimal
scenario, which is written out under ``scenarios/regressions/`` (the example database is a
cache, not a corpus), with the same reports as ``run``.

The modules, from the command down (private: what the package offers is here):

- ``_session`` — :func:`fuzz`, one session from its arguments to the saved find and the report;
- ``_workers`` — the search processes, and the supervisor that replays the example that ended one;
- ``_warming`` — what the server the workers fork from draws first, so no worker pays for it;
- ``_beacon`` — what a worker keeps its supervisor told without a message;
- ``_searching`` — one process's search: Hypothesis runs, four examples (cases) a test case;
- ``_minimising`` — :func:`minimise`, a find cut down past where Hypothesis's shrinker stops;
- ``_running`` — one case run in this process (:class:`InProcess`) or alone (:class:`Isolated`);
- ``_profiles`` — the dev, ci and nightly profiles: :func:`settings_for`, :func:`database_for`;
- ``_progress`` — the search's progress as it goes: :func:`make_fuzz_progress`;
- ``_result`` — :class:`FuzzResult`, what a session found, its report and :func:`describe`.
"""

from ._minimising import minimise
from ._profiles import FUZZ_PROFILES, database_for, settings_for
from ._progress import FuzzProgress, make_fuzz_progress
from ._result import FuzzResult, describe

# Public for the bench, which times the two runners and draws what a search draws as a search
# draws it (``draw_examples``: ``EXAMPLES_PER_TEST_CASE`` to a test case), and for the
# hostile tests, which aim implementations at the runners. Out of ``__all__`` on purpose:
# Hypothesis now and then draws the short string literals of local modules (a checkout, an
# editable install), ``__all__``'s among them, so a new name there can change the examples a
# derandomised search draws.
from ._running import InProcess as InProcess
from ._running import Isolated as Isolated
from ._searching import EXAMPLES_PER_TEST_CASE as EXAMPLES_PER_TEST_CASE
from ._searching import draw_examples as draw_examples
from ._searching import drawn_cases as drawn_cases
from ._searching import drawn_scenarios as drawn_scenarios
from ._session import fuzz

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

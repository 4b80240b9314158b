"""Hypothesis settings profiles, registered explicitly (never inherited from Hypothesis's own
``ci`` profile, which it loads by itself when ``CI`` is set).

- ``dev`` (default on a workstation): randomised, a local example database.
- ``ci`` (default when ``CI`` is set): derandomised, bounded, no database writes.
- ``nightly``: randomised and long; choose it with ``CALLSTREAM_HYPOTHESIS_PROFILE=nightly``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "phases": tuple(Phase),
}
settings.register_profile(
    "dev",
    derandomize=False,
    database=DirectoryBasedExampleDatabase(".hypothesis/examples"),
    print_blob=False,
    **_COMMON,
)
settings.register_profile(
    "ci", derandomize=True, database=None, print_blob=True, max_examples=100, **_COMMON
)
settings.register_profile(
    "nightly",
    derandomize=False,
    database=DirectoryBasedExampleDatabase(".hypothesis/examples"),
    print_blob=True,
    max_examples=20_000,
    **_COMMON,
)
settings.load_profile(
    os.environ.get("CALLSTREAM_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)

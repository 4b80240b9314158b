"""Hypothesis settings profiles: ``callstream fuzz``'s own (``callstream.fuzz.settings_for``,
which sets every field explicitly, so nothing comes from the ``ci`` profile Hypothesis loads by
itself when ``CI`` is set), with what the tests need on top.

- ``dev`` (default on a workstation): randomised, a local example database.
- ``ci`` (default when ``CI`` is set): derandomised, bounded, no database.
- ``nightly``: randomised and long; choose it with ``CALLSTREAM_HYPOTHESIS_PROFILE=nightly``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from unittest import mock

import pytest
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.internal.conjecture import providers
from hypothesis.internal.constants_ast import Constants

from callstream.fuzz import FUZZ_PROFILES, database_for, settings_for

EXAMPLES = {"dev": 100, "ci": 100, "nightly": 20_000}
"""Examples per test under each profile."""

for profile in FUZZ_PROFILES:
    settings.register_profile(
        profile,
        settings_for(
            profile,
            max_examples=EXAMPLES[profile],
            database=database_for(".hypothesis/examples", profile=profile, writable=True),
        ),
        # ``callstream fuzz`` reports a find itself, one per run; a test reports through
        # Hypothesis, which prints the falsifying example, every distinct failure, what could
        # vary in it (the explain phase) and, where no database keeps it, the blob to reproduce it.
        verbosity=Verbosity.normal,
        report_multiple_bugs=True,
        print_blob=profile != "dev",
        # Every phase under ci too (the fuzz leaves target out of its bounded budget), and the
        # health checks but the two the generators trip by design: the examples the suite draws,
        # and what fails it, stay what they were.
        phases=tuple(Phase),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
settings.load_profile(
    os.environ.get("CALLSTREAM_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


@pytest.fixture
def stable_constants() -> Iterator[None]:
    """Hypothesis without the constants it takes, now and then, from the source of the local
    modules imported so far: a derandomised ``find`` then meets the same examples alone, in a
    pytest-xdist worker or after another test file (what tests/quality/test_generator_coverage.py
    does for its sample)."""
    with (
        mock.patch.object(providers, "_get_local_constants", Constants),
        mock.patch.object(providers, "CONSTANTS_CACHE", {}),
    ):
        yield

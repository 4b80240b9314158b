"""The fuzz profiles: the Hypothesis settings and the example database of each.

Settings profiles are built here explicitly, never inherited from the ``ci`` profile Hypothesis
loads by itself when ``CI`` is set:

- ``dev``: randomised, a local example database;
- ``ci``: derandomised, bounded, no database;
- ``nightly``: randomised, time-budgeted, a shared example database (a folder, or Redis),
  read-only unless ``--db-write`` is given.

The test suite's profiles are these, with Hypothesis's own reporting on top
(``tests/conftest.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    ReadOnlyDatabase,
    choices_to_bytes,
)

from ..errors import UsageError

FUZZ_PROFILES = ("dev", "ci", "nightly")
"""The fuzz profiles by name, what ``callstream fuzz --profile`` takes."""


def database_for(where: str | None, *, profile: str, writable: bool) -> ExampleDatabase | None:
    """The example database for a profile: none for ``ci``; a folder or Redis otherwise."""
    if profile == "ci":
        return None
    location = where or ".hypothesis/callstream"
    if location.startswith("redis://"):
        try:
            import redis  # type: ignore[import-not-found,unused-ignore]
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError:
            raise UsageError("--db redis://… needs the redis package: pip install redis") from None
        database: ExampleDatabase = RedisExampleDatabase(redis.Redis.from_url(location))
    else:
        database = DirectoryBasedExampleDatabase(location)
    if profile == "nightly" and not writable:
        return ReadOnlyDatabase(database)
    return database


def settings_for(profile: str, *, max_examples: int, database: ExampleDatabase | None) -> settings:
    """The Hypothesis settings of a fuzz profile, every field that matters set explicitly.

    ``ci`` is derandomised, which in Hypothesis means no database; the randomised profiles keep
    ``database`` and let Hypothesis choose each run's seed (``@seed`` would turn the database
    off too). Hypothesis prints nothing (``Verbosity.quiet``): the command reports for itself,
    and a stopped randomised search would otherwise print a "reproduce with @seed" line."""
    if profile not in FUZZ_PROFILES:
        raise UsageError(f"unknown fuzz profile {profile!r}; known: {', '.join(FUZZ_PROFILES)}")
    return settings(
        max_examples=max_examples,
        derandomize=profile == "ci",
        database=None if profile == "ci" else database,
        deadline=None,
        print_blob=False,
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        # Hill-climbing on target() scores pays off over long runs, not in a bounded CI budget;
        # the explain phase (which parts of a shrunk example could vary) cost two thirds of
        # the time after a find and says nothing the saved scenario does not.
        phases=tuple(
            p
            for p in Phase
            if p is not Phase.explain and (profile != "ci" or p is not Phase.target)
        ),
        suppress_health_check=list(HealthCheck),
    )


class _Replay(ExampleDatabase):
    """A database that holds one example, for Hypothesis to replay and shrink; what shrinking
    saves goes on to ``saved`` (the user's database, when there is one).

    The example is offered as a *secondary* entry (one that once failed on the way to a
    smaller failure): Hypothesis replays secondary entries and shrinks what still fails, where
    it takes a primary entry for a failure it has already shrunk."""

    def __init__(self, choices: Iterable[Any], saved: ExampleDatabase | None) -> None:
        super().__init__()
        self._example = choices_to_bytes(choices)
        self._saved = saved

    def fetch(self, key: bytes) -> Iterable[bytes]:
        """The example under the secondary key, nothing under the others."""
        if key.endswith(b".secondary"):
            yield self._example

    def save(self, key: bytes, value: bytes) -> None:
        """Saved on to the user's database."""
        if self._saved is not None:
            self._saved.save(key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        """Deleted from the user's database."""
        if self._saved is not None:
            self._saved.delete(key, value)

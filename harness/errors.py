"""The harness's own errors, kept apart from what an implementation does wrong.

An implementation that misbehaves produces *results* (a rejected call, a failed check), never
one of these. These are for the person running callstream::

    HarnessError            the harness itself failed (exit code 3)
    └── UsageError          bad arguments or input files: names the file, line or byte (exit code 2)
"""

from __future__ import annotations

__all__ = ["HarnessError", "UsageError"]


class HarnessError(Exception):
    """callstream could not do its job. Exit code 3."""

    exit_code = 3


class UsageError(HarnessError, ValueError):
    """A command was given something it cannot use; the message says where. Exit code 2."""

    exit_code = 2

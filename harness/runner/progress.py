"""Showing a run's progress as verdicts arrive: a bar on a terminal, a line every few seconds
in a CI log, or nothing."""

from __future__ import annotations

import time
from typing import Protocol, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress

from ..core.case import CaseResult
from .summary import UNSETTLED

__all__ = ["Progress", "Silent", "make_progress"]


class Progress(Protocol):
    """Shows a run's progress as verdicts arrive."""

    def start(self, total: int) -> None:
        """The run has ``total`` cases."""

    def advance(self, result: CaseResult) -> None:
        """One more case is settled."""

    def finish(self) -> None:
        """The run is over (finished, stopped or interrupted)."""


def make_progress(stream: TextIO) -> Progress:
    """A progress bar on a terminal, plain periodic lines elsewhere (CI logs)."""
    return _Bar(stream) if stream.isatty() else _Lines(stream)


class _Lines:
    """Prints ``callstream: 120/800 cases, 3 failed`` at most every ``interval`` seconds."""

    def __init__(self, stream: TextIO, interval: float = 10.0) -> None:
        """Write to ``stream``."""
        self._stream = stream
        self._interval = interval
        self._total = 0
        self._done = 0
        self._failed = 0
        self._last = 0.0

    def start(self, total: int) -> None:
        """Announce the run."""
        self._total = total
        self._last = time.monotonic()
        self._line(f"running {total} cases")

    def advance(self, result: CaseResult) -> None:
        """Count a verdict; print a line when ``interval`` has passed."""
        self._done += 1
        self._failed += result.outcome in UNSETTLED
        if time.monotonic() - self._last >= self._interval:
            self._status()

    def finish(self) -> None:
        """The final count."""
        self._status()

    def _status(self) -> None:
        self._last = time.monotonic()
        self._line(f"{self._done}/{self._total} cases, {self._failed} failed")

    def _line(self, text: str) -> None:
        print(f"callstream: {text}", file=self._stream, flush=True)


class _Bar:
    """A rich progress bar with the failure count."""

    def __init__(self, stream: TextIO) -> None:
        self._failed = 0
        self._bar = RichProgress(
            TextColumn("callstream"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            console=Console(file=stream),
        )
        self._task = self._bar.add_task("cases", total=None, failed=0)

    def start(self, total: int) -> None:
        self._bar.update(self._task, total=total)
        self._bar.start()

    def advance(self, result: CaseResult) -> None:
        self._failed += result.outcome in UNSETTLED
        self._bar.update(self._task, advance=1, failed=self._failed)

    def finish(self) -> None:
        self._bar.stop()


class Silent:
    """No progress display."""

    def start(self, total: int) -> None:
        """Show nothing."""

    def advance(self, result: CaseResult) -> None:
        """Show nothing."""

    def finish(self) -> None:
        """Show nothing."""

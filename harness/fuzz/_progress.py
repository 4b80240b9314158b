"""How a fuzzing session shows its progress: a live status line on a terminal, a plain line every
ten seconds in a CI log, or nothing."""

from __future__ import annotations

import time
from collections.abc import Set as AbstractSet
from typing import Protocol, TextIO

from rich.console import Console
from rich.live import Live
from rich.text import Text


class FuzzProgress(Protocol):
    """Where ``fuzz`` shows how the search goes."""

    def start(self, examples: int | None, duration: float | None) -> None:
        """The budget: examples, seconds, or both."""

    def update(self, examples: int, labels: AbstractSet[str], failing: bool) -> None:
        """Examples run so far (all workers), distinct events seen, whether a failure was
        found (it is being shrunk until ``finish``)."""

    def finish(self) -> None:
        """The search is over."""


def make_fuzz_progress(stream: TextIO) -> FuzzProgress:
    """A live status line on a terminal, a plain line every ten seconds elsewhere (CI logs)."""
    return _LiveStatus(stream) if stream.isatty() else _StatusLines(stream)


class _Quiet:
    def start(self, examples: int | None, duration: float | None) -> None:
        pass

    def update(self, examples: int, labels: AbstractSet[str], failing: bool) -> None:
        pass

    def finish(self) -> None:
        pass


class _Status:
    """The figures both displays show."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.examples = 0
        self.events = 0
        self.failing = False
        self.done = False
        self.budget: int | None = None
        self.deadline: float | None = None

    def start(self, examples: int | None, duration: float | None) -> None:
        self.started = time.monotonic()
        self.budget = examples
        self.deadline = None if duration is None else self.started + duration

    def record(self, examples: int, labels: AbstractSet[str], failing: bool) -> None:
        self.examples, self.events, self.failing = examples, len(labels), failing

    def text(self) -> str:
        now = time.monotonic()
        rate = self.examples / max(now - self.started, 1e-9)
        budget = "" if self.budget is None else f"/{self.budget}"
        parts = [
            f"{self.examples}{budget} examples ({rate:.0f}/s)",
            "0 failures"
            if not self.failing
            else "1 failure"
            if self.done
            else "1 failure, shrinking",
            f"{self.events} distinct events",
        ]
        if self.deadline is not None:
            parts.append(f"{_clock(max(0.0, self.deadline - now))} left")
        elif self.budget and rate > 0 and not self.failing and not self.done:
            parts.append(f"about {_clock((self.budget - self.examples) / rate)} left")
        return ", ".join(parts)


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes}:{seconds:02d}"


class _StatusLines(_Status):
    """``callstream fuzz: 1200/3000 examples (41/s), 0 failures, 96 distinct events, …``
    at most every ``interval`` seconds."""

    def __init__(self, stream: TextIO, interval: float = 10.0) -> None:
        super().__init__()
        self._stream = stream
        self._interval = interval
        self._last = 0.0
        self._was_failing = False

    def start(self, examples: int | None, duration: float | None) -> None:
        super().start(examples, duration)
        self._last = time.monotonic()

    def update(self, examples: int, labels: AbstractSet[str], failing: bool) -> None:
        self.record(examples, labels, failing)
        now = time.monotonic()
        if now - self._last >= self._interval or (failing and not self._was_failing):
            self._last = now
            self._line()
        self._was_failing = failing

    def finish(self) -> None:
        self.done = True
        self._line()

    def _line(self) -> None:
        print(f"callstream fuzz: {self.text()}", file=self._stream, flush=True)


class _LiveStatus(_Status):
    """A status line redrawn in place (rich), four times a second."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._live = Live(console=Console(file=stream), refresh_per_second=4, transient=False)

    def start(self, examples: int | None, duration: float | None) -> None:
        super().start(examples, duration)
        self._live.start()
        self._live.update(Text(f"callstream fuzz: {self.text()}"))

    def update(self, examples: int, labels: AbstractSet[str], failing: bool) -> None:
        self.record(examples, labels, failing)
        self._live.update(Text(f"callstream fuzz: {self.text()}"))

    def finish(self) -> None:
        self.done = True
        self._live.update(Text(f"callstream fuzz: {self.text()}"))
        self._live.stop()

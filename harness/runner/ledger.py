"""Writing a run's verdicts in case order, whatever order they arrive in, so that the report
does not depend on the number of workers and ``max_fail`` counts failures in that order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..core.case import CaseResult
from .summary import UNSETTLED

__all__ = ["Ledger", "ReportSink"]


class ReportSink(Protocol):
    """Where a run writes its report lines (:class:`callstream.reports.ReportWriter`)."""

    def header(self, fields: Mapping[str, Any]) -> None:
        """The first line: what runs, on what (the writer adds times, versions, platform)."""

    def result(self, case: CaseResult) -> None:
        """One verdict, in case order."""

    def footer(self, fields: Mapping[str, Any]) -> None:
        """The last line, written when the run finished (the writer adds times and counts)."""


class Ledger:
    """Holds verdicts that arrive early and writes them in case order; counts failures."""

    def __init__(self, report: ReportSink, max_fail: int | None) -> None:
        """Write to ``report``; with a ``max_fail``, say when that many failures are written."""
        self.report = report
        self.max_fail = max_fail
        self.written: list[CaseResult] = []
        self.failed = 0
        self._early: dict[int, CaseResult] = {}

    def add(self, number: int, result: CaseResult) -> bool:
        """Take case ``number``'s verdict; True once ``max_fail`` failures are written."""
        self._early[number] = result
        while len(self.written) in self._early:
            result = self._early.pop(len(self.written))
            self.report.result(result)
            self.written.append(result)
            if result.outcome in UNSETTLED:
                self.failed += 1
                if self.max_fail is not None and self.failed >= self.max_fail:
                    return True
        return False

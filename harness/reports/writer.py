"""Writing a run's folder: ``report.jsonl`` line by line as the run goes (:class:`ReportWriter`),
then every other format rendered from that file alone."""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from typing import Any

from ..core.case import OUTCOMES, CaseResult
from ..errors import HarnessError, UsageError
from .badge import badge_json
from .html import html_page
from .junit import junit_xml
from .markdown import summary_markdown
from .model import FORMAT, JSONL, Report, callstream_version, line_problem, load_report, utc_now

__all__ = [
    "ReportWriter",
    "new_run_folder",
    "render_reports",
    "write_files",
    "write_report",
]


def new_run_folder(
    root: str | PathLike[str] = "reports", now: datetime | None = None, prefix: str = "run"
) -> Path:
    """Create and return a fresh run folder, ``root/<prefix>-YYYYMMDD-HHMMSS`` (UTC), with
    ``-2``, ``-3``… added when runs start in the same second."""
    stamp = (now or datetime.now(UTC)).strftime(f"{prefix}-%Y%m%d-%H%M%S")
    Path(root).mkdir(parents=True, exist_ok=True)
    for n in range(1, 1000):
        folder = Path(root) / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return folder
    raise HarnessError(f"{root}: too many runs started at {stamp}")


class ReportWriter:
    """Writes one run's folder: ``report.jsonl`` line by line while the run goes, then, by
    ``render()``, every other format from that file.

    Call ``header()`` once, ``result()`` per case, ``footer()`` once, then ``render()``. Used
    as a context manager, the file is closed however the run ends; lines already written stay.
    """

    def __init__(self, folder: str | PathLike[str]) -> None:
        self.folder = Path(folder)
        self.path = self.folder / JSONL
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("x", encoding="utf-8", newline="\n", errors="strict")
        except FileExistsError:
            raise UsageError(f"{self.folder}: already holds a report") from None
        except OSError as exc:
            raise UsageError(f"{self.folder}: cannot write the report: {exc.strerror}") from None
        self._lines = 0
        self._footer_written = False
        self._counts = dict.fromkeys(OUTCOMES, 0)
        self._clock = time.monotonic()

    def __enter__(self) -> ReportWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def header(self, fields: Mapping[str, Any]) -> None:
        """Write the first line. ``fields`` gives the implementation, argv, the scenario and
        case counts and the filter; the format, the callstream version, the start time, the
        Python version and the platform are filled in unless given."""
        if self._lines:
            raise HarnessError("the report header must be its first line, written once")
        self._clock = time.monotonic()
        defaults = {
            "type": "header",
            "format": FORMAT,
            "callstream": callstream_version(),
            "started": utc_now(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        }
        self._write(defaults | dict(fields))

    def result(self, case: CaseResult) -> None:
        """Append the verdict on one case and flush it to disk. Its line is
        ``CaseResult.to_dict()``, whose every outcome the tests hold to the report schema
        (``tests/test_report.py``), so it is not checked again here: checking each line cost a
        main job's parent 1.5 s of processor time, taken from the workers beside it."""
        if not self._lines or self._footer_written:
            raise HarnessError("a result line must come between the header and the footer")
        self._write(case.to_dict(), known_valid=True)
        self._counts[case.outcome] += 1

    def footer(self, fields: Mapping[str, Any]) -> None:
        """Write the last line and close the file. ``fields`` gives the exit code and whether
        the run stopped early; the finish time, the elapsed seconds since ``header()`` and the
        counts of the results written are filled in unless given."""
        if not self._lines or self._footer_written:
            raise HarnessError("the report footer must follow the header, written once")
        defaults = {
            "type": "footer",
            "finished": utc_now(),
            "elapsed": round(time.monotonic() - self._clock, 3),
            "counts": dict(self._counts),
        }
        self._write(defaults | dict(fields))
        self._footer_written = True
        self.close()

    def render(self) -> list[Path]:
        """Close ``report.jsonl`` and render the other formats from it; the files written."""
        self.close()
        # Every line is valid as written (see ``_write``): reading it back need not check it
        # against the schema again (for a main job, 6 000 lines and about 1.6 s).
        return _render(self.folder, load_report(self.path, validate=False))

    def close(self) -> None:
        """Close ``report.jsonl``; what was written stays."""
        self._file.close()

    def _write(self, line: dict[str, Any], *, known_valid: bool = False) -> None:
        """Write ``line``, checked against the report schema first unless it is
        ``known_valid`` (a verdict's line, valid by construction)."""
        if self._file.closed:
            raise HarnessError(f"{self.path}: the report is closed")
        number = self._lines + 1
        problem = None if known_valid else line_problem(line)
        if problem:
            raise HarnessError(
                f"{self.path}:{number}: refusing to write an invalid line: {problem}"
            )
        try:
            text = json.dumps(line, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise HarnessError(f"{self.path}:{number}: cannot write the line: {exc}") from None
        # A lone surrogate cannot be encoded as UTF-8; written backslash-escaped it reads back
        # as the JSON escape for itself, so the string still round-trips.
        self._file.write(text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")
        self._file.flush()
        self._lines = number


def write_report(folder: str | PathLike[str], report: Report) -> list[Path]:
    """Write ``report``'s lines as ``folder/report.jsonl``, each checked against the schema
    (refused if the folder already holds a report), then render every other format from that
    file, as a run's writer does; the files written."""
    lines = [report.header, *report.results, *([report.footer] if report.footer else [])]
    with ReportWriter(folder) as writer:
        for line in lines:
            writer._write(line)
    return [writer.path, *render_reports(folder)]


def render_reports(folder: str | PathLike[str]) -> list[Path]:
    """Read ``folder/report.jsonl`` and write ``junit.xml``, ``summary.md``, ``report.html``
    and ``badge.json`` beside it; the files written. The same file always gives the same bytes."""
    folder = Path(folder)
    return _render(folder, load_report(folder / JSONL))


def _render(folder: Path, report: Report) -> list[Path]:
    rendered = {
        "junit.xml": junit_xml(report),
        "summary.md": summary_markdown(report),
        "report.html": html_page(report),
        "badge.json": json.dumps(badge_json(report), ensure_ascii=False, indent=2) + "\n",
    }
    return write_files(folder, rendered)


def write_files(folder: Path, texts: Mapping[str, str]) -> list[Path]:
    """Write each text to ``folder/<name>`` as UTF-8 with LF line endings; the files written."""
    written = []
    for name, text in texts.items():
        path = folder / name
        try:
            path.write_text(text, encoding="utf-8", newline="\n")
        except OSError as exc:
            raise UsageError(f"{path}: cannot write: {exc.strerror}") from None
        written.append(path)
    return written

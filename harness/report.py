"""Reports: one folder per run, every format rendered from its JSON-lines file.

Theory of operation. ``report.jsonl`` is the source of truth: a header line, one result line
per case (``CaseResult.to_dict()``), and a footer line, each checked against
``schemas/report.schema.json`` and flushed as soon as it is written, so a run that crashes
keeps every verdict it reached (its report just has no footer). Every other file is rendered
from the *parsed lines* of that file, never from Python objects, so ``render_reports`` can
re-render a report from the file alone, later, byte for byte the same::

    report.jsonl   header, results, footer: the source of truth
    junit.xml      one <testsuite> per profile, for CI test tabs
    summary.md     totals, the rule table and the failures, for CI step summaries
    report.html    one self-contained page: the rules × scenarios matrix and the failures
                   (each scenario's cases packed, unpacked by its script), with a filter
    badge.json     a shields.io endpoint badge

Every format lists a failing scenario once (:class:`FailingScenario`): the splittings that
went wrong, its first problem and, when the header has the run's ``rerun`` words, the command
that runs it again. A scenario's verdict on a rule it cites is the verdict over its cases:
failed if any case failed, else errored if any errored, else passed if any ran (every case
that ran passed), else not claimed.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import platform
import re
import shlex
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import cache
from importlib import metadata, resources
from os import PathLike
from pathlib import Path
from typing import Any, NamedTuple, TypedDict

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from .case import OUTCOMES, CaseResult, Outcome
from .checks import CHECKS
from .errors import HarnessError, UsageError
from .rules import NOT_CERTIFIABLE, RULES, failure_pointer

__all__ = [
    "FORMAT",
    "OUTCOMES",
    "FailingScenario",
    "Report",
    "ReportWriter",
    "RuleTally",
    "failing_scenarios",
    "first_problem",
    "load_report",
    "new_run_folder",
    "page_head",
    "render_reports",
    "rerun_command",
    "rule_table",
    "write_files",
    "write_report",
]

FORMAT = 2
"""The version of the report format this module writes and reads."""
RULE_STATES = ("passed", "failed", "errored", "not_observable", "unsupported", "not_applicable")
"""How a rule stands in one scenario, worst first after ``passed``: ``failed`` when a check
proving the rule failed in any case of it; ``not_observable`` when every check that could prove
it reads what the implementation does not expose (or the case crashed before it could be seen);
``unsupported`` / ``not_applicable`` when no case of the scenario ran."""

JSONL = "report.jsonl"
_SYMBOL = {
    "passed": "✓",
    "failed": "✗",
    "errored": "!",
    "not_observable": "?",
    "unsupported": "∅",
    "not_applicable": "–",
    "hole": "⚠",
}
_LABEL = {
    "passed": "passed",
    "failed": "failed",
    "errored": "errored",
    "not_observable": "not observable",
    "unsupported": "unsupported",
    "not_applicable": "not applicable",
}
_SUMMARY_DETAILED = 25
"""Failing scenarios shown in full in summary.md; the rest get one line each, up to
``_SUMMARY_LISTED`` (GitHub caps a step summary at 1 MiB)."""
_SUMMARY_LISTED = 200


class Report(NamedTuple):
    """A report as read back from ``report.jsonl``: its parsed lines."""

    header: dict[str, Any]
    results: list[dict[str, Any]]
    footer: dict[str, Any] | None
    """None when the run did not finish."""


class RuleTally(TypedDict):
    """How the scenarios judged on one rule fared: those that cite it, and any other in which a
    check proving it failed."""

    scenarios: int
    """Scenarios that cite the rule."""
    passed: int
    failed: int
    errored: int
    not_observable: int
    unsupported: int
    not_applicable: int
    hole: bool
    """No scenario cites the rule: the corpus does not test it."""


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
            "callstream": _version(),
            "started": _now(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        }
        self._write(defaults | dict(fields))

    def result(self, case: CaseResult) -> None:
        """Append the verdict on one case and flush it to disk."""
        if not self._lines or self._footer_written:
            raise HarnessError("a result line must come between the header and the footer")
        self._write(case.to_dict())
        self._counts[case.outcome] += 1

    def footer(self, fields: Mapping[str, Any]) -> None:
        """Write the last line and close the file. ``fields`` gives the exit code and whether
        the run stopped early; the finish time, the elapsed seconds since ``header()`` and the
        counts of the results written are filled in unless given."""
        if not self._lines or self._footer_written:
            raise HarnessError("the report footer must follow the header, written once")
        defaults = {
            "type": "footer",
            "finished": _now(),
            "elapsed": round(time.monotonic() - self._clock, 3),
            "counts": dict(self._counts),
        }
        self._write(defaults | dict(fields))
        self._footer_written = True
        self.close()

    def render(self) -> list[Path]:
        """Close ``report.jsonl`` and render the other formats from it; the files written."""
        self.close()
        return render_reports(self.folder)

    def close(self) -> None:
        """Close ``report.jsonl``; what was written stays."""
        self._file.close()

    def _write(self, line: dict[str, Any]) -> None:
        if self._file.closed:
            raise HarnessError(f"{self.path}: the report is closed")
        number = self._lines + 1
        problem = _problem(line)
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


def load_report(path: str | PathLike[str]) -> Report:
    """Read and validate a ``report.jsonl`` (or the run folder holding one). A broken file
    raises ``UsageError`` naming the line: not JSON, not a valid line, out of order, or a
    footer whose counts do not match the results."""
    path = Path(path)
    if path.is_dir():
        path = path / JSONL
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the report: {exc.strerror}") from None
    header: dict[str, Any] | None = None
    results: list[dict[str, Any]] = []
    footer: dict[str, Any] | None = None
    raw_lines = data.split(b"\n")
    if raw_lines[-1] == b"":
        raw_lines.pop()
    for number, raw in enumerate(raw_lines, 1):
        where = f"{path}:{number}"
        line = _parse(raw, where)
        kind = line.get("type")
        if footer is not None:
            raise UsageError(f"{where}: a line after the footer")
        if header is None and kind != "header":
            raise UsageError(f"{where}: the first line must be the header, not {kind!r}")
        if header is not None and kind == "header":
            raise UsageError(f"{where}: a second header")
        if kind == "header" and line.get("format") != FORMAT:
            raise UsageError(
                f"{where}: report format {line.get('format')!r} is not one this callstream "
                f"reads (format {FORMAT})"
            )
        problem = _problem(line)
        if problem:
            raise UsageError(f"{where}: {problem}")
        if kind == "header":
            header = line
        elif kind == "result":
            results.append(line)
        else:
            footer = line
            if footer["counts"] != _count(results):
                raise UsageError(
                    f"{where}: the footer counts {footer['counts']} do not match the "
                    f"{len(results)} result lines {_count(results)}"
                )
    if header is None:
        raise UsageError(f"{path}:1: the report is empty: no header")
    return Report(header, results, footer)


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
    report = load_report(folder / JSONL)
    rendered = {
        "junit.xml": _junit(report),
        "summary.md": _summary(report),
        "report.html": _html(report),
        "badge.json": json.dumps(_badge(report), ensure_ascii=False, indent=2) + "\n",
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


def rule_table(
    results: Iterable[Mapping[str, Any]], *, corpus: bool = True
) -> dict[str, RuleTally]:
    """For every rule, how the scenarios fared on it (:data:`RULE_STATES`, each scenario counted
    once per rule): a scenario is judged on the rules it cites and on any rule a failed check of
    it proves. Every rule of ``RULES`` is there, in order, those no scenario cites flagged as
    holes (unless no scenario can certify them: ``NOT_CERTIFIABLE``); then any other rule met.
    Without ``corpus`` (a route's certification, whose probes cite only the route rules), only
    the rules met are there."""
    states = rule_states(results)
    table: dict[str, RuleTally] = {rule: _tally(rule not in NOT_CERTIFIABLE) for rule in RULES}
    if not corpus:
        table = {}
    for scenario in states.values():
        for rule, (state, cited) in scenario.items():
            tally = table.setdefault(rule, _tally(True))
            tally[state] += 1  # type: ignore[literal-required]
            if cited:
                tally["scenarios"] += 1
                tally["hole"] = False
    return table


def _tally(hole: bool) -> RuleTally:
    return RuleTally(
        scenarios=0,
        passed=0,
        failed=0,
        errored=0,
        not_observable=0,
        unsupported=0,
        not_applicable=0,
        hole=hole,
    )


def rule_states(
    results: Iterable[Mapping[str, Any]],
) -> dict[str, dict[str, tuple[str, bool]]]:
    """For each scenario, each rule it is judged on: its state (:data:`RULE_STATES`) and whether
    the scenario cites it. A failure counts against the rules its check proved, not against
    every rule the scenario cites."""
    found: dict[str, _RuleEvidence] = {}
    for result in results:
        evidence = found.setdefault(result["scenario"], _RuleEvidence())
        evidence.add(result)
    return {scenario: evidence.states() for scenario, evidence in found.items()}


class _RuleEvidence:
    """What the cases of one scenario showed, rule by rule."""

    def __init__(self) -> None:
        self.cited: list[str] = []
        self.failed: dict[str, None] = {}
        self.observed: set[str] = set()
        self.outcomes: set[str] = set()

    def add(self, result: Mapping[str, Any]) -> None:
        self.cited += [rule for rule in result["rules"] if rule not in self.cited]
        self.outcomes.add(result["outcome"])
        for failure in result["failures"]:
            self.failed.update(dict.fromkeys(failure["rules"]))
        if result["outcome"] in ("passed", "failed"):
            self.observed |= _observed_rules(result)

    def states(self) -> dict[str, tuple[str, bool]]:
        states = {}
        for rule in [*self.cited, *(rule for rule in self.failed if rule not in self.cited)]:
            states[rule] = (self._state(rule), rule in self.cited)
        return states

    def _state(self, rule: str) -> str:
        if rule in self.failed:
            return "failed"
        if "errored" in self.outcomes:
            return "errored"
        if self.outcomes & {"passed", "failed"}:
            return "passed" if rule in self.observed else "not_observable"
        return "unsupported" if "unsupported" in self.outcomes else "not_applicable"


def _observed_rules(result: Mapping[str, Any]) -> set[str]:
    """The rules the checks of a case that ran could see: none when the implementation crashed
    or hung (what it would have done is unknown), else those of every check that applied to the
    scenario's kind and could observe what it reads."""
    if any(f["check"] in ("no_crash", "no_hang") for f in result["failures"]):
        return set()
    hidden = set(result.get("not_observable", ()))
    kind = result["kind"]
    return {
        rule
        for check in CHECKS
        if check.applies_to(kind) and check.name not in hidden
        for rule in check.rules
    }


# --- reading and validating ---


@cache
def _validator() -> Draft202012Validator:
    text = resources.files(__package__).joinpath("schemas/report.schema.json").read_text("utf-8")
    return Draft202012Validator(json.loads(text))


def _problem(line: Mapping[str, Any]) -> str | None:
    """What is wrong with a line, by the schema, or None."""
    error = best_match(_validator().iter_errors(line))
    if error is None:
        return None
    return f"{error.json_path}: {error.message}"


def _parse(raw: bytes, where: str) -> dict[str, Any]:
    try:
        line = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"{where}: not UTF-8 at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where}: not JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(line, dict):
        raise UsageError(f"{where}: a line must be a JSON object, not {type(line).__name__}")
    return line


def _version() -> str:
    try:
        return metadata.version("callstream")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --- what every format shows ---


class _Verdict(NamedTuple):
    title: str
    rules: tuple[str, ...]
    outcome: Outcome
    cases: dict[str, int]


def _count(results: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
    for result in results:
        counts[result["outcome"]] += 1
    return counts


def _verdicts(results: Iterable[Mapping[str, Any]]) -> dict[str, _Verdict]:
    """Each scenario's verdict over its cases, in the order the scenarios first appear."""
    found: dict[str, tuple[str, list[str], dict[str, int]]] = {}
    for result in results:
        scenario = result["scenario"]
        if scenario not in found:
            found[scenario] = (result["title"], [], dict.fromkeys(OUTCOMES, 0))
        _, rules, cases = found[scenario]
        rules += [rule for rule in result["rules"] if rule not in rules]
        cases[result["outcome"]] += 1
    return {
        scenario: _Verdict(title, tuple(rules), _verdict(cases), cases)
        for scenario, (title, rules, cases) in found.items()
    }


def _verdict(cases: Mapping[str, int]) -> Outcome:
    outcome: Outcome
    for outcome in ("failed", "errored", "passed", "unsupported"):
        if cases[outcome]:
            return outcome
    return "not_applicable"


def _of_corpus(report: Report) -> bool:
    """True for a run of the scenario corpus; False for a route's certification."""
    return "route" not in report.header


def _name(report: Report) -> str:
    implementation: dict[str, Any] = report.header["implementation"]
    return str(implementation["name"])


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _totals(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{counts[outcome]} {_LABEL[outcome]}" for outcome in OUTCOMES)


def _standing(report: Report) -> tuple[str, Outcome]:
    """The run in a few words (``412/412 passed``, ``3 failed``) and the outcome that sets its
    tone: failed, errored, passed, or unsupported / not_applicable when nothing ran."""
    counts = _count(report.results)
    ran = counts["passed"] + counts["failed"] + counts["errored"]
    bad = [f"{counts[o]} {_LABEL[o]}" for o in ("failed", "errored") if counts[o]]
    if bad:
        standing = ", ".join(bad), _verdict(counts)
    elif ran:
        standing = f"{counts['passed']}/{ran} passed", "passed"
    else:
        standing = "nothing ran", _verdict(counts)
    return standing


def _headline(report: Report) -> str:
    """The standing with its symbol: ``✓ 412/412 passed``, ``✗ 3 failed``."""
    words, tone = _standing(report)
    unfinished = "" if report.footer else " (the run did not finish)"
    return f"{_SYMBOL[tone]} {words}{unfinished}"


_FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def _visible(text: str) -> str:
    """Text safe for XML 1.0, HTML and Markdown: CRLF becomes LF, and every other control
    character, lone surrogate or non-character is shown as its escape (``\\x00``)."""
    return _FORBIDDEN.sub(_escape, text.replace("\r\n", "\n"))


def _escape(match: re.Match[str]) -> str:
    """The escape ``repr`` would show: ``\\r``, ``\\x00``, ``\\ud800``."""
    return repr(match.group())[1:-1]


def _clip(text: str, max_lines: int, max_chars: int) -> str:
    """Keep the head and the tail of a long repro: the first chunks and what was released."""
    lines = text.split("\n")
    if len(lines) > max_lines:
        half = max_lines // 2
        cut = len(lines) - 2 * half
        lines = [*lines[:half], f"… {cut} lines cut (full repro in {JSONL}) …", *lines[-half:]]
        text = "\n".join(lines)
    if len(text) > max_chars:
        half = max_chars // 2
        cut = len(text) - 2 * half
        text = f"{text[:half]}\n… {cut} characters cut (full repro in {JSONL}) …\n{text[-half:]}"
    return text


def _problems(result: Mapping[str, Any]) -> list[str]:
    """Each failed check as ``check (A2, C4; callstream explain A2): message``."""
    return [
        f"{failure['check']} ({failure_pointer(failure['rules'])}): {failure['message']}"
        for failure in result["failures"]
    ]


def _failing(
    results: Iterable[Mapping[str, Any]],
) -> dict[str, list[tuple[int, Mapping[str, Any]]]]:
    """The failed and errored cases of each scenario, with their line numbers, in file order."""
    failing: dict[str, list[tuple[int, Mapping[str, Any]]]] = {}
    for line, result in enumerate(results, 2):
        if result["outcome"] in ("failed", "errored"):
            failing.setdefault(result["scenario"], []).append((line, result))
    return failing


class FailingScenario(NamedTuple):
    """A scenario some of whose cases failed or errored, as every format lists it: once,
    however many of its cases went wrong."""

    scenario: str
    outcome: Outcome
    """``failed`` when any of its cases failed, else ``errored``."""
    cases: tuple[tuple[int, Mapping[str, Any]], ...]
    """Its bad cases, each with its line number in ``report.jsonl``, in file order."""

    @property
    def first(self) -> Mapping[str, Any]:
        """Its first bad case."""
        return self.cases[0][1]

    def splittings(self) -> str:
        """Where it went wrong, profile by profile: ``lenient: whole, bytes, pairs, random-1
        and 4 more``."""
        by_profile: dict[str, list[str]] = {}
        for _, result in self.cases:
            by_profile.setdefault(result["profile"], []).append(result["splitting"])
        shown = []
        for profile, splittings in by_profile.items():
            more = len(splittings) - _SPLITTINGS_NAMED
            named = ", ".join(splittings[:_SPLITTINGS_NAMED])
            shown.append(f"{profile}: {named}" + (f" and {more} more" if more > 0 else ""))
        return "; ".join(shown)

    def line(self) -> str:
        """The scenario in one line: ``FAILED oc-id [lenient: whole, bytes] check: message``,
        the message of its first bad case."""
        return (
            f"{self.outcome.upper()} {self.scenario} [{self.splittings()}] "
            f"{first_problem(self.first)}"
        )


_SPLITTINGS_NAMED = 4
"""Splittings of one profile named in a failing scenario's line; the rest are counted."""


def failing_scenarios(results: Iterable[Mapping[str, Any]]) -> list[FailingScenario]:
    """The scenarios with failed or errored cases among ``results`` (report lines, in file
    order), in the order they first appear."""
    return [
        FailingScenario(
            scenario,
            "failed" if any(r["outcome"] == "failed" for _, r in cases) else "errored",
            tuple(cases),
        )
        for scenario, cases in _failing(results).items()
    ]


def first_problem(result: Mapping[str, Any]) -> str:
    """What went wrong in a case, in one line: its first failed check, the rules it is filed
    under and its message (``check (A3; callstream explain A3): message (and 2 more)``), or the
    last line of why it errored."""
    failures = result["failures"]
    if failures:
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        first = failures[0]
        pointer = failure_pointer(first["rules"])
        return _one_line(f"{first['check']} ({pointer}): {first['message']}{more}")
    detail = (result["detail"] or "").strip()
    return _one_line(detail.splitlines()[-1]) if detail else "no detail"


def rerun_command(rerun: Sequence[str], scenario: str) -> str:
    """The shell command that runs ``scenario`` again: the run's ``rerun`` words (its command
    line without any selection) and ``-k``, each quoted for a POSIX shell. A ``callstream``
    command selects the id exactly (``-k =ID``: some ids hold others); pytest's ``-k`` has no
    such form and gets the id itself."""
    exact = "=" if rerun[:1] == ["callstream"] else ""
    return shlex.join([*rerun, "-k", f"{exact}{scenario}"])


def _one_line(text: str) -> str:
    return " ".join(_visible(text).split("\n"))


def _case_counts(verdict: _Verdict) -> str:
    """``3 failed of 8 cases``, ``1 failed, 1 errored of 4 cases``."""
    bad = [f"{verdict.cases[o]} {_LABEL[o]}" for o in ("failed", "errored") if verdict.cases[o]]
    return f"{', '.join(bad)} of {_plural(sum(verdict.cases.values()), 'case')}"


def _check_names(results: Iterable[Mapping[str, Any]]) -> str:
    """The checks that failed, each once, or ``errored``."""
    names = dict.fromkeys(f["check"] for result in results for f in result["failures"])
    return ", ".join(names) or _LABEL["errored"]


def _rule_title(rule: str) -> str:
    return RULES.get(rule, "not a rule of REQUIREMENTS.md")


def _row_state(tally: RuleTally) -> str:
    """How a rule stands: ``hole``, or the worst state of the scenarios judged on it."""
    if tally["hole"]:
        return "hole"
    for state in ("failed", "errored", "passed", "not_observable", "unsupported"):
        if tally[state]:
            return state
    return "not_applicable"


# --- JUnit XML ---


def _junit(report: Report) -> str:
    """One <testsuite> per profile; a case is ``classname=scenario, name=profile/splitting``."""
    header = report.header
    root = ET.Element("testsuites", name=_visible(f"callstream: {_name(report)}"))
    suites: dict[str, list[Mapping[str, Any]]] = {}
    for result in report.results:
        suites.setdefault(result["profile"], []).append(result)
    for profile, results in suites.items():
        suite = ET.SubElement(root, "testsuite", name=_visible(profile))
        _junit_counts(suite, results)
        suite.set("timestamp", header["started"])
        properties = ET.SubElement(suite, "properties")
        for name, value in (
            ("implementation", _name(report)),
            ("connectable", header["implementation"]["connectable"]),
            ("callstream", header["callstream"]),
        ):
            ET.SubElement(properties, "property", name=name, value=_visible(str(value)))
        for case in results:
            suite.append(_junit_case(case))
    _junit_counts(root, report.results)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _junit_counts(element: ET.Element, results: Sequence[Mapping[str, Any]]) -> None:
    counts = _count(results)
    element.set("tests", str(len(results)))
    element.set("failures", str(counts["failed"]))
    element.set("errors", str(counts["errored"]))
    element.set("skipped", str(counts["unsupported"] + counts["not_applicable"]))
    element.set("time", f"{sum(result['elapsed'] for result in results):.3f}")


def _junit_case(result: Mapping[str, Any]) -> ET.Element:
    case = ET.Element(
        "testcase",
        classname=_visible(result["scenario"]),
        name=_visible(f"{result['profile']}/{result['splitting']}"),
        time=f"{result['elapsed']:.3f}",
    )
    outcome = result["outcome"]
    if outcome == "failed":
        problems = _problems(result)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        text = "\n".join(problems)
        if result["repro"] is not None:
            text += "\n\nrepro:\n" + result["repro"]
        failure = ET.SubElement(
            case,
            "failure",
            message=_visible(problems[0] + more),
            type=_visible(",".join(failure["check"] for failure in result["failures"])),
        )
        failure.text = _visible(f"{result['title']}\n\n{text}")
    elif outcome in ("unsupported", "not_applicable"):
        skipped = ET.SubElement(case, "skipped", message=_LABEL[outcome])
        skipped.text = _visible(result["detail"] or "")
    elif outcome == "errored":
        detail = result["detail"]
        error = ET.SubElement(case, "error", message=_visible(detail.strip().split("\n")[-1]))
        error.text = _visible(detail)
    return case


# --- Markdown summary ---

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&#!])")


def _md(text: str) -> str:
    """Text for a Markdown line or table cell: one line, special characters escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", _visible(text).replace("\n", " "))


def _md_code(text: str) -> str:
    """An inline code span that holds any text (the fence outgrows its backticks)."""
    text = _visible(text).replace("\n", " ")
    ticks = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _md_block(text: str, language: str = "text") -> str:
    """A fenced code block that holds any text."""
    fence = "`" * max(3, max(map(len, re.findall("`+", text)), default=0) + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _summary(report: Report) -> str:
    header, footer = report.header, report.footer
    counts = _count(report.results)
    out = [
        f"# callstream: {_md(_name(report))} — {_md(_headline(report))}",
        "",
        f"{_totals(counts)} of {_plural(len(report.results), 'case')} in "
        f"{_plural(len(_verdicts(report.results)), 'scenario')}.",
        "",
        f"Implementation {_md_code(header['implementation']['connectable'])} · "
        f"callstream {_md(header['callstream'])} · started {_md(header['started'])}"
        + (
            f" · {footer['elapsed']:.1f} s · exit code {footer['exit_code']}"
            + (" · stopped early" if footer["stopped_early"] else "")
            if footer
            else " · **the run did not finish: no footer**"
        ),
        "",
        "## Rules",
        "",
        "Each scenario counts once under every rule it cites (*Cite it*) and under any rule a "
        "failed check of it proves, so a rule may fail in more scenarios than cite it.",
        "",
        "| | Rule | Title | Cite it | "
        + " | ".join(_LABEL[state].capitalize() for state in RULE_STATES)
        + " |",
        "|---|---|---|--:|" + "--:|" * len(RULE_STATES),
    ]
    table = rule_table(report.results, corpus=_of_corpus(report))
    for rule, tally in table.items():
        if tally["hole"]:
            scenarios = "**0: hole**"
        elif not tally["scenarios"] and rule in NOT_CERTIFIABLE:
            scenarios = f"0: not certifiable here ({_md(NOT_CERTIFIABLE[rule])})"
        else:
            scenarios = str(tally["scenarios"])
        out.append(
            f"| {_SYMBOL[_row_state(tally)]} | {_md(rule)} | {_md(_rule_title(rule))} | "
            f"{scenarios} | "
            + " | ".join(str(tally[state]) for state in RULE_STATES)  # type: ignore[literal-required]
            + " |"
        )
    holes = [rule for rule, tally in table.items() if tally["hole"]]
    if holes:
        out += ["", f"{_SYMBOL['hole']} Holes: no scenario cites {', '.join(holes)}."]
    failing = failing_scenarios(report.results)
    if failing:
        verdicts = _verdicts(report.results)
        rerun = report.header.get("rerun")
        out += ["", "## Failures", ""]
        for group in failing[:_SUMMARY_DETAILED]:
            out += _summary_scenario(group.scenario, verdicts[group.scenario], group.cases, rerun)
        rest = failing[_SUMMARY_DETAILED:]
        if rest:
            out += [f"{_plural(len(rest), 'more failing scenario')}, all in report.html:", ""]
            out += [
                f"- {_SYMBOL[group.outcome]} {_md_code(group.scenario)} "
                f"\\[{_md(group.splittings())}\\] {_md(first_problem(group.first))}"
                for group in rest[:_SUMMARY_LISTED]
            ]
            if len(rest) > _SUMMARY_LISTED:
                out.append(f"- … and {len(rest) - _SUMMARY_LISTED} more")
    return "\n".join(out).rstrip("\n") + "\n"


def _summary_scenario(
    scenario: str,
    verdict: _Verdict,
    cases: Sequence[tuple[int, Mapping[str, Any]]],
    rerun: Sequence[str] | None = None,
) -> list[str]:
    """A failing scenario: where it went wrong (profiles and splittings, the checks), the
    command that reruns it (given the run's ``rerun`` words), then its first bad case in full,
    with the repro."""
    group = FailingScenario(scenario, verdict.outcome, tuple(cases))
    first = group.first
    out = [
        f"### {_SYMBOL[verdict.outcome]} {_md_code(scenario)} {_md(verdict.title)}",
        "",
        f"{_md(_case_counts(verdict))} ({_md(group.splittings())}) · "
        f"checks {_md(_check_names(result for _, result in cases))} · "
        f"rules {_md(', '.join(verdict.rules))}"
        + (f" · {_md_code(first['source'])}" if first["source"] else ""),
        "",
    ]
    if rerun is not None:
        out += [_md_block(rerun_command(rerun, scenario), "sh"), ""]
    out += [
        f"**{_md(first['profile'])}/{_md(first['splitting'])}** {_md(_LABEL[first['outcome']])}:",
        "",
    ]
    out += [
        f"- {_md_code(failure['check'])} ({_md(failure_pointer(failure['rules']))}): "
        + _md(failure["message"])
        for failure in first["failures"]
    ]
    if first["failures"]:
        out.append("")
    for text in (first["detail"], first["repro"]):
        if text is not None:
            out += [_md_block(_visible(_clip(text, 60, 6000))), ""]
    return out


# --- HTML ---

_CSS = """
:root { --line: #d0d7de; --muted: #57606a; --code-bg: #f6f8fa; }
.passed { --c: #1a7f37; --bg: #dafbe1; }
.failed { --c: #cf222e; --bg: #ffebe9; }
.not_applicable, .unsupported { --c: #57606a; --bg: #eaeef2; }
.not_observable { --c: #0969da; --bg: #ddf4ff; }
.errored { --c: #8250df; --bg: #fbefff; }
.hole { --c: #9a6700; --bg: #fff8c5; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1f2328; background: #fff; }
header, main, footer { max-width: 1280px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 20px; }
h1 { font-size: 26px; margin: 0 0 4px; overflow-wrap: anywhere; }
h1 .impl { font-weight: 400; }
h2 { font-size: 20px; margin: 32px 0 8px; padding-bottom: 4px;
  border-bottom: 1px solid var(--line); }
code, pre, .cell, .lines { font-family: ui-monospace, "SF Mono", Menlo, Consolas,
  "DejaVu Sans Mono", monospace; }
code { font-size: 13px; }
.verdict { font-size: 18px; font-weight: 600; margin: 4px 0 12px; color: var(--c); }
.tiles { display: flex; gap: 12px; flex-wrap: wrap; margin: 12px 0; }
.tile { padding: 8px 16px; border-radius: 8px; min-width: 130px; border: 1px solid var(--c);
  color: var(--c); background: var(--bg); }
.tile b { display: block; font-size: 26px; line-height: 1.2; }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 12px 0;
  font-size: 13px; color: var(--muted); }
.meta dt { font-weight: 600; }
.meta dd { margin: 0; overflow-wrap: anywhere; }
.legend { font-size: 13px; color: var(--muted); }
.filter { position: sticky; top: 0; z-index: 1; background: #fff; padding: 8px 0;
  display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: center;
  border-bottom: 1px solid var(--line); }
.filter input { flex: 1 1 18em; min-width: 0; font: inherit; padding: 4px 8px;
  border: 1px solid var(--line); border-radius: 6px; }
.filter output { font-size: 13px; color: var(--muted); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 6px 8px;
  border-bottom: 1px solid var(--line); }
td { overflow-wrap: break-word; }
td:last-child { overflow-wrap: anywhere; }
thead th { font-size: 13px; color: var(--muted); border-bottom: 2px solid var(--line); }
.n { text-align: right; font-variant-numeric: tabular-nums; width: 3.5em; }
td.n { color: var(--c, inherit); }
td.n.zero { color: #8c959f; }
.matrix th[scope=row] { white-space: nowrap; }
.matrix .sym { width: 1.5em; text-align: center; font-weight: 700; color: var(--c); }
.matrix .title { width: 17em; }
.matrix tr.hole > * { background: var(--bg); color: var(--c); }
.cells { line-height: 1.9; }
.cell { display: inline-block; font-size: 12px; line-height: 1.4; padding: 1px 6px; margin: 1px 0;
  border: 1px solid var(--c); border-radius: 4px; color: var(--c); background: var(--bg);
  text-decoration: none; white-space: nowrap; }
a.cell:hover { text-decoration: underline; }
details.group { border: 1px solid var(--line); border-left: 4px solid var(--c);
  border-radius: 6px; margin: 8px 0; }
details.case { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; }
details > summary { cursor: pointer; padding: 6px 12px; overflow-wrap: anywhere; }
details > summary .sym { font-weight: 700; color: var(--c); }
details[open] > summary { border-bottom: 1px solid var(--line); background: var(--bg); }
.cases { padding: 4px 12px 8px; }
.problem { margin: 6px 0; overflow-wrap: anywhere; }
.rerun { margin: 6px 0; font-size: 13px; color: var(--muted); }
.rerun code { color: #1f2328; user-select: all; overflow-wrap: anywhere; }
.where { color: var(--muted); margin-left: 8px; font-size: 13px; white-space: nowrap; }
.checknames { margin-left: 8px; font-size: 12px; white-space: nowrap; color: var(--c);
  font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.body { padding: 8px 12px 12px; }
.body h4 { margin: 12px 0 4px; font-size: 13px; color: var(--muted); }
pre { background: var(--code-bg); border: 1px solid var(--line); border-radius: 6px;
  padding: 8px 12px; font-size: 12.5px; line-height: 1.45; overflow-x: auto; white-space: pre;
  margin: 0; }
.lines { background: var(--code-bg); border: 1px solid var(--line); border-radius: 6px;
  padding: 8px 12px; font-size: 12.5px; line-height: 1.45; }
.lines > div { white-space: pre-wrap; overflow-wrap: anywhere; min-height: 1.45em;
  padding-left: 8ch; text-indent: -8ch; }
.lines .at { color: var(--muted); }
.lines .cut { color: #cf222e; font-weight: 700; }
.lines .mark { color: #8250df; font-weight: 600; }
.facts { font-size: 13px; color: var(--muted); margin: 8px 0 0; }
button { font: inherit; font-size: 13px; padding: 2px 10px; border: 1px solid var(--line);
  border-radius: 6px; background: var(--code-bg); cursor: pointer; }
footer { color: var(--muted); font-size: 12px; padding: 32px 24px; }
@media (max-width: 640px) {
  header, main, footer { padding-left: 10px; padding-right: 10px; }
  h1 { font-size: 21px; }
  .tiles { gap: 6px; }
  .tile { min-width: 0; flex: 1 1 30%; padding: 4px 8px; font-size: 13px; }
  .tile b { font-size: 20px; }
  .meta { grid-template-columns: 1fr; }
  .meta dd { margin-bottom: 4px; }
  .matrix .title, .matrix .n { display: none; }
  th, td { padding: 4px; }
  .cell { white-space: normal; overflow-wrap: anywhere; }
  .where, .checknames { display: block; margin-left: 0; white-space: normal; }
  details > summary, .cases, .body { padding-left: 6px; padding-right: 6px; }
  .lines { padding: 6px; font-size: 12px; }
  .lines > div { padding-left: 4ch; text-indent: -4ch; }
}
"""

_SCRIPT = """
var packed = null;
function unpack() {
  if (!packed) {
    var data = document.getElementById("failures").getAttribute("data-cases");
    packed = window.DecompressionStream
      ? new Response(new Blob([Uint8Array.from(atob(data), function (c) {
          return c.charCodeAt(0);
        })]).stream().pipeThrough(new DecompressionStream("gzip"))).json()
      : Promise.reject(new Error("this browser has no DecompressionStream"));
  }
  return packed;
}
function fill(group) {
  var slot = group.querySelector(".slot[data-for]");
  if (!slot) return Promise.resolve(group);
  return unpack().then(function (cases) {
    if (slot.hasAttribute("data-for")) {
      slot.innerHTML = cases[slot.getAttribute("data-for")];
      slot.removeAttribute("data-for");
    }
    return group;
  }, function (error) {
    slot.textContent = "The cases could not be unpacked (" + error.message + "); " +
      "report.jsonl has them.";
    throw error;
  });
}
function groups() { return Array.prototype.slice.call(document.querySelectorAll("details.group")); }
function openTarget() {
  var id = decodeURIComponent(location.hash.slice(1));
  var target = id && document.getElementById(id);
  if (!target && /^line-/.test(id)) {
    Promise.all(groups().map(fill)).then(function () {
      if (document.getElementById(id)) openTarget();
    }, function () {});
    return;
  }
  for (var node = target; node; node = node.parentElement) {
    if (node.tagName === "DETAILS") node.open = true;
  }
  if (target) target.scrollIntoView();
}
groups().forEach(function (group) {
  group.addEventListener("toggle", function () {
    if (group.open) fill(group).catch(function () {});
  });
});
window.addEventListener("hashchange", openTarget);
openTarget();
document.querySelectorAll("button[data-open]").forEach(function (button) {
  button.addEventListener("click", function () {
    var open = button.dataset.open === "1";
    groups().forEach(function (group) {
      if (group.hidden) return;
      group.open = open;
      if (!open) group.querySelectorAll("details").forEach(function (d) { d.open = false; });
      else fill(group).then(function () {
        group.querySelectorAll("details").forEach(function (d) { d.open = true; });
      }, function () {});
    });
  });
});
var box = document.getElementById("filter");
var shown = document.getElementById("shown");
var items = Array.prototype.slice.call(document.querySelectorAll("[data-filter]"));
// What an item is matched on: its own text (its summary's, for a scenario) unless it holds
// other items, and its data-filter words and those of the items around it.
var words = items.map(function (item) {
  var text = item.querySelector("[data-filter]") ? ""
    : (item.querySelector("summary") || item).textContent;
  for (var node = item; node && node.getAttribute; node = node.parentElement) {
    text += " " + (node.getAttribute("data-filter") || "");
  }
  return text.toLowerCase();
});
function count(selector) {
  var all = document.querySelectorAll(selector);
  var seen = Array.prototype.filter.call(all, function (e) { return !e.hidden; });
  return seen.length + " of " + all.length;
}
function applyFilter() {
  var terms = box.value.toLowerCase().split(/\\s+/).filter(Boolean);
  for (var i = items.length - 1; i >= 0; i--) {
    var text = words[i];
    var match = terms.every(function (term) { return text.indexOf(term) >= 0; });
    items[i].hidden = !(match || items[i].querySelector("[data-filter]:not([hidden])"));
  }
  shown.textContent = terms.length
    ? count("#rules tbody tr") + " rules, " + count("details.group") + " failing scenarios"
    : "";
}
box.addEventListener("input", applyFilter);
box.parentElement.hidden = false;
if (box.value) applyFilter();
"""


def _h(value: object) -> str:
    """Text for HTML, escaped and with control characters made visible."""
    return html.escape(_visible(str(value)), quote=True)


def _html(report: Report) -> str:
    header, footer = report.header, report.footer
    counts = _count(report.results)
    verdicts = _verdicts(report.results)
    headline = _headline(report)
    tone: str = _standing(report)[1]
    if not report.footer and tone in ("passed", "unsupported", "not_applicable"):
        tone = "hole"
    tiles = "".join(
        f'<div class="tile {outcome}"><b>{counts[outcome]}</b>'
        f"{_SYMBOL[outcome]} {_LABEL[outcome]}</div>"
        for outcome in OUTCOMES
    )
    parts = [
        *page_head(f"callstream: {_name(report)} — {headline}"),
        "<body>",
        "<header>",
        f'<h1>callstream <span class="impl">· {_h(_name(report))}</span></h1>',
        f'<p class="verdict {tone}">{_h(headline)}</p>',
        f'<div class="tiles">{tiles}</div>',
        f'<dl class="meta">{_html_meta(header, footer, len(verdicts))}</dl>',
        "</header>",
        "<main>",
        # Shown by the script, which alone can filter.
        '<div class="filter" hidden><input type="search" id="filter" autocomplete="off" '
        'placeholder="Filter: rule, scenario, check, outcome" '
        'aria-label="Filter by rule, scenario id, check name or outcome">'
        '<output id="shown" for="filter"></output></div>',
        _html_matrix(report),
        _html_failures(report),
        _html_not_observable(report),
        _html_skipped(report),
        "</main>",
        f"<footer>Rendered by callstream {_h(header['callstream'])} from {JSONL}.</footer>",
        f"<script>{_SCRIPT}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def _html_meta(header: Mapping[str, Any], footer: Mapping[str, Any] | None, scenarios: int) -> str:
    implementation = header["implementation"]
    facts: list[tuple[str, str]] = [
        ("implementation", f"<code>{_h(implementation['connectable'])}</code>"),
        (
            "declaration",
            f"<code>{_h(json.dumps(implementation['declaration'], sort_keys=True))}</code>",
        ),
        (
            "run",
            f"{_plural(header['cases'], 'case')} planned in "
            f"{_plural(header['scenarios'], 'scenario')}; "
            f"{_plural(scenarios, 'scenario')} reported",
        ),
        ("started", _h(header["started"])),
    ]
    if footer:
        early = ", stopped early" if footer["stopped_early"] else ""
        facts += [
            ("finished", f"{_h(footer['finished'])} ({footer['elapsed']:.1f} s{early})"),
            ("exit code", _h(footer["exit_code"])),
        ]
    else:
        facts.append(("finished", "<strong>no: the report has no footer</strong>"))
    facts += [
        ("command", f"<code>{_h(shlex.join(header['argv']))}</code>"),
        (
            "filter",
            "none: every scenario"
            if header["filter"] is None
            else f"<code>-k {_h(shlex.quote(str(header['filter'])))}</code>",
        ),
        (
            "harness",
            f"callstream {_h(header['callstream'])} · Python {_h(header['python'])} · "
            f"{_h(header['platform'])}",
        ),
    ]
    return "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in facts)


def _html_matrix(report: Report) -> str:
    verdicts = _verdicts(report.results)
    states = rule_states(report.results)
    checks = {
        group.scenario: _check_names(r for _, r in group.cases)
        for group in failing_scenarios(report.results)
    }
    by_rule: dict[str, list[tuple[str, str]]] = {}
    for scenario, rules in states.items():
        for rule, (state, _) in rules.items():
            by_rule.setdefault(rule, []).append((scenario, state))
    legend = " ".join(
        f'<span class="cell {state}">{_SYMBOL[state]} {_LABEL[state]}</span>'
        for state in RULE_STATES
    )
    rows = []
    for rule, tally in rule_table(report.results, corpus=_of_corpus(report)).items():
        state = _row_state(tally)
        if tally["hole"] and rule not in by_rule:
            cells = (
                f'<span class="cell hole" data-filter="hole">⚠ hole: no scenario cites '
                f"{_h(rule)}</span>"
            )
        elif rule not in by_rule:
            reason = _h(NOT_CERTIFIABLE.get(rule, ""))
            cells = (
                '<span class="cell not_applicable" data-filter="not_certifiable">'
                f"not certifiable here: {reason}</span>"
            )
        else:
            cells = " ".join(
                _html_cell(scenario, verdicts[scenario], shown, checks.get(scenario, ""))
                for scenario, shown in by_rule[rule]
            )
        numbers = "".join(
            f'<td class="n {kind if tally[kind] else "zero"}">{tally[kind]}</td>'  # type: ignore[literal-required]
            for kind in RULE_STATES
        )
        row = '<tr class="hole"' if tally["hole"] else "<tr"
        rows.append(
            f'{row} data-filter="{_h(rule)}"><td class="sym {state}">{_SYMBOL[state]}</td>'
            f'<th scope="row">{_h(rule)}</th><td class="title">{_h(_rule_title(rule))}</td>'
            f'<td class="n">{tally["scenarios"]}</td>{numbers}<td class="cells">{cells}</td></tr>'
        )
    head = "".join(f'<th class="n" title="{_LABEL[o]}">{_SYMBOL[o]}</th>' for o in RULE_STATES)
    return (
        '<section id="rules"><h2>Rules × scenarios</h2>'
        f'<p class="legend">{legend} <span class="cell hole">{_SYMBOL["hole"]} hole</span> '
        "— each scenario is shown under every rule it cites, and under any rule a failed check "
        "of it proves. A scenario fails a rule when a check proving that rule failed in one of "
        "its cases; a failed one links to its failures.</p>"
        '<table class="matrix"><thead><tr><th></th><th>Rule</th><th class="title">Title</th>'
        f'<th class="n">Cites</th>{head}<th>Scenarios</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


def _html_cell(scenario: str, verdict: _Verdict, state: str, checks: str) -> str:
    cases = ", ".join(f"{n} {_LABEL[o]}" for o, n in verdict.cases.items() if n)
    words = " ".join([state, *checks.split(", ")]).strip()
    attributes = (
        f'class="cell {state}" title="{_h(verdict.title)} ({_h(cases)})" data-filter="{_h(words)}"'
    )
    text = f"{_SYMBOL[state]} {_h(scenario)}"
    if state in ("failed", "errored"):
        return f'<a {attributes} href="#scenario-{_h(scenario)}">{text}</a>'
    return f"<span {attributes}>{text}</span>"


_PACKED_BUDGET = 500_000
"""Characters of packed cases (gzip, then base64) report.html holds with every bad case's
repro. Past it each failing scenario keeps the repro of its first bad case only (report.jsonl
has them all), so that a run in which every case fails still renders a page under 1 MB."""


def _html_failures(report: Report) -> str:
    """Every failing scenario as a line that opens onto its bad cases. What it opens onto is
    packed (gzip, base64) into the section and unpacked by the page's script when it is
    opened: one scenario's cases differ mostly in how the stream was cut, so they pack
    tightly, and the page stays a single file that needs nothing but itself."""
    failing = failing_scenarios(report.results)
    if not failing:
        return ""
    verdicts = _verdicts(report.results)
    rerun = report.header.get("rerun")
    every_repro = True
    packed = _pack(failing, rerun, every_repro)
    if len(packed) > _PACKED_BUDGET:
        every_repro = False
        packed = _pack(failing, rerun, every_repro)
    groups = "".join(
        _html_group(
            group.scenario,
            verdicts[group.scenario],
            group.cases,
            f'<div class="cases slot" data-for="{_h(group.scenario)}"></div>',
            anchor=True,
        )
        for group in failing
    )
    total = sum(len(group.cases) for group in failing)
    repros = (
        ""
        if every_repro
        else '<p class="legend">So that this page stays small, each scenario keeps the repro '
        f"of its first bad case only; every case's repro is in {JSONL}.</p>"
    )
    return (
        f'<section id="failures" data-cases="{packed}"><h2>Failures '
        f"({_plural(total, 'case')} in {_plural(len(failing), 'scenario')})</h2>"
        f'<noscript><p class="legend">The cases are packed into this page and need JavaScript '
        f"to show; {JSONL} has them.</p></noscript>"
        '<p><button data-open="1">expand all</button> <button data-open="0">collapse all</button>'
        f"</p>{repros}{groups}</section>"
    )


def _pack(
    failing: Sequence[FailingScenario], rerun: Sequence[str] | None, every_repro: bool
) -> str:
    """What each failing scenario opens onto, as JSON by scenario id, gzipped (the same bytes
    for the same report) and base64-encoded, for an attribute the page's script unpacks with
    ``DecompressionStream``."""
    fragments = {
        group.scenario: _html_overview(group, rerun) + _html_cases(group.cases, every_repro)
        for group in failing
    }
    data = json.dumps(fragments, ensure_ascii=False).encode("utf-8")
    return base64.b64encode(gzip.compress(data, compresslevel=9, mtime=0)).decode("ascii")


def _html_overview(group: FailingScenario, rerun: Sequence[str] | None) -> str:
    """Where a failing scenario went wrong and its first problem, in a line (as ``callstream
    run`` prints it), and the command that reruns it, given the run's ``rerun`` words."""
    out = f'<p class="problem">[{_h(group.splittings())}] {_h(first_problem(group.first))}</p>'
    if rerun is not None:
        out += (
            f'<p class="rerun">rerun: <code>{_h(rerun_command(rerun, group.scenario))}</code></p>'
        )
    return out


def _html_scenario(
    scenario: str, verdict: _Verdict, cases: Sequence[tuple[int, Mapping[str, Any]]]
) -> str:
    """A failing scenario: a summary line, opening onto each of its bad cases, in the page."""
    group = FailingScenario(scenario, verdict.outcome, tuple(cases))
    body = _html_overview(group, None) + _html_cases(cases, every_repro=True)
    return _html_group(scenario, verdict, cases, f'<div class="cases">{body}</div>', anchor=False)


def _html_group(
    scenario: str,
    verdict: _Verdict,
    cases: Sequence[tuple[int, Mapping[str, Any]]],
    body: str,
    *,
    anchor: bool,
) -> str:
    """A failing scenario's ``<details>``: its summary line, then ``body``. ``anchor`` gives it
    the id ``scenario-<id>`` the rules matrix links to."""
    results = [result for _, result in cases]
    checks = _check_names(results)
    words = [
        *(result["outcome"] for result in results),
        *verdict.rules,
        *(rule for result in results for f in result["failures"] for rule in f["rules"]),
        *(result["splitting"] for result in results),
        *results[0]["tags"],
    ]
    where = f' id="scenario-{_h(scenario)}"' if anchor else ""
    return (
        f'<details class="group {verdict.outcome}"{where} '
        f'data-filter="{_h(" ".join(dict.fromkeys(words)))}"><summary>'
        f'<span class="sym">{_SYMBOL[verdict.outcome]}</span> <code>{_h(scenario)}</code> '
        f"{_h(verdict.title)}"
        f'<span class="where">{_h(_case_counts(verdict))}</span>'
        f'<span class="checknames">{_h(checks)}</span>'
        f"</summary>{body}</details>"
    )


def _html_cases(cases: Sequence[tuple[int, Mapping[str, Any]]], every_repro: bool) -> str:
    """A failing scenario's bad cases, the first open; each with its repro, or (without
    ``every_repro``) only the first."""
    return "".join(
        _html_case(line, result, repro=every_repro or n == 0, opened=n == 0)
        for n, (line, result) in enumerate(cases)
    )


def _html_case(line: int, result: Mapping[str, Any], *, repro: bool, opened: bool) -> str:
    """One bad case: its failed checks, its detail and (if ``repro``) its repro."""
    outcome = result["outcome"]
    rows = "".join(
        f"<tr><td><code>{_h(failure['check'])}</code></td><td>{_h(failure_pointer(failure['rules']))}"
        f"</td><td>{_h(failure['message'])}</td></tr>"
        for failure in result["failures"]
    )
    body = []
    if rows:
        body.append(
            "<table><thead><tr><th>Check</th><th>Rules</th><th>What went wrong</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )
    if result["detail"] is not None:
        body.append(f"<h4>Detail</h4>{_html_lines(_clip(result['detail'], 400, 100_000))}")
    if result["repro"] is not None and repro:
        body.append(
            "<h4>Repro: the stream line by line with its offsets, chunk boundaries ┊, "
            "releases ◀</h4>"
            f"{_html_lines(_clip(result['repro'], 400, 100_000))}"
        )
    elif result["repro"] is not None:
        cut = result["repro"].split("\n", 1)[0].rstrip(":")
        body.append(
            f"<h4>Repro</h4><p class='facts'>{_h(cut)}; in full on {JSONL} line {line} (the "
            "first case above shows its own).</p>"
        )
    body.append(
        f'<p class="facts">{_h(result["kind"])} scenario · rules {_h(", ".join(result["rules"]))}'
        f" · tags {_h(', '.join(result['tags']) or 'none')}"
        f" · {_plural(result['chunkings'], 'chunking')} run"
        f" · {result['elapsed']:.3f} s"
        + (f" · defined at <code>{_h(result['source'])}</code>" if result["source"] else "")
        + f" · {JSONL} line {line}</p>"
    )
    return (
        f'<details class="case {outcome}" id="line-{line}"{" open" if opened else ""}><summary>'
        f'<span class="sym">{_SYMBOL[outcome]}</span> '
        f"{_h(result['profile'])} / {_h(result['splitting'])}"
        f'<span class="checknames">{_h(_check_names([result]))}</span>'
        f'</summary><div class="body">{"".join(body)}</div></details>'
    )


_OFFSET = re.compile(r" *\d+ | +…$")
"""The offset that starts a repro's stream line (``    205 ``, eight characters or more), or
the gap between the lines shown."""
_MARK = "  ◀ "
"""What starts a release noted on a repro line (the stream itself is shown escaped, so this
never comes from it)."""


def _html_lines(text: str) -> str:
    """Text line by line, each line wrapping under itself past its offset, so a long chunk
    line of a repro is read without scrolling sideways; offsets, chunk boundaries ``┊`` and
    release marks ``◀`` set apart."""
    lines = []
    for line in _visible(text).split("\n"):
        stream, *marks = line.split(_MARK)
        offset = _OFFSET.match(stream)
        start = offset.end() if offset and offset.end() >= 8 else 0
        shown = html.escape(stream[start:], quote=False).replace("┊", '<b class="cut">┊</b>')
        if start:
            shown = f'<span class="at">{html.escape(stream[:start])}</span>{shown}'
        shown += "".join(
            f'  <span class="mark">◀ {html.escape(mark, quote=False)}</span>' for mark in marks
        )
        lines.append(f"<div>{shown}</div>")
    return f'<div class="lines">{"".join(lines)}</div>'


def _html_not_observable(report: Report) -> str:
    """Which checks could not see what they read, and in how many cases."""
    counts: dict[str, int] = {}
    for result in report.results:
        for check in result.get("not_observable", ()):
            counts[check] = counts.get(check, 0) + 1
    if not counts:
        return ""
    rows = "".join(
        '<tr data-filter="not_observable">'
        f"<td><code>{_h(check)}</code></td><td>{_h(', '.join(_check_rules(check)))}</td>"
        f"<td class='n'>{n}</td></tr>"
        for check, n in counts.items()
    )
    return (
        '<section id="not-observable"><h2>Not observable</h2><details>'
        f"<summary>{_plural(len(counts), 'check')} read what the implementation does not "
        "expose (its declaration): never counted as passed</summary><table><thead><tr>"
        "<th>Check</th><th>Rules it proves</th><th class='n'>Cases</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></details></section>"
    )


def _check_rules(name: str) -> tuple[str, ...]:
    return next((check.rules for check in CHECKS if check.name == name), ())


def _html_skipped(report: Report) -> str:
    reasons: dict[tuple[str, str], dict[str, int]] = {}
    for result in report.results:
        if result["outcome"] in ("unsupported", "not_applicable"):
            why = reasons.setdefault((result["scenario"], result["outcome"]), {})
            detail = result["detail"] or _LABEL[result["outcome"]]
            why[detail] = why.get(detail, 0) + 1
    if not reasons:
        return ""
    total = sum(sum(why.values()) for why in reasons.values())
    rows = "".join(
        f'<tr data-filter="{outcome}">'
        f"<td><code>{_h(scenario)}</code></td><td>{_h(_LABEL[outcome])}</td>"
        f"<td class='n'>{n}</td><td>{_h(detail)}</td></tr>"
        for (scenario, outcome), why in reasons.items()
        for detail, n in why.items()
    )
    return (
        f'<section id="not-run"><h2>Not run ({total})</h2><details>'
        f"<summary>{_plural(total, 'case')} in {_plural(len(reasons), 'scenario')}: "
        "unsupported (a non-feature the implementation declares) or not applicable (another "
        "profile or dialect)</summary><table><thead><tr>"
        "<th>Scenario</th><th>Outcome</th><th class='n'>Cases</th><th>Why</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></details></section>"
    )


# --- badge ---


def _badge(report: Report) -> dict[str, Any]:
    """A shields.io endpoint: ``412/412 passed`` in green, ``3 failed`` in red."""
    message, tone = _standing(report)
    color = {
        "passed": "brightgreen",
        "unsupported": "lightgrey",
        "not_applicable": "lightgrey",
    }.get(tone, "red")
    if report.footer is None:
        message += " (unfinished)"
        color = "red" if color == "red" else "orange"
    return {"schemaVersion": 1, "label": "callstream", "message": message, "color": color}


def page_head(title: str, css: str = "") -> list[str]:
    """The opening of every HTML page callstream writes (report, matrix, certificate), up to
    and with ``</head>``: one style sheet, ``css`` added to it."""
    return [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_h(title)}</title>",
        f"<style>{_CSS}{css}</style>",
        "</head>",
    ]

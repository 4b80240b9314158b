"""The report model: the lines of ``report.jsonl`` (validated against
``schemas/report.schema.json``) read back as a :class:`Report`, and the rule table every format
shows."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from functools import cache
from importlib import metadata, resources
from os import PathLike
from pathlib import Path
from typing import Any, NamedTuple, TypedDict

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from ..core.case import OUTCOMES
from ..core.checks import CHECKS
from ..core.dialects import NOT_CERTIFIABLE
from ..errors import UsageError
from ..rules import RULES

__all__ = [
    "FORMAT",
    "JSONL",
    "RULE_STATES",
    "Report",
    "RuleEvidence",
    "RuleTally",
    "callstream_version",
    "count_outcomes",
    "line_problem",
    "load_report",
    "new_tally",
    "observed_rules",
    "parse_line",
    "rule_states",
    "rule_table",
    "utc_now",
    "validator",
]


FORMAT = 2
"""The version of the report format this module writes and reads."""


RULE_STATES = ("passed", "failed", "errored", "not_observable", "unsupported", "not_applicable")
"""How a rule stands in one scenario, worst first after ``passed``: ``failed`` when a check
proving the rule failed in any case of it; ``not_observable`` when every check that could prove
it reads what the implementation does not expose (or the case crashed before it could be seen);
``unsupported`` / ``not_applicable`` when no case of the scenario ran."""


JSONL = "report.jsonl"


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


def count_outcomes(results: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many results had each outcome (every outcome present, zero or more)."""
    counts: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
    for result in results:
        counts[result["outcome"]] += 1
    return counts


def load_report(path: str | PathLike[str], *, validate: bool = True) -> Report:
    """Read and validate a ``report.jsonl`` (or the run folder holding one). A broken file
    raises ``UsageError`` naming the line: not JSON, not a valid line, out of order, or a
    footer whose counts do not match the results. ``validate=False`` leaves out the schema
    check of each line (the costly part), for a file just written by a ``ReportWriter``, which
    checked every line before writing it; the order and the counts are checked all the same."""
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
        line = parse_line(raw, where)
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
        problem = line_problem(line) if validate else None
        if problem:
            raise UsageError(f"{where}: {problem}")
        if kind == "header":
            header = line
        elif kind == "result":
            results.append(line)
        else:
            footer = line
            if footer["counts"] != count_outcomes(results):
                raise UsageError(
                    f"{where}: the footer counts {footer['counts']} do not match the "
                    f"{len(results)} result lines {count_outcomes(results)}"
                )
    if header is None:
        raise UsageError(f"{path}:1: the report is empty: no header")
    return Report(header, results, footer)


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
    table: dict[str, RuleTally] = {rule: new_tally(rule not in NOT_CERTIFIABLE) for rule in RULES}
    if not corpus:
        table = {}
    for scenario in states.values():
        for rule, (state, cited) in scenario.items():
            tally = table.setdefault(rule, new_tally(True))
            tally[state] += 1  # type: ignore[literal-required]
            if cited:
                tally["scenarios"] += 1
                tally["hole"] = False
    return table


def new_tally(hole: bool) -> RuleTally:
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
    found: dict[str, RuleEvidence] = {}
    for result in results:
        evidence = found.setdefault(result["scenario"], RuleEvidence())
        evidence.add(result)
    return {scenario: evidence.states() for scenario, evidence in found.items()}


class RuleEvidence:
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
            self.observed |= observed_rules(result)

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


def observed_rules(result: Mapping[str, Any]) -> set[str]:
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


@cache
def validator() -> Draft202012Validator:
    text = resources.files("callstream").joinpath("schemas/report.schema.json").read_text("utf-8")
    return Draft202012Validator(json.loads(text))


def line_problem(line: Mapping[str, Any]) -> str | None:
    """What is wrong with a line, by the schema, or None."""
    error = best_match(validator().iter_errors(line))
    if error is None:
        return None
    return f"{error.json_path}: {error.message}"


def parse_line(raw: bytes, where: str) -> dict[str, Any]:
    try:
        line = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"{where}: not UTF-8 at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where}: not JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(line, dict):
        raise UsageError(f"{where}: a line must be a JSON object, not {type(line).__name__}")
    return line


def callstream_version(unknown: str = "unknown") -> str:
    """The version of callstream installed, or ``unknown`` when it never was (run from a
    checkout): reports say "unknown", ``callstream --version`` says more."""
    try:
        return metadata.version("callstream")
    except metadata.PackageNotFoundError:
        return unknown


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")

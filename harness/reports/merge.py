"""Merging the reports of a run's shards into the report of the whole run
(``callstream report merge OUT REPORT_DIR...``).

Theory of operation: each shard of a run (``callstream run --shard K/N``, see
:mod:`callstream.runner.shard`) ran a contiguous slice of the same selection, in corpus order, so
the results of shards 1, 2, … N put end to end are the results a single run writes, in its order.
The merged ``report.jsonl`` is that: a header for the whole run, every shard's result lines as
they were written, and a footer whose counts, exit code and ``stopped_early`` are those of the
merged results; every other format is rendered from it by :func:`callstream.reports.write_report`,
as after a run. Reports that are not shards of one run are refused: another implementation,
another callstream, another shard count or another selection (different scenarios, splittings
or ``-k``); so is a shard given twice or a case in two reports. A missing shard, or one whose
run did not finish (no footer), is refused too unless ``allow_partial``; then the merged report
says which shards it lacks, and its footer that the run stopped early.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from os import PathLike
from pathlib import Path
from typing import Any, TextIO

from ..core.case import OUTCOMES
from ..errors import UsageError
from . import Report, load_report, write_report

__all__ = ["Merged", "ShardReport", "merge_command", "merge_reports", "read_shard"]


@dataclass(frozen=True, slots=True)
class ShardReport:
    """One shard's report, read from ``source``; a report of a run that was not sharded is its
    only shard, 1/1."""

    source: Path
    report: Report

    @property
    def index(self) -> int:
        """K, from 1."""
        return int(self._shard.get("index", 1))

    @property
    def count(self) -> int:
        """N, the run's shard count."""
        return int(self._shard.get("count", 1))

    @property
    def name(self) -> str:
        """Where it came from and which shard it is, for messages."""
        return f"{self.source} (shard {self.index}/{self.count})"

    @property
    def _shard(self) -> Mapping[str, Any]:
        shard: Mapping[str, Any] = self.report.header.get("shard", {})
        return shard


@dataclass(frozen=True, slots=True)
class Merged:
    """The whole run's report, and which of its shards it lacks."""

    report: Report
    missing: tuple[int, ...]
    """The shards neither given nor merged (with ``allow_partial``)."""
    unfinished: tuple[ShardReport, ...]
    """Shards left out because their run did not finish (with ``allow_partial``)."""

    @property
    def counts(self) -> dict[str, int]:
        """How many merged results have each outcome."""
        return _counts(self.report.results)

    @property
    def exit_code(self) -> int:
        """0 when every merged case that ran passed, 1 when any failed or errored."""
        counts = self.counts
        return 1 if counts["failed"] or counts["errored"] else 0


def read_shard(folder: str | PathLike[str]) -> ShardReport:
    """Read and validate a shard's report folder (or its ``report.jsonl``)."""
    shard = ShardReport(Path(folder), load_report(folder))
    if shard.index > shard.count:
        raise UsageError(f"{folder}: the header names shard {shard.index} of {shard.count}")
    return shard


def merge_reports(shards: Sequence[ShardReport], *, allow_partial: bool = False) -> Merged:
    """The report of the whole run whose ``shards`` are given, in any order; a ``UsageError``
    saying why when they are not shards of one run, overlap, or (unless ``allow_partial``) do
    not make it whole."""
    if not shards:
        raise UsageError("give the report folders of the shards to merge")
    _require_same(shards, "implementations", lambda shard: shard.report.header["implementation"])
    _require_same(shards, "callstream versions", lambda shard: shard.report.header["callstream"])
    _require_same(shards, "shard counts", lambda shard: shard.count)
    _require_same(shards, "corpora", _selection)
    ordered = sorted(shards, key=lambda shard: shard.index)
    for before, after in itertools.pairwise(ordered):
        if before.index == after.index:
            raise UsageError(
                f"shard {before.index}/{before.count} is given twice: {before.source} and "
                f"{after.source}; a case would be counted twice"
            )
    _refuse_shared_cases(ordered)
    unfinished = tuple(shard for shard in ordered if shard.report.footer is None)
    if unfinished and not allow_partial:
        raise UsageError(
            f"{', '.join(shard.name for shard in unfinished)}: the run did not finish (its "
            "report has no footer); run it again, or pass --allow-partial to merge the rest"
        )
    merged = [shard for shard in ordered if shard.report.footer is not None]
    if not merged:
        raise UsageError("nothing to merge: no report given is of a run that finished")
    count = ordered[0].count
    missing = tuple(sorted(set(range(1, count + 1)) - {shard.index for shard in merged}))
    if missing and not allow_partial:
        given = ", ".join(shard.name for shard in ordered)
        raise UsageError(
            f"{_shards(missing, count)} missing (given: {given}); merge every shard, or pass "
            "--allow-partial to merge what there is"
        )
    results = [result for shard in merged for result in shard.report.results]
    header = _header(merged, count, missing)
    return Merged(Report(header, results, _footer(merged, results, missing)), missing, unfinished)


def merge_command(
    out: Path,
    folders: Sequence[str | PathLike[str]],
    *,
    allow_partial: bool,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """``callstream report merge``: read the shards' report folders, merge them into ``out``
    (refused if it holds a report), render every format there and print the totals. Returns 0
    when every merged case passed, 1 when any failed or errored; bad input raises
    ``UsageError`` (exit 2)."""
    merged = merge_reports([read_shard(folder) for folder in folders], allow_partial=allow_partial)
    write_report(out, merged.report)
    results = merged.report.results
    count = merged.report.header["merged"]["count"]
    counts = merged.counts
    for shard in merged.unfinished:
        print(f"callstream: left out {shard.name}: its run did not finish", file=stderr)
    if merged.missing:
        print(
            f"callstream: merged without {_shards(merged.missing, count)}: the report lacks "
            + ("its cases" if len(merged.missing) == 1 else "their cases"),
            file=stderr,
        )
    stdout.write(
        f"merged {count - len(merged.missing)}/{count} shards: {len(results)} cases of "
        f"{len({result['scenario'] for result in results})} scenarios: "
        + ", ".join(f"{counts[outcome]} {outcome.replace('_', ' ')}" for outcome in OUTCOMES)
        + f"\nreport: {out}\n"
    )
    return merged.exit_code


def _selection(shard: ShardReport) -> dict[str, Any]:
    """What the shard's run selected: the whole run's scenarios, cases, fingerprint, and -k."""
    header = shard.report.header
    whole = header.get("shard")
    if whole is None:
        whole = {"scenarios": header["scenarios"], "cases": header["cases"], "corpus": None}
    return {
        "scenarios": whole["scenarios"],
        "cases": whole["cases"],
        "corpus": whole["corpus"],
        "filter": header["filter"],
    }


def _require_same(
    shards: Sequence[ShardReport], what: str, value: Callable[[ShardReport], Any]
) -> None:
    """Refuse, naming each group, unless every shard has the same ``value``."""
    groups: dict[str, list[ShardReport]] = {}
    for shard in shards:
        groups.setdefault(json.dumps(value(shard), sort_keys=True), []).append(shard)
    if len(groups) > 1:
        sides = "; ".join(
            f"{', '.join(shard.name for shard in group)}: {text}" for text, group in groups.items()
        )
        raise UsageError(f"cannot merge reports of different {what}: {sides}")


def _refuse_shared_cases(shards: Sequence[ShardReport]) -> None:
    """Refuse when one case (scenario, profile, splitting) is in two reports."""
    seen: dict[tuple[str, str, str], ShardReport] = {}
    for shard in shards:
        for result in shard.report.results:
            case = (result["scenario"], result["profile"], result["splitting"])
            first = seen.setdefault(case, shard)
            if first is not shard:
                raise UsageError(
                    f"the case {case[0]}[{case[1]}-{case[2]}] is in {first.name} and in "
                    f"{shard.name}: the shards overlap"
                )


def _shards(indices: Sequence[int], count: int) -> str:
    """``shard 2/3`` or ``shards 2/5, 4/5``."""
    noun = "shard" if len(indices) == 1 else "shards"
    return f"{noun} " + ", ".join(f"{index}/{count}" for index in indices)


def _header(shards: Sequence[ShardReport], count: int, missing: Sequence[int]) -> dict[str, Any]:
    """The whole run's header: the first shard's, with the whole run's counts, the earliest
    start, the command without ``--shard``, and which shards were merged."""
    headers = [shard.report.header for shard in shards]
    header = dict(headers[0])
    whole = header.pop("shard", None)
    if whole is not None:
        header["scenarios"] = whole["scenarios"]
        header["cases"] = whole["cases"]
    header["argv"] = _without_shard(header["argv"])
    header["started"] = min((h["started"] for h in headers), key=datetime.fromisoformat)
    # CI runners of one pool differ in their kernel's patch level: say every value met.
    for field in ("python", "platform"):
        header[field] = ", ".join(dict.fromkeys(h[field] for h in headers))
    header["merged"] = {
        "count": count,
        "shards": [shard.index for shard in shards],
        "missing": list(missing),
    }
    return header


def _footer(
    shards: Sequence[ShardReport], results: Sequence[Mapping[str, Any]], missing: Sequence[int]
) -> dict[str, Any]:
    """The whole run's footer: the last finish, the shards' seconds added up, the counts and
    exit code of the merged results; stopped early if any shard did or one is missing."""
    footers = [shard.report.footer for shard in shards if shard.report.footer is not None]
    counts = _counts(results)
    return {
        "type": "footer",
        "finished": max((f["finished"] for f in footers), key=datetime.fromisoformat),
        "elapsed": round(sum(f["elapsed"] for f in footers), 3),
        "counts": counts,
        "exit_code": 1 if counts["failed"] or counts["errored"] else 0,
        "stopped_early": bool(missing) or any(f["stopped_early"] for f in footers),
    }


def _counts(results: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
    for result in results:
        counts[result["outcome"]] += 1
    return counts


def _without_shard(argv: Sequence[str]) -> list[str]:
    """The command line without its ``--shard K/N``: the command of the whole run."""
    kept: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word == "--shard":
            skip = True
        elif not word.startswith("--shard="):
            kept.append(word)
    return kept

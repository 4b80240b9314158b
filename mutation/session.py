"""The bookkeeping around a Cosmic Ray session: equivalent mutants, samples and the score.

``mutation/run`` calls it between Cosmic Ray's own steps (``init``, ``exec``):

- ``filter SESSION [--sample N]``: marks as skipped every mutant ``mutation/equivalents.toml``
  names (it is a Cosmic Ray filter, like ``cr-filter-operators``), and, given ``--sample N``,
  every mutant outside a fixed sample of N drawn from those outside annotations (the same N on
  every run of the same code, whatever equivalents.toml says; the ones it names equivalent are
  left out of the score).
- ``report SESSION``: the score (killed over the mutants run that are not equivalent) overall
  and per module, then every survivor with its diff and the line to paste into
  ``equivalents.toml`` should it be equivalent.

A mutant is named by what survives edits elsewhere in the file: its module, the function it sits
in, Cosmic Ray's operator and the mutated line as it reads after the mutation. Line numbers move
whenever code above them changes, and Cosmic Ray's job ids are random per session, so neither
names a mutant; an entry that no longer matches any mutant is reported as stale.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import os
import random
import sys
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator
from cosmic_ray.work_db import WorkDB, WorkResultStorage, use_db
from cosmic_ray.work_item import MutationSpec, TestOutcome, WorkerOutcome, WorkItem, WorkResult

EQUIVALENTS = Path(__file__).with_name("equivalents.toml")
EQUIVALENT = "equivalent: "
"""How a skipped result's output starts when equivalents.toml names the mutant."""
OUTSIDE_SAMPLE = "outside the sample"
SOURCE = Path(os.environ.get("CALLSTREAM_MUTATION_SOURCE", "."))
"""Where the unmutated modules are read from (a session's own tree holds a mutant while it runs):
``mutation/run`` points it at the session's pristine copy."""
SUITES = ("corpus", "unit", "fuzz")
SAMPLE_SEED = 14
"""The seed the sample is drawn with (callstream issue 14)."""


@dataclass(frozen=True, slots=True)
class Key:
    """What names a mutant across sessions and edits elsewhere in its file."""

    module: str
    function: str
    operator: str
    mutant: str
    """The mutated line, stripped of its indentation."""


@dataclass(frozen=True, slots=True)
class Equivalent:
    """One entry of equivalents.toml."""

    key: Key
    reason: str
    suites: frozenset[str]
    """The suites it is equivalent for: all of them unless the entry says ``suites``. A mutant
    that only changes what the assembler never exposes (a counter of ``SSEDecoder`` no
    ``Assembler`` reads) is equivalent for the corpus and the fuzzer, which judge assemblers,
    but not for the unit tests, which may read that counter."""


def load_equivalents(path: Path = EQUIVALENTS, table: str = "equivalent") -> list[Equivalent]:
    """Every ``[[equivalent]]`` entry of ``path`` (or of another ``table``: ``beyond``); each
    must give a reason."""
    with path.open("rb") as handle:
        entries = tomllib.load(handle).get(table, [])
    found = []
    for entry in entries:
        if not str(entry.get("reason", "")).strip():
            raise SystemExit(f"{path}: an equivalent mutant without a reason: {entry}")
        key = Key(entry["module"], entry["function"], entry["operator"], entry["mutant"].strip())
        suites = frozenset(entry.get("suites", SUITES))
        if suites - set(SUITES):
            raise SystemExit(f"{path}: unknown suites {sorted(suites - set(SUITES))}: {entry}")
        found.append(Equivalent(key, entry["reason"].strip(), suites))
    return found


def matches(entry: Key, key: Key) -> bool:
    """Whether ``key`` is the mutant ``entry`` names: module, function and mutated line exactly
    (a line is full of ``[``), the operator exactly or as a shell-style glob; an entry's line
    that starts with ``glob:`` is a glob too (one entry for every default of a signature)."""
    line = (
        fnmatch.fnmatchcase(key.mutant, entry.mutant.removeprefix("glob:").strip())
        if entry.mutant.startswith("glob:")
        else key.mutant == entry.mutant
    )
    return (
        entry.module == key.module
        and entry.function == key.function
        and fnmatch.fnmatchcase(key.operator, entry.operator)
        and line
    )


def load_rules(path: Path = EQUIVALENTS) -> dict[str, str]:
    """The ``[rules]`` table of ``path``: each kind of mutant known to be equivalent wherever
    it occurs, with the reason. The kinds this module knows: ``annotations``."""
    with path.open("rb") as handle:
        rules: dict[str, str] = tomllib.load(handle).get("rules", {})
    unknown = set(rules) - {"annotations"}
    if unknown:
        raise SystemExit(f"{path}: unknown rules {sorted(unknown)}")
    return rules


def annotation_spans(path: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where ``path``'s annotations are, when the module postpones their evaluation
    (``from __future__ import annotations``, PEP 563): the code never evaluates them."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    postponed = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(alias.name == "annotations" for alias in node.names)
        for node in tree.body
    )
    if not postponed:
        return []
    spans = []
    for node in ast.walk(tree):
        found: list[ast.expr | None] = []
        if isinstance(node, ast.arg):
            found.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
        for annotation in found:
            if annotation is not None and annotation.end_lineno is not None:
                end = (annotation.end_lineno, annotation.end_col_offset or 0)
                spans.append(((annotation.lineno, annotation.col_offset), end))
    return spans


def mutated_line(spec: MutationSpec) -> str:
    """The line the mutation starts on, as it reads once mutated (stripped)."""
    source = (SOURCE / spec.module_path).read_text(encoding="utf-8")
    operator = get_operator(spec.operator_name)(**(spec.operator_args or {}))
    mutated = mutate_code(source, operator, spec.occurrence)
    if mutated is None:
        return ""
    line = spec.start_pos[0] - 1
    lines = mutated.splitlines()
    return lines[line].strip() if line < len(lines) else ""


def key_of(spec: MutationSpec) -> Key:
    """The mutant's name (reads and mutates its module's source in memory)."""
    return Key(
        str(spec.module_path),
        spec.definition_name or "<module>",
        spec.operator_name,
        mutated_line(spec),
    )


def _sole_mutation(item: WorkItem) -> MutationSpec:
    (spec,) = item.mutations
    return spec


def apply_filters(
    db: WorkDB, suite: str, sample: int | None, only: list[str], survivors_only: bool = False
) -> None:
    """Skip the equivalent mutants, then (given ``sample``) every mutant outside the sample and
    (given ``only``) every mutant of a module no pattern of ``only`` matches. The mutants left
    out by an earlier sample or ``only`` are put back first, so each run chooses afresh. With
    ``survivors_only``, the survivors are forgotten and they alone are left to run."""
    survivors = {job for job, result in db.results if result.test_outcome == TestOutcome.SURVIVED}
    if survivors_only:
        _forget_survivors(db)
    _put_back_not_run(db)
    rules = load_rules()
    spans: dict[Path, list[tuple[tuple[int, int], tuple[int, int]]]] = {}
    if "annotations" in rules:
        for item in db.work_items:
            spec = _sole_mutation(item)
            if spec.module_path not in spans:
                spans[spec.module_path] = annotation_spans(SOURCE / spec.module_path)
            if any(a <= spec.start_pos < b for a, b in spans[spec.module_path]):
                db.set_result(
                    item.job_id,
                    WorkResult(
                        worker_outcome=WorkerOutcome.SKIPPED,
                        output=EQUIVALENT + rules["annotations"],
                    ),
                )
    # Only entries that name one mutant exactly are skipped before the run; a glob entry may
    # also match a mutant that is killed (``_SLICE = 1 >> 16`` fails every stream), so those
    # mutants run, and the report counts a survivor that a glob entry names as equivalent.
    equivalents = [
        e for e in load_equivalents() if suite in e.suites and not e.key.mutant.startswith("glob:")
    ]
    matched: set[Key] = set()
    items = list(db.work_items)
    for item in items:
        spec = _sole_mutation(item)
        module, function = str(spec.module_path), spec.definition_name or "<module>"
        candidates = [
            e
            for e in equivalents
            if (e.key.module, e.key.function) == (module, function)
            and fnmatch.fnmatchcase(spec.operator_name, e.key.operator)
        ]
        if not candidates:
            continue
        key = key_of(spec)
        for entry in candidates:
            if matches(entry.key, key):
                matched.add(entry.key)
                db.set_result(
                    item.job_id,
                    WorkResult(
                        worker_outcome=WorkerOutcome.SKIPPED, output=EQUIVALENT + entry.reason
                    ),
                )
                break
    for stale in {e.key for e in equivalents} - matched:
        print(f"stale entry in {EQUIVALENTS.name} (no such mutant): {stale}", file=sys.stderr)
    results = dict(db.results)
    done = set(results)
    ordered = sorted(items, key=lambda i: _order(_sole_mutation(i)))
    asked = [
        i
        for i in ordered
        if not only or any(fnmatch.fnmatch(str(_sole_mutation(i).module_path), p) for p in only)
    ]
    eligible = [i for i in asked if not _skipped_as(results.get(i.job_id), EQUIVALENT)]
    kept = {i.job_id for i in eligible}
    if survivors_only:
        kept &= survivors
    if sample is not None:
        # Drawn from every mutant of the modules asked for but those inside annotations (which
        # only the code decides), then the equivalent ones left out: recording a mutant
        # equivalent leaves the others of the sample where they were, so scores stay comparable
        # from one triage to the next.
        annotation = EQUIVALENT + rules.get("annotations", "")
        population = [i for i in asked if not _skipped_as(results.get(i.job_id), annotation)]
        drawn = random.Random(SAMPLE_SEED).sample(population, min(sample, len(population)))
        kept = {i.job_id for i in drawn} & kept
    outside = [i.job_id for i in ordered if i.job_id not in kept and i.job_id not in done]
    if outside:
        db.set_multiple_results(
            outside, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output=OUTSIDE_SAMPLE)
        )


def _skipped_as(result: WorkResult | None, output: str) -> bool:
    """Whether ``result`` is a skip whose output starts with ``output``."""
    return result is not None and (result.output or "").startswith(output)


def _put_back_not_run(db: WorkDB) -> None:
    """Forget the results the last filtering wrote (left out, or equivalent), so that
    equivalents.toml as it now stands decides alone."""
    with db._session_maker.begin() as session:  # Cosmic Ray has no API for it
        session.query(WorkResultStorage).filter(
            (WorkResultStorage.output == OUTSIDE_SAMPLE)
            | WorkResultStorage.output.startswith(EQUIVALENT)
        ).delete(synchronize_session=False)


def _forget_survivors(db: WorkDB) -> None:
    """Forget every survivor's result, so that the next ``exec`` runs it again."""
    with db._session_maker.begin() as session:  # Cosmic Ray has no API for it
        session.query(WorkResultStorage).filter(
            WorkResultStorage.test_outcome == TestOutcome.SURVIVED
        ).delete(synchronize_session=False)


def _order(spec: MutationSpec) -> tuple[str, int, int, str, int]:
    return (str(spec.module_path), *spec.start_pos, spec.operator_name, spec.occurrence)


@dataclass
class Tally:
    """The outcomes of one module's mutants (or of all of them)."""

    killed: int = 0
    survived: int = 0
    equivalent: int = 0
    not_run: int = 0
    """Outside the sample, or not yet run (the session was stopped)."""
    incompetent: int = 0
    """The mutant does not run at all (Cosmic Ray's "incompetent"): counted as killed."""
    beyond: int = 0
    """Survivors ``[[beyond]]`` names: out of the suite's reach (an opt-in the suite cannot
    turn on, something its checks do not observe). They count against the score."""

    @property
    def scored(self) -> int:
        return self.killed + self.incompetent + self.survived + self.beyond

    @property
    def score(self) -> float:
        return 100.0 * (self.killed + self.incompetent) / self.scored if self.scored else 0.0

    @property
    def within_reach(self) -> float:
        reach = self.scored - self.beyond
        return 100.0 * (self.killed + self.incompetent) / reach if reach else 0.0

    def line(self, name: str) -> str:
        return (
            f"{name:46} {self.score:5.1f} % ({self.within_reach:5.1f} % within reach)"
            f"  killed {self.killed + self.incompetent:4}  survived {self.survived:3}"
            f"  beyond {self.beyond:3}  equivalent {self.equivalent:3}  not run {self.not_run:4}"
        )


def tally(db: WorkDB, suite: str) -> tuple[dict[str, Tally], list[tuple[WorkItem, WorkResult]]]:
    """Per module tallies, and the surviving mutants with their results (but those
    ``[[beyond]]`` names for ``suite``)."""
    beyond = [e.key for e in load_equivalents(table="beyond") if suite in e.suites]
    equivalent = [e.key for e in load_equivalents() if suite in e.suites]
    results = dict(db.results)
    per: dict[str, Tally] = defaultdict(Tally)
    survivors = []
    for item in db.work_items:
        spec = _sole_mutation(item)
        counts = per[str(spec.module_path)]
        result = results.get(item.job_id)
        if result is None:
            counts.not_run += 1
        elif result.worker_outcome == WorkerOutcome.SKIPPED:
            if (result.output or "").startswith(EQUIVALENT):
                counts.equivalent += 1
            else:
                counts.not_run += 1
        elif result.worker_outcome == WorkerOutcome.NO_TEST:
            counts.equivalent += 1  # no mutation could be made
        elif result.test_outcome == TestOutcome.SURVIVED:
            # equivalents.toml as it stands now decides, whether or not the filter ran since.
            key = key_of(spec)
            if any(matches(entry, key) for entry in equivalent):
                counts.equivalent += 1
            elif any(matches(entry, key) for entry in beyond):
                counts.beyond += 1
            else:
                counts.survived += 1
                survivors.append((item, result))
        elif result.test_outcome == TestOutcome.INCOMPETENT:
            counts.incompetent += 1
        else:
            counts.killed += 1
    return per, survivors


def report(db: WorkDB, suite: str) -> str:
    """The score, per module and overall, and every survivor."""
    per, survivors = tally(db, suite)
    total = Tally()
    for counts in per.values():
        for field in ("killed", "survived", "equivalent", "not_run", "incompetent", "beyond"):
            setattr(total, field, getattr(total, field) + getattr(counts, field))
    lines = [counts.line(module) for module, counts in sorted(per.items())]
    lines.append(total.line("all"))
    operators = Counter(_sole_mutation(item).operator_name for item, _ in survivors)
    if survivors:
        lines.append(f"\n{len(survivors)} survivors ({', '.join(sorted(operators))})")
    for item, result in sorted(survivors, key=lambda s: _order(_sole_mutation(s[0]))):
        spec = _sole_mutation(item)
        key = key_of(spec)
        lines.append(
            f"\n--- {spec.module_path}:{spec.start_pos[0]} in {key.function}: {spec.operator_name}"
            f" (job {item.job_id})"
        )
        lines.extend(line for line in (result.diff or "").splitlines()[2:] if line)
        lines.append(
            "[[equivalent]]\n"
            f'module = "{key.module}"\nfunction = "{key.function}"\n'
            f'operator = "{key.operator}"\nmutant = {_toml_string(key.mutant)}\nreason = ""'
        )
    return "\n".join(lines)


def _toml_string(text: str) -> str:
    return "'''" + text + "'''" if '"' in text or "\\" in text else f'"{text}"'


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="mutation/session.py", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    filtering = sub.add_parser("filter")
    filtering.add_argument("session")
    filtering.add_argument("suite", choices=SUITES)
    filtering.add_argument("--sample", type=int)
    filtering.add_argument("--only", action="append", default=[], metavar="GLOB")
    filtering.add_argument("--survivors-only", action="store_true")
    reporting = sub.add_parser("report")
    reporting.add_argument("session")
    reporting.add_argument("suite", choices=SUITES)
    forgetting = sub.add_parser("forget-survivors")
    forgetting.add_argument("session")
    for name in ("show", "spec"):
        one = sub.add_parser(name)
        one.add_argument("session")
        one.add_argument("job")
    args = parser.parse_args(argv)
    with use_db(args.session, WorkDB.Mode.open) as db:
        if args.command == "filter":
            apply_filters(db, args.suite, args.sample, args.only, args.survivors_only)
        elif args.command == "forget-survivors":
            _forget_survivors(db)
        elif args.command == "report":
            print(report(db, args.suite))
        else:
            (item,) = [i for i in db.work_items if i.job_id.startswith(args.job)]
            spec = _sole_mutation(item)
            if args.command == "spec":
                print(spec.module_path, spec.operator_name, spec.occurrence)
            else:
                result = dict(db.results).get(item.job_id)
                print(f"{spec.module_path}:{spec.start_pos[0]} {spec.operator_name} {key_of(spec)}")
                if result is not None:
                    print(result.worker_outcome, result.test_outcome)
                    print(result.diff or "", result.output or "", sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

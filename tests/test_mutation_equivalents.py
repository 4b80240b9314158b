"""``mutation/equivalents.toml`` stays true to the code it describes: every entry gives a reason
and names suites that exist, a module that exists and a function (or class) defined in it, so a
rename in ``reference_impl/`` that would leave an entry naming nothing fails here rather than
silently turning an equivalent mutant into a survivor of the nightly score. The test files the
``unit`` suite runs against each mutant exist too. (Matching an entry's mutated line needs the
mutation tool; ``mutation/run`` reports entries that match no mutant as stale.)"""

from __future__ import annotations

import ast
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENTS = ROOT / "mutation" / "equivalents.toml"
SUITES = {"corpus", "unit", "fuzz"}


@cache
def entries() -> list[tuple[str, dict[str, object]]]:
    with EQUIVALENTS.open("rb") as handle:
        data = tomllib.load(handle)
    return [(table, entry) for table in ("equivalent", "beyond") for entry in data.get(table, [])]


def defined_names(module: Path) -> set[str]:
    """The functions and classes ``module`` defines, at any depth, and ``<module>``."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    names = {"<module>"}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
    return names


def test_there_are_entries_and_the_rules_are_known() -> None:
    """The file holds equivalent and beyond entries, and only the rules the tooling knows."""
    with EQUIVALENTS.open("rb") as handle:
        data = tomllib.load(handle)
    assert {table for table, _ in entries()} == {"equivalent", "beyond"}
    assert set(data.get("rules", {})) <= {"annotations"}


@pytest.mark.parametrize(
    ("table", "entry"), entries(), ids=lambda v: v if isinstance(v, str) else str(v.get("mutant"))
)
def test_every_entry_names_code_that_exists_and_says_why(
    table: str, entry: dict[str, object]
) -> None:
    """Its reason is said, its suites exist, its module exists and defines its function."""
    assert str(entry.get("reason", "")).strip(), f"{table} entry without a reason: {entry}"
    assert set(entry.get("suites", SUITES)) <= SUITES  # type: ignore[arg-type]
    assert str(entry["operator"]).startswith("core/")
    module = ROOT / str(entry["module"])
    assert module.is_file(), module
    assert entry["function"] in defined_names(module), entry


def test_the_unit_suite_runs_test_files_that_exist() -> None:
    """Every test file ``mutation/run unit`` runs against a mutant exists."""
    script = (ROOT / "mutation" / "run").read_text(encoding="utf-8")
    block = script[script.index("UNIT_TESTS=(") : script.index(")", script.index("UNIT_TESTS=("))]
    files = re.findall(r"tests/\S+\.py", block)
    assert len(files) >= 5
    for name in files:
        assert (ROOT / name).is_file(), name

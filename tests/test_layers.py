"""The layout stays as drawn: every import in ``callstream`` goes down the layers or stays in
its own, never up; no module imports another module's private name; there is no import cycle;
and the reference assembler imports nothing of callstream but itself.

The layers, bottom up (a package counts as one module of its layer; the ``callstream``
facade, which re-exports everything lazily, stands above them all)::

    L0  errors rules scrub implementations   what everything may use
    L1  core             spec, render, split, oracle, observe, checks, case: the pipeline
    L2  corpus           scenario files, cassettes, regressions, lint, explain, assemble
        reports          the report model and every format, merge
        strategies       the Hypothesis generators
        coverage         the wire features a stream shows (fuzz --coverage, lint --features)
    L3  emulator         the provider emulator (an ASGI app on uvicorn)
    L4  connect          connectables: py:, cmd: (the pipe), http: (the adapters), check
    L5  runner           a corpus run in worker processes; shards
    L6  fuzz certification matrix
    L7  cli pytest_plugin
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parent.parent / "harness"
REFERENCE = HARNESS.parent / "reference_impl"

LAYERS = {
    0: "errors rules scrub implementations",
    1: "core",
    2: "corpus reports strategies coverage",
    3: "emulator",
    4: "connect",
    5: "runner",
    6: "fuzz certification matrix",
    7: "cli pytest_plugin",
}
LAYER_OF = {name: layer for layer, names in LAYERS.items() for name in names.split()}


def modules(root: Path, package: str) -> dict[str, Path]:
    """Every module under ``root`` by its dotted name in ``package``."""
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join([package, *parts])] = path
    return found


CALLSTREAM = modules(HARNESS, "callstream") | modules(REFERENCE, "callstream.reference")


def imports(name: str, path: Path) -> Iterator[tuple[str, str, int]]:
    """(imported module, imported name or "", line) for every import of callstream in the
    module, at its top or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.partition(".")[0] == "callstream":
                for alias in node.names:
                    yield target, alias.name, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.partition(".")[0] == "callstream":
                    yield alias.name, "", node.lineno


def owner(module: str) -> str:
    """The module of the imported target: ``callstream.reports.html`` for a name imported from
    it, else the nearest module that exists."""
    while module not in CALLSTREAM and "." in module:
        module = module.rpartition(".")[0]
    return module


def layer_name(module: str) -> str | None:
    """The top-level module or package under callstream that ``module`` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def edges() -> Iterator[tuple[str, str, str, int]]:
    """(importer, imported module, imported name, line) for every import inside callstream,
    the facade excepted."""
    for name, path in sorted(CALLSTREAM.items()):
        if name == "callstream":
            continue
        for target, imported, line in imports(name, path):
            module = f"{target}.{imported}" if f"{target}.{imported}" in CALLSTREAM else target
            yield name, owner(module), imported, line


def violations() -> list[str]:
    """Every import that breaks the layout, as ``module:line: what``."""
    found = []
    for name, target, imported, line in edges():
        where = f"{CALLSTREAM[name].relative_to(HARNESS.parent)}:{line}"
        mine, theirs = layer_name(name), layer_name(target)
        if name.startswith("callstream.reference"):
            if not target.startswith("callstream.reference"):
                found.append(f"{where}: the reference imports {target}")
            continue
        if imported.startswith("_") and not _same_private_package(name, target):
            found.append(f"{where}: imports the private name {imported} of {target}")
        if any(part.startswith("_") for part in target.split(".")[1:]) and not (
            _same_private_package(name, target)
        ):
            found.append(f"{where}: imports the private module {target}")
        if theirs is None or theirs == mine or theirs == "reference":
            continue
        if mine not in LAYER_OF or theirs not in LAYER_OF:
            found.append(f"{where}: {mine} or {theirs} has no layer in tests/test_layers.py")
        elif LAYER_OF[theirs] > LAYER_OF[mine]:
            found.append(
                f"{where}: {mine} (L{LAYER_OF[mine]}) imports {theirs} (L{LAYER_OF[theirs]}), "
                "a layer above it"
            )
    return found


def _same_private_package(importer: str, target: str) -> bool:
    """A package's own private modules may share names among themselves (the strategies'
    ``_knobs``, the adapters' ``_http``): the importer is inside the package that holds the
    private module."""
    package = target.rpartition(".")[0] if target.rpartition(".")[2].startswith("_") else target
    return importer.startswith(package + ".") or importer == package


def cycles() -> list[list[str]]:
    """Import cycles among the modules of callstream (the facade excepted)."""
    graph: dict[str, set[str]] = {}
    for name, target, _, _ in edges():
        if target != name and target != "callstream":
            graph.setdefault(name, set()).add(target)
    found, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_every_package_is_shipped() -> None:
    """Every package of callstream is listed in pyproject.toml, so the wheel carries it (a
    package left out installs as a missing module)."""
    listed = set(
        tomllib.loads((HARNESS.parent / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"][
            "packages"
        ]
    )
    packages = {
        name
        for name, path in CALLSTREAM.items()
        if path.name == "__init__.py" and name.partition(".")[0] == "callstream"
    }
    assert sorted(packages - listed) == []


def test_every_module_has_a_layer() -> None:
    """A new top-level module must be placed in a layer (and the docstring's drawing)."""
    top = {layer_name(name) for name in CALLSTREAM if layer_name(name)} - {"reference", "docs"}
    top -= {"scenarios"}
    assert sorted(top - set(LAYER_OF)) == []


def test_imports_go_down_the_layers_and_never_reach_a_private_name() -> None:
    """No upward import, no private name or module of another package, and the reference
    imports only itself."""
    assert violations() == []


def test_there_is_no_import_cycle() -> None:
    """Not even one broken by an import inside a function."""
    assert cycles() == []


@pytest.mark.parametrize(
    ("importer", "line", "expected"),
    [
        ("callstream.core.spec", "from ..runner import run\n", "core (L1) imports runner (L5)"),
        ("callstream.matrix.build", "from ..reports.html import _pack\n", "private name _pack"),
        ("callstream.reference._sse", "from callstream.errors import UsageError\n",
         "the reference imports callstream.errors"),
    ],
)  # fmt: skip
def test_the_check_catches_what_it_forbids(
    importer: str, line: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upward import, a private import and a reference import of the harness, each added to
    a copy of a module, are reported."""
    path = tmp_path / "module.py"
    path.write_text(CALLSTREAM[importer].read_text("utf-8") + line, "utf-8")
    monkeypatch.setitem(CALLSTREAM, importer, path)
    monkeypatch.setattr(Path, "relative_to", lambda self, other: self)
    assert any(expected in problem for problem in violations())

"""Who the matrix runs: every adapter, Python and JavaScript, with whether it can run here.

Theory of operation. The Python adapters are the ``http:`` connectables of
:data:`~callstream.connect.adapters.ADAPTERS`: one can run when its library imports. The
JavaScript adapters are pipe programs (``cmd:node …``, docs/pipe-protocol.md) in a checkout's
``adapters/js/``, listed in its ``package.json`` under ``callstream.adapters`` (name → program
and the npm packages it drives): one can run when ``node`` is on ``PATH`` and ``npm ci`` has
installed its packages there. An adapter that cannot run is kept on the roster with the reason,
so the matrix lists it as not run instead of leaving it out.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..connect.adapters import ADAPTERS, installed
from ..errors import UsageError

__all__ = ["JS_ADAPTERS", "Entry", "roster"]

JS_ADAPTERS = Path("adapters") / "js"
"""Where the JavaScript adapters live in a checkout, relative to its root."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One adapter of the matrix."""

    name: str
    """Its column and folder name, unique across languages."""
    language: str
    connectable: str
    missing: str | None = None
    """Why it cannot run here (its runtime or packages are not installed), or None."""
    versions: tuple[tuple[str, str], ...] = ()
    """The versions of the packages it drives, where known before it runs (JavaScript)."""


def roster(js_dir: Path | None = None) -> list[Entry]:
    """Every adapter, Python first, each with why it cannot run here if it cannot. ``js_dir``
    is the JavaScript adapters' folder (default: ``adapters/js`` under the current folder)."""
    here = set(installed())
    entries = [
        Entry(
            name,
            "python",
            f"http:{name}",
            None
            if name in here
            else f"{adapter.library} is not installed: pip install 'callstream[{adapter.extra}]'",
        )
        for name, adapter in ADAPTERS.items()
    ]
    entries += _javascript(JS_ADAPTERS if js_dir is None else js_dir)
    names = [entry.name for entry in entries]
    if twice := sorted({name for name in names if names.count(name) > 1}):
        # Each adapter's report is written to a folder of its name: one would overwrite another.
        raise UsageError(
            f"adapter names must be unique across languages; {', '.join(twice)} is used twice "
            "(a JavaScript adapter takes a -js suffix where a Python one has the name)"
        )
    return entries


def _javascript(folder: Path) -> list[Entry]:
    manifest = folder / "package.json"
    if not manifest.is_file():
        return []
    try:
        listed = json.loads(manifest.read_text("utf-8"))["callstream"]["adapters"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{manifest}: no readable callstream.adapters: {exc}") from None
    node = shutil.which("node")
    entries = []
    for name, adapter in listed.items():
        program = folder / adapter["program"]
        absent = [p for p in adapter["packages"] if not _installed(folder, p)]
        if node is None:
            missing = "node is not on PATH (Node.js 18 or later runs the JavaScript adapters)"
        elif absent:
            missing = f"{', '.join(absent)} not installed: npm ci --prefix {folder}"
        else:
            missing = None
        versions = tuple((p, _version(folder, p)) for p in adapter["packages"] if p not in absent)
        entries.append(Entry(name, "javascript", f"cmd:node {program}", missing, versions))
    return entries


def _installed(folder: Path, package: str) -> bool:
    return (folder / "node_modules" / package / "package.json").is_file()


def _version(folder: Path, package: str) -> str:
    try:
        found = json.loads((folder / "node_modules" / package / "package.json").read_text("utf-8"))
    except (OSError, ValueError):
        return "?"
    return str(found.get("version", "?"))

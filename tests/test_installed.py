"""callstream as a user gets it: the wheel built from this checkout, installed in a fresh
virtual environment outside it, testing a small assembler written from the docs alone
(``tests/installed/myasm.py``) through every command a user starts with, and explaining a rule
from the rules document it ships.

One test, in steps, because the install is the expensive part (a venv and the core's and the
fuzz and pytest extras' dependencies, from pip's cache when CI has just installed them)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSEMBLER = Path(__file__).parent / "installed" / "myasm.py"
IMPL = "py:myasm:factory"


def test_the_installed_wheel_tests_a_users_assembler_from_any_folder(tmp_path: Path) -> None:
    """Built, installed and run outside the checkout: the wheel holds the corpus and only the
    ``callstream`` package; ``run`` passes and fails the right scenarios; the pytest plugin
    collects the corpus; ``fuzz`` finds the assembler's bug (a call cut by ``length`` handed
    back ready) and the command it prints reproduces the saved scenario."""
    dist = tmp_path / "dist"
    _ok([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", dist, ROOT], ROOT)
    (wheel,) = dist.glob("callstream-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.startswith("callstream-")}
    assert tops == {"callstream"}, "nothing but callstream lands at the top of site-packages"
    assert sum(name.startswith("callstream/scenarios/openai-chat/") for name in names) >= 10
    assert "callstream/scenarios/tools.yaml" in names

    venv = tmp_path / "venv"
    _ok([sys.executable, "-m", "venv", venv], tmp_path)
    bin_ = venv / "bin"
    _ok([bin_ / "pip", "install", "-q", f"{wheel}[fuzz,pytest]"], tmp_path)
    project = tmp_path / "myproject"
    project.mkdir()
    shutil.copy(ASSEMBLER, project / "myasm.py")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env["PATH"] = f"{bin_}{os.pathsep}{env.get('PATH', '')}"

    def callstream(*argv: str, expect: int) -> str:
        done = subprocess.run(
            [bin_ / "callstream", *argv], cwd=project, env=env, capture_output=True, text=True
        )
        assert done.returncode == expect, f"{argv}: {done.stdout}{done.stderr}"
        return done.stdout + done.stderr

    version = callstream("--version", expect=0)
    assert version.startswith("callstream ")
    explained = callstream("explain", "A3", expect=0).splitlines()
    assert explained[0] == "A3 Set metadata, never concatenate it"
    assert explained[-1] == "tests: only in a checkout of callstream"
    for generic in ("harness", "reference_impl"):
        probe = subprocess.run(
            [bin_ / "python", "-c", f"import {generic}"], cwd=project, env=env, capture_output=True
        )
        assert probe.returncode != 0, f"{generic} must not be importable after an install"

    passed = callstream("run", "--impl", IMPL, "-k", "oc-l-finish-tool-calls-then-done", expect=0)
    assert "8 passed, 0 failed" in passed
    assert any((project / "reports").glob("run-*/report.html"))
    failed = callstream("run", "--impl", IMPL, "-k", "oc-l-finish-length-mid-arguments", expect=1)
    assert "oc-l-finish-length-mid-arguments" in failed

    plugin = subprocess.run(
        [
            bin_ / "python",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--callstream-impl={IMPL}",
            "-k",
            "oc-l-finish-tool-calls-then-done",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    assert plugin.returncode == 0, plugin.stdout + plugin.stderr
    assert re.search(r"\b8 passed\b", plugin.stdout)

    found = callstream(
        "fuzz", "--impl", IMPL, "--profile", "ci", "--max-examples", "400", "--shrink-time",
        "20s", expect=1,
    )  # fmt: skip
    saved = re.search(r"\(callstream (run [^)]*) reproduces it\)", found)
    assert saved is not None, found
    reproduced = callstream(*shlex.split(saved.group(1)), expect=1)
    assert "FAILED" in reproduced


def _ok(argv: list[object], cwd: Path) -> None:
    done = subprocess.run([str(word) for word in argv], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr

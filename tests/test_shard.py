"""``--shard K/N``: every scenario in exactly one shard, whole, contiguous, balanced by cases, the
same on every machine; bad values refused naming the option; the header records the shard."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from callstream.cli import main
from callstream.core.case import splittings_of
from callstream.core.spec import Scenario
from callstream.corpus.scenario import default_corpus, load_scenarios
from callstream.errors import UsageError
from callstream.implementations import DEFAULT
from callstream.runner.shard import Shard, corpus_fingerprint
from tests.test_runner import run_on, scenario

CORPUS = list(load_scenarios(default_corpus()).scenarios)


def cases(scenarios: list[Scenario]) -> int:
    return sum(len(splittings_of(s)) for s in scenarios)


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8])
def test_the_shards_put_end_to_end_are_the_corpus_in_order(count: int) -> None:
    """Each scenario is in exactly one shard, and shard 1, 2, … N in turn give back the corpus
    in its order: the merged results are a single run's."""
    shards = [Shard(k, count).select(CORPUS) for k in range(1, count + 1)]
    assert [s.id for shard in shards for s in shard] == [s.id for s in CORPUS]


@pytest.mark.parametrize("count", [2, 3, 4, 8])
def test_the_shards_hold_about_as_many_cases_as_each_other(count: int) -> None:
    """No shard is further from an equal share of the cases than one scenario's cases."""
    share = cases(CORPUS) / count
    widest = max(len(splittings_of(s)) for s in CORPUS)
    for k in range(1, count + 1):
        assert abs(cases(Shard(k, count).select(CORPUS)) - share) <= widest


def test_the_shards_do_not_depend_on_the_hash_seed() -> None:
    """Two interpreters with different hash seeds cut the corpus the same way (CI jobs run on
    different machines)."""
    program = (
        "import json; from callstream.corpus.scenario import load_scenarios, default_corpus; "
        "from callstream.runner.shard import Shard; "
        "c = load_scenarios(default_corpus()).scenarios; "
        "print(json.dumps([[s.id for s in Shard(k, 3).select(c)] for k in (1, 2, 3)]))"
    )

    def cut(seed: str) -> list[list[str]]:
        env = os.environ | {"PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True
        )
        return list(json.loads(out.stdout))

    first = cut("1")
    assert first == cut("2")
    assert first == [[s.id for s in Shard(k, 3).select(CORPUS)] for k in (1, 2, 3)]


def test_more_shards_than_scenarios_leaves_some_empty() -> None:
    """Three shards of two scenarios: each scenario in one, one shard with nothing to run."""
    two = [scenario("oc-a"), scenario("oc-b")]
    assert [[s.id for s in Shard(k, 3).select(two)] for k in (1, 2, 3)] == [
        ["oc-a"],
        [],
        ["oc-b"],
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0/3", "--shard 0/3: K must be between 1 and N"),
        ("4/3", "--shard 4/3: K must be between 1 and N"),
        ("1/0", "--shard 1/0: K must be between 1 and N"),
        ("3", "--shard '3': give K/N"),
        ("a/b", "--shard 'a/b': give K/N"),
        ("-1/3", "--shard '-1/3': give K/N"),
    ],
)
def test_a_bad_shard_is_a_usage_error_naming_the_option(text: str, message: str) -> None:
    """Anything but K/N with 1 ≤ K ≤ N is refused, the message naming --shard."""
    with pytest.raises(UsageError, match="^" + message):
        Shard.parse(text)


def test_the_header_records_the_shard_and_the_whole_run() -> None:
    """A shard's header counts its own slice, and names its place and the whole run's plan."""
    scenarios = [scenario("oc-a"), scenario("oc-b"), scenario("oc-c")]
    summary, report = run_on(DEFAULT, scenarios, shard=Shard(2, 3))
    assert [r.scenario for r in report.results] == ["oc-b", "oc-b"]
    assert (report.header_fields["scenarios"], report.header_fields["cases"]) == (1, 2)
    assert report.header_fields["shard"] == {
        "index": 2,
        "count": 3,
        "scenarios": 3,
        "cases": 6,
        "corpus": corpus_fingerprint(scenarios),
    }
    assert summary.shard == Shard(2, 3)


def test_the_fingerprint_tells_another_selection_apart() -> None:
    """Another scenario, another order or another splitting changes the fingerprint."""
    a, b = scenario("oc-a"), scenario("oc-b")
    fingerprints = {
        corpus_fingerprint([a, b]),
        corpus_fingerprint([b, a]),
        corpus_fingerprint([a]),
        corpus_fingerprint([a, scenario("oc-b", splittings=())]),
    }
    assert len(fingerprints) == 4


def test_a_shard_selects_after_k() -> None:
    """-k picks the scenarios first; the shards split what it picked."""
    scenarios = [scenario("oc-a"), scenario("oc-b", tags=("sse",)), scenario("oc-c")]
    _, report = run_on(DEFAULT, scenarios, select="json", shard=Shard(2, 2))
    assert {r.scenario for r in report.results} == {"oc-c"}
    assert report.header_fields["shard"]["scenarios"] == 2


def test_the_command_line_refuses_a_bad_shard_naming_the_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``callstream run --shard 4/3`` exits 2 before running anything, naming --shard."""
    assert main(["run", "--shard", "4/3", "-k", "oc-l-"]) == 2
    assert capsys.readouterr().err == (
        "callstream: error: --shard 4/3: K must be between 1 and N, as in 1/3\n"
    )

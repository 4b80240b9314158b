"""``pytest --callstream-impl``: the corpus as pytest items, run in process, with xdist too."""

from __future__ import annotations

import shlex
import time
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from callstream.implementations import DEFAULT

pytest_plugins = ["pytester"]

CORPUS = str(Path(__file__).parent / "fauxmplementations" / "corpus.yaml")
RAISING = "py:tests.fauxmplementations.raising:factory"
HANGING = "py:tests.fauxmplementations.hanging:factory"
ITEMS = [
    "callstream::oc-faux-paris[lenient-whole]",
    "callstream::oc-faux-paris[lenient-bytes]",
    "callstream::oc-faux-trigger[lenient-whole]",
    "callstream::oc-faux-rome[lenient-whole]",
    "callstream::oc-faux-rome[lenient-random-1]",
    "callstream::oc-faux-strict-only[lenient-whole]",
]


def corpus(pytester: pytest.Pytester, impl: str, *args: str) -> pytest.RunResult:
    """Run the mini corpus on ``impl``. (``--option=PATH``: pytest picks its root folder from the
    paths of the command line before it knows the plugin's options.)"""
    return pytester.runpytest(
        f"--callstream-impl={impl}", f"--callstream-scenarios={CORPUS}", *args
    )


def test_the_plugin_is_installed_as_a_pytest11_entry_point() -> None:
    """pytest finds the plugin without any -p or conftest."""
    plugins = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert plugins.get("callstream") == "callstream.pytest_plugin"


def test_one_item_per_case_in_corpus_order(pytester: pytest.Pytester) -> None:
    """Items are named callstream::<id>[<profile>-<splitting>]."""
    result = corpus(pytester, DEFAULT, "--collect-only", "-q")
    assert result.outlines[: len(ITEMS)] == ITEMS


def test_the_reference_passes_and_other_profiles_are_skipped(pytester: pytest.Pytester) -> None:
    """A strict-only scenario is skipped as not applicable under the lenient profile."""
    result = corpus(pytester, DEFAULT, "-rs")
    result.assert_outcomes(passed=5, skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED * not applicable: the implementation follows the lenient profile; *"]
    )


def test_a_failing_case_shows_the_failed_checks_the_repro_and_its_rerun(
    pytester: pytest.Pytester,
) -> None:
    """The failure reads as the checks' messages (the first in pytest's one-line summary too),
    the chunks, the implementation's own traceback and the command that reruns the item; not
    as a traceback through the plugin. The session ends with the failing scenarios."""
    result = corpus(pytester, RAISING)
    result.assert_outcomes(passed=4, failed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*callstream oc-faux-trigger[[]lenient-whole[]]*",
            "no_crash (V6; callstream explain V6): the implementation raised RuntimeError: *",
            "oc-faux-trigger [[]lenient-whole[]]: The stream on which a fauxmplementation *",
            "rules V6; defined at *corpus.yaml:14",
            "repro:",
            "1 chunk of * bytes:",
            "      0 data: *",
            "*",
            "nothing was released",
            "raised:",
            "Traceback (most recent call last):",
            '*/fauxmplementations/raising.py", line *, in feed',
            "*",
            "RuntimeError: fauxmplementation: feed() blew up",
            f"rerun: pytest --callstream-impl={RAISING} --callstream-scenarios={CORPUS} "
            "-k 'oc-faux-trigger[[]lenient-whole[]]'",
            "*= callstream: 1 failing scenario(s) =*",
            "FAILED oc-faux-trigger [[]lenient: whole[]] no_crash (V6; callstream explain V6): *",
            f"  pytest --callstream-impl={RAISING} --callstream-scenarios={CORPUS} "
            "-k oc-faux-trigger",
            "*short test summary info*",
            "FAILED callstream::oc-faux-trigger[[]lenient-whole[]] - no_crash (V6; callstream *",
        ]
    )
    assert "pytest_plugin.py" not in result.stdout.str()


def test_the_rerun_command_runs_that_item_alone(pytester: pytest.Pytester) -> None:
    """The command a failure ends with selects that item, and it fails again."""
    first = corpus(pytester, RAISING)
    rerun = next(line for line in first.outlines if line.startswith("rerun: "))
    words = shlex.split(rerun.removeprefix("rerun: "))
    assert words[0] == "pytest"
    again = pytester.runpytest(*words[1:])
    again.assert_outcomes(failed=1, deselected=5)


def test_a_hanging_stream_fails_no_hang_at_the_timeout_and_the_session_goes_on(
    pytester: pytest.Pytester,
) -> None:
    """--callstream-timeout bounds each stream: the hung case fails no_hang with the repro of
    the stream that hung, and every later case still runs; the header says the timeout."""
    started = time.monotonic()
    result = corpus(pytester, HANGING, "--callstream-timeout=0.5")
    assert time.monotonic() - started < 30
    result.assert_outcomes(passed=4, failed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            f"callstream: *hanging:factory ({HANGING}), 0.5 s per stream",
            "*",
            "no_hang (V5; callstream explain V5): the implementation did not finish within the "
            "per-case timeout",
            "*",
            "repro:",
            "1 chunk of * bytes:",
            "*",
            "*/fauxmplementations/hanging.py*, line *, in feed",
            "*StreamTimeout: the implementation did not finish a stream within 0.5 s",
            f"rerun: pytest --callstream-impl={HANGING} --callstream-scenarios={CORPUS} "
            "--callstream-timeout=0.5 -k 'oc-faux-trigger[[]lenient-whole[]]'",
        ]
    )


def test_an_implementation_that_catches_the_interruption_still_fails_no_hang(
    pytester: pytest.Pytester,
) -> None:
    """A stream whose implementation swallows the timeout's interruption and returns is late
    all the same: no_hang, saying so."""
    pytester.makepyfile(
        swallowing="""
            import time
            from callstream.reference import Assembler

            class _Swallows:
                def feed(self, data):
                    try:
                        time.sleep(60)
                    except Exception:
                        pass
                    return []

                def close(self):
                    return []

            def factory(*, tools, limits):
                if any(tool.name == "misbehave" for tool in tools):
                    return _Swallows()
                return Assembler(tools, limits=limits)
        """
    )
    result = corpus(pytester, "py:swallowing:factory", "--callstream-timeout=0.5", "-k", "trigger")
    result.assert_outcomes(failed=1, deselected=5)
    result.stdout.fnmatch_lines(
        [
            "no_hang (V5; callstream explain V5): the implementation did not finish a stream "
            "within the timeout (0.5 s), "
            "and it caught the interruption"
        ]
    )


def test_by_default_a_stream_may_take_as_long_as_callstream_run_gives_it(
    pytester: pytest.Pytester,
) -> None:
    """Without --callstream-timeout, 10 s per stream in process, as callstream run; a timeout
    that is not a positive number is a usage error."""
    header = corpus(pytester, DEFAULT, "-k", "paris")
    header.stdout.fnmatch_lines([f"callstream: * ({DEFAULT}), 10 s per stream"])
    bad = corpus(pytester, DEFAULT, "--callstream-timeout=0")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--callstream-timeout: not a positive number of seconds: '0'"])


def test_pytest_k_also_matches_tags_and_rules(pytester: pytest.Pytester) -> None:
    """-k A5 selects the scenarios citing rule A5; -k lifecycle those tagged so."""
    corpus(pytester, DEFAULT, "-k", "A5").assert_outcomes(passed=2, deselected=4)
    corpus(pytester, RAISING, "-k", "lifecycle").assert_outcomes(failed=1, deselected=5)


def test_items_are_the_same_in_every_xdist_worker(pytester: pytest.Pytester) -> None:
    """-n 2 collects and runs the corpus as a single process does."""
    # Without the heavy plugins that callstream's items do not use, workers start faster.
    result = corpus(pytester, DEFAULT, "-n", "2", "-p", "no:hypothesispytest", "-p", "no:anyio")
    result.assert_outcomes(passed=5, skipped=1)


def test_scenario_errors_fail_collection_with_path_and_line(pytester: pytest.Pytester) -> None:
    """A broken scenario file is a collection error saying where."""
    broken = pytester.path / "broken.yaml"
    broken.write_text("scenarios:\n  - id: oc-broken\n    title: no rules\n    tools: []\n")
    result = pytester.runpytest(
        f"--callstream-impl={DEFAULT}", "--callstream-scenarios=broken.yaml"
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["scenario errors:", f"{broken}:2: *"])


def test_a_bad_implementation_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """pytest stops before collecting, with the connectable's problem."""
    result = pytester.runpytest("--callstream-impl", "py:no_such_module_anywhere:make")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--callstream-impl: *no module named no_such_module_anywhere"])


def test_without_callstream_impl_the_plugin_does_nothing(pytester: pytest.Pytester) -> None:
    """A project's own test run collects only its own tests."""
    pytester.makepyfile(test_own="def test_own(): pass")
    result = pytester.runpytest("--collect-only", "-q")
    assert result.outlines[0] == "test_own.py::test_own"
    assert not any("callstream" in line for line in result.outlines)
    result = pytester.runpytest(f"--callstream-scenarios={CORPUS}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--callstream-scenarios needs --callstream-impl"])

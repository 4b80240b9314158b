"""The corpus as pytest items: ``pytest --callstream-impl py:pkg:factory``.

Each case (scenario × the declared profile × splitting, as ``callstream run`` plans them) is
one item, ``callstream::oc-some-id[lenient-bytes]``, run in process with
:func:`~callstream.core.case.run_case`. A failure shows the failed checks, the repro and the command
that reruns that item, never a traceback through the harness; the session ends with the failing
scenarios, one line each with the splittings that failed and a rerun command, as ``callstream
run`` prints them. A case the implementation cannot run is skipped, saying why ("not
applicable": another profile; "unsupported": several choices where it declares one). Items are
collected in corpus order in every process, so ``-n auto`` (pytest-xdist) works; pytest's own
``-k`` also matches a scenario's tags and rules. An implementation without the contract's shape
(``callstream check``) is a usage error before anything is collected.

Each stream of a case must finish within ``--callstream-timeout`` seconds (by default what
``callstream run`` gives, 10 in process): a SIGALRM timer, restarted as each stream begins,
interrupts the implementation with :class:`~callstream.errors.StreamTimeout`, so the item fails
``no_hang`` with the repro of the stream that hung and the session goes on. A signal, rather
than the runner's worker processes, keeps the case in the test process, where ``--pdb``,
breakpoints and coverage reach the implementation, and stops the hang instead of leaving a
thread spinning. It cannot stop code that never returns to the interpreter (a C extension
looping with the GIL held) and needs the main thread of a POSIX process (pytest-xdist runs
items there); elsewhere cases run without a timeout, as the report header says. ``callstream
run`` isolates every case in a worker process and survives all of that.

Registered through the ``pytest11`` entry point, the plugin does nothing unless
``--callstream-impl`` is given; it is loaded by every pytest run of an environment where
callstream is installed, so the harness is imported only when the option asks for it.
Give ``--callstream-scenarios=PATH`` with ``=``: pytest picks its root folder from the
command line's paths before it knows the plugin's options.
"""

from __future__ import annotations

import argparse
import math
import signal
import threading
import time
from collections.abc import Callable, Collection, Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle
    from _pytest.terminal import TerminalReporter

    from .core.case import CaseResult
    from .core.declaration import Implementation
    from .runner.cases import Case

__all__ = ["CaseFailed", "CaseItem", "Corpus"]

_AGAIN = 1.0
"""Seconds between further interruptions of a stream past its timeout, for an implementation
that swallows the first."""
_VERDICT = "callstream_verdict"
"""The attribute of a failed item's report that carries its case number and verdict to the
terminal summary: pytest-xdist sends a report's attributes from its workers, and, unlike user
properties, they stay out of JUnit XML."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--callstream-*`` options."""
    group = parser.getgroup("callstream", "callstream conformance suite")
    group.addoption(
        "--callstream-impl",
        metavar="CONNECTABLE",
        help="run the callstream corpus against this implementation (py:module:factory, "
        "py+events:module:factory, cmd:… or http:…)",
    )
    group.addoption(
        "--callstream-scenarios",
        metavar="PATH",
        action="append",
        default=[],
        help="scenario file or folder to run instead of the default corpus (repeatable)",
    )
    group.addoption(
        "--callstream-timeout",
        metavar="S",
        type=_seconds,
        help="seconds one stream of a case may take before it fails no_hang (default: as "
        "callstream run, 10 in process, 60 for cmd: and http:)",
    )


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (for ``--callstream-timeout``)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {text!r}")
    return seconds


def pytest_configure(config: pytest.Config) -> None:
    """Load the implementation named by ``--callstream-impl``, if any, check its shape (in
    process, as its cases run) and collect the corpus."""
    spec = config.getoption("callstream_impl")
    paths = config.getoption("callstream_scenarios")
    if spec is None:
        if paths:
            raise pytest.UsageError("--callstream-scenarios needs --callstream-impl")
        return
    from .connect.check import check_in_process, checked_before_a_run
    from .connect.connectables import load_implementation
    from .errors import UsageError

    try:
        implementation = load_implementation(spec)
    except UsageError as exc:
        raise pytest.UsageError(f"--callstream-impl: {exc}") from None
    if checked_before_a_run(spec) and not (shape := check_in_process(implementation)).ok:
        raise pytest.UsageError(
            f"--callstream-impl: {spec} does not have the contract's shape (docs/contract.md):\n"
            + "\n".join(str(problem) for problem in shape.problems)
        )
    here = config.invocation_params.dir
    config.pluginmanager.register(
        _Collection(implementation, [here / path for path in paths]), "callstream-collection"
    )


class _Collection:
    """Adds the corpus collector next to what pytest collects from its paths."""

    def __init__(self, implementation: Implementation, paths: Sequence[Path]) -> None:
        self.implementation = implementation
        self.paths = paths

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        """The session's own report, with the corpus collector added to what it found."""
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            corpus = Corpus.from_parent(
                collector,
                name="callstream",
                nodeid="callstream",
                implementation=self.implementation,
                paths=self.paths,
            )
            report.result = [*report.result, corpus]
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """A failed case's report, carrying its verdict (without the repro, which the failure
        shows) for the terminal summary."""
        report = yield
        failed = call.excinfo.value if call.excinfo is not None else None
        if isinstance(item, CaseItem) and isinstance(failed, CaseFailed):
            setattr(report, _VERDICT, [item.case.number, failed.result.to_dict() | {"repro": None}])
        return report

    def pytest_report_header(self, config: pytest.Config) -> str:
        """Which implementation runs, and how long each stream of a case may take."""
        if not _can_interrupt():
            limit = "no per-stream timeout here (no SIGALRM in this thread)"
        else:
            limit = f"{_timeout(config):g} s per stream"
        implementation = self.implementation
        return f"callstream: {implementation.name} ({implementation.connectable}), {limit}"

    def pytest_terminal_summary(self, terminalreporter: TerminalReporter) -> None:
        """The failing scenarios, one line each with the splittings that failed and the
        command that reruns the scenario, as ``callstream run`` prints them."""
        from .reports import failing_scenarios
        from .runner.summary import describe_failing

        numbered = [
            getattr(report, _VERDICT)
            for report in terminalreporter.stats.get("failed", ())
            if hasattr(report, _VERDICT)
        ]
        if not numbered:
            return
        # Items finish in any order under pytest-xdist; the scenarios are listed in corpus order.
        results = [result for _, result in sorted(numbered, key=lambda item: item[0])]
        failing = len(failing_scenarios(results))
        terminalreporter.write_sep("=", f"callstream: {failing} failing scenario(s)")
        for line in describe_failing(results, _rerun_words(terminalreporter.config)):
            terminalreporter.write_line(line)


class Corpus(pytest.Collector):
    """The scenarios, expanded into one item per case."""

    def __init__(
        self, *, implementation: Implementation, paths: Sequence[Path], **kwargs: Any
    ) -> None:
        """``paths`` are scenario files or folders; none means the default corpus."""
        super().__init__(**kwargs)
        self.implementation = implementation
        self.paths = paths

    def collect(self) -> list[pytest.Item]:
        """One :class:`CaseItem` per case, in corpus order; scenario errors fail collection."""
        from .corpus.scenario import default_corpus, load_scenarios
        from .errors import UsageError
        from .runner.cases import expand

        try:
            loaded = load_scenarios(list(self.paths) or default_corpus())
        except UsageError as exc:
            raise self.CollectError(str(exc)) from None
        if loaded.errors:
            raise self.CollectError(
                "scenario errors:\n" + "\n".join(str(error) for error in loaded.errors)
            )
        return [
            CaseItem.from_parent(
                self,
                name=case.name,
                case=case,
                factory=self.implementation.factory_for(case.scenario.spec.dialect),
                exposed=self.implementation.declaration.observables,
            )
            for case in expand(loaded.scenarios, self.implementation.declaration)
        ]


class CaseFailed(Exception):
    """A case did not pass; carries its verdict."""

    def __init__(self, result: CaseResult) -> None:
        """Fail with ``result``."""
        super().__init__(result.outcome)
        self.result = result


class CaseItem(pytest.Item):
    """One case: run in process, judged by the checks."""

    def __init__(
        self,
        *,
        case: Case,
        factory: Callable[..., Any],
        exposed: Collection[str],
        **kwargs: Any,
    ) -> None:
        """``factory`` is the implementation's, called per stream; ``exposed`` its
        observables."""
        super().__init__(**kwargs)
        self.case = case
        self.factory = factory
        self.exposed = exposed
        self.extra_keyword_matches.update((*case.scenario.tags, *case.scenario.rules))
        if case.skipped is not None:
            outcome, why = case.skipped
            self.add_marker(pytest.mark.skip(reason=f"{outcome.replace('_', ' ')}: {why}"))

    def runtest(self) -> None:
        """Run the case, each stream within the timeout; fail unless it passes."""
        result = _run_within(self.case, self.factory, self.exposed, _timeout(self.config))
        if result.outcome != "passed":
            raise CaseFailed(result)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: TracebackStyle | None = None,
    ) -> str | TerminalRepr:
        """The failed checks, the repro and the command that reruns this item, rather than a
        traceback through the harness."""
        if isinstance(excinfo.value, CaseFailed):
            from .reports import rerun_command
            from .runner.summary import explain

            again = rerun_command(_rerun_words(self.config), self.case.name)
            return f"{explain(excinfo.value.result)}\nrerun: {again}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        """Where the scenario is defined (``source`` is ``path:line``)."""
        path, _, line = self.case.scenario.source.rpartition(":")
        if path and line.isdigit():
            return Path(path), int(line) - 1, f"callstream {self.name}"
        return self.path, None, f"callstream {self.name}"


def _timeout(config: pytest.Config) -> float:
    """``--callstream-timeout``, or what ``callstream run`` gives the connectable."""
    given: float | None = config.getoption("callstream_timeout")
    if given is not None:
        return given
    from .runner.execution import default_timeout

    return default_timeout(config.getoption("callstream_impl"))


def _rerun_words(config: pytest.Config) -> list[str]:
    """The pytest command line of this session's callstream options, as given: add ``-k`` to
    run a scenario or an item again."""
    words = ["pytest", f"--callstream-impl={config.getoption('callstream_impl')}"]
    words += [f"--callstream-scenarios={path}" for path in config.getoption("callstream_scenarios")]
    given = config.getoption("callstream_timeout")
    if given is not None:
        words.append(f"--callstream-timeout={given:g}")
    return words


def _can_interrupt() -> bool:
    """Whether a stream can be interrupted by a signal timer here: on POSIX, in the main
    thread."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _run_within(
    case: Case, factory: Callable[..., Any], exposed: Collection[str], timeout: float
) -> CaseResult:
    """Run ``case`` in this process, interrupting any stream of it that takes longer than
    ``timeout`` seconds (it fails ``no_hang``); without a timeout where no signal timer can
    be set. A timer already running (pytest-timeout's, say) is set going again after."""
    from .core.case import run_case
    from .errors import StreamTimeout

    if not _can_interrupt():
        return run_case(case.scenario, case.profile, case.splitting, factory, exposed)
    rings = 0

    def interrupt(signum: int, frame: object) -> None:
        nonlocal rings
        rings += 1
        raise StreamTimeout(f"the implementation did not finish a stream within {timeout:g} s")

    def timed(**kwargs: Any) -> Any:
        signal.setitimer(signal.ITIMER_REAL, timeout, _AGAIN)  # a stream begins
        return factory(**kwargs)

    outer = signal.getitimer(signal.ITIMER_REAL)
    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        result = run_case(case.scenario, case.profile, case.splitting, timed, exposed)
    except StreamTimeout:  # it rang in the harness: between two calls into the implementation,
        return _hung(case, timeout, caught=rings > 1)  # or again after it caught the first
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer[0]:
            left = max(outer[0] - (time.monotonic() - started), 0.001)
            signal.setitimer(signal.ITIMER_REAL, left, outer[1])
    if rings and not any(failure.check == "no_hang" for failure in result.failures):
        return _hung(case, timeout, caught=True)
    return result


def _hung(case: Case, timeout: float, *, caught: bool) -> CaseResult:
    """The verdict on a case one of whose streams did not finish within ``timeout``; ``caught``
    when the implementation caught the interruption."""
    from .core.case import CaseResult
    from .core.checks import CHECKS
    from .core.judgement import Failure

    rules = next(check.rules for check in CHECKS if check.name == "no_hang")
    message = f"the implementation did not finish a stream within the timeout ({timeout:g} s)"
    if caught:
        message += ", and it caught the interruption"
    return CaseResult.of(
        case.scenario,
        case.profile,
        case.splitting,
        "failed",
        failures=(Failure("no_hang", rules, message),),
    )

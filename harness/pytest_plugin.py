"""The corpus as pytest items: ``pytest --callstream-impl py:pkg:factory``.

Each case (scenario × the declared profile × splitting, as ``callstream run`` plans them) is
one item, ``callstream::oc-some-id[lenient-bytes]``, run in process with
:func:`~callstream.case.run_case`. A failure shows the failed checks and the repro; a case the
implementation cannot run is skipped, saying why ("not applicable": another profile;
"unsupported": several choices where it declares one). Items are collected in corpus order in
every process, so ``-n auto`` (pytest-xdist) works; pytest's own ``-k`` also matches a
scenario's tags and rules. Cases run in the test process: there is no per-case timeout here
(use ``callstream run``, or pytest-timeout). An implementation without the contract's shape
(``callstream check``) is a usage error before anything is collected.

Registered through the ``pytest11`` entry point, the plugin does nothing unless
``--callstream-impl`` is given; it is loaded by every pytest run of an environment where
callstream is installed, so the harness is imported only when the option asks for it.
Give ``--callstream-scenarios=PATH`` with ``=``: pytest picks its root folder from the
command line's paths before it knows the plugin's options.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from .case import CaseResult
    from .declaration import Implementation
    from .runner import Case

__all__ = ["CaseFailed", "CaseItem", "Corpus"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--callstream-*`` options."""
    group = parser.getgroup("callstream", "callstream conformance suite")
    group.addoption(
        "--callstream-impl",
        metavar="CONNECTABLE",
        help="run the callstream corpus against this implementation (py:module:factory)",
    )
    group.addoption(
        "--callstream-scenarios",
        metavar="PATH",
        action="append",
        default=[],
        help="scenario file or folder to run instead of the default corpus (repeatable)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Load the implementation named by ``--callstream-impl``, if any, check its shape (in
    process, as its cases run) and collect the corpus."""
    spec = config.getoption("callstream_impl")
    paths = config.getoption("callstream_scenarios")
    if spec is None:
        if paths:
            raise pytest.UsageError("--callstream-scenarios needs --callstream-impl")
        return
    from .check import check_in_process, checked_before_a_run
    from .connect import load_implementation
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
        from .errors import UsageError
        from .runner import expand
        from .scenario import default_corpus, load_scenarios

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
                factory=self.implementation.factory,
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
        """Run the case; fail unless it passes."""
        from .case import run_case

        case = self.case
        result = run_case(case.scenario, case.profile, case.splitting, self.factory, self.exposed)
        if result.outcome != "passed":
            raise CaseFailed(result)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: TracebackStyle | None = None,
    ) -> str | TerminalRepr:
        """The failed checks and the repro, rather than a traceback through the harness."""
        if isinstance(excinfo.value, CaseFailed):
            from .runner import explain

            return explain(excinfo.value.result)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        """Where the scenario is defined (``source`` is ``path:line``)."""
        path, _, line = self.case.scenario.source.rpartition(":")
        if path and line.isdigit():
            return Path(path), int(line) - 1, f"callstream {self.name}"
        return self.path, None, f"callstream {self.name}"

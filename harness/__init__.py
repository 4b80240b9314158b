"""callstream's harness: everything that tests an implementation of the assembler contract.

The public API is re-exported here, lazily, so that merely importing ``harness`` (as pytest
does for the plugin) loads nothing it does not use. ``harness.cli`` is a thin command-line
layer over these names.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .assemble import AssembleRun, assemble_stream
    from .case import CaseResult, run_case
    from .checks import CHECKS, Check, Failure, run_checks
    from .connect import Claims, Implementation, load_implementation
    from .errors import HarnessError, UsageError
    from .lint import lint
    from .observe import Observation, Observed, observe
    from .oracle import PlanError, expect
    from .render import render
    from .report import ReportWriter, load_report, render_reports
    from .runner import RunSummary, run
    from .scenario import LoadResult, ScenarioError, default_corpus, load_scenarios
    from .spec import (
        CallPlan,
        Ending,
        Expected,
        ExpectedCall,
        Noise,
        Scenario,
        Splitting,
        StreamSpec,
        Transport,
    )
    from .split import DEFAULT_SPLITTINGS, chunkings
    from .tools import load_tools

_WHERE = {
    "AssembleRun": "assemble",
    "assemble_stream": "assemble",
    "CaseResult": "case",
    "run_case": "case",
    "CHECKS": "checks",
    "Check": "checks",
    "Failure": "checks",
    "run_checks": "checks",
    "Claims": "connect",
    "Implementation": "connect",
    "load_implementation": "connect",
    "HarnessError": "errors",
    "UsageError": "errors",
    "lint": "lint",
    "Observation": "observe",
    "Observed": "observe",
    "observe": "observe",
    "PlanError": "oracle",
    "expect": "oracle",
    "render": "render",
    "ReportWriter": "report",
    "load_report": "report",
    "render_reports": "report",
    "RunSummary": "runner",
    "run": "runner",
    "LoadResult": "scenario",
    "ScenarioError": "scenario",
    "default_corpus": "scenario",
    "load_scenarios": "scenario",
    "CallPlan": "spec",
    "Ending": "spec",
    "Expected": "spec",
    "ExpectedCall": "spec",
    "Noise": "spec",
    "Scenario": "spec",
    "Splitting": "spec",
    "StreamSpec": "spec",
    "Transport": "spec",
    "DEFAULT_SPLITTINGS": "split",
    "chunkings": "split",
    "load_tools": "tools",
}

__all__ = [
    "CHECKS",
    "DEFAULT_SPLITTINGS",
    "AssembleRun",
    "CallPlan",
    "CaseResult",
    "Check",
    "Claims",
    "Ending",
    "Expected",
    "ExpectedCall",
    "Failure",
    "HarnessError",
    "Implementation",
    "LoadResult",
    "Noise",
    "Observation",
    "Observed",
    "PlanError",
    "ReportWriter",
    "RunSummary",
    "Scenario",
    "ScenarioError",
    "Splitting",
    "StreamSpec",
    "Transport",
    "UsageError",
    "assemble_stream",
    "chunkings",
    "default_corpus",
    "expect",
    "lint",
    "load_implementation",
    "load_report",
    "load_scenarios",
    "load_tools",
    "observe",
    "render",
    "render_reports",
    "run",
    "run_case",
    "run_checks",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)

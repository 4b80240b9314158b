"""callstream's harness: everything that tests an implementation of the assembler contract.

The public API is re-exported here, lazily, so that merely importing ``harness`` (as pytest
does for the plugin) loads nothing it does not use. ``harness.cli`` is a thin command-line
layer over these names.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .adapters import load_adapter
    from .assemble import AssembleRun, assemble_stream
    from .case import CaseResult, run_case
    from .cassette import Recording, cassette_scenario, load_cassette, write_cassette
    from .certificate import Certificate, write_certificate
    from .certify import Target, certify, replay
    from .checks import CHECKS, Check, Failure, run_checks
    from .connect import OBSERVABLES, Declaration, Implementation, load_implementation
    from .emulator import Emulator, ProviderApp, Reply
    from .errors import HarnessError, UsageError
    from .lint import lint
    from .matrix import render_matrix, run_matrix
    from .observe import Observation, Observed, StreamTimeout, observe
    from .oracle import PlanError, expect
    from .pipe import CommandFactory, ImplementationError, load_command
    from .probes import Probe, load_probes
    from .render import render
    from .report import ReportWriter, load_report, render_reports
    from .route_checks import ROUTE_CHECKS, RouteFinding, check_probe
    from .routes import ROUTES
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
    "load_adapter": "adapters",
    "AssembleRun": "assemble",
    "assemble_stream": "assemble",
    "CaseResult": "case",
    "run_case": "case",
    "Recording": "cassette",
    "cassette_scenario": "cassette",
    "load_cassette": "cassette",
    "write_cassette": "cassette",
    "Certificate": "certificate",
    "write_certificate": "certificate",
    "Target": "certify",
    "certify": "certify",
    "replay": "certify",
    "CHECKS": "checks",
    "Check": "checks",
    "Failure": "checks",
    "run_checks": "checks",
    "Declaration": "connect",
    "OBSERVABLES": "connect",
    "Implementation": "connect",
    "load_implementation": "connect",
    "Emulator": "emulator",
    "ProviderApp": "emulator",
    "Reply": "emulator",
    "HarnessError": "errors",
    "UsageError": "errors",
    "lint": "lint",
    "render_matrix": "matrix",
    "run_matrix": "matrix",
    "Observation": "observe",
    "Observed": "observe",
    "observe": "observe",
    "StreamTimeout": "observe",
    "CommandFactory": "pipe",
    "ImplementationError": "pipe",
    "load_command": "pipe",
    "Probe": "probes",
    "load_probes": "probes",
    "PlanError": "oracle",
    "expect": "oracle",
    "render": "render",
    "ReportWriter": "report",
    "load_report": "report",
    "render_reports": "report",
    "ROUTE_CHECKS": "route_checks",
    "RouteFinding": "route_checks",
    "check_probe": "route_checks",
    "ROUTES": "routes",
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
    "OBSERVABLES",
    "ROUTES",
    "ROUTE_CHECKS",
    "AssembleRun",
    "CallPlan",
    "CaseResult",
    "Certificate",
    "Check",
    "CommandFactory",
    "Declaration",
    "Emulator",
    "Ending",
    "Expected",
    "ExpectedCall",
    "Failure",
    "HarnessError",
    "Implementation",
    "ImplementationError",
    "LoadResult",
    "Noise",
    "Observation",
    "Observed",
    "PlanError",
    "Probe",
    "ProviderApp",
    "Recording",
    "Reply",
    "ReportWriter",
    "RouteFinding",
    "RunSummary",
    "Scenario",
    "ScenarioError",
    "Splitting",
    "StreamSpec",
    "StreamTimeout",
    "Target",
    "Transport",
    "UsageError",
    "assemble_stream",
    "cassette_scenario",
    "certify",
    "check_probe",
    "chunkings",
    "default_corpus",
    "expect",
    "lint",
    "load_adapter",
    "load_cassette",
    "load_command",
    "load_implementation",
    "load_probes",
    "load_report",
    "load_scenarios",
    "load_tools",
    "observe",
    "render",
    "render_matrix",
    "render_reports",
    "replay",
    "run",
    "run_case",
    "run_checks",
    "run_matrix",
    "write_cassette",
    "write_certificate",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)

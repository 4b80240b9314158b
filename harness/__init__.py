"""callstream's harness: everything that tests an implementation of the assembler contract.

The public API is re-exported here, lazily, so that merely importing ``harness`` (as pytest
does for the plugin) loads nothing it does not use. ``callstream.cli`` is a thin command-line
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
    from .connect import load_implementation
    from .declaration import OBSERVABLES, Declaration, Implementation
    from .emulator import Emulator, ProviderApp, Reply
    from .errors import HarnessError, ImplementationError, PlanError, StreamTimeout, UsageError
    from .lint import lint
    from .matrix import render_matrix, run_matrix
    from .observe import Observation, Observed, observe
    from .oracle import expect
    from .pipe import CommandFactory, load_command
    from .probes import Probe, load_probes
    from .reference import (
        DIALECTS,
        PROFILES,
        QUIRKS,
        Assembler,
        AssemblerClosedError,
        CallKind,
        CallPreview,
        CallResult,
        CallstreamError,
        ConfigurationError,
        ExecutionLedger,
        Finding,
        Limits,
        Quirk,
        Reason,
        SchemaRefError,
        ServerSentEvent,
        SSEDecoder,
        SSELimitError,
        Status,
        Tool,
        ToolSchemaError,
        assistant_message,
        idempotency_key,
        rejection_message,
        release_order,
        tool_message,
    )
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
    "DIALECTS": "reference",
    "PROFILES": "reference",
    "QUIRKS": "reference",
    "Assembler": "reference",
    "AssemblerClosedError": "reference",
    "CallKind": "reference",
    "CallPreview": "reference",
    "CallResult": "reference",
    "CallstreamError": "reference",
    "ConfigurationError": "reference",
    "ExecutionLedger": "reference",
    "Finding": "reference",
    "Limits": "reference",
    "Quirk": "reference",
    "Reason": "reference",
    "SSEDecoder": "reference",
    "SSELimitError": "reference",
    "SchemaRefError": "reference",
    "ServerSentEvent": "reference",
    "Status": "reference",
    "Tool": "reference",
    "ToolSchemaError": "reference",
    "assistant_message": "reference",
    "idempotency_key": "reference",
    "rejection_message": "reference",
    "release_order": "reference",
    "tool_message": "reference",
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
    "Declaration": "declaration",
    "OBSERVABLES": "declaration",
    "Implementation": "declaration",
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
    "StreamTimeout": "errors",
    "CommandFactory": "pipe",
    "ImplementationError": "errors",
    "load_command": "pipe",
    "Probe": "probes",
    "load_probes": "probes",
    "PlanError": "errors",
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
    "DIALECTS",
    "OBSERVABLES",
    "PROFILES",
    "QUIRKS",
    "ROUTES",
    "ROUTE_CHECKS",
    "AssembleRun",
    "Assembler",
    "AssemblerClosedError",
    "CallKind",
    "CallPlan",
    "CallPreview",
    "CallResult",
    "CallstreamError",
    "CaseResult",
    "Certificate",
    "Check",
    "CommandFactory",
    "ConfigurationError",
    "Declaration",
    "Emulator",
    "Ending",
    "ExecutionLedger",
    "Expected",
    "ExpectedCall",
    "Failure",
    "Finding",
    "HarnessError",
    "Implementation",
    "ImplementationError",
    "Limits",
    "LoadResult",
    "Noise",
    "Observation",
    "Observed",
    "PlanError",
    "Probe",
    "ProviderApp",
    "Quirk",
    "Reason",
    "Recording",
    "Reply",
    "ReportWriter",
    "RouteFinding",
    "RunSummary",
    "SSEDecoder",
    "SSELimitError",
    "Scenario",
    "ScenarioError",
    "SchemaRefError",
    "ServerSentEvent",
    "Splitting",
    "Status",
    "StreamSpec",
    "StreamTimeout",
    "Target",
    "Tool",
    "ToolSchemaError",
    "Transport",
    "UsageError",
    "assemble_stream",
    "assistant_message",
    "cassette_scenario",
    "certify",
    "check_probe",
    "chunkings",
    "default_corpus",
    "expect",
    "idempotency_key",
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
    "rejection_message",
    "release_order",
    "render",
    "render_matrix",
    "render_reports",
    "replay",
    "run",
    "run_case",
    "run_checks",
    "run_matrix",
    "tool_message",
    "write_cassette",
    "write_certificate",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'callstream' has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)

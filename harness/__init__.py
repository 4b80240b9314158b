"""callstream's harness: everything that tests an implementation of the assembler contract.

The public API is re-exported here, lazily, so that merely importing ``harness`` (as pytest
does for the plugin) loads nothing it does not use. ``callstream.cli`` is a thin command-line
layer over these names.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .certification.certificate import Certificate, write_certificate
    from .certification.certifying import Target, certify, replay
    from .certification.probes import Probe, load_probes
    from .certification.route_checks import ROUTE_CHECKS, RouteFinding, check_probe
    from .connect.adapters import load_adapter
    from .connect.connectables import load_implementation
    from .connect.pipe import CommandFactory, load_command
    from .core.case import CaseResult, run_case
    from .core.checks import CHECKS, run_checks
    from .core.declaration import OBSERVABLES, Declaration, Implementation
    from .core.judgement import Check, Failure
    from .core.observation import Observation, Observed, observe
    from .core.oracle import expect
    from .core.rendering import render
    from .core.spec import (
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
    from .core.split import DEFAULT_SPLITTINGS, chunkings
    from .core.tools import load_tools
    from .corpus.assemble import AssembleRun, assemble_stream
    from .corpus.cassette import Recording, cassette_scenario, load_cassette, write_cassette
    from .corpus.linting import lint
    from .corpus.scenario import LoadResult, ScenarioError, default_corpus, load_scenarios
    from .emulator import ROUTES, Emulator, ProviderApp, Reply
    from .errors import HarnessError, ImplementationError, PlanError, StreamTimeout, UsageError
    from .matrix.build import run_matrix
    from .matrix.page import render_matrix
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
    from .reports import ReportWriter, load_report, render_reports
    from .runner.execution import run
    from .runner.summary import RunSummary

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
    "load_adapter": "connect.adapters",
    "AssembleRun": "corpus.assemble",
    "assemble_stream": "corpus.assemble",
    "CaseResult": "core.case",
    "run_case": "core.case",
    "Recording": "corpus.cassette",
    "cassette_scenario": "corpus.cassette",
    "load_cassette": "corpus.cassette",
    "write_cassette": "corpus.cassette",
    "Certificate": "certification.certificate",
    "write_certificate": "certification.certificate",
    "Target": "certification.certifying",
    "certify": "certification.certifying",
    "replay": "certification.certifying",
    "CHECKS": "core.checks",
    "Check": "core.judgement",
    "Failure": "core.judgement",
    "run_checks": "core.checks",
    "Declaration": "core.declaration",
    "OBSERVABLES": "core.declaration",
    "Implementation": "core.declaration",
    "load_implementation": "connect.connectables",
    "Emulator": "emulator",
    "ProviderApp": "emulator",
    "Reply": "emulator",
    "HarnessError": "errors",
    "UsageError": "errors",
    "lint": "corpus.linting",
    "render_matrix": "matrix.page",
    "run_matrix": "matrix.build",
    "Observation": "core.observation",
    "Observed": "core.observation",
    "observe": "core.observation",
    "StreamTimeout": "errors",
    "CommandFactory": "connect.pipe",
    "ImplementationError": "errors",
    "load_command": "connect.pipe",
    "Probe": "certification.probes",
    "load_probes": "certification.probes",
    "PlanError": "errors",
    "expect": "core.oracle",
    "render": "core.rendering",
    "ReportWriter": "reports",
    "load_report": "reports",
    "render_reports": "reports",
    "ROUTE_CHECKS": "certification.route_checks",
    "RouteFinding": "certification.route_checks",
    "check_probe": "certification.route_checks",
    "ROUTES": "emulator",
    "RunSummary": "runner.summary",
    "run": "runner.execution",
    "LoadResult": "corpus.scenario",
    "ScenarioError": "corpus.scenario",
    "default_corpus": "corpus.scenario",
    "load_scenarios": "corpus.scenario",
    "CallPlan": "core.spec",
    "Ending": "core.spec",
    "Expected": "core.spec",
    "ExpectedCall": "core.spec",
    "Noise": "core.spec",
    "Scenario": "core.spec",
    "Splitting": "core.spec",
    "StreamSpec": "core.spec",
    "Transport": "core.spec",
    "DEFAULT_SPLITTINGS": "core.split",
    "chunkings": "core.split",
    "load_tools": "core.tools",
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

"""The core pipeline, in memory and deterministic: a :class:`StreamSpec` is rendered into SSE
bytes, split into chunks, fed to an implementation (:func:`observe`), and what it handed back
is judged against the oracle's expectation by the checks (:func:`run_case` does all of it for
one case).

- ``spec`` — the plan of a stream and the expectation's values;
- ``dialects`` — each wire format's events and expectation (the dialect seam);
- ``wire`` — events as SSE bytes, with the offset at which each is dispatched;
- ``tools`` — the tools a request offered, read from users' files;
- ``declaration`` — what an implementation exposes, and the implementation a connectable loads;
- ``rendering`` — a spec as events, then SSE bytes;
- ``split`` — SSE bytes cut into transport chunks;
- ``oracle`` — what a stream must become, from the spec alone (its dialect's derivation);
- ``completion`` — what a completed call becomes: parsed, validated, ready or rejected;
- ``observation`` — driving an implementation through one chunking;
- ``judgement`` — what a check is, what it finds and how it files it;
- ``checks`` — small named functions comparing what was observed with what was expected;
- ``case`` — one scenario × profile × splitting, run and judged.
"""

from .case import OUTCOMES, CaseResult, Outcome, format_repro, line_spans, run_case, splittings_of
from .checks import CHECKS, REASON_RULES, STATUSES, run_checks
from .declaration import (
    OBSERVABLES,
    PROFILES,
    Applicability,
    Declaration,
    Implementation,
    choice_count,
    declaration_from,
    declaration_problems,
)
from .dialects import DEFAULT_DIALECT, DIALECTS, Dialect, dialect, not_certifiable
from .judgement import Check, Failure, Judgement, call_name
from .observation import Observation, Observed, Release, observe
from .oracle import expect
from .rendering import render, render_events
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
from .split import DEFAULT_SPLITTINGS, chunkings, cut, parse_splitting
from .tools import load_tools, parse_tools
from .wire import Event, Rendered, encode

__all__ = [
    "CHECKS",
    "DEFAULT_DIALECT",
    "DEFAULT_SPLITTINGS",
    "DIALECTS",
    "OBSERVABLES",
    "OUTCOMES",
    "PROFILES",
    "REASON_RULES",
    "STATUSES",
    "Applicability",
    "CallPlan",
    "CaseResult",
    "Check",
    "Declaration",
    "Dialect",
    "Ending",
    "Event",
    "Expected",
    "ExpectedCall",
    "Failure",
    "Implementation",
    "Judgement",
    "Noise",
    "Observation",
    "Observed",
    "Outcome",
    "Release",
    "Rendered",
    "Scenario",
    "Splitting",
    "StreamSpec",
    "Transport",
    "call_name",
    "choice_count",
    "chunkings",
    "cut",
    "declaration_from",
    "declaration_problems",
    "dialect",
    "encode",
    "expect",
    "format_repro",
    "line_spans",
    "load_tools",
    "not_certifiable",
    "observe",
    "parse_splitting",
    "parse_tools",
    "render",
    "render_events",
    "run_case",
    "run_checks",
    "splittings_of",
]

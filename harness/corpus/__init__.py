"""The corpus as files: YAML scenarios and recorded cassettes loaded into Scenarios (every
problem located as ``path:line``), shrunk fuzz finds written back as YAML, the linter, the
rules document behind ``callstream explain``, and ``callstream assemble`` for a captured stream.

- ``scenario`` — loading scenario files, validated against ``schemas/scenario.schema.json``;
- ``cassette`` — recorded requests and responses, byte for byte, as scenarios;
- ``regressions`` — a shrunk failure promoted to a YAML scenario;
- ``linting`` — everything the loader refuses, plus coverage of the rules and quirks;
- ``explain`` — one rule or quirk with everything callstream knows of it;
- ``assemble`` — a recorded stream run through the reference assembler.
"""

from .assemble import AssembleRun, assemble_stream
from .cassette import Recording, cassette_scenario, is_cassette, load_cassette, write_cassette
from .explain import explanation, rules_document, sections
from .linting import Coverage, LintReport, coverage, lint
from .regressions import REGRESSIONS, regression_id, reproduce_command, write_regression
from .scenario import (
    CORPUS_FOLDERS,
    LoadResult,
    ScenarioError,
    corpus_paths,
    corpus_root,
    default_corpus,
    load_scenarios,
    scenario_schema,
)

__all__ = [
    "CORPUS_FOLDERS",
    "REGRESSIONS",
    "AssembleRun",
    "Coverage",
    "LintReport",
    "LoadResult",
    "Recording",
    "ScenarioError",
    "assemble_stream",
    "cassette_scenario",
    "corpus_paths",
    "corpus_root",
    "coverage",
    "default_corpus",
    "explanation",
    "is_cassette",
    "lint",
    "load_cassette",
    "load_scenarios",
    "regression_id",
    "reproduce_command",
    "rules_document",
    "scenario_schema",
    "sections",
    "write_cassette",
    "write_regression",
]

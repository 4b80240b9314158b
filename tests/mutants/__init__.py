"""Mutant assemblers: each reproduces one documented public bug, for the suite to catch.

``_base.BaseAssembler`` keeps the implementation contract correctly; every other module here
subclasses it, overrides the hook where a real assembler went wrong, and exposes

- ``factory``: the contract's ``factory(tools=..., limits=...)`` (load it with
  ``py:tests.mutants.<name>:factory``);
- ``CALLSTREAM``: everything, like the base (a mutant does not know it is broken);
- ``BREAKS``: the rules of REQUIREMENTS.md the bug breaks;
- ``CITES``: the public bug reports and code it reproduces, also named in its docstring.

The first line of a mutant's docstring says what it does wrong. ``MUTANTS`` lists them all.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._base import BaseAssembler

__all__ = ["MUTANTS", "BaseAssembler", "Mutant"]

_NAMES = (
    "concatenates_repeated_id",
    "releases_when_text_parses",
    "drops_header_arguments",
    "decodes_utf8_per_chunk",
    "splits_crlf_across_chunks",
    "frames_on_lf_only",
    "routes_by_arrival",
    "keys_by_function_name",
    "treats_length_as_done",
    "flushes_eof_as_success",
    "crashes_on_missing_index",
    "crashes_on_empty_choices",
    "merges_index_zero_calls",
    "appends_after_finish",
    "empty_arguments_become_object",
    "ignores_error_events",
    "requires_space_after_data",
    "skips_schema_validation",
    "keeps_bom",
    "anthropic_parses_empty_input",
    "anthropic_keeps_partial_input",
    "anthropic_ignores_error_events",
    "anthropic_raises_on_invalid_input",
    "anthropic_appends_to_last_block",
    "anthropic_block_index_as_call_index",
    "anthropic_requires_event_lines",
    "anthropic_parses_empty_data",
    "responses_routes_to_current_item",
    "responses_routes_by_output_index",
    "responses_appends_done",
    "responses_keeps_added_arguments",
    "responses_ignores_done",
    "responses_incomplete_as_completed",
    "responses_loses_calls_without_completed",
    "responses_trusts_final_output",
    "responses_releases_at_added",
    "responses_uses_item_id_as_call_id",
)


@dataclass(frozen=True)
class Mutant:
    """One mutant assembler, as the harness and the tests see it."""

    name: str
    bug: str
    """What it does wrong, in one line."""
    breaks: tuple[str, ...]
    cites: tuple[str, ...]
    factory: Callable[..., BaseAssembler]
    declaration: dict[str, Any]
    doc: str

    @property
    def connectable(self) -> str:
        """How the harness loads it."""
        return f"py:{__name__}.{self.name}:factory"


def _load(name: str) -> Mutant:
    module = importlib.import_module(f"{__name__}.{name}")
    doc = module.__doc__ or ""
    return Mutant(
        name=name,
        bug=doc.partition("\n")[0],
        breaks=tuple(module.BREAKS),
        cites=tuple(module.CITES),
        factory=module.factory,
        declaration=module.CALLSTREAM,
        doc=doc,
    )


MUTANTS: dict[str, Mutant] = {name: _load(name) for name in _NAMES}
"""Every mutant, by module name."""

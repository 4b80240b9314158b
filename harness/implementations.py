"""The reference assembler as connectables, one per profile and route opt-ins.

``py:callstream.implementations:reference`` (lenient, the default of ``callstream run``) and
``py:callstream.implementations:reference_strict``; ``reference_snapshots`` and
``reference_repair_json`` are the lenient reference on a route that opts in to reading
cumulative snapshots or to repairing JSON (rule A2, quirks openai-chat/C10 to C12), which the
scenarios written for those routes run on (D74). The harness treats them like any other
implementation: it loads them by name and knows only what their ``CALLSTREAM`` declarations say.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from callstream.reference import DIALECTS, Assembler, Limits, Tool

from .rules import listed_opt_ins

__all__ = [
    "DEFAULT",
    "ReferenceFactory",
    "reference",
    "reference_for",
    "reference_repair_json",
    "reference_snapshots",
    "reference_strict",
]

DEFAULT = "py:callstream.implementations:reference"
"""The connectable ``callstream run`` tests when given no ``--impl``."""


@dataclass(frozen=True, slots=True)
class ReferenceFactory:
    """Makes a reference :class:`Assembler` per stream, under one profile, on a route with
    the opt-ins ``opt_ins`` (``snapshots``, ``repair_json``; none by default)."""

    profile: Literal["lenient", "strict"]
    opt_ins: frozenset[str] = frozenset()

    @property
    def CALLSTREAM(self) -> dict[str, Any]:
        """Its profile, its route opt-ins and every dialect it reads; it exposes everything,
        its findings too (each quirk recorded)."""
        declared: dict[str, Any] = {"profile": self.profile, "dialects": list(DIALECTS)}
        if self.opt_ins:
            declared["opt_ins"] = listed_opt_ins(self.opt_ins)
        return declared

    def __call__(
        self, *, tools: Sequence[Tool], limits: Limits, dialect: str = "openai-chat"
    ) -> Assembler:
        """An assembler for one stream in ``dialect`` offering ``tools``."""
        return Assembler(
            tools,
            dialect=dialect,
            profile=self.profile,
            limits=limits,
            snapshots="snapshots" in self.opt_ins,
            repair_json="repair_json" in self.opt_ins,
        )


reference = ReferenceFactory("lenient")
reference_strict = ReferenceFactory("strict")
reference_snapshots = ReferenceFactory("lenient", frozenset({"snapshots"}))
reference_repair_json = ReferenceFactory("lenient", frozenset({"repair_json"}))


def reference_for(profile: str, opt_ins: frozenset[str] = frozenset()) -> ReferenceFactory:
    """The reference connectable a scenario under ``profile`` on a route with ``opt_ins`` runs
    on: the tests and the mutation suite judge the reference on every scenario this way."""
    for factory in (reference, reference_strict, reference_snapshots, reference_repair_json):
        if factory.profile == profile and factory.opt_ins == opt_ins:
            return factory
    listed = listed_opt_ins(opt_ins)
    raise ValueError(f"no reference connectable for {profile} with opt-ins {listed}")

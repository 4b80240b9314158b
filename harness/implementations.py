"""The reference assembler as connectables, one per profile.

``py:callstream.implementations:reference`` (lenient, the default of ``callstream run``) and
``py:callstream.implementations:reference_strict``. The harness treats them like any other
implementation: it loads them by name and knows only what their ``CALLSTREAM`` declarations say.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from callstream.reference import DIALECTS, Assembler, Limits, Tool

__all__ = ["DEFAULT", "ReferenceFactory", "reference", "reference_strict"]

DEFAULT = "py:callstream.implementations:reference"
"""The connectable ``callstream run`` tests when given no ``--impl``."""


@dataclass(frozen=True, slots=True)
class ReferenceFactory:
    """Makes a reference :class:`Assembler` per stream, under one profile."""

    profile: Literal["lenient", "strict"]

    @property
    def CALLSTREAM(self) -> dict[str, Any]:
        """Its profile and every dialect it reads; it exposes everything, its findings too (each
        quirk recorded)."""
        return {"profile": self.profile, "dialects": list(DIALECTS)}

    def __call__(
        self, *, tools: Sequence[Tool], limits: Limits, dialect: str = "openai-chat"
    ) -> Assembler:
        """An assembler for one stream in ``dialect`` offering ``tools``."""
        return Assembler(tools, dialect=dialect, profile=self.profile, limits=limits)


reference = ReferenceFactory("lenient")
reference_strict = ReferenceFactory("strict")

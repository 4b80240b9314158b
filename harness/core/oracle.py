"""The oracle: what a stream must become, derived from the spec alone, never from the
reference assembler.

A literal stream's expectation is written out in its scenario; a planned stream's is derived by
its dialect (:meth:`~callstream.core.dialects.base.Dialect.expect`), which knows that dialect's
completion signals and quirks, and completes each call as every dialect does
(:mod:`.completion`).
"""

from __future__ import annotations

from .dialects import dialect
from .spec import Expected, StreamSpec
from .wire import Rendered

__all__ = ["expect"]


def expect(spec: StreamSpec, rendered: Rendered, profile: str) -> Expected:
    """The expectation for ``spec`` under ``profile``: written out, or derived from the plan."""
    if spec.expected is not None and profile in spec.expected:
        return spec.expected[profile]
    if spec.literal:
        raise ValueError("a literal stream needs its expectation written out")
    return dialect(spec.dialect).expect(spec, rendered, profile)

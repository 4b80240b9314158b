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


_RECENT: dict[tuple[int, str], tuple[StreamSpec, Rendered, Expected]] = {}
"""The last few expectations derived, by the identity of the spec and its bytes and by profile:
a fuzzed spec's are derived by the generator's check that the oracle predicts it, by
``scenario_for`` and by ``run_case``; spec and bytes are frozen, so each is derived once."""
_KEPT = 16


def expect(spec: StreamSpec, rendered: Rendered, profile: str) -> Expected:
    """The expectation for ``spec`` under ``profile``: written out, or derived from the plan."""
    if spec.expected is not None and profile in spec.expected:
        return spec.expected[profile]
    if spec.literal:
        raise ValueError("a literal stream needs its expectation written out")
    kept = _RECENT.get((id(spec), profile))
    if kept is not None and kept[0] is spec and kept[1] is rendered:
        return kept[2]
    expected = dialect(spec.dialect).expect(spec, rendered, profile)
    if len(_RECENT) >= _KEPT:
        _RECENT.pop(next(iter(_RECENT)), None)
    _RECENT[(id(spec), profile)] = (spec, rendered, expected)
    return expected

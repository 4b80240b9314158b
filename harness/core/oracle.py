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


_RECENT: dict[tuple[int, str, frozenset[str]], tuple[StreamSpec, Rendered, Expected]] = {}
"""The last few expectations derived, by the identity of the spec and its bytes and by profile:
a fuzzed spec's are derived by the generator's check that the oracle predicts it, by
``scenario_for`` and by ``run_case``; spec and bytes are frozen, so each is derived once."""
_KEPT = 16


def expect(
    spec: StreamSpec, rendered: Rendered, profile: str, opt_ins: frozenset[str] = frozenset()
) -> Expected:
    """The expectation for ``spec`` under ``profile``, on a route with the per-route
    ``opt_ins`` (rule A2; none for a plain route): written out, or derived from the plan."""
    if spec.expected is not None and profile in spec.expected:
        return spec.expected[profile]
    if spec.literal:
        raise ValueError("a literal stream needs its expectation written out")
    key = (id(spec), profile, opt_ins)
    kept = _RECENT.get(key)
    if kept is not None and kept[0] is spec and kept[1] is rendered:
        return kept[2]
    expected = dialect(spec.dialect).expect(spec, rendered, profile, opt_ins)
    if len(_RECENT) >= _KEPT:
        _RECENT.pop(next(iter(_RECENT)), None)
    _RECENT[key] = (spec, rendered, expected)
    return expected

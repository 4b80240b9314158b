"""The filter every generator ends with: only streams the oracle can predict are drawn."""

from __future__ import annotations

from ..core.declaration import PROFILES
from ..core.oracle import expect
from ..core.rendering import render
from ..core.spec import StreamSpec
from ..errors import PlanError

__all__ = ["predictable"]


def predictable(spec: StreamSpec, opt_ins: frozenset[str] = frozenset()) -> bool:
    """Whether the oracle predicts ``spec`` under every profile (it refuses plans it cannot
    predict with ``PlanError``); every spec the strategies draw is. With ``opt_ins``, on a
    route that opts in, which runs under the lenient profile only (D75)."""
    rendered = render(spec)
    try:
        for profile in ("lenient",) if opt_ins else PROFILES:
            expect(spec, rendered, profile, opt_ins)
    except PlanError:
        return False
    return True

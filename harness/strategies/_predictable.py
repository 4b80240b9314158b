"""The filter every generator ends with: only streams the oracle can predict are drawn."""

from __future__ import annotations

from ..core.declaration import PROFILES
from ..core.oracle import expect
from ..core.rendering import render
from ..core.spec import StreamSpec
from ..errors import PlanError

__all__ = ["predictable"]


def predictable(spec: StreamSpec) -> bool:
    """Whether the oracle predicts ``spec`` under every profile (it refuses plans it cannot
    predict with ``PlanError``); every spec the strategies draw is."""
    rendered = render(spec)
    try:
        for profile in PROFILES:
            expect(spec, rendered, profile)
    except PlanError:
        return False
    return True

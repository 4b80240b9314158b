"""``badge.json``: a shields.io endpoint badge."""

from __future__ import annotations

from typing import Any

from .model import Report
from .verdicts import standing_of

__all__ = [
    "badge_json",
]


def badge_json(report: Report) -> dict[str, Any]:
    """A shields.io endpoint: ``412/412 passed`` in green, ``3 failed`` in red."""
    message, tone = standing_of(report)
    color = {
        "passed": "brightgreen",
        "unsupported": "lightgrey",
        "not_applicable": "lightgrey",
    }.get(tone, "red")
    if report.footer is None:
        message += " (unfinished)"
        color = "red" if color == "red" else "orange"
    return {"schemaVersion": 1, "label": "callstream", "message": message, "color": color}

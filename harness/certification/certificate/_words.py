"""The words and symbols the Markdown and the HTML of a certificate share."""

from __future__ import annotations

from .model import CertificateFinding


def runs_text(finding: CertificateFinding) -> str:
    """The runs a finding was seen in (``flaky: in run 1, 3 of 3``); empty for a single run."""
    if finding.runs == 1:
        return ""
    seen = ", ".join(map(str, finding.repeats))
    label = "flaky: " if finding.flaky else ""
    return f"{label}in run {seen} of {finding.runs}"


def seconds(value: float | None) -> str:
    """A duration to the millisecond, or a dash when there is none."""
    return "–" if value is None else f"{value:.3f} s"


def check_symbol(status: str) -> str:
    """The symbol of a check's standing: failed, flaky, warned or passed."""
    return {"failed": "✗", "flaky": "~", "warned": "⚠", "passed": "✓"}[status]

"""docs/rules.md, the rules document users read, stays true to the code."""

from __future__ import annotations

import re
from pathlib import Path

from callstream.checks import CHECKS
from callstream.reference import QUIRKS
from callstream.rules import RULE_TEXT, RULES

DOC = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def test_every_rule_is_written_with_its_title() -> None:
    """Each rule of the code has its paragraph, opening with its id and title."""
    text = DOC.read_text("utf-8")
    for rule, title in RULES.items():
        if rule == "R":
            assert "## R. Route rules" in text
            continue
        assert f"**{rule} {title}" in text, rule
    assert set(RULE_TEXT) == set(RULES)


def test_every_check_named_in_the_document_exists_and_every_check_is_named() -> None:
    """The checks that prove each rule are named as the code names them."""
    text = DOC.read_text("utf-8")
    named = set(re.findall(r"`([a-z_]+)`", text))
    checks = {check.name for check in CHECKS}
    assert checks <= named


def test_every_detected_quirk_has_its_row() -> None:
    """Every quirk the reference records is listed, qualified by its dialect."""
    text = DOC.read_text("utf-8")
    for quirk in QUIRKS.values() if hasattr(QUIRKS, "values") else QUIRKS:
        assert f"`openai-chat/{quirk.id}`" in text, quirk.id

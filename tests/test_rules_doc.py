"""docs/rules.md, the rules document users read, stays true to the code."""

from __future__ import annotations

import re
from pathlib import Path

from callstream.core.checks import CHECKS
from callstream.core.dialects import DIALECTS
from callstream.corpus.explain import rules_document, sections
from callstream.reference import QUIRKS
from callstream.rules import RULE_TEXT, RULES

DOC = Path(__file__).resolve().parents[1] / "docs" / "rules.md"
CHECK_NAMES = {check.name for check in CHECKS}
CATALOGUE = [quirk for dialect in DIALECTS.values() for quirk in dialect.quirks]
"""Every dialect's quirk ids, dialect by dialect, in the catalogue's order."""


def _paragraph(body: str, label: str) -> str:
    """The paragraph of a section that opens with ``*label:*``, or "" when there is none."""
    for paragraph in body.split("\n\n"):
        if paragraph.startswith(f"*{label}:*"):
            return paragraph
    return ""


def test_the_installed_rules_document_is_the_checkouts() -> None:
    """``callstream explain`` reads the package data ``callstream.docs``, which is docs/."""
    assert rules_document() == DOC.read_text("utf-8")


def test_every_rule_has_its_section_with_its_title() -> None:
    """Each rule of the code has a ``### ID Title`` section, and no section names another."""
    rules = {id: s for id, s in sections().items() if s.kind == "rule"}
    assert list(rules) == list(RULES)
    for rule, title in RULES.items():
        assert rules[rule].title == title, rule
    assert set(RULE_TEXT) == set(RULES)


def test_every_rule_says_why_and_what_each_profile_does() -> None:
    """A rule's section has its why and what a conforming implementation does under the strict
    and the lenient profile (together when they agree)."""
    for rule in RULES:
        body = sections()[rule].body
        assert _paragraph(body, "Why"), rule
        together = _paragraph(body, "Strict and lenient")
        apart = _paragraph(body, "Strict") and _paragraph(body, "Lenient")
        assert together or apart, rule


def test_every_rule_names_exactly_the_checks_that_prove_it() -> None:
    """The *Checks:* paragraph of a rule names the checks whose ``rules`` include it, no more."""
    for rule in RULES:
        named = set(re.findall(r"`([a-z_]+)`", _paragraph(sections()[rule].body, "Checks")))
        proving = {check.name for check in CHECKS if rule in check.rules}
        assert named & CHECK_NAMES == proving, rule


def test_every_check_named_in_the_document_exists_and_every_check_is_named() -> None:
    """The checks that prove each rule are named as the code names them."""
    text = DOC.read_text("utf-8")
    named = set(re.findall(r"`([a-z_]+)`", text))
    assert named >= CHECK_NAMES


def test_every_quirk_of_the_catalogue_has_its_section() -> None:
    """Each quirk id of each dialect (openai-chat's T1–T12, C1–C34, then the next dialect's) has
    a section qualified by its dialect, with its severity, what each profile does, whether it is
    recorded, and its sources."""
    quirks = [id for id, section in sections().items() if section.kind == "quirk"]
    assert quirks == CATALOGUE
    for quirk in quirks:
        body = sections()[quirk].body
        for label in ("Severity", "Strict", "Lenient", "Finding", "Sources"):
            assert _paragraph(body, label), (quirk, label)


def test_every_detected_quirk_reads_as_the_reference_handles_it() -> None:
    """A quirk the reference records has its title, severity and strict verdict from the quirk
    table; the strict profile rejects the calls it touches exactly where the table says so."""
    for quirk in QUIRKS.values():
        section = sections()[quirk.id]
        assert section.title == quirk.title, quirk.id
        assert _paragraph(section.body, "Severity").startswith(f"*Severity:* {quirk.severity}")
        assert _paragraph(section.body, "Finding").startswith("*Finding:* recorded"), quirk.id
        rejects = f"*Strict:* rejects the calls it touches (`{quirk.reason.value}`)"
        assert _paragraph(section.body, "Strict").startswith(rejects) == (
            quirk.strict == "reject"
        ), quirk.id


def test_a_quirk_the_reference_does_not_record_says_so() -> None:
    """A catalogue quirk without a row in the quirk table is never claimed to be recorded."""
    for quirk in CATALOGUE:
        if quirk not in QUIRKS:
            finding = _paragraph(sections()[quirk].body, "Finding")
            assert finding.startswith("*Finding:* none"), quirk


def test_the_quirk_index_agrees_with_the_sections() -> None:
    """Each row of the quirk table at the top of the Quirks part has its section's title,
    severity and finding, in the catalogue's order."""
    rows = re.findall(
        r"^\| `([a-z][a-z-]*/\w+)` \| (.+) \| (S\d|—) \| (recorded|none) \|$",
        DOC.read_text("utf-8"),
        re.MULTILINE,
    )
    assert [row[0] for row in rows] == CATALOGUE
    for quirk, title, severity, finding in rows:
        section = sections()[quirk]
        assert title == section.title, quirk
        assert _paragraph(section.body, "Severity").startswith(
            f"*Severity:* {severity}" if severity != "—" else "*Severity:* none"
        ), quirk
        assert _paragraph(section.body, "Finding").startswith(f"*Finding:* {finding}"), quirk


def test_every_decision_names_what_it_decides() -> None:
    """Each decision's heading names the rules or quirks it concerns (D1 concerns all rules),
    so that explaining one of them shows the decision. Decisions are numbered in increasing
    order; each dialect has its own range (anthropic-messages D20–D39,
    openai-responses D40–D59, the adapters of other languages D60–D79)."""
    decisions = [s for s in sections().values() if s.kind == "decision"]
    numbers = [int(d.id.removeprefix("D")) for d in decisions]
    assert numbers == sorted(set(numbers))  # each area numbers its own range (D60–D79, …)
    assert numbers[0] == 1
    for decision in decisions:
        assert decision.cites or decision.title.endswith("(all rules)"), decision.id

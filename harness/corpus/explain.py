"""``callstream explain``: one rule or quirk, with everything callstream knows of it.

The text comes from the rules document, docs/rules.md, which ships with the package as
``callstream.docs`` so that an installed wheel explains as a checkout does. The document is
read by its headings: each rule is a ``### A3 Title`` section under its group's ``## A. …``
heading, each quirk a ``### openai-chat/C3 title`` section, each decision a
``### D4. Title (the rules and quirks it concerns)`` section. Around that text, the code says
the rest: the checks that prove a rule (``CHECKS``), the scenarios of the built-in corpus that
cite it, and, in a checkout, the tests that cover it (tests are not installed).

A bare id names a rule when there is one (``C3``) and otherwise the quirk of that id
(``C20``: ``openai-chat/C20``); ``T1``–``T4`` and ``C1``–``C6`` name both a rule and a quirk,
so the explanation of the rule says the quirk exists too.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal, TypeGuard

from callstream.reference import QUIRKS

from ..core.checks import CHECKS
from ..core.dialects import NOT_CERTIFIABLE
from ..core.spec import Scenario
from ..errors import UsageError
from ..rules import RULES, RuleId
from .scenario import default_corpus, load_scenarios

__all__ = [
    "DOCUMENT",
    "CitingTest",
    "Section",
    "checkout_tests",
    "cited_tests",
    "explanation",
    "rules_document",
    "sections",
]

DOCUMENT = "rules.md"
"""The rules document, package data of ``callstream.docs`` (the repository's docs/)."""
DIALECT = "openai-chat"
"""The dialect a bare id names a quirk of, where no rule has the id (``C20``)."""
NOT_IN_A_CHECKOUT = "tests: only in a checkout of callstream"

Kind = Literal["rule", "quirk", "decision"]


@dataclass(frozen=True, slots=True)
class Section:
    """One rule, quirk or decision of the rules document."""

    id: str
    """``A3``, ``openai-chat/C3`` or ``D4``."""
    kind: Kind
    title: str
    body: str
    """The section's Markdown, without its heading."""
    group: str
    """The heading above it: ``A. Assembly: turning fragments into calls``, ``Quirks``…"""
    anchor: str
    """The heading's anchor on a rendered page (GitHub's slug): ``a3-set-metadata-…``."""
    cites: frozenset[str] = frozenset()
    """For a decision, the rules and (qualified) quirks its heading names."""


@dataclass(frozen=True, slots=True)
class CitingTest:
    """A test of the checkout, and the rules and quirks its name or docstring cites."""

    where: str
    """``tests/test_quirks.py::test_c3_…``."""
    cites: frozenset[str]


# -- the document ---------------------------------------------------------------------------

_HEADING = re.compile(r"^(##|###) (.+)$", re.MULTILINE)
_RULE_HEADING = re.compile(r"(?P<id>[ACVTE]\d{1,2}|R) (?P<title>.+)")
_QUIRK_HEADING = re.compile(r"(?P<id>[a-z][a-z-]*/[A-Z]\d{1,2}) (?P<title>.+)")
_DECISION_HEADING = re.compile(r"(?P<id>D\d+)\. (?P<title>.+)")


def rules_document() -> str:
    """The text of docs/rules.md, as installed with the package."""
    return resources.files("callstream.docs").joinpath(DOCUMENT).read_text("utf-8")


@cache
def sections() -> Mapping[str, Section]:
    """Every rule, quirk and decision of the rules document, by id, in the document's order."""
    return _parse(rules_document())


def _parse(text: str) -> dict[str, Section]:
    found: dict[str, Section] = {}
    headings = list(_HEADING.finditer(text))
    group = ""
    for n, heading in enumerate(headings):
        level, line = heading.group(1), heading.group(2).strip()
        if level == "##":
            group = line
            continue
        end = headings[n + 1].start() if n + 1 < len(headings) else len(text)
        section = _section(line, text[heading.end() : end].strip(), group)
        if section is not None:
            found[section.id] = section
    quirks = {id for id, section in found.items() if section.kind == "quirk"}
    for id, section in found.items():
        if section.kind == "decision":
            cites = _citations(section.title, quirks, quirk_module=False)
            found[id] = replace(section, cites=frozenset(cites))
    return found


def _section(line: str, body: str, group: str) -> Section | None:
    anchor = _slug(line)
    if (quirk := _QUIRK_HEADING.fullmatch(line)) is not None:
        return Section(quirk["id"], "quirk", quirk["title"], body, group, anchor)
    if (rule := _RULE_HEADING.fullmatch(line)) is not None and rule["id"] in RULES:
        return Section(rule["id"], "rule", rule["title"], body, group, anchor)
    if (decision := _DECISION_HEADING.fullmatch(line)) is not None:
        return Section(decision["id"], "decision", decision["title"], body, group, anchor)
    return None


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


# -- citations ------------------------------------------------------------------------------

_ID = r"(?:[ACVTE]\d{1,2}|R)"
_CITED = re.compile(
    rf"(?<![\w/-])(?P<dialect>[a-z][a-z-]*)/(?P<quirk>[A-Z]\d{{1,2}})(?!\w)"
    rf"|(?<!\w)(?P<first>{_ID})(?:[–-](?P<last>{_ID}))?(?!\w)"
)
_QUIRK_LIST = re.compile(
    rf"\bquirks?\s+\(?({_ID}(?:(?:,\s*|\s+and\s+|\s+or\s+|/|[–-]){_ID})*)", re.IGNORECASE
)


def _citations(text: str, quirks: Collection[str], *, quirk_module: bool) -> set[str]:
    """The rules (``A3``) and quirks (``openai-chat/C3``, of ``quirks``) that ``text`` cites.

    An id is a quirk's when it is qualified (``openai-chat/C3``), follows the word "quirk"
    (``quirks C4 and C5``), or stands in a module about quirks; otherwise it is a rule's. A
    range (``T1–T4``) cites every id in it."""
    in_lists = [match.span(1) for match in _QUIRK_LIST.finditer(text)]
    cited: set[str] = set()
    for match in _CITED.finditer(text):
        if match["quirk"] is not None:
            cited.add(f"{match['dialect']}/{match['quirk']}")
            continue
        in_list = any(start <= match.start() < end for start, end in in_lists)
        for one in _expand(match["first"], match["last"]):
            if (in_list or quirk_module) and f"{DIALECT}/{one}" in quirks:
                cited.add(f"{DIALECT}/{one}")
            elif one in RULES:
                cited.add(one)
    return cited


def _expand(first: str, last: str | None) -> list[str]:
    """``T1``–``T4`` as ``T1, T2, T3, T4``; a single id as itself."""
    if last is None:
        return [first]
    if first[0] != last[0] or "R" in (first, last) or int(first[1:]) >= int(last[1:]):
        return [first, last]
    return [f"{first[0]}{n}" for n in range(int(first[1:]), int(last[1:]) + 1)]


def _quirk_ids() -> set[str]:
    return {id for id, section in sections().items() if section.kind == "quirk"}


# -- the code's side ------------------------------------------------------------------------


@cache
def _corpus() -> tuple[Scenario, ...]:
    return load_scenarios(default_corpus()).scenarios


def _citing_scenarios(section: Section) -> list[Scenario]:
    if section.kind == "rule":
        return [scenario for scenario in _corpus() if section.id in scenario.rules]
    return [scenario for scenario in _corpus() if section.id in scenario.quirks]


def checkout_tests() -> Path | None:
    """The ``tests/`` folder of the checkout callstream runs from, or None when it runs from an
    installed package (tests are not installed)."""
    root = Path(__file__).resolve().parents[2]
    if (root / "tests").is_dir() and (root / "harness" / "corpus" / "explain.py").is_file():
        return root / "tests"
    return None


def cited_tests(folder: Path) -> list[CitingTest]:
    """Every test function under ``folder`` (``test_*.py``, recursively) with the rules and
    quirks its name or docstring cites; a module whose docstring opens on quirks cites quirks
    by their bare ids."""
    citations = []
    quirks = _quirk_ids()
    for path in sorted(folder.rglob("test_*.py")):
        tree = ast.parse(path.read_text("utf-8"), str(path))
        summary = (ast.get_docstring(tree) or "").split("\n", 1)[0]
        quirk_module = "quirk" in summary.lower()
        shown = path.relative_to(folder.parent).as_posix()
        for name, docstring in _test_functions(tree):
            text = f"{_name_as_text(name)}\n{docstring}"
            cites = _citations(text, quirks, quirk_module=quirk_module)
            if cites:
                citations.append(CitingTest(f"{shown}::{name}", frozenset(cites)))
    return citations


def _test_functions(tree: ast.Module) -> Iterator[tuple[str, str]]:
    """Each test of a module (also inside ``Test…`` classes), as (name, docstring)."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for inner in node.body:
                if _is_test(inner):
                    yield f"{node.name}::{inner.name}", ast.get_docstring(inner) or ""
        elif _is_test(node):
            yield node.name, ast.get_docstring(node) or ""


def _is_test(node: ast.stmt) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")


def _name_as_text(name: str) -> str:
    """A test's name with its id tokens upper-cased: ``test_c3_id_changed`` cites ``C3``."""
    words = name.split("::")[-1].split("_")
    return " ".join(
        word.upper() if re.fullmatch(r"[acvte]\d{1,2}", word) else word for word in words
    )


# -- the explanation ------------------------------------------------------------------------


def explanation(ident: str | None = None, *, tests: Path | None = None) -> str:
    """What ``callstream explain IDENT`` prints: the rule or quirk's text and decisions from the
    rules document, the checks that verify it, the corpus scenarios that cite it and the tests
    that cover it (from ``tests``, by default the checkout's ``tests/``, when there is one).
    Without an id, every rule and quirk with its title. An unknown id is a ``UsageError`` that
    suggests the closest ids."""
    if ident is None:
        return _listing()
    section, also = _resolve(ident)
    folder = tests if tests is not None else checkout_tests()
    lines = [f"{section.id} {section.title}", _kind_line(section)]
    if also is not None:
        lines.append(f"also a {also.kind}: {also.id} ({also.title}): callstream explain {also.id}")
    lines += ["", section.body, ""]
    decisions = [d for d in sections().values() if d.kind == "decision" and section.id in d.cites]
    if decisions:
        lines += ["Decisions", ""]
        for decision in decisions:
            lines += [f"{decision.id}. {decision.title}", decision.body, ""]
    lines += _checks_lines(section)
    lines += _scenario_lines(section)
    lines += _test_lines(section, folder)
    return "\n".join(lines) + "\n"


def _resolve(ident: str) -> tuple[Section, Section | None]:
    """The section ``ident`` names, and the quirk of the same bare id when it names a rule."""
    known = sections()
    wanted = ident.strip()
    if "/" in wanted:
        dialect, _, bare = wanted.partition("/")
        wanted = f"{dialect.lower()}/{bare.upper()}"
    else:
        wanted = wanted.upper()
    quirk = known.get(f"{DIALECT}/{wanted}")
    found = known.get(wanted)
    if found is not None and found.kind == "rule":
        return found, quirk
    if found is not None and found.kind == "quirk":
        return found, None
    if quirk is not None:
        return quirk, None
    close = _closest(wanted, [id for id, section in known.items() if section.kind != "decision"])
    hint = f"; closest: {', '.join(close)}" if close else ""
    raise UsageError(f"{ident!r} is no rule or quirk{hint} (callstream explain lists them all)")


def _closest(wanted: str, ids: list[str], n: int = 3) -> list[str]:
    """The ids nearest ``wanted``: of its letter first, then by number, then the rules and the
    quirks of the dialect it names before other dialects' quirks, then by spelling. A qualified
    id is compared with the rules and the qualified quirks, a bare one with the rules and the
    bare quirks."""
    dialect, _, bare = wanted.rpartition("/")
    qualified = "/" in wanted
    candidates = dict.fromkeys(id if qualified else id.rpartition("/")[2] for id in ids)

    def rank(candidate: str) -> tuple[bool, int, bool, float]:
        theirs, _, other = candidate.rpartition("/")
        distance = abs(_number(other) - _number(bare))
        elsewhere = bool(theirs) and not theirs.startswith(dialect)
        return other[:1] != bare[:1], distance, elsewhere, -_similarity(wanted, candidate)

    near = [
        candidate
        for candidate in candidates
        if candidate.rpartition("/")[2][:1] == bare[:1] or _similarity(wanted, candidate) >= 0.5
    ]
    return sorted(near, key=rank)[:n]


def _number(id: str) -> int:
    digits = id[1:]
    return int(digits) if digits.isdigit() else 0


def _similarity(one: str, other: str) -> float:
    return difflib.SequenceMatcher(None, one, other).ratio()


def _kind_line(section: Section) -> str:
    if section.kind == "rule":
        return f"rule of {section.group}"
    return f"quirk of {section.id.split('/')[0]}"


def _checks_lines(section: Section) -> list[str]:
    if section.kind == "rule":
        names = [check.name for check in CHECKS if section.id in check.rules]
        line = f"checks: {', '.join(names)}" if names else "checks: none"
        if section.id in NOT_CERTIFIABLE:
            line += (
                " (no scenario can certify it through the contract: "
                f"{NOT_CERTIFIABLE[RuleId(section.id)]})"
            )
        return [line]
    rules = sorted(
        {rule for scenario in _citing_scenarios(section) for rule in scenario.rules},
        key=list(RULES).index,
    )
    recorded = section.id in QUIRKS
    line = "checks: findings (an implementation that records findings must " + (
        "record it)" if recorded else "not record it: the reference records none)"
    )
    if rules:
        line += f"; its scenarios are judged on rules {', '.join(rules)}"
    return [line]


def _scenario_lines(section: Section) -> list[str]:
    cited = _citing_scenarios(section)
    if not cited:
        return ["scenarios: none in the built-in corpus"]
    width = max(len(scenario.id) for scenario in cited)
    return [f"scenarios ({len(cited)}):"] + [
        f"  {scenario.id:<{width}}  {scenario.title}" for scenario in cited
    ]


def _test_lines(section: Section, folder: Path | None) -> list[str]:
    if folder is None or not folder.is_dir():
        return [NOT_IN_A_CHECKOUT]
    covering = [test.where for test in cited_tests(folder) if section.id in test.cites]
    if not covering:
        return ["tests: none cite it by name or docstring"]
    return [f"tests ({len(covering)}):"] + [f"  {where}" for where in covering]


def _listing() -> str:
    lines = [f"Every rule and quirk of docs/{DOCUMENT}; callstream explain ID shows one."]
    named = [section for section in sections().values() if section.kind != "decision"]
    width = max(len(section.id) for section in named)
    shown = None
    for section in named:
        heading = _listing_heading(section)
        if heading != shown:
            shown = heading
            lines += ["", heading]
        lines.append(f"  {section.id:<{width}}  {section.title}")
    return "\n".join(lines) + "\n"


def _listing_heading(section: Section) -> str:
    if section.kind == "quirk":
        return f"Quirks of {section.id.split('/')[0]} (a bare id where no rule has it: C20)"
    return section.group

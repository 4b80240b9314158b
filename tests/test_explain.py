"""``callstream explain``: a rule or a quirk with its text, checks, scenarios and tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from callstream.cli import main
from callstream.core.judgement import Failure
from callstream.corpus.explain import (
    checkout_tests,
    cited_tests,
    explanation,
    sections,
)
from callstream.errors import UsageError
from callstream.rules import OPENAI_CHAT_QUIRKS, RULES, failure_pointer

ROOT = Path(__file__).resolve().parents[1]
CITING = '''"""Tests of one thing."""


def test_a3_ids_are_set_once() -> None:
    """Nothing here."""


def test_metadata() -> None:
    """A repeated id is not concatenated (A3); quirks C4 and C5 are recorded."""


def test_transport() -> None:
    """Every transport rule T1–T4 holds."""


class TestGroup:
    def test_inside_a_class(self) -> None:
        """A truncated call is never ready (C3)."""


def helper_citing_a3() -> None:
    """Not a test (A3)."""
'''
QUIRK_MODULE = '''"""Every openai-chat quirk, under both profiles."""


def test_c3_a_new_id_without_a_name_continues_the_call() -> None:
    """LM Studio sends a new id on every delta (V4 still holds)."""
'''


@pytest.fixture
def tests_folder(tmp_path: Path) -> Path:
    """A checkout's tests/ with a plain module and a module about quirks."""
    folder = tmp_path / "tests"
    (folder / "quality").mkdir(parents=True)
    (folder / "test_things.py").write_text(CITING, "utf-8")
    (folder / "quality" / "test_quirky.py").write_text(QUIRK_MODULE, "utf-8")
    (folder / "helpers.py").write_text('def test_not_collected() -> None:\n    """A3."""\n')
    return folder


def test_a_rule_shows_its_text_checks_scenarios_and_tests(tests_folder: Path) -> None:
    """``explain A3`` prints the rule's section of docs/rules.md, the checks that prove it, the
    corpus scenarios that cite it with their titles, and the tests that cite it."""
    text = explanation("A3", tests=tests_folder)
    lines = text.splitlines()
    assert lines[0] == "A3 Set metadata, never concatenate it"
    assert lines[1] == "rule of A. Assembly: turning fragments into calls"
    assert "`id`, `type` and `function.name` arrive whole." in text
    assert "*Why:* `call_abccall_abc` matches no tool result" in text
    assert "D12. A name that changes at the same index may be rejected" in text
    assert "checks: safe_release, nothing_ready, identity" in lines
    assert any(line.startswith("scenarios (") for line in lines)
    scenario = next(line for line in lines if "oc-q-id-repeated-every-delta" in line)
    assert scenario.split(maxsplit=1) == [
        "oc-q-id-repeated-every-delta",
        "The same id on every delta (LiteLLM) is set once, never concatenated into "
        "call_abccall_abc…",
    ]
    assert lines[-3:] == [
        "tests (2):",
        "  tests/test_things.py::test_a3_ids_are_set_once",
        "  tests/test_things.py::test_metadata",
    ]


def test_a_quirk_shows_its_handling_per_profile_and_its_scenarios(tests_folder: Path) -> None:
    """``explain openai-chat/C3`` prints the quirk: what each profile does, its sources, the
    scenarios that reproduce it, and the tests of a module about quirks that cite it bare."""
    text = explanation("openai-chat/C3", tests=tests_folder)
    lines = text.splitlines()
    assert lines[:2] == [
        "openai-chat/C3 id changed without a name: same call continued",
        "quirk of openai-chat",
    ]
    assert "*Strict:* rejects the calls it touches (`protocol_error`)." in text
    assert "*Lenient:* an id change *without* a name continues the same call" in text
    assert "- https://github.com/vllm-project/vllm/pull/23522" in lines
    assert any(line.startswith("checks: findings (") for line in lines)
    assert any("oc-q-id-changes-every-delta-without-name" in line for line in lines)
    assert lines[-2:] == [
        "tests (1):",
        "  tests/quality/test_quirky.py::test_c3_a_new_id_without_a_name_continues_the_call",
    ]


def test_an_id_that_is_a_rule_and_a_quirk_shows_the_rule_and_points_at_the_quirk() -> None:
    """``C3`` is the rule (Truncation is not success); the quirk of the same id is named with
    the command that shows it."""
    lines = explanation("C3").splitlines()
    assert lines[0] == "C3 Truncation is not success"
    assert lines[2] == (
        "also a quirk: openai-chat/C3 (id changed without a name: same call continued): "
        "callstream explain openai-chat/C3"
    )


def test_a_bare_id_that_only_a_quirk_has_shows_the_quirk() -> None:
    """``C20`` and ``c20`` name openai-chat's C20, there being no rule C20."""
    assert explanation("C20").startswith("openai-chat/C20 chunks after finish_reason")
    assert explanation("c20") == explanation("C20")
    assert "also a" not in explanation("C20")


@pytest.mark.parametrize(
    ("ident", "closest"),
    [
        ("A9", "A8, A7, A6"),
        ("C35", "C34, C33, C32"),
        ("openai-chat/A3", "A3, anthropic-messages/A3, A2"),
        ("anthropic/C3", "C3, openai-chat/C3, C2"),
    ],
)
def test_an_unknown_id_is_a_usage_error_that_suggests_the_closest(ident: str, closest: str) -> None:
    """An id that names nothing exits 2 (UsageError) and suggests the nearest ids."""
    with pytest.raises(UsageError, match=f"closest: {closest} ") as raised:
        explanation(ident)
    assert raised.value.exit_code == 2
    assert f"{ident!r} is no rule or quirk" in str(raised.value)


def test_without_an_id_every_rule_and_quirk_is_listed_with_its_title() -> None:
    """The listing has a line per rule and per quirk, grouped as the document groups them."""
    lines = explanation().splitlines()
    for rule, title in RULES.items():
        assert any(line.split(maxsplit=1) == [rule, title] for line in lines), rule
    for quirk in OPENAI_CHAT_QUIRKS:
        title = sections()[quirk].title
        assert any(line.split(maxsplit=1) == [quirk, title] for line in lines)
    assert "A. Assembly: turning fragments into calls" in lines
    assert any(line.startswith("Quirks of openai-chat") for line in lines)


def test_outside_a_checkout_the_tests_line_says_where_tests_are(tmp_path: Path) -> None:
    """An installed callstream has no tests: the explanation says they live in a checkout."""
    text = explanation("A3", tests=tmp_path / "tests")
    assert text.splitlines()[-1] == "tests: only in a checkout of callstream"


def test_in_a_checkout_the_tests_are_found_by_default() -> None:
    """Run from this checkout, explain lists the checkout's own tests citing the quirk."""
    assert checkout_tests() == ROOT / "tests"
    assert "  tests/test_quirks.py::test_c3_strict_rejects_a_call_whose_id_changes" in (
        explanation("openai-chat/C3").splitlines()
    )


def test_a_test_cites_ids_by_name_docstring_range_and_quirk_wording(tests_folder: Path) -> None:
    """Ids are read from test names and docstrings: ``quirks C4 and C5`` are quirks, ``T1–T4``
    every transport rule, a bare id in a module about quirks a quirk, other ids rules; helpers
    and functions that are not tests cite nothing."""
    cites = {test.where: set(test.cites) for test in cited_tests(tests_folder)}
    assert cites == {
        "tests/test_things.py::test_a3_ids_are_set_once": {"A3"},
        "tests/test_things.py::test_metadata": {"A3", "openai-chat/C4", "openai-chat/C5"},
        "tests/test_things.py::test_transport": {"T1", "T2", "T3", "T4"},
        "tests/test_things.py::TestGroup::test_inside_a_class": {"C3"},
        "tests/quality/test_quirky.py::test_c3_a_new_id_without_a_name_continues_the_call": {
            "openai-chat/C3",
            "V4",
        },
    }


def test_a_failure_points_at_the_explanation_of_its_rule() -> None:
    """Every failure line can name its rules with the command that explains the first."""
    assert Failure("identity", ("A3",), "call 0 has id 'call_1call_1'").pointer == (
        "A3; callstream explain A3"
    )
    assert failure_pointer(("A2", "T1")) == "A2, T1; callstream explain A2"
    assert failure_pointer(()) == "callstream explain"


def test_the_command_prints_the_explanation(capsys: pytest.CaptureFixture[str]) -> None:
    """``callstream explain C3`` prints what ``explanation`` returns and exits 0."""
    assert main(["explain", "C3"]) == 0
    assert capsys.readouterr().out == explanation("C3")


def test_the_command_lists_everything_without_an_id(capsys: pytest.CaptureFixture[str]) -> None:
    """``callstream explain`` alone lists every rule and quirk."""
    assert main(["explain"]) == 0
    assert capsys.readouterr().out == explanation()


def test_the_command_exits_2_for_an_unknown_id(capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown id prints one line with the closest ids on stderr and exits 2."""
    assert main(["explain", "A9"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "callstream: error: 'A9' is no rule or quirk; closest: A8, A7, A6 "
        "(callstream explain lists them all)\n"
    )

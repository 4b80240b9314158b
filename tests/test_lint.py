"""``callstream lint``: the loader's problems, ids used twice, and rule and quirk coverage,
printed as ``path:line: message`` with exit code 2, or a one-line summary with exit code 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from callstream.cli import main
from callstream.core.dialects import DIALECTS
from callstream.corpus.linting import coverage, lint
from callstream.corpus.scenario import load_scenarios
from callstream.rules import OPENAI_CHAT_QUIRKS, RULES

COVERABLE = [rule for rule in RULES if rule not in DIALECTS["openai-chat"].not_certifiable]
"""The rules an openai-chat scenario can cover."""
CATALOGUE = Path(__file__).resolve().parent.parent / "scenarios" / "tools.yaml"


def scenario(id_: str, rules: list[str], quirks: tuple[str, ...] = ()) -> str:
    """One scenario mapping in flow style (one line), for a ``scenarios:`` list."""
    return (
        f"  - {{id: {id_}, title: t, rules: [{', '.join(rules)}], "
        f"quirks: [{', '.join(quirks)}], tools: [get_time], calls: []}}\n"
    )


def write(folder: Path, name: str, *scenarios: str) -> Path:
    path = folder / name
    path.write_text("scenarios:\n" + "".join(scenarios), encoding="utf-8")
    return path


def test_a_corpus_covering_every_rule_and_quirk_lints_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No problem: exit code 0 and one summary line."""
    write(tmp_path, "a.yaml", scenario("all", COVERABLE, OPENAI_CHAT_QUIRKS))
    write(tmp_path, "b.yaml", scenario("one", ["A2"]), scenario("two", ["A3"]))
    assert main(["lint", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "3 scenarios in 2 files, every rule and quirk covered\n"


def test_uncovered_rules_and_quirks_are_reported_against_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each rule (but R, certified on live routes) and each quirk no scenario covers is one
    problem naming the folder linted; the exit code is 2."""
    write(tmp_path, "a.yaml", scenario("one", COVERABLE[1:], OPENAI_CHAT_QUIRKS[:-1]))
    assert main(["lint", str(tmp_path)]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"{tmp_path}: rule {COVERABLE[0]} is covered by no scenario",
        f"{tmp_path}: quirk {OPENAI_CHAT_QUIRKS[-1]} is covered by no scenario",
    ]


def test_no_coverage_switches_the_coverage_check_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """While the corpus is being written, --no-coverage lints files without coverage gaps."""
    path = write(tmp_path, "a.yaml", scenario("one", ["A2"]))
    assert main(["lint", "--no-coverage", str(path)]) == 0
    assert capsys.readouterr().out == "1 scenario in 1 file, coverage not checked\n"


def test_every_problem_of_every_file_is_printed_as_path_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Schema and loader problems from two files, unknown rules and quirks included, are all
    printed, each as ``path:line: message``; the exit code is 2."""
    first = write(
        tmp_path, "a.yaml", scenario("one", ["A9"]), scenario("two", ["A2"], ("openai-chat/C99",))
    )
    second = write(tmp_path, "b.yaml", scenario("Three", ["A2"]))
    assert main(["lint", "--no-coverage", str(first), str(second)]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"{first}:2: rules[0]: rule 'A9' is not in REQUIREMENTS.md",
        f"{first}:3: quirks[0]: 'openai-chat/C99' is not a quirk of openai-chat "
        "(openai-chat/T1-T12, C1-C34)",
        f"{second}:2: id: 'Three': an id is lower case letters, digits, '.' and '-', starting "
        "with a letter or digit",
    ]


def test_an_id_used_in_two_files_is_reported_with_both_places(tmp_path: Path) -> None:
    """The second use is the problem, and its message names where the id was first used."""
    first = write(tmp_path, "a.yaml", scenario("one", ["A2"]))
    second = write(tmp_path, "b.yaml", scenario("two", ["A2"]), scenario("one", ["A3"]))
    report = lint([tmp_path], check_coverage=False)
    assert report.problems == (f"{second}:3: id 'one' is already used at {first}:2",)
    assert (report.scenarios, report.files) == (2, 2)


def test_coverage_lists_the_scenarios_citing_each_rule_and_quirk(tmp_path: Path) -> None:
    """Every certifiable rule and every quirk has an entry, with the ids of the scenarios that cover
    it in corpus order."""
    write(
        tmp_path,
        "a.yaml",
        scenario("one", ["A2", "T1"], ("openai-chat/C9",)),
        scenario("two", ["A2"]),
    )
    found = coverage(load_scenarios([tmp_path]).scenarios)
    assert list(found.rules) == COVERABLE
    assert list(found.quirks) == list(OPENAI_CHAT_QUIRKS)
    assert (found.rules["A2"], found.rules["T1"], found.quirks["openai-chat/C9"]) == (
        ("one", "two"),
        ("one",),
        ("one",),
    )
    assert "A2" not in found.uncovered_rules
    assert "A1" in found.uncovered_rules
    assert found.uncovered_quirks == tuple(q for q in OPENAI_CHAT_QUIRKS if q != "openai-chat/C9")


def test_lint_without_paths_lints_the_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With no PATH, lint reads every dialect's folder and scenarios/regressions (not the tool
    catalogue or recordings), and reports coverage gaps against each dialect's folder."""
    root = tmp_path / "scenarios"
    for folder in ("openai-chat", "regressions", "recordings"):
        (root / folder).mkdir(parents=True)
    (root / "tools.yaml").write_text(CATALOGUE.read_text(encoding="utf-8"), encoding="utf-8")
    write(root / "openai-chat", "a.yaml", scenario("one", ["A9"]))
    write(root / "regressions", "r.yaml", scenario("two", COVERABLE[1:], OPENAI_CHAT_QUIRKS))
    write(root / "recordings", "x.yaml", scenario("Not-Read", ["A2"]))
    for name, other in DIALECTS.items():
        if name != "openai-chat":  # every other dialect's folder covers all it can
            rules = [rule for rule in RULES if rule not in other.not_certifiable]
            (root / name).mkdir()
            write(root / name, "all.yaml", scenario(f"all-{name}", rules, other.quirks))
    monkeypatch.chdir(tmp_path)
    for module in ("callstream.corpus.scenario", "callstream.corpus.linting"):
        monkeypatch.setattr(f"{module}.corpus_root", lambda: Path("scenarios"))
    assert main(["lint"]) == 2
    assert capsys.readouterr().out.splitlines() == [
        "scenarios/openai-chat/a.yaml:2: rules[0]: rule 'A9' is not in REQUIREMENTS.md",
        f"scenarios/openai-chat: rule {COVERABLE[0]} is covered by no scenario",
    ]


def test_naming_only_files_lints_them_without_coverage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Linting one file reports that file's problems, not the whole corpus's coverage gaps;
    --coverage asks for them anyway."""
    path = write(tmp_path, "a.yaml", scenario("one", ["A2"]))
    assert main(["lint", str(path)]) == 0
    assert capsys.readouterr().out == "1 scenario in 1 file, coverage not checked\n"
    assert main(["lint", "--coverage", str(path)]) == 2

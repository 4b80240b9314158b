"""What every ``callstream`` command shares: help, version, option names, completion, the
extras a command needs, and the user's own scenarios beside the built-in corpus."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from callstream.cli import main
from callstream.cli.completion import completion_script
from callstream.cli.parser import build_parser
from callstream.connect.connectables import load_implementation
from callstream.fuzz import fuzz
from callstream.reports import callstream_version, load_report

MUTANT = "py:tests.mutants.releases_when_text_parses:factory"
CUT = "oc-l-finish-length-mid-arguments"
"""A built-in scenario: one call cut by finish_reason length."""

USER_SCENARIO = textwrap.dedent(
    """\
    id: my-own-cut-call
    title: A call cut by the token limit is never ready (the implementer's own scenario)
    rules: [C3]
    tags: [lifecycle]
    kind: must
    tools: [get_weather]
    calls:
      - {name: get_weather, id: call_1, arguments: '{"city": "Par', split: [4, 9]}
    ending: {finish: length}
    """
)


def test_bare_command_prints_the_help_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    """``callstream`` alone lists the commands and the exit codes instead of an error."""
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "commands:" in out
    assert "run " in out
    assert "exit codes:" in out


def test_version_is_the_installed_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    """``--version`` prints the version pip installed."""
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.strip() == f"callstream {metadata.version('callstream')}"


def test_version_from_a_checkout_never_installed_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without an installed distribution ``--version`` says why the version is unknown; the
    reports, from the same function, just say "unknown"."""

    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out == "callstream unknown (not installed)\n"
    assert callstream_version() == "unknown"


@pytest.mark.parametrize("command", ["run", "fuzz", "certify", "matrix", "lint", "completion"])
def test_every_command_documents_the_exit_codes(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each command's ``--help`` ends with the exit codes, the same for all."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    assert "exit codes:" in out
    assert "130  interrupted" in out


def test_pytest_spelling_of_max_fail_is_accepted() -> None:
    """``--maxfail`` (pytest's spelling) and ``--max-fail`` set the same option."""
    parser = build_parser()
    assert parser.parse_args(["run", "--maxfail", "3"]).max_fail == 3
    assert parser.parse_args(["run", "--max-fail", "4"]).max_fail == 4


def test_fuzz_takes_jobs_like_run_and_keeps_workers() -> None:
    """``fuzz --jobs`` is the worker count, ``--workers`` an alias; run's default is one per
    CPU, fuzz's one."""
    parser = build_parser()
    assert parser.parse_args(["fuzz", "--jobs", "2"]).jobs == 2
    assert parser.parse_args(["fuzz", "--workers", "3"]).jobs == 3
    assert parser.parse_args(["fuzz"]).jobs == 1
    assert parser.parse_args(["run", "-j", "2"]).jobs == 2


def test_completion_script_completes_commands_and_options_in_bash() -> None:
    """The bash script, sourced in a real bash, completes ``callstream r`` to run, report and
    replay and ``callstream fuzz --se`` to --seed."""
    bash = shutil.which("bash")
    assert bash is not None, "bash is part of every machine this project runs on"
    script = completion_script(build_parser(), "bash")

    def complete(*words: str) -> list[str]:
        line = " ".join(("callstream", *words))
        probe = (
            f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words)}; _callstream; "
            'printf "%s\\n" "${COMPREPLY[@]}"'
        )
        done = subprocess.run([bash, "-c", probe], capture_output=True, text=True, check=True)
        return done.stdout.split()

    assert complete("r") == ["run", "report", "replay"]
    assert complete("fuzz", "--se") == ["--seed"]
    assert "--scenarios" in complete("run", "--s")
    assert complete("report", "m") == ["merge"]


def test_zsh_completion_goes_through_bashcompinit() -> None:
    """The zsh script loads zsh's bash compatibility before the same function."""
    script = completion_script(build_parser(), "zsh")
    assert script.startswith("autoload -U +X bashcompinit && bashcompinit\n")
    assert "complete -o filenames -F _callstream callstream" in script


def test_a_missing_extra_names_what_to_install() -> None:
    """Without Hypothesis, ``callstream fuzz`` exits 2 and says which extra brings it, not a
    traceback."""
    probe = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "from callstream.cli import main\n"
        "sys.exit(main(['fuzz', '--max-examples', '1']))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "callstream fuzz: this needs hypothesis, which is not installed: "
        "pip install 'callstream[fuzz]'"
    )


def test_an_implementations_own_missing_module_is_not_an_extra(tmp_path: Path) -> None:
    """An implementation that imports ``httpx`` where it is missing is its own problem: the
    message does not tell the user to install a callstream extra."""
    (tmp_path / "needs_httpx.py").write_text("import httpx\n\ndef factory(tools, limits): ...\n")
    probe = (
        f"import sys; sys.modules['httpx'] = None; sys.path.insert(0, {str(tmp_path)!r})\n"
        "from callstream.cli import main\n"
        f"sys.exit(main(['run', '--impl', 'py:needs_httpx:factory', '-k', {CUT!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode in (2, 3)
    assert "callstream[" not in done.stderr
    assert "httpx" in done.stderr


def test_own_scenarios_run_beside_the_built_in_corpus(tmp_path: Path) -> None:
    """``--scenarios FILE`` adds the user's scenario to the corpus: selected with ``-k`` next
    to a built-in one, both run and both are in the report."""
    mine = tmp_path / "mine.yaml"
    mine.write_text(USER_SCENARIO)
    out = tmp_path / "report"
    code = main(
        [
            "run",
            "--scenarios",
            str(mine),
            "-k",
            f"my-own-cut-call,{CUT}",
            "--jobs",
            "1",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    report = load_report(out / "report.jsonl")
    assert {result["scenario"] for result in report.results} == {
        "my-own-cut-call",
        CUT,
    }


def test_out_may_name_an_existing_empty_folder(tmp_path: Path) -> None:
    """A folder made beforehand (as CI does) takes the report."""
    out = tmp_path / "made-by-ci"
    out.mkdir()
    assert (
        main(["run", "-k", "oc-l-finish-length-mid-arguments", "--jobs", "1", "--out", str(out)])
        == 0
    )
    assert (out / "report.jsonl").is_file()


def test_the_same_seed_draws_the_same_search(tmp_path: Path) -> None:
    """``fuzz --seed`` makes a randomised search repeatable: two searches from seed 11 find the
    mutant after the same number of examples."""
    found_after = []
    for run in range(2):
        result = fuzz(
            load_implementation(MUTANT),
            profile="dev",
            max_examples=400,
            seed=11,
            shrink_time=2.0,
            database=str(tmp_path / "db"),
            save_regressions=None,
            out=tmp_path / f"report-{run}",
        )
        assert result.found is not None
        found_after.append(result.found_after)
    assert found_after[0] == found_after[1]
    assert not (tmp_path / "db").exists()

"""The CI an implementer copies: the example workflow (examples/ci/callstream.yml) and the
composite action it uses (.github/actions/run/action.yml) are valid YAML, pass the action only
inputs it has, keep their permissions small, and every callstream command they (and docs/ci.md)
run is one the CLI has, with options it takes: the workflow cannot drift from the CLI."""

from __future__ import annotations

import fnmatch
import io
import re
import shlex
from collections.abc import Iterator, Mapping
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml

from callstream.cli import main

ROOT = Path(__file__).parent.parent
WORKFLOW = ROOT / "examples" / "ci" / "callstream.yml"
ACTION = ROOT / ".github" / "actions" / "run" / "action.yml"
DOC = ROOT / "docs" / "ci.md"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
VARIABLE = re.compile(r"\$\{?(\w+)\}?")
OPERATORS = {"||", "&&", ";", "|"}


def load(path: Path) -> dict[Any, Any]:
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def uses_the_action(step: Mapping[str, Any]) -> bool:
    return bool(
        re.fullmatch(r"[\w.-]+/callstream/\.github/actions/run@[\w.-]+", step.get("uses", ""))
    )


def first_of_matrix(job: Mapping[str, Any]) -> dict[str, str]:
    """``matrix.X`` of the job's first matrix combination."""
    matrix = job.get("strategy", {}).get("matrix", {})
    return {f"matrix.{name}": str(values[0]) for name, values in matrix.items()}


def render(text: str, context: Mapping[str, str]) -> str:
    """``text`` with each ``${{ expression }}`` replaced: names of ``context`` by their value,
    anything else (``github.run_id``, a step's output) by a placeholder word."""
    return EXPRESSION.sub(lambda m: context.get(m[1], "placeholder"), text)


def commands(script: str, variables: Mapping[str, str]) -> Iterator[list[str]]:
    """Each ``callstream …`` command of a shell script, as words, with the environment's
    ``$VARIABLES`` expanded (a variable the script sets itself becomes a placeholder word)."""
    for line in script.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if not words or words[0] != "callstream":
            continue
        command: list[str] = []
        for word in words:
            if word in OPERATORS:
                break
            name = VARIABLE.fullmatch(word)
            command += shlex.split(variables.get(name[1], "x")) if name else [word]
        yield command


def action_commands(workflow: Mapping[str, Any]) -> Iterator[tuple[str, list[str]]]:
    """The callstream commands the action runs for each use of it in the workflow, with the
    inputs that use gives (the first matrix combination) and the defaults of the rest."""
    action = load(ACTION)
    for name, job in workflow["jobs"].items():
        context = {f"env.{k}": str(v) for k, v in workflow.get("env", {}).items()}
        context |= first_of_matrix(job)
        for step in filter(uses_the_action, job["steps"]):
            given = {k: render(str(v), context) for k, v in step.get("with", {}).items()}
            inputs = {k: str(spec.get("default", "")) for k, spec in action["inputs"].items()}
            inputs |= given
            scope = {f"inputs.{k}": v for k, v in inputs.items()}
            for part in action["runs"]["steps"]:
                if "run" not in part or not _runs(part.get("if"), inputs):
                    continue
                env = {k: render(str(v), scope) for k, v in part.get("env", {}).items()}
                for command in commands(part["run"], env):
                    yield f"{name}: {step.get('name', step['uses'])}", command


def _runs(condition: str | None, inputs: Mapping[str, str]) -> bool:
    """Whether a step of the action runs: the one condition it uses, ``inputs.X != ''``."""
    if condition is None:
        return True
    match = re.fullmatch(r"inputs\.([\w-]+) != ''", condition)
    assert match, f"the test reads only conditions like inputs.X != '', not {condition!r}"
    return inputs[match[1]] != ""


def workflow_commands(workflow: Mapping[str, Any]) -> Iterator[tuple[str, list[str]]]:
    """The callstream commands of the workflow's own ``run:`` steps."""
    for name, job in workflow["jobs"].items():
        context = first_of_matrix(job)
        env = {k: str(v) for k, v in workflow.get("env", {}).items()}
        for step in job["steps"]:
            if "run" in step:
                for command in commands(render(step["run"], context), env):
                    yield f"{name}: {step.get('name', 'run')}", command


def doc_commands() -> Iterator[tuple[str, list[str]]]:
    """The callstream commands of docs/ci.md's shell blocks."""
    text = DOC.read_text(encoding="utf-8")
    for block in re.findall(r"```(?:sh|bash|console)\n(.*?)```", text, re.S):
        script = "\n".join(line.removeprefix("$ ") for line in block.splitlines())
        for command in commands(script, {}):
            yield "docs/ci.md", command


def help_of(words: list[str]) -> str:
    """What ``callstream WORDS --help`` prints; it must exit 0, so the command exists and the
    values of the options before --help are valid."""
    with redirect_stdout(io.StringIO()) as out, pytest.raises(SystemExit) as exited:
        main([*words, "--help"])
    assert exited.value.code == 0, f"callstream {shlex.join(words)} --help"
    return out.getvalue()


ALL_COMMANDS = [
    *action_commands(load(WORKFLOW)),
    *workflow_commands(load(WORKFLOW)),
    *doc_commands(),
]


def test_the_workflow_and_the_action_run_the_commands_they_are_for() -> None:
    """The commands found are the shard run, the merge and the nightly fuzz (so the checks
    below check something)."""
    found = {tuple(words[1:3] if words[1] == "report" else words[1:2]) for _, words in ALL_COMMANDS}
    assert {("run",), ("report", "merge"), ("fuzz",)} <= found


@pytest.mark.parametrize(
    "words", [words for _, words in ALL_COMMANDS], ids=[where for where, _ in ALL_COMMANDS]
)
def test_every_callstream_command_is_one_the_cli_has(words: list[str]) -> None:
    """``callstream <command> --help`` exits 0 with the command's own arguments before it, and
    every option the command is given is one its help lists."""
    text = help_of(words[1:])
    for word in words[1:]:
        if word.startswith("-"):
            option = word.split("=")[0]
            assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text), option


def test_the_action_declares_every_input_its_steps_read_and_reads_every_input() -> None:
    """No step reads an input the action does not declare, and no input goes unused; each
    output names a step that exists."""
    action = load(ACTION)
    text = ACTION.read_text(encoding="utf-8")
    read = set(re.findall(r"inputs\.([\w-]+)", text))
    assert read == set(action["inputs"])
    ids = {step.get("id") for step in action["runs"]["steps"]}
    for output in action["outputs"].values():
        (step,) = re.findall(r"steps\.([\w-]+)\.outputs", output["value"])
        assert step in ids
    assert action["runs"]["using"] == "composite"
    assert all("shell" in step for step in action["runs"]["steps"] if "run" in step), (
        "a composite action's run steps must name their shell"
    )


def test_the_workflow_gives_the_action_only_inputs_it_has() -> None:
    """Every ``with:`` key of every use of the action is one of its inputs."""
    inputs = set(load(ACTION)["inputs"])
    workflow = load(WORKFLOW)
    uses = [
        step for job in workflow["jobs"].values() for step in job["steps"] if uses_the_action(step)
    ]
    assert len(uses) == 3
    for step in uses:
        assert set(step.get("with", {})) <= inputs


def test_permissions_are_read_only_but_where_the_junit_report_is_published() -> None:
    """The workflow reads the repository; only the merge job, which publishes the JUnit check,
    may write checks."""
    workflow = load(WORKFLOW)
    assert workflow["permissions"] == {"contents": "read"}
    writing = {
        name: job["permissions"]
        for name, job in workflow["jobs"].items()
        if "write" in job.get("permissions", {}).values()
    }
    assert writing == {"merge": {"contents": "read", "checks": "write"}}
    publishing = [
        step for step in workflow["jobs"]["merge"]["steps"] if "junit" in step.get("uses", "")
    ]
    assert publishing[0]["with"]["report_paths"] == "callstream-report/junit.xml"


def test_each_python_runs_three_shards_and_merges_exactly_them() -> None:
    """Python 3.11 to 3.13, shards 1 to 3 of 3; the merge job of each Python downloads exactly
    the artifacts that Python's shards upload."""
    workflow = load(WORKFLOW)
    assert set(workflow[True]) >= {"pull_request", "schedule"}  # YAML 1.1 reads "on" as True
    suite, merge = workflow["jobs"]["suite"], workflow["jobs"]["merge"]
    pythons = ["3.11", "3.12", "3.13"]
    assert suite["strategy"]["matrix"] == {"python": pythons, "shard": [1, 2, 3]}
    assert merge["strategy"]["matrix"] == {"python": pythons}
    assert merge["needs"] == "suite"
    (run,) = filter(uses_the_action, suite["steps"])
    assert run["with"]["shard"] == "${{ matrix.shard }}/3"
    (download,) = (s for s in merge["steps"] if s.get("uses", "").startswith("actions/download"))

    def uploaded(python: str) -> list[str]:
        artifact = render(run["with"]["artifact"], {"matrix.python": python})
        return [f"{artifact}-shard-{k}-of-3" for k in (1, 2, 3)]

    for python in pythons:
        pattern = render(download["with"]["pattern"], {"matrix.python": python})
        for other in pythons:
            matched = [fnmatch.fnmatch(name, pattern) for name in uploaded(other)]
            assert matched == [other == python] * 3, (python, other)


def test_the_nightly_fuzz_keeps_its_database_and_uploads_what_it_found() -> None:
    """The fuzz job runs on the schedule, restores and saves the example database it fuzzes
    with, lets the nightly profile write to it, and uploads scenarios/regressions/."""
    workflow = load(WORKFLOW)
    fuzz = workflow["jobs"]["fuzz"]
    assert "schedule" in fuzz["if"]
    ((_, command),) = [c for c in workflow_commands(workflow) if c[1][1] == "fuzz"]
    database = command[command.index("--db") + 1]
    assert {"--db-write", "nightly", "10m"} <= set(command)
    cached = [s for s in fuzz["steps"] if s.get("uses", "").startswith("actions/cache/")]
    assert [s["uses"].split("@")[0] for s in cached] == [
        "actions/cache/restore",
        "actions/cache/save",
    ]
    assert all(s["with"]["path"] == database for s in cached)
    assert cached[1]["if"] == "${{ !cancelled() }}"  # a night that finds a bug keeps it too
    (upload,) = (s for s in fuzz["steps"] if s.get("uses", "").startswith("actions/upload"))
    assert "scenarios/regressions/" in upload["with"]["path"].split()

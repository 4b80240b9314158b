"""Promoting shrunk finds to YAML scenarios: a written regression loads back into the scenario it
was written from, runs the same, keeps argument text byte for byte, and is never overwritten."""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from callstream.cli import main
from callstream.core.case import CaseResult, run_case
from callstream.core.oracle import expect
from callstream.core.rendering import render, render_events
from callstream.core.spec import (
    CallPlan,
    Ending,
    Expected,
    ExpectedCall,
    Noise,
    Scenario,
    Splitting,
    StreamSpec,
    Transport,
)
from callstream.corpus.regressions import regression_id, scenario_to_yaml, write_regression
from callstream.corpus.scenario import load_scenarios
from callstream.implementations import reference, reference_strict
from callstream.reference import Limits, Tool
from callstream.rules import QuirkId

LOOKUP = Tool(
    "fz_lookup-7",
    {
        "type": "object",
        "properties": {
            "q": {"type": "string", "minLength": 0, "description": "anything: \"'\\ é 😀"},
            "n": {"type": "integer", "minimum": 0, "maximum": 1.5e3},
            "tags": {"type": "array", "items": {"enum": ["a", None, True, 1.25]}},
        },
        "required": ["q"],
        "additionalProperties": False,
    },
)
"""A generated-looking tool: not in the catalogue, with parameters YAML must keep exactly."""
CLOCK = Tool("fz_clock", None)
"""A tool with no parameters."""

ARGS = '{"q": "Paris"}'
SAFE = (Splitting("whole"), Splitting("bytes"))
"""What the round-trip runs use when a scenario keeps the default splittings (pairs is long)."""


def call(
    arguments: str = ARGS,
    cuts: tuple[int, ...] = (3, 9),
    name: str | None = "fz_lookup-7",
    **knobs: Any,
) -> CallPlan:
    """A call to LOOKUP whose arguments are cut at ``cuts``."""
    bounds = [0, *cuts, len(arguments)]
    fragments = tuple(arguments[a:b] for a, b in itertools.pairwise(bounds))
    return CallPlan(name, arguments, fragments, **{"id": "call_1", **knobs})


def scenario(spec: StreamSpec, **fields: Any) -> Scenario:
    """A scenario of ``spec`` with the id it would get from the fuzzer."""
    return Scenario(
        id=regression_id(spec, "py:tests.mutants:any"),
        title=fields.pop("title", "a shrunk find"),
        rules=fields.pop("rules", ("A2",)),
        spec=spec,
        **fields,
    )


def literal(plan: StreamSpec, **changes: Any) -> StreamSpec:
    """``plan`` as literal events, with the oracle's expectation for it written out."""
    rendered = render(plan)
    events = tuple(
        event.data if event.event is None else {"event": event.event, "data": event.data}
        for event in render_events(plan)
    )
    expected = {profile: expect(plan, rendered, profile) for profile in ("lenient", "strict")}
    return dataclasses.replace(
        StreamSpec(plan.tools, transport=plan.transport, limits=plan.limits),
        literal_events=events,
        expected=expected,
        **changes,
    )


def sse(plan: StreamSpec, data: bytes, findings: frozenset[str] = frozenset()) -> StreamSpec:
    """``data`` as literal SSE bytes, expected to become what ``plan`` becomes, with
    ``findings`` recorded besides."""
    rendered = render(plan)
    expected = {}
    for profile in ("lenient", "strict"):
        planned = expect(plan, rendered, profile)
        expected[profile] = Expected(planned.calls, planned.findings | findings)
    return StreamSpec(plan.tools, literal_sse=data, expected=expected)


PLAN = StreamSpec((LOOKUP, CLOCK), calls=(call(),))
SET_DATE = Tool.custom(
    "set_date",
    {"type": "grammar", "grammar": {"syntax": "regex", "definition": r"\d{4}-\d\d-\d\d"}},
)
RUN_SQL = Tool.custom(
    "run_sql", {"type": "grammar", "grammar": {"syntax": "lark", "definition": 'start: "SELECT"'}}
)
CR_BOM = dataclasses.replace(PLAN, transport=Transport(newline="cr", bom=True))
ERRORS: tuple[Literal["nested", "flat", "openrouter", "event"], ...] = (
    "nested",
    "flat",
    "openrouter",
    "event",
)

SCENARIOS: dict[str, Scenario] = {
    "a plan with the default splittings": scenario(PLAN),
    "every id policy": scenario(
        StreamSpec(
            (LOOKUP,),
            calls=(
                *(
                    call(id=f"call_{policy}", id_policy=policy, index=n)
                    for n, policy in enumerate(("once", "every", "changing", "omit", "empty"))
                ),
                call(id="c7", id_policy="numeric", cuts=(5,)),
            ),
        )
    ),
    "every name policy, type, header arguments": scenario(
        StreamSpec(
            (LOOKUP,),
            calls=(
                call(name_policy="every", type_every=True),
                call(id="call_2", name_policy="late", header_arguments=True),
                call(id="call_3", name_policy="omit"),
                call(id="call_4", name=None),
            ),
        )
    ),
    "an index, no index and provider extras": scenario(
        StreamSpec(
            (LOOKUP,),
            calls=(
                call(index=0, extra_content={"google": {"thought_signature": "c2ln\n"}}),
                call(id="call_2", index=2),
            ),
        ),
        quirks=(QuirkId("openai-chat/C14"), QuirkId("openai-chat/C28")),
    ),
    "an omitted index": scenario(StreamSpec((LOOKUP,), calls=(call(omit_index=True),))),
    "arguments as a value": scenario(
        StreamSpec((LOOKUP,), calls=(call('{"q": "x", "n": 3}', cuts=(), arguments_as_value=True),))
    ),
    "cumulative snapshots": scenario(StreamSpec((LOOKUP,), calls=(call(snapshots=True),))),
    "the legacy function_call": scenario(StreamSpec((LOOKUP,), calls=(call(legacy=True),))),
    "two choices interleaved": scenario(
        StreamSpec(
            (LOOKUP, CLOCK),
            calls=(call(), call(id="call_2", choice=1), call("", (), "fz_clock", id="c3")),
            choices=2,
            schedule="interleaved",
        )
    ),
    "calls whole": scenario(
        StreamSpec((LOOKUP,), calls=(call(), call(id="call_2")), schedule="whole")
    ),
    "calls together": scenario(
        StreamSpec((LOOKUP,), calls=(call(), call(id="call_2")), schedule="together")
    ),
    "all the noise": scenario(
        StreamSpec(
            (LOOKUP,),
            calls=(call(),),
            noise=Noise(
                role=False,
                role_every=True,
                content="thinking…\n<tool_call>",
                usage=True,
                usage_every=True,
                empty_first=True,
                keepalive=2,
            ),
        )
    ),
    "no role and plain usage": scenario(
        StreamSpec((LOOKUP,), calls=(call(),), noise=Noise(role=False, usage=True))
    ),
    "truncated with the finish on the last delta": scenario(
        StreamSpec(
            (LOOKUP,), calls=(call(),), ending=Ending(finish="length", finish_with_last=True)
        )
    ),
    "chunks after the finish": scenario(
        StreamSpec(
            (LOOKUP,),
            calls=(call(),),
            ending=Ending(after_finish=("usage_chunk", "duplicate_finish", "late_delta")),
        )
    ),
    "no finish and no done": scenario(
        StreamSpec((LOOKUP,), calls=(call(),), ending=Ending(finish=None, done=False))
    ),
    "a cut stream": scenario(
        StreamSpec((LOOKUP,), calls=(call(),), ending=Ending(done=False, cut=True))
    ),
    **{
        f"an in-band error ({shape})": scenario(
            StreamSpec((LOOKUP,), calls=(call(),), ending=Ending(error=shape))
        )
        for shape in ERRORS
    },
    "CRLF, no space, BOM, event lines, multi-line data": scenario(
        StreamSpec(
            (LOOKUP,),
            calls=(call(),),
            transport=Transport(
                newline="crlf", space=False, bom=True, event_lines=True, multiline=True
            ),
        )
    ),
    "lone CR line endings": scenario(
        StreamSpec((LOOKUP,), calls=(call(),), transport=Transport(newline="cr"))
    ),
    "mixed line endings and a BOM": scenario(
        StreamSpec((LOOKUP,), calls=(call(),), transport=Transport(newline="mixed", bom=True))
    ),
    "every limit": scenario(
        StreamSpec(
            (LOOKUP,),
            calls=(call(), call('{"q": "longer than eight"}', id="call_2")),
            limits=Limits(
                max_argument_bytes=20,
                max_calls=5,
                max_choices=2,
                max_line_length=4000,
                max_event_size=5000,
            ),
        )
    ),
    "every splitting kind": scenario(
        PLAN,
        splittings=(
            Splitting("whole"),
            Splitting("bytes"),
            Splitting("pairs"),
            *(Splitting("random", seed=seed) for seed in (1, 2, 3)),
            Splitting("offsets", offsets=(40, 7, 200)),
            Splitting("random", seed=1),
        ),
    ),
    "an expectation override, metadata and one profile": scenario(
        StreamSpec(
            (LOOKUP,),
            calls=(call('{"q": "\\ud83d"}', cuts=(8,)),),
            expected={
                "lenient": Expected(
                    (
                        ExpectedCall(
                            "ready",
                            id="call_1",
                            name="fz_lookup-7",
                            arguments_text='{"q": "\\ud83d"}',
                            arguments={"q": "\ud83d"},
                            check_arguments=True,
                        ),
                    ),
                    frozenset(),
                )
            },
        ),
        title='lone surrogate escape "\\ud83d" is kept',
        rules=("A2", "V1"),
        kind="impl-defined",
        profiles=("lenient",),
        tags=("json", "delta"),
        quirks=(QuirkId("openai-chat/C8"),),
        provenance=("https://github.com/example/issue/1", "callstream fuzz --impl py:m:f"),
    ),
    "custom tools and calls, one naming a tool of the other kind": scenario(
        StreamSpec(
            (LOOKUP, SET_DATE, RUN_SQL),
            calls=(
                dataclasses.replace(call("2026-12-02", cuts=(4,), name="set_date"), kind="custom"),
                dataclasses.replace(call("tomorrow", cuts=(), name="set_date"), id="call_2"),
                dataclasses.replace(
                    call("SELECT * FROM t;", cuts=(7,), name="run_sql"), kind="custom", id="call_3"
                ),
            ),
        )
    ),
    "literal events": scenario(literal(dataclasses.replace(PLAN, noise=Noise(keepalive=0)))),
    "literal events over CRLF": scenario(
        literal(dataclasses.replace(PLAN, transport=Transport(newline="crlf", event_lines=True)))
    ),
    "an in-band error event as a literal": scenario(
        literal(dataclasses.replace(PLAN, ending=Ending(error="event")))
    ),
    "literal SSE text with CR and a BOM": scenario(sse(CR_BOM, render(CR_BOM).data)),
    "literal SSE bytes that are not UTF-8": scenario(
        # An invalid byte in a comment line: decoded as U+FFFD, ignored, and recorded (T11).
        sse(
            PLAN,
            b": \xff\xfe not UTF-8\n\n" + render(PLAN).data,
            frozenset({QuirkId("openai-chat/T11")}),
        )
    ),
}


def _factory(profile: str) -> Any:
    return reference_strict if profile == "strict" else reference


def _outcomes(scenario: Scenario) -> list[tuple[str, str, str, tuple[Any, ...]]]:
    results: list[CaseResult] = [
        run_case(scenario, profile, splitting, _factory(profile))
        for profile in scenario.profiles
        for splitting in scenario.splittings or SAFE
    ]
    return [(r.profile, r.splitting, r.outcome, r.failures) for r in results]


def _loaded(path: Path) -> Scenario:
    loaded = load_scenarios([path])
    assert [str(error) for error in loaded.errors] == []
    (found,) = loaded.scenarios
    return found


def _same(scenario: Scenario) -> Scenario:
    """``scenario`` as a loaded file gives it back: no source, provenance links only."""
    links = tuple(entry for entry in scenario.provenance if entry.startswith("http"))
    return dataclasses.replace(scenario, provenance=links, source="")


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_written_regression_loads_back_equal_and_runs_the_same(name: str, tmp_path: Path) -> None:
    """Every knob of the spec and every field of the scenario survive the file, and the reference
    passes the written scenario exactly as it passes the original."""
    original = SCENARIOS[name]
    path = write_regression(original, tmp_path)
    found = _loaded(path)
    assert found.spec == original.spec
    assert dataclasses.replace(found, source="") == _same(original)
    outcomes = _outcomes(original)
    assert {outcome for _, _, outcome, _ in outcomes} == {"passed"}
    assert _outcomes(found) == outcomes


ARGUMENT_TEXTS = {
    "quotes and backslashes": '{"q": "she said \\"hi\\" \\\\ C:\\\\dir\\\\"}',
    "JSON unicode escapes": '{"q": "caf\\u00e9 \\u00E9\\u0000"}',
    "lone surrogate escapes": '{"q": "\\ud800 \\udfff \\ud83d\\ude00"}',
    "raw emoji and accents": '{"q": "😀 é 中文 \u00a0"}',
    "control characters": '{"q": "a\tb\x00c\x1b\x7f"}',
    "CR, LF and Unicode line breaks": '{"q": "a\r\nb\rc\n\x85\u2028\u2029"}',
    "a BOM in the middle": '{"q": "\ufeffx"}',
    "YAML-looking text": "- &a *a !!str {q: yes} # no\n  ? : | >",
    "spaces at the edges": '  {"q": " "}  \n ',
}


@pytest.mark.parametrize("name", ARGUMENT_TEXTS)
def test_argument_text_survives_byte_for_byte(name: str, tmp_path: Path) -> None:
    """Argument text and each fragment come back with the very same UTF-8 bytes, however they
    mix quotes, backslashes, JSON escapes, emoji, control characters and line breaks."""
    text = ARGUMENT_TEXTS[name]
    plan = call(text, cuts=(1, len(text) // 2, len(text) - 1))
    spec = StreamSpec((LOOKUP,), calls=(plan,))
    found = _loaded(write_regression(scenario(spec), tmp_path))
    (back,) = found.spec.calls
    assert back.arguments.encode("utf-8") == text.encode("utf-8")
    assert [f.encode("utf-8") for f in back.fragments] == [
        f.encode("utf-8") for f in plan.fragments
    ]


@given(st.text(st.characters(exclude_categories=["Cs"])), st.text())
def test_any_text_is_written_as_yaml_that_reads_back_the_same(text: str, parsed: str) -> None:
    """Any argument text (no lone surrogate characters, which no stream can carry) and any
    expected value (lone surrogates included) are written as YAML that reads back the same."""
    spec = StreamSpec(
        (LOOKUP,),
        calls=(call(text, cuts=()),),
        expected={
            "lenient": Expected((ExpectedCall("ready", arguments=parsed, check_arguments=True),))
        },
    )
    data = yaml.safe_load(scenario_to_yaml(scenario(spec)))["scenarios"][0]
    assert data["calls"][0]["arguments"] == text
    assert data["calls"][0]["fragments"] == list(spec.calls[0].fragments)
    assert data["expect"]["lenient"]["calls"][0]["arguments"] == parsed


def test_a_lone_surrogate_character_on_the_wire_is_refused_by_name() -> None:
    """A lone surrogate character in argument text cannot be in a UTF-8 file nor come from a
    YAML escape the loader accepts: scenario_to_yaml says which field holds it."""
    spec = StreamSpec((LOOKUP,), calls=(call('{"q": "\ud800"}', cuts=()),))
    with pytest.raises(ValueError, match=r"calls\[0\]\.arguments: contains a lone surrogate"):
        scenario_to_yaml(scenario(spec))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"splittings": (Splitting("random", seed=7),)}, r"splittings\[0\]: random seed 7"),
        (
            {"spec": StreamSpec((Tool("no spaces allowed", None),), calls=())},
            r"tools\[0\]\.name: 'no spaces allowed': a tool name is",
        ),
        (
            {
                "spec": dataclasses.replace(
                    SCENARIOS["literal events"].spec, noise=Noise(keepalive=1)
                )
            },
            r"`events` is the whole stream",
        ),
        (
            {"spec": StreamSpec((LOOKUP,), calls=(CallPlan("f", "ab", ("a",)),))},
            r"calls\[0\]\.fragments: they do not concatenate",
        ),
        (
            {
                "spec": dataclasses.replace(
                    PLAN, expected={"lenient": Expected((ExpectedCall("ready", arguments={}),))}
                )
            },
            r"expect\.lenient\.calls\[0\]\.arguments: given but not checked",
        ),
    ],
)
def test_what_the_format_cannot_hold_is_refused(change: dict[str, Any], message: str) -> None:
    """A scenario the YAML format cannot express exactly raises ValueError naming the field,
    rather than being written approximately."""
    with pytest.raises(ValueError, match=message):
        scenario_to_yaml(dataclasses.replace(scenario(PLAN), **change))


def test_the_header_says_how_it_was_found_and_how_to_reproduce_it(tmp_path: Path) -> None:
    """The comment header names the fuzz command that found it and the ``callstream run``
    command that reproduces it; non-link provenance goes there, links stay in provenance."""
    found_by = "callstream fuzz --impl py:tests.mutants:m --profile dev, seed 51966"
    original = scenario(PLAN, provenance=(found_by, "https://example.org/bug/1"))
    path = write_regression(original, tmp_path, implementation="py:tests.mutants:m")
    header = [line for line in path.read_text("utf-8").splitlines() if line.startswith("#")]
    assert f"# Found by: {found_by}" in header
    assert f"# Reproduce: callstream run {path} --impl py:tests.mutants:m" in header
    assert _loaded(path).provenance == ("https://example.org/bug/1",)


def test_writing_the_same_regression_twice_returns_the_same_file(tmp_path: Path) -> None:
    """write_regression is idempotent: the second write finds the identical file and leaves it."""
    first = write_regression(SCENARIOS["all the noise"], tmp_path / "new" / "folder")
    written = first.read_bytes()
    assert write_regression(SCENARIOS["all the noise"], tmp_path / "new" / "folder") == first
    assert first.read_bytes() == written
    assert first.name == f"{SCENARIOS['all the noise'].id}.yaml"


def test_a_regression_a_person_retitled_is_kept_not_rewritten(tmp_path: Path) -> None:
    """When the file holds the same stream under an edited title, finding it again returns the
    file as the person left it."""
    path = write_regression(SCENARIOS["a cut stream"], tmp_path)
    edited = path.read_text("utf-8").replace("title: a shrunk find", "title: cut after finish")
    path.write_text(edited, encoding="utf-8")
    assert write_regression(SCENARIOS["a cut stream"], tmp_path) == path
    assert path.read_text("utf-8") == edited


def test_a_different_file_under_the_same_id_is_never_overwritten(tmp_path: Path) -> None:
    """An id is never reused: a file of that name holding another stream raises FileExistsError
    and is left untouched."""
    original = SCENARIOS["a plan with the default splittings"]
    other = dataclasses.replace(SCENARIOS["calls whole"], id=original.id)
    path = write_regression(other, tmp_path)
    before = path.read_bytes()
    with pytest.raises(FileExistsError, match="never reused"):
        write_regression(original, tmp_path)
    assert path.read_bytes() == before


def test_a_scenario_the_loader_refuses_is_not_written(tmp_path: Path) -> None:
    """A plan the oracle cannot predict is refused with the loader's message and no file."""
    spec = StreamSpec((LOOKUP,), calls=(call(), call(id="c2", index=0)), schedule="interleaved")
    with pytest.raises(ValueError, match="cannot be interleaved"):
        write_regression(scenario(spec), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_the_regression_id_is_stable_and_depends_on_the_stream_and_implementation() -> None:
    """The same find always gets the same id, in any process (pinned, so a change to the hashing
    is noticed); a different stream or implementation gets another."""
    tiny = StreamSpec((Tool("f", None),), calls=(CallPlan("f", "{}", ("{}",), id="c"),))
    assert regression_id(tiny, "py:m:f") == "fuzz-2119782e"
    same = StreamSpec((LOOKUP, CLOCK), calls=(call(),))
    assert regression_id(same, "py:m:f") == regression_id(PLAN, "py:m:f")
    assert re.fullmatch(r"fuzz-[0-9a-f]{8}", regression_id(PLAN, "py:m:g"))
    assert regression_id(PLAN, "py:m:g") != regression_id(PLAN, "py:m:f")
    moved = StreamSpec((LOOKUP, CLOCK), calls=(call(cuts=(3, 10)),))
    assert regression_id(moved, "py:m:f") != regression_id(PLAN, "py:m:f")


@pytest.mark.parametrize("name", ["every splitting kind", "literal SSE bytes that are not UTF-8"])
def test_the_written_file_passes_lint_and_run(name: str, tmp_path: Path) -> None:
    """``callstream lint <file>`` finds nothing and ``callstream run <file>`` on the reference
    exits 0."""
    path = write_regression(SCENARIOS[name], tmp_path)
    assert main(["lint", str(path)]) == 0
    assert main(["run", str(path), "--jobs", "1", "--out", str(tmp_path / "report")]) == 0

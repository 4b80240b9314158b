"""Loading YAML scenarios: a valid file becomes the StreamSpec it describes, and every kind of
mistake is reported as ``path:line: what is wrong``, without hiding the others."""

from __future__ import annotations

import base64
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from callstream.core.case import run_case, splittings_of
from callstream.core.spec import CallPlan, Ending, ExpectedCall, Noise, Splitting, Transport
from callstream.corpus.scenario import default_corpus, load_scenarios, scenario_schema
from callstream.reference import Assembler, Limits, Tool

HEAD = "id: s1\ntitle: a scenario\nrules: [A2]\ntools: [get_weather]\n"
"""Lines 1-4 of a scenario; what a test adds starts on line 5."""
CALL = 'calls:\n  - name: get_weather\n    id: call_1\n    arguments: \'{"city": "Paris"}\'\n'
"""Lines 5-8 with HEAD: one call to get_weather."""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def reference(profile: str) -> Any:
    def factory(tools: list[Tool], limits: Limits) -> Assembler:
        return Assembler(tools, limits=limits, profile=profile)  # type: ignore[arg-type]

    return factory


def test_a_plan_loads_into_the_stream_spec_it_describes(tmp_path: Path) -> None:
    """Every field of the YAML lands in the matching field of the spec and the scenario."""
    path = write(
        tmp_path,
        "plan.yaml",
        """\
# a comment before the scenario
id: oc-escape-split-inside-unicode
title: A split inside \\uXXXX keeps the escape intact
rules: [A2, T1]
quirks: [openai-chat/C9]
tags: [json]
provenance: [https://github.com/vercel/ai/pull/13137]
kind: must
splittings: [whole, pairs, {random: 3}, {offsets: [10, 25]}]
tools: [get_weather, {name: my_tool, parameters: {type: object}}]
limits: {max_argument_bytes: 64, max_calls: 4}
choices: 2
schedule: interleaved
calls:
  - name: get_weather
    id: call_1
    arguments: '{"city": "Caf\\u00e9"}'
    split: [3, 15]
    header_arguments: true
  - name: my_tool
    id: null
    arguments: '{}'
    choice: 1
    index: 1
    id_policy: every
    extra_content: {google: {thought_signature: abc}}
noise: {content: thinking, usage: true, keepalive: 1}
ending: {finish: tool_calls, after_finish: [duplicate_finish]}
transport: {newline: crlf, space: false}
""",
    )
    result = load_scenarios([path])
    assert result.errors == ()
    (scenario,) = result.scenarios
    spec = scenario.spec
    assert (scenario.id, scenario.rules, scenario.quirks, scenario.tags) == (
        "oc-escape-split-inside-unicode",
        ("A2", "T1"),
        ("openai-chat/C9",),
        ("json",),
    )
    assert scenario.title == "A split inside \\uXXXX keeps the escape intact"
    assert scenario.provenance == ("https://github.com/vercel/ai/pull/13137",)
    assert (scenario.kind, scenario.profiles) == ("must", ("lenient", "strict"))
    assert scenario.source == f"{path}:2"
    assert scenario.splittings == (
        Splitting("whole"),
        Splitting("pairs"),
        Splitting("random", seed=1),
        Splitting("random", seed=2),
        Splitting("random", seed=3),
        Splitting("offsets", offsets=(10, 25)),
    )
    assert [tool.name for tool in spec.tools] == ["get_weather", "my_tool"]
    assert spec.tools[0].parameters is not None
    assert spec.tools[0].parameters["required"] == ["city"]
    assert spec.tools[1] == Tool("my_tool", {"type": "object"})
    assert spec.limits == Limits(max_argument_bytes=64, max_calls=4)
    assert (spec.choices, spec.schedule) == (2, "interleaved")
    assert spec.calls[0] == CallPlan(
        name="get_weather",
        arguments='{"city": "Caf\\u00e9"}',
        fragments=('{"c', 'ity": "Caf\\u', '00e9"}'),
        id="call_1",
        header_arguments=True,
    )
    assert spec.calls[1] == CallPlan(
        name="my_tool",
        arguments="{}",
        fragments=("{}",),
        choice=1,
        index=1,
        id_policy="every",
        extra_content={"google": {"thought_signature": "abc"}},
    )
    assert spec.noise == Noise(content="thinking", usage=True, keepalive=1)
    assert spec.ending == Ending(after_finish=("duplicate_finish",))
    assert spec.transport == Transport(newline="crlf", space=False)
    assert (spec.literal, spec.expected) == (False, None)


def test_a_loaded_plan_passes_on_the_reference_under_its_splittings(tmp_path: Path) -> None:
    """Render, oracle and run_case agree with the reference for a loaded plan, under both
    profiles and each of its splittings: the loader builds what the pipeline expects."""
    path = write(
        tmp_path,
        "two-calls.yaml",
        """\
id: oc-two-calls
title: Two calls, the second cut into three-character fragments
rules: [A2, A5, T1]
splittings: [whole, bytes, {random: 5}]
tools: [get_weather, search]
calls:
  - name: get_weather
    id: call_1
    arguments: '{"city": "Z\\u00fcrich", "units": "c"}'
    split: [5, 20]
  - name: search
    id: call_2
    arguments: '{"query": "a \\"quoted\\" word"}'
    chunk: 3
noise: {usage: true}
""",
    )
    (scenario,) = load_scenarios([path]).scenarios
    assert len(splittings_of(scenario)) == 7
    for profile in scenario.profiles:
        for splitting in splittings_of(scenario):
            result = run_case(scenario, profile, splitting, reference(profile))
            assert result.outcome == "passed", (profile, splitting.label, result.failures)


def test_arguments_are_cut_by_fragments_chunk_or_not_at_all(tmp_path: Path) -> None:
    """``fragments`` are taken as given, ``chunk: N`` cuts every N characters, no cut sends one
    fragment, and empty arguments with no cut send no fragment at all."""
    calls = [
        ("fragments: ['', '{\"city\"', ': \"Oslo\"}']", ("", '{"city"', ': "Oslo"}')),
        ("chunk: 7", ('{"city"', ': "Oslo', '"}')),
        ("", ('{"city": "Oslo"}',)),
    ]
    text = "scenarios:\n"
    for n, (cut, _) in enumerate(calls):
        text += (
            f"  - {{id: s{n}, title: t, rules: [A2], tools: [get_weather], calls: "
            f'[{{name: get_weather, id: c, arguments: \'{{"city": "Oslo"}}\', {cut}}}]}}\n'
        )
    text += "  - {id: empty, title: t, rules: [A4], tools: [get_time], "
    text += "calls: [{name: get_time, id: c, arguments: ''}]}\n"
    result = load_scenarios([write(tmp_path, "cuts.yaml", text)])
    assert result.errors == ()
    got = [scenario.spec.calls[0].fragments for scenario in result.scenarios]
    assert got == [fragments for _, fragments in calls] + [()]


def test_files_load_in_path_order_and_scenarios_in_file_order(tmp_path: Path) -> None:
    """Scenarios come back sorted by file path, then in the order each file lists them,
    whatever order the paths were given in; a folder stands for the files under it."""
    scenario = "  - {{id: {}, title: t, rules: [A2], tools: [get_time], calls: []}}\n"
    write(tmp_path, "b.yaml", "scenarios:\n" + scenario.format("b-2") + scenario.format("b-1"))
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "c.yml", "scenarios:\n" + scenario.format("c-1"))
    a = write(tmp_path, "a.yaml", "scenarios:\n" + scenario.format("a-1"))
    result = load_scenarios([tmp_path / "sub", tmp_path / "b.yaml", a])
    assert [s.id for s in result.scenarios] == ["a-1", "b-2", "b-1", "c-1"]
    assert result.files == (a, tmp_path / "b.yaml", tmp_path / "sub" / "c.yml")
    assert load_scenarios([tmp_path]).scenarios == result.scenarios


LITERALS = """\
scenarios:
  - id: literal-events
    title: Literal events with the expectation written out
    rules: [T4]
    profiles: [lenient]
    tools: [get_time]
    events:
      - &chunk
        {id: chatcmpl-1, object: chat.completion.chunk, created: 1, model: m,
         choices: [{index: 0, delta: {tool_calls: [{index: 0, id: call_1, type: function,
           function: {name: get_time, arguments: '{}'}}]}, finish_reason: null}]}
      - {<<: *chunk, choices: [{index: 0, delta: {}, finish_reason: tool_calls}]}
      - '[DONE]'
    expect:
      lenient:
        calls:
          - {status: ready, id: call_1, name: get_time, arguments_text: '{}', arguments: {}}
        findings: []
  - id: literal-sse
    title: Literal SSE text
    rules: [T2]
    tools: [get_time]
    sse: "data: [DONE]\\r\\n\\r\\n"
    expect:
      lenient: {calls: []}
      strict: {calls: [], findings: [openai-chat/C24]}
  - id: literal-bytes
    title: Literal bytes that are not UTF-8
    rules: [T1]
    profiles: [strict]
    tools: []
    sse_base64: {encoded}
    expect:
      strict:
        calls:
          - {status: rejected, reason: interrupted, index: 0}
"""


def test_literal_streams_load_with_their_written_expectation(tmp_path: Path) -> None:
    """events, sse and sse_base64 become the spec's literal stream, and ``expect`` becomes
    Expected per profile (arguments compared only when given); the events one passes on the
    reference."""
    raw = b"data: \xff\xfe\n\n"
    text = LITERALS.replace("{encoded}", base64.b64encode(raw).decode())
    result = load_scenarios([write(tmp_path, "literal.yaml", text)])
    assert result.errors == ()
    events, sse, data = result.scenarios
    assert events.spec.literal_events is not None
    assert events.spec.literal_events[1]["model"] == "m"
    assert events.spec.literal_events[2] == "[DONE]"
    assert events.spec.expected is not None
    (call,) = events.spec.expected["lenient"].calls
    assert call == ExpectedCall(
        "ready",
        id="call_1",
        name="get_time",
        arguments_text="{}",
        arguments={},
        check_arguments=True,
    )
    assert sse.spec.literal_sse == b"data: [DONE]\r\n\r\n"
    assert sse.spec.expected is not None
    assert sse.spec.expected["strict"].findings == frozenset({"openai-chat/C24"})
    assert data.spec.literal_sse == raw
    assert data.spec.expected is not None
    assert data.spec.expected["strict"].calls[0].check_arguments is False
    outcome = run_case(events, "lenient", Splitting("bytes"), reference("lenient"))
    assert outcome.outcome == "passed", outcome.failures


# (name, text after line 4 of HEAD or a whole file, line, what the message says)
MISTAKES: list[tuple[str, str, int, str]] = [
    ("yaml syntax", HEAD + "calls: [\n  {name: x\n", 7, "YAML: "),
    ("duplicate key", HEAD + CALL + "title: again\n", 9, "duplicate key 'title' (first at line 2)"),
    ("empty file", "# nothing here\n", 1, "the file is empty"),
    ("control character", HEAD + "\x00\n", 5, "YAML: the character U+0000 is not allowed"),
    (
        "a tab between tokens (libyaml would take it for a space)",
        HEAD + CALL + "kind:\tmust\n",
        9,
        "YAML: found character '\\t' that cannot start any token",
    ),
    (
        "recursive alias",
        HEAD + "calls: &calls [*calls]\n",
        5,
        "calls[0]: an alias refers to a node that contains it",
    ),
    ("missing key", "id: s1\nrules: [A2]\ntools: []\n" + CALL, 1, "'title' is a required"),
    (
        "wrong type",
        HEAD + CALL + "    split: '3'\n",
        9,
        "calls[0].split: expected a list, not a string",
    ),
    ("unknown key", HEAD + CALL + "nosie: {}\n", 9, "unknown key 'nosie' (did you mean 'noise'?)"),
    ("bad enum", HEAD + CALL + "kind: should\n", 9, "kind: 'should' is not one of"),
    ("bad id", "id: Bad_Id\n" + HEAD[6:] + CALL, 1, "id: 'Bad_Id': an id is lower case"),
    ("no stream", HEAD, 1, "a scenario needs its stream: calls (a plan), events, sse"),
    ("literal without expect", HEAD + "sse: 'data: [DONE]\n\n'\n", 1, "needs `expect`"),
    (
        "literal missing a profile",
        HEAD + "sse: 'x'\nexpect:\n  lenient: {calls: []}\n",
        6,
        "expect: a literal stream needs its expectation under each of its profiles: strict",
    ),
    (
        "expectation for a profile not run",
        HEAD + "profiles: [lenient]\n" + CALL + "expect:\n  strict: {calls: []}\n",
        11,
        "expect.strict: the scenario does not run under strict",
    ),
    ("plan and literal", HEAD + CALL + "events: ['[DONE]']\n", 1, "`events` is the whole stream"),
    (
        "route opt-ins under the strict profile",
        HEAD + "opt_ins: [snapshots]\n" + CALL + "expect:\n  lenient: {calls: []}\n",
        5,
        "opt_ins: a scenario with route opt-ins runs under the lenient profile only (D75)",
    ),
    (
        "route opt-ins the oracle does not predict, without their expectation",
        HEAD + "opt_ins: [repair_json]\nprofiles: [lenient]\n" + CALL,
        1,
        "the oracle cannot predict this plan (lenient): openai-chat: the oracle predicts no "
        "route that opts in (repair_json): write the expectation out (D76)",
    ),
    (
        "an unknown route opt-in",
        HEAD + "opt_ins: [repair]\n" + CALL,
        5,
        "opt_ins[0]: 'repair' is not one of",
    ),
    (
        "two ways to cut",
        HEAD + CALL + "    split: [3]\n    chunk: 2\n",
        6,
        "calls[0]: give one of split, fragments and chunk",
    ),
    (
        "unknown tool",
        "id: s1\ntitle: t\nrules: [A2]\ntools:\n  - get_weather\n  - get_wether\n" + CALL,
        6,
        "tools[1]: unknown tool 'get_wether'; the catalogue has apply_patch, create_event",
    ),
    (
        "fragments that do not concatenate",
        HEAD + CALL + "    fragments: ['{\"city\": ', '\"Pari\"}']\n",
        9,
        "calls[0].fragments: the fragments do not concatenate to the arguments: from character "
        "14 they give '\"}', the arguments 's\"}'",
    ),
    (
        "split out of range",
        HEAD + CALL + "    split:\n      - 3\n      - 40\n",
        11,
        "calls[0].split[1]: offset 40 is out of range: the arguments are 17 characters long",
    ),
    (
        "split not increasing",
        HEAD + CALL + "    split: [9, 3]\n",
        9,
        "calls[0].split[1]: offsets must increase: 3 follows 9",
    ),
    (
        "oracle cannot predict",
        HEAD + CALL + "ending: {finish: null, after_finish: [late_delta]}\n",
        1,
        "the oracle cannot predict this plan (lenient, strict): ending.after_finish needs a "
        "finish reason",
    ),
    (
        "unknown rule",
        "id: s1\ntitle: t\nrules:\n  - A2\n  - A9\ntools: []\ncalls: []\n",
        5,
        "rules[1]: rule 'A9' is not in REQUIREMENTS.md",
    ),
    (
        "unknown quirk",
        HEAD + "quirks: [openai-chat/C99]\n" + CALL,
        5,
        "quirks[0]: 'openai-chat/C99' is not a quirk of openai-chat",
    ),
    (
        "a quirk id not qualified by its dialect",
        HEAD + "quirks: [C9]\n" + CALL,
        5,
        "quirks[0]: 'C9': a quirk id is qualified by its dialect, such as openai-chat/C9 (a "
        "bare C9 is a rule id)",
    ),
    (
        "arguments as value that are not JSON",
        HEAD + "calls:\n  - name: get_weather\n    id: c\n    arguments: '{city'\n"
        "    arguments_as_value: true\n",
        8,
        "calls[0].arguments: arguments_as_value needs JSON",
    ),
    (
        "lone surrogate",
        HEAD + "calls:\n  - name: get_weather\n    id: c\n"
        '    arguments: "{\\"city\\": \\"\\ud83d\\"}"\n',
        8,
        "calls[0].arguments: contains a lone surrogate: a YAML double-quoted string turns",
    ),
    (
        "splitting offset past the end",
        HEAD + "splittings: [{offsets: [5, 100000]}]\n" + CALL,
        5,
        "splittings[0].offsets[1]: offset 100000 is past the end of the stream",
    ),
    (
        "choice out of range",
        HEAD + CALL + "    choice: 1\n",
        9,
        "calls[0].choice: choice 1 is out of range: the stream has 1 choice(s)",
    ),
    (
        "invalid inline tool schema",
        "id: s1\ntitle: t\nrules: [A2]\ntools:\n  - name: t\n    parameters: {type: 5}\n"
        "calls: []\n",
        6,
        "tools[0].parameters: tool 't': invalid JSON Schema",
    ),
    (
        "not a JSON value",
        HEAD + "calls:\n  - name: get_weather\n    id: 2024-01-01\n    arguments: '{}'\n",
        7,
        "calls[0].id: 2024-01-01 is read as a date, not a JSON value: quote it",
    ),
    (
        "not base64",
        HEAD + "sse_base64: '@@'\nexpect: {lenient: {calls: []}, strict: {calls: []}}\n",
        5,
        "sse_base64: not base64",
    ),
]


@pytest.mark.parametrize(
    ("text", "line", "message"), [m[1:] for m in MISTAKES], ids=[m[0] for m in MISTAKES]
)
def test_each_mistake_is_reported_at_its_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    """A mistake is reported as ``path:line: message``, and its scenario is left out."""
    path = write(tmp_path, "bad.yaml", text)
    result = load_scenarios([path])
    assert result.scenarios == ()
    shown = [str(error) for error in result.errors]
    assert any(error.startswith(f"{path}:{line}: ") and message in error for error in shown), shown


def test_unreadable_files_are_reported_without_a_line(tmp_path: Path) -> None:
    """A missing file and a file that is not UTF-8 are problems of the file itself; the byte
    that is not UTF-8 is located by its line."""
    missing = tmp_path / "missing.yaml"
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"id: s1\ntitle: caf\xe9\n")
    result = load_scenarios([missing, latin])
    assert [str(error) for error in result.errors] == [
        f"{latin}:2: byte 17 is not UTF-8",
        f"{missing}: cannot read: No such file or directory",
    ]


def test_every_problem_in_every_file_is_reported(tmp_path: Path) -> None:
    """Two bad files are both reported, each problem of a file is reported, and the good
    scenario next to a bad one in the same file still loads."""
    first = write(tmp_path, "first.yaml", HEAD + CALL + "kind: should\nnosie: {}\n")
    second = write(
        tmp_path,
        "second.yaml",
        "scenarios:\n"
        "  - {id: good, title: t, rules: [A2], tools: [get_time], calls: []}\n"
        "  - {id: bad, title: t, rules: [A2], tools: [get_wether], calls: []}\n"
        "  - {id: worse, title: t, rules: [A2, X], tools: [], calls: []}\n",
    )
    result = load_scenarios([second, first])
    assert [scenario.id for scenario in result.scenarios] == ["good"]
    where = sorted(f"{error.path.name}:{error.line}" for error in result.errors)
    assert where == ["first.yaml:10", "first.yaml:9", "second.yaml:3", "second.yaml:4"]


def test_an_id_used_twice_is_reported_at_its_second_use_naming_the_first(
    tmp_path: Path,
) -> None:
    """Ids are unique across every file loaded: the second use is refused, naming both places."""
    write(tmp_path, "a.yaml", HEAD + CALL)
    write(tmp_path, "b.yaml", "# the same id again\n" + HEAD + CALL)
    result = load_scenarios([tmp_path])
    assert [str(error) for error in result.errors] == [
        f"{tmp_path / 'b.yaml'}:2: id 's1' is already used at {tmp_path / 'a.yaml'}:1"
    ]
    assert [scenario.source for scenario in result.scenarios] == [f"{tmp_path / 'a.yaml'}:1"]


def test_the_default_corpus_is_the_dialect_and_regression_folders(tmp_path: Path) -> None:
    """Every YAML file under scenarios/openai-chat and scenarios/regressions, at any depth,
    sorted; the tool catalogue, recordings and other files are not scenarios."""
    for name in (
        "openai-chat/b.yaml",
        "openai-chat/a.yml",
        "regressions/deep/r.yaml",
        "openai-chat/notes.md",
        "recordings/openai-chat/x.yaml",
        "tools.yaml",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    assert default_corpus(tmp_path) == [
        tmp_path / "openai-chat/a.yml",
        tmp_path / "openai-chat/b.yaml",
        tmp_path / "regressions/deep/r.yaml",
    ]


def test_the_catalogue_offers_the_shared_tools(tmp_path: Path) -> None:
    """scenarios/tools.yaml offers the documented tools, each with a valid JSON Schema."""
    names = ["get_weather", "get_stock_price", "get_time", "search", "send_email", "write_file"]
    path = write(tmp_path, "all.yaml", HEAD.replace("[get_weather]", str(names)) + "calls: []\n")
    result = load_scenarios([path])
    assert result.errors == ()
    tools = {tool.name: tool for tool in result.scenarios[0].spec.tools}
    assert list(tools) == names
    assert tools["get_weather"].parameters == {
        "type": "object",
        "properties": {
            "city": {
                "type": "string",
                "description": 'City name, optionally with the country, e.g. "Paris, FR".',
            },
            "units": {"type": "string", "enum": ["c", "f"], "description": "Temperature units."},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert tools["get_time"].takes_no_parameters
    assert not tools["write_file"].takes_no_parameters


def test_a_broken_catalogue_is_reported_at_its_line(tmp_path: Path) -> None:
    """Problems in the tool catalogue are reported like a scenario file's, with their line."""
    catalogue = write(
        tmp_path,
        "tools.yaml",
        "tools:\n  - name: get_weather\n  - name: get_weather\n  - name: bad\n    colour: red\n",
    )
    result = load_scenarios([], catalogue=catalogue)
    assert [str(error) for error in result.errors] == [
        f"{catalogue}:5: tools[2]: unknown key 'colour'"
    ]
    catalogue.write_text("tools:\n  - name: get_weather\n  - name: get_weather\n")
    result = load_scenarios([], catalogue=catalogue)
    assert [str(error) for error in result.errors] == [
        f"{catalogue}:3: tools[1]: tool 'get_weather' is defined twice"
    ]


def _properties(schema: Any, where: str) -> list[tuple[str, Any]]:
    """Every (where, property schema) under ``properties`` anywhere in the schema, except in
    the conditions of ``if``, which an editor never offers for autocompletion."""
    found = []
    if isinstance(schema, dict):
        for name, value in schema.get("properties", {}).items():
            found.append((f"{where}.{name}", value))
        for key, value in schema.items():
            if key != "if":
                found += _properties(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for n, value in enumerate(schema):
            found += _properties(value, f"{where}[{n}]")
    return found


def test_every_property_of_the_schema_has_a_description() -> None:
    """Editors show each property's description while autocompleting: none is missing."""
    definitions = scenario_schema()["$defs"]
    missing = []
    for where, value in _properties(scenario_schema(), "$"):
        target = value
        if "$ref" in value:
            target = definitions[value["$ref"].removeprefix("#/$defs/")]
        if "description" not in target:
            missing.append(where)
    assert missing == []


@pytest.mark.parametrize(
    ("definition", "model", "yaml_only"),
    [
        ("call", CallPlan, {"split", "chunk"}),
        ("noise", Noise, set()),
        ("ending", Ending, set()),
        ("transport", Transport, set()),
        ("limits", Limits, set()),
        ("expectedCall", ExpectedCall, set()),
    ],
)
def test_the_schema_and_the_spec_name_the_same_fields(
    definition: str, model: type, yaml_only: set[str]
) -> None:
    """Each mapping of the format is one dataclass of callstream.core.spec field for field, so the
    loader can pass it on as is (check_arguments is derived, not written)."""
    properties = set(scenario_schema()["$defs"][definition]["properties"])
    fields = {field.name for field in dataclasses.fields(model)} - {"check_arguments"}
    assert properties - yaml_only == fields

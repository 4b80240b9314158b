"""Loading implementations from connectables, and what their declarations let run."""

from __future__ import annotations

import json
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from callstream.connect.connectables import load_implementation
from callstream.connect.pipe import pipe_schema
from callstream.core.declaration import OBSERVABLES, Declaration, declaration_from
from callstream.core.spec import Scenario, StreamSpec
from callstream.corpus.scenario import scenario_schema
from callstream.errors import UsageError
from callstream.implementations import DEFAULT, ReferenceFactory, reference
from callstream.reference import Assembler, Limits, Tool
from callstream.rules import OPT_INS

WEATHER = Tool("get_weather", {"type": "object"})
SNAPSHOTS = frozenset({"snapshots"})


@pytest.fixture
def module() -> Iterator[Any]:
    """A throwaway implementation module, importable as ``fake_impl``."""
    fake = types.ModuleType("fake_impl")
    sys.modules["fake_impl"] = fake
    yield fake
    del sys.modules["fake_impl"]


def _factory(*, tools: list[Tool], limits: Limits) -> Assembler:
    return Assembler(tools, limits=limits)


def test_the_default_is_the_lenient_reference_exposing_everything() -> None:
    """``callstream run`` with no --impl tests the reference under the lenient profile."""
    implementation = load_implementation(DEFAULT)
    assert implementation.connectable == DEFAULT
    assert implementation.name == "callstream.implementations:reference"
    assert implementation.factory is reference
    assert implementation.declaration == Declaration(
        "lenient", ("openai-chat", "anthropic-messages", "openai-responses")
    )
    assert implementation.declaration.observables == frozenset(OBSERVABLES)
    assert isinstance(implementation.factory(tools=[WEATHER], limits=Limits()), Assembler)


def test_the_strict_reference_declares_the_strict_profile() -> None:
    """``reference_strict`` builds strict assemblers and says so."""
    implementation = load_implementation("py:callstream.implementations:reference_strict")
    assert implementation.declaration.profile == "strict"
    assert implementation.factory(tools=[], limits=Limits()).profile == "strict"


def test_a_declaration_on_the_factory_wins_over_the_module(module: Any) -> None:
    """A factory's own CALLSTREAM is read first, then its module's."""
    module.CALLSTREAM = {"profile": "strict", "observables": ["status", "ids"]}
    module.plain = _factory
    module.own_factory = _Declaring()
    assert load_implementation("py:fake_impl:plain").declaration == Declaration(
        "strict", ("openai-chat",), frozenset({"status", "ids"})
    )
    assert load_implementation("py:fake_impl:own_factory").declaration == Declaration(
        observables=frozenset({"incremental"})
    )


def test_no_declaration_means_everything_exposed_under_the_lenient_profile(module: Any) -> None:
    """An implementation that says nothing is judged on everything, leniently."""
    module.make = _factory
    assert load_implementation("py:fake_impl:make").declaration == Declaration()


def test_claims_of_intent_are_refused_with_the_way_out(module: Any) -> None:
    """The old CLAIMS attribute is not silently read: it says what replaces it."""
    module.make = _factory
    module.CLAIMS = {"rules": ["A"], "profile": "strict"}
    with pytest.raises(UsageError, match="CLAIMS is no longer read") as raised:
        load_implementation("py:fake_impl:make")
    assert "CALLSTREAM" in str(raised.value)


def test_a_dotted_attribute_reaches_a_factory_inside_the_module(module: Any) -> None:
    """``py:module:Class.method`` is followed attribute by attribute."""
    module.Holder = types.SimpleNamespace(make=_factory)
    implementation = load_implementation("py:fake_impl:Holder.make")
    assert (implementation.name, implementation.factory) == ("fake_impl:Holder.make", _factory)


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("cmd:./my-assembler --stdio", "cannot start ./my-assembler --stdio: No such file"),
        ("cmd:", "a cmd: connectable names a program"),
        ("cmd:node 'a.js", "the command does not parse as shell words: No closing quotation"),
        ("http://localhost:8000", "no such http: adapter; known: http:openai"),
        ("reference", "is not a connectable: expected py:module:factory"),
        ("python:harness:x", "is not a connectable: expected py:module:factory"),
        ("py:harness", "a py: connectable is py:module:factory"),
        ("py::factory", "a py: connectable is py:module:factory"),
        ("py:no_such_module_anywhere:factory", "no module named no_such_module_anywhere"),
        ("py:callstream.no_such:factory", "no module named callstream.no_such"),
        (
            "py:callstream.implementations:nothing",
            "module callstream.implementations has no attribute",
        ),
        ("py:callstream.implementations:DEFAULT", "is a str, not a factory"),
    ],
)
def test_a_bad_connectable_is_a_usage_error_naming_the_problem(spec: str, says: str) -> None:
    """Each mistake gets its own message, quoting the connectable."""
    with pytest.raises(UsageError, match="^" + re.escape(repr(spec))) as raised:
        load_implementation(spec)
    assert says in str(raised.value)
    assert raised.value.exit_code == 2


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("import no_such_dependency\n", "failed: No module named 'no_such_dependency'"),
        ("raise RuntimeError('no licence key')\n", "failed: RuntimeError: no licence key"),
    ],
)
def test_a_module_that_fails_to_import_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, says: str
) -> None:
    """A module that exists but cannot be imported is not reported as missing."""
    (tmp_path / "broken_impl.py").write_text(source)
    monkeypatch.syspath_prepend(tmp_path)
    with pytest.raises(UsageError, match="'py:broken_impl:make': importing broken_impl") as raised:
        load_implementation("py:broken_impl:make")
    assert says in str(raised.value)


@pytest.mark.parametrize(
    ("declared", "says"),
    [
        (["A"], "CALLSTREAM must be a mapping, not list"),
        ({"observable": ["ids"]}, "unknown keys ['observable']"),
        ({"rules": ["A", "C"]}, "names 'rules': claims of intent are gone"),
        ({"observables": "ids"}, "must be a list such as"),
        ({"observables": ["timing"]}, "names 'timing'; observables are incremental, status"),
        ({"profile": "loose"}, "['profile'] is 'loose'"),
        ({"dialect": "gemini"}, "['dialect'] is 'gemini'"),
        ({"opt_in": ["snapshots"]}, "unknown keys ['opt_in']; known: profile, dialect, dialects, "),
        ({"opt_ins": "snapshots"}, "['opt_ins'] must be a list such as ['snapshots']"),
        (
            {"opt_ins": ["snapshot"]},
            "['opt_ins'] names 'snapshot'; route opt-ins are snapshots, repair_json "
            "(did you mean 'snapshots'?)",
        ),
    ],
)
def test_a_bad_declaration_is_a_usage_error(module: Any, declared: Any, says: str) -> None:
    """A CALLSTREAM mapping the harness cannot read stops the run before anything is judged."""
    module.make = _factory
    module.CALLSTREAM = declared
    with pytest.raises(UsageError) as raised:
        load_implementation("py:fake_impl:make")
    assert says in str(raised.value)


def test_a_declaration_skips_only_other_profiles_dialects_and_declared_non_features() -> None:
    """Another profile or dialect: not applicable; several choices where one is declared:
    unsupported. Rules never decide whether a scenario runs."""
    scenario = Scenario("oc-x", "x", ("A2", "T1"), StreamSpec(tools=()), profiles=("lenient",))
    two = Scenario("oc-y", "y", ("A7",), StreamSpec(tools=(), choices=2), profiles=("lenient",))
    assert Declaration().skips(scenario) is None
    assert Declaration(observables=frozenset()).skips(scenario) is None
    assert Declaration(profile="strict").skips(scenario) == (
        "not_applicable",
        "the implementation follows the strict profile; the scenario runs under lenient",
    )
    assert Declaration(dialects=("anthropic-messages",)).skips(scenario) == (
        "not_applicable",
        "the implementation reads the anthropic-messages dialect; the scenario is in openai-chat",
    )
    assert Declaration().skips(two) is None
    assert Declaration(observables=frozenset(OBSERVABLES) - {"choices"}).skips(two) == (
        "unsupported",
        "the implementation assembles a single choice; the stream has 2",
    )


def test_a_route_that_opts_in_runs_only_the_scenarios_of_its_opt_ins() -> None:
    """A scenario written for route opt-ins is not applicable to a plain route, nor to one with
    other opt-ins; a plain scenario is not applicable to a route that opts in (D74), each with
    a reason that says which configuration is which."""
    plain = Scenario("oc-x", "x", ("A2",), StreamSpec(tools=()), profiles=("lenient",))
    snapshots = Scenario(
        "oc-o", "o", ("A2",), StreamSpec(tools=()), profiles=("lenient",), opt_ins=SNAPSHOTS
    )
    assert Declaration(opt_ins=SNAPSHOTS).skips(snapshots) is None
    assert Declaration().skips(snapshots) == (
        "not_applicable",
        "the scenario is for a route that opts in to snapshots; "
        "the implementation declares no route opt-in (D74)",
    )
    assert Declaration(opt_ins=SNAPSHOTS | {"repair_json"}).skips(snapshots) == (
        "not_applicable",
        "the scenario is for a route that opts in to snapshots; "
        "the implementation opts in to snapshots and repair_json only (D74)",
    )
    assert Declaration(opt_ins=SNAPSHOTS).skips(plain) == (
        "not_applicable",
        "the implementation's route opts in to snapshots, a configuration of its own; "
        "the scenario is for a route without opt-ins (D74)",
    )


def _arguments_stream(*fragments: str) -> bytes:
    """A Chat Completions stream of one get_weather call sent as ``fragments``."""
    chunks = [{"index": 0, "id": "call_1", "function": {"name": "get_weather"}}]
    chunks += [{"index": 0, "function": {"arguments": fragment}} for fragment in fragments]
    lines = [{"choices": [{"index": 0, "delta": {"tool_calls": [chunk]}}]} for chunk in chunks] + [
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    ]
    return b"".join(b"data: " + json.dumps(line).encode() + b"\n\n" for line in lines)


@pytest.mark.parametrize(
    ("name", "opt_ins", "fragments"),
    [
        ("reference_snapshots", ["snapshots"], ('{"city"', '{"city": "Paris"}')),
        ("reference_repair_json", ["repair_json"], ('{"city": ', '"Paris"')),
    ],
)
def test_the_opt_in_references_declare_their_route_and_read_it(
    name: str, opt_ins: list[str], fragments: tuple[str, ...]
) -> None:
    """``reference_snapshots`` and ``reference_repair_json`` are the lenient reference on a
    route that opts in: the declaration says so (reports show it), and a stream only that
    route reads (snapshots; a lost closing brace) is ready there, rejected on the plain one."""
    implementation = load_implementation(f"py:callstream.implementations:{name}")
    assert implementation.declaration.opt_ins == frozenset(opt_ins)
    assert implementation.declaration.to_dict()["opt_ins"] == opt_ins
    assert "opt_ins" not in load_implementation(DEFAULT).declaration.to_dict()
    stream = _arguments_stream(*fragments)
    for factory, status in ((implementation.factory, "ready"), (reference, "rejected")):
        assembler = factory(tools=[WEATHER], limits=Limits())
        results = [*assembler.feed(stream), *assembler.close()]
        assert [(r.status.value, r.arguments) for r in results] == [
            (status, {"city": "Paris"} if status == "ready" else None)
        ]


def test_a_route_with_both_opt_ins_writes_them_in_one_order() -> None:
    """Reports, the reference's own declaration and a refusal name a route's opt-ins in the
    order of ``OPT_INS``, whatever order they were declared in."""
    both = frozenset({"repair_json", "snapshots"})
    assert Declaration(opt_ins=both).to_dict()["opt_ins"] == list(OPT_INS)
    assert ReferenceFactory("lenient", both).CALLSTREAM["opt_ins"] == list(OPT_INS)
    declared = declaration_from({"opt_ins": ["repair_json", "snapshots"]}, "a route")
    assert declared.to_dict()["opt_ins"] == ["snapshots", "repair_json"]


def test_the_schemas_name_the_route_opt_ins_the_declaration_reads() -> None:
    """A scenario's ``opt_ins`` and a pipe program's take the names a declaration takes, so a
    scenario can be written for every route an implementation can declare."""
    scenario = scenario_schema()["$defs"]["scenario"]["properties"]["opt_ins"]["items"]["enum"]
    assert scenario == list(OPT_INS)
    assert pipe_schema()["$defs"]["optIns"]["items"]["enum"] == list(OPT_INS)


def test_a_py_declaration_carries_its_route_opt_ins(module: Any) -> None:
    """A ``CALLSTREAM`` mapping's ``opt_ins`` is read into the declaration."""
    module.make = _factory
    module.CALLSTREAM = {"opt_ins": ["repair_json", "snapshots"]}
    declaration = load_implementation("py:fake_impl:make").declaration
    assert declaration.opt_ins == frozenset({"snapshots", "repair_json"})
    assert declaration.to_dict()["opt_ins"] == ["snapshots", "repair_json"]


class _Declaring:
    CALLSTREAM: ClassVar[dict[str, Any]] = {"observables": ["incremental"]}

    def __call__(self, *, tools: list[Tool], limits: Limits) -> Assembler:
        return _factory(tools=tools, limits=limits)

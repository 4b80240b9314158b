"""Loading implementations from connectables, and what their declarations let run."""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from callstream.connect.connectables import load_implementation
from callstream.core.declaration import OBSERVABLES, Declaration
from callstream.core.spec import Scenario, StreamSpec
from callstream.errors import UsageError
from callstream.implementations import DEFAULT, reference
from callstream.reference import Assembler, Limits, Tool

WEATHER = Tool("get_weather", {"type": "object"})


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


class _Declaring:
    CALLSTREAM: ClassVar[dict[str, Any]] = {"observables": ["incremental"]}

    def __call__(self, *, tools: list[Tool], limits: Limits) -> Assembler:
        return _factory(tools=tools, limits=limits)

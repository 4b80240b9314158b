"""Loading implementations from connectables, and what their claims cover."""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from harness.connect import Claims, load_implementation
from harness.errors import UsageError
from harness.implementations import DEFAULT, reference
from harness.spec import Scenario, StreamSpec
from reference_impl import Assembler, Limits, Tool

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


def test_the_default_is_the_lenient_reference_claiming_every_group() -> None:
    """``callstream run`` with no --impl tests the reference under the lenient profile."""
    implementation = load_implementation(DEFAULT)
    assert implementation.connectable == DEFAULT
    assert implementation.name == "harness.implementations:reference"
    assert implementation.factory is reference
    assert implementation.claims == Claims(frozenset("ACVTER"), "lenient", "openai-chat")
    assert isinstance(implementation.factory(tools=[WEATHER], limits=Limits()), Assembler)


def test_the_strict_reference_claims_the_strict_profile() -> None:
    """``reference_strict`` builds strict assemblers and says so."""
    implementation = load_implementation("py:harness.implementations:reference_strict")
    assert implementation.claims.profile == "strict"
    assert implementation.factory(tools=[], limits=Limits()).profile == "strict"


def test_claims_on_the_factory_win_over_the_module(module: Any) -> None:
    """A factory's own CLAIMS are read first, then its module's."""
    module.CLAIMS = {"rules": ["A"], "profile": "strict"}
    module.plain = _factory
    module.own_factory = _Claiming()
    assert load_implementation("py:fake_impl:plain").claims == Claims(
        frozenset("A"), "strict", "openai-chat"
    )
    assert load_implementation("py:fake_impl:own_factory").claims == Claims(
        frozenset("C"), "lenient", "openai-chat"
    )


def test_no_claims_means_every_group_under_the_lenient_profile(module: Any) -> None:
    """An implementation that says nothing claims everything, leniently."""
    module.make = _factory
    assert load_implementation("py:fake_impl:make").claims == Claims()
    assert Claims().groups == frozenset("ACERTV")


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
        ("py:harness.no_such:factory", "no module named harness.no_such"),
        ("py:harness.implementations:nothing", "module harness.implementations has no attribute"),
        ("py:harness.implementations:DEFAULT", "is a str, not a factory"),
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
    ("claims", "says"),
    [
        (["A"], "CLAIMS must be a mapping, not list"),
        ({"rule": ["A"]}, "unknown keys ['rule']"),
        ({"rules": "ACV"}, "must be a list of rule groups"),
        ({"rules": ["A2"]}, "names 'A2'; rule groups are A, C, E, R, T, V"),
        ({"profile": "loose"}, "['profile'] is 'loose'"),
        ({"dialect": "gemini"}, "['dialect'] is 'gemini'"),
    ],
)
def test_bad_claims_are_a_usage_error(module: Any, claims: Any, says: str) -> None:
    """A CLAIMS mapping the harness cannot read stops the run before anything is judged."""
    module.make = _factory
    module.CLAIMS = claims
    with pytest.raises(UsageError) as raised:
        load_implementation("py:fake_impl:make")
    assert says in str(raised.value)


def test_claims_decide_which_scenarios_are_run() -> None:
    """Unlisted profile, unclaimed rule group or another dialect: each is named."""
    scenario = Scenario("oc-x", "x", ("A2", "T1"), StreamSpec(tools=()), profiles=("lenient",))
    assert Claims().unclaimed(scenario) is None
    assert Claims(profile="strict").unclaimed(scenario) == (
        "the implementation claims the strict profile; the scenario runs under lenient"
    )
    assert Claims(frozenset("AV")).unclaimed(scenario) == (
        "rule group T is not claimed (the scenario cites T1)"
    )
    assert Claims(frozenset("V")).unclaimed(scenario) == (
        "rule groups A, T are not claimed (the scenario cites A2, T1)"
    )
    assert Claims(dialect="anthropic-messages").unclaimed(scenario) == (
        "the implementation claims the anthropic-messages dialect; the scenario is in openai-chat"
    )


class _Claiming:
    CLAIMS: ClassVar[dict[str, Any]] = {"rules": ["C"]}

    def __call__(self, *, tools: list[Tool], limits: Limits) -> Assembler:
        return _factory(tools=tools, limits=limits)

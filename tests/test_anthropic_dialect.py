"""The anthropic-messages dialect on the harness's side: its generated streams are predicted by
the oracle and passed by the reference, under both profiles and any splitting; the emulator
answers ``POST /v1/messages`` for its scenarios."""

from __future__ import annotations

from functools import partial

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callstream.core.case import run_case
from callstream.core.spec import Scenario, Splitting, StreamSpec
from callstream.emulator import SERVED
from callstream.implementations import reference, reference_strict
from callstream.rules import RuleId
from callstream.strategies import stream_specs

FACTORIES = {"lenient": reference, "strict": reference_strict}


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    stream_specs(dialect="anthropic-messages"),
    st.sampled_from(["whole", "bytes", "random"]),
    st.integers(1, 50),
)
def test_the_reference_passes_every_generated_anthropic_stream(
    spec: StreamSpec, kind: str, seed: int
) -> None:
    scenario = Scenario("drawn", "drawn", (RuleId("C5"),), spec)
    splitting = Splitting(kind, seed=seed)  # type: ignore[arg-type]
    for profile, factory in FACTORIES.items():
        result = run_case(scenario, profile, splitting, partial(factory, dialect=spec.dialect))
        assert result.outcome == "passed", (profile, result.failures, result.repro)


def test_the_emulator_serves_anthropic_messages_on_its_own_path() -> None:
    assert SERVED["anthropic-messages"].path == "/messages"

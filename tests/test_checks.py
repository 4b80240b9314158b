"""What the checks say: a status outside the contract is named as such, no failure message
or repro prints ``None`` where a value belongs (an absent id reads "no id"), and a result's
optional ``synthetic_id`` flag, when it carries one, is judged (D91)."""

from __future__ import annotations

from typing import Any

import pytest

from callstream.core.case import format_repro
from callstream.core.checks import run_checks
from callstream.core.declaration import OBSERVABLES
from callstream.core.observation import Observation, Observed, Release, observe
from callstream.core.oracle import expect
from callstream.core.rendering import render
from callstream.core.spec import CallPlan, Ending, Expected, ExpectedCall, StreamSpec
from callstream.reference import Assembler, Limits, Tool

WEATHER = Tool("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}})
PLAIN = StreamSpec(
    (WEATHER,),
    (CallPlan("get_weather", '{"city": "Paris"}', ("{", '"city": "Paris"}'), id="call_1"),),
)
TRUNCATED = StreamSpec(
    (WEATHER,),
    (CallPlan("get_weather", '{"city": "Par', ('{"city": "Par',), id="call_1"),),
    ending=Ending(finish="length"),
)
READY = {
    "choice": 0,
    "index": 0,
    "id": "call_1",
    "name": "get_weather",
    "arguments_text": '{"city": "Paris"}',
    "arguments": {"city": "Paris"},
    "status": "ready",
    "reason": None,
}


def messages(
    spec: StreamSpec | Expected, *results: dict[str, Any], kind: str = "must"
) -> list[str]:
    """The failure messages of every check on ``results``, released at the end of the stream."""
    expected = spec if isinstance(spec, Expected) else expect(spec, render(spec), "lenient")
    seen = Observation(tuple(Release(0, 10**6, Observed.from_result(r)) for r in results))
    return [f.message for f in run_checks(expected, seen, kind, OBSERVABLES).failures]


def test_a_status_outside_the_contract_says_so_and_nothing_else() -> None:
    """``done`` is named as not in the contract, never as "is done, expected ready"."""
    assert messages(PLAIN, {**READY, "status": "done"}) == [
        "call 0 of choice 0 has status 'done', which is not in the contract (a result is ready "
        "or rejected)"
    ]


def test_a_near_miss_status_gets_the_closest_spelling() -> None:
    """``Ready`` is one letter off."""
    assert messages(PLAIN, {**READY, "status": "Ready"}) == [
        "call 0 of choice 0 has status 'Ready', which is not in the contract (a result is ready "
        "or rejected); did you mean 'ready'?"
    ]


@pytest.mark.parametrize(
    ("field", "says"),
    [
        ("status", "call 0 of choice 0 has no status (a result is ready or rejected)"),
        ("id", "call 0 of choice 0 has no id, expected 'call_1'"),
        ("name", "call 0 of choice 0 was released ready with no name, but it calls 'get_weather'"),
        (
            "arguments",
            "call 0 of choice 0 was released ready with no arguments instead of {'city': 'Paris'}",
        ),
        (
            "arguments_text",
            """call 0 of choice 0 has no arguments_text, expected '{"city": "Paris"}'""",
        ),
        ("index", "call 0 of choice 0 was never released"),
        ("index", "an unexpected call with no index of choice 0 was released"),
        ("choice", "an unexpected call 0 with no choice was released"),
    ],
)
def test_an_absent_field_reads_as_no_field(field: str, says: str) -> None:
    """A result without an id says "no id", not "id None"; one without an index is "the call
    with no index"."""
    assert says in messages(PLAIN, {**READY, field: None})


def test_an_absent_name_is_no_name_in_the_identity_check_too() -> None:
    """A rejected call is not judged safe_release's way; identity still names what is missing."""
    rejected = {**READY, "name": None, "status": "rejected", "reason": "truncated"}
    assert "call 0 of choice 0 has no name, expected 'get_weather'" in messages(TRUNCATED, rejected)


def test_a_rejection_without_a_reason_reads_with_no_reason() -> None:
    """The reason check says "rejected with no reason", the contract check that one is due."""
    rejected = {
        **READY,
        "arguments_text": '{"city": "Par',
        "arguments": None,
        "status": "rejected",
        "reason": None,
    }
    assert messages(TRUNCATED, rejected) == [
        "call 0 of choice 0 is rejected without a reason",
        "call 0 of choice 0 was rejected with no reason, expected 'truncated'",
    ]


def test_a_ready_call_that_must_be_rejected_for_an_open_reason_says_just_that() -> None:
    """A written-out expectation may leave the reason open."""
    open_reason = Expected((ExpectedCall("rejected", None),))
    assert messages(open_reason, READY) == [
        "call 0 of choice 0 was released ready but it must be rejected"
    ]


def test_no_failure_message_or_repro_prints_none() -> None:
    """Every field absent in turn, two results released out of order, under every kind of
    expectation: no message and no repro line says None."""
    said = []
    for field in READY:
        for spec in (PLAIN, TRUNCATED):
            for kind in ("must", "must-not", "impl-defined"):
                said += messages(spec, {**READY, field: None}, kind=kind)
    said += messages(PLAIN, {**READY, "index": 1}, {**READY, "index": None})
    releases = (Release(0, 5, Observed.from_result({**READY, "index": None, "status": None})),)
    said += format_repro([b"data: {}\n\n"], Observation(releases)).splitlines()
    assert said
    assert [message for message in said if "None" in message] == []
    assert (
        "results released together by chunk 0 are not in index order: call 1 of choice 0, "
        "call with no index of choice 0" in said
    )
    assert any(
        "◀ after byte 5: call with no index of choice 0 released with no status" in line
        for line in said
    )


def test_a_result_that_is_none_is_named_as_none_not_nonetype() -> None:
    """What observe records when a list of results holds None."""
    with pytest.raises(TypeError, match=r"got None$"):
        Observed.from_result(None)


def test_without_status_exposed_a_call_handed_back_is_ready() -> None:
    """An implementation that does not expose ``status`` hands calls back for its caller to
    run: a result without a status is judged ready, so a plain call passes and a call cut by
    the token limit fails as run, not as a result outside the contract."""
    exposed = [name for name in OBSERVABLES if name not in ("status", "reason")]
    bare = {key: value for key, value in READY.items() if key not in ("status", "reason")}

    def judged(spec: StreamSpec, result: dict[str, Any]) -> list[str]:
        expected = expect(spec, render(spec), "lenient")
        seen = Observation((Release(0, 10**6, Observed.from_result(result)),))
        return [f.check for f in run_checks(expected, seen, "must", exposed).failures]

    assert judged(PLAIN, bare) == []
    cut = {**bare, "arguments_text": '{"city": "Par', "arguments": None}
    assert "safe_release" in judged(TRUNCATED, cut)
    assert "contract" not in judged(TRUNCATED, cut)


MADE_UP = Expected(
    (
        ExpectedCall(
            "ready",
            name="get_weather",
            arguments={"city": "Paris"},
            check_arguments=True,
            synthetic_id=True,
        ),
    )
)
"""A call the provider sent without an id: the lenient profile may make one up (D9)."""


def test_a_made_up_id_handed_back_unflagged_fails_v4() -> None:
    """A result that says its made-up id is the provider's (``synthetic_id`` false) is wrong."""
    seen = Observation((Release(0, 10**6, Observed.from_result({**READY, "synthetic_id": False})),))
    judged = run_checks(MADE_UP, seen, "must", OBSERVABLES)
    assert [(f.check, f.rules, f.message) for f in judged.failures] == [
        (
            "identity",
            ("V4",),
            "call 0 of choice 0 was given the made-up id 'call_1' with synthetic_id False: the "
            "provider sent no id",
        )
    ]


def test_a_provider_id_flagged_as_made_up_fails_v4() -> None:
    """A result that flags the id the provider sent as made up misleads its caller."""
    assert messages(PLAIN, {**READY, "synthetic_id": True}) == [
        "call 0 of choice 0 flags its id as made up (synthetic_id True), but the provider sent "
        "it: 'call_1'"
    ]


@pytest.mark.parametrize("flag", [None, "absent"])
def test_a_result_that_does_not_say_whether_its_id_is_made_up_is_not_judged_on_it(
    flag: str | None,
) -> None:
    """``synthetic_id`` is optional: absent or null, neither a made-up nor a real id fails."""
    result = dict(READY) if flag == "absent" else {**READY, "synthetic_id": flag}
    assert messages(PLAIN, result) == []
    assert messages(MADE_UP, result) == []


def test_a_made_up_id_flagged_and_no_id_unflagged_both_pass() -> None:
    """The flag is true exactly when an id was made up; handing back none is no made-up id."""
    assert messages(MADE_UP, {**READY, "synthetic_id": True}) == []
    assert messages(MADE_UP, {**READY, "id": None, "synthetic_id": False}) == []
    assert messages(PLAIN, {**READY, "synthetic_id": False}) == []


def test_the_reference_flags_exactly_its_made_up_ids() -> None:
    """``CallResult.synthetic_id`` is read from an object as from a mapping, on a rejected call
    as on a ready one."""
    spec = StreamSpec(
        (WEATHER,),
        (
            CallPlan("get_weather", '{"city": "Paris"}', ('{"city": "Paris"}',), id="call_1"),
            CallPlan("get_weather", '{"city": Rome}', ('{"city": Rome}',), id=None),
        ),
    )
    wire = render(spec).data
    seen = observe(
        lambda tools, limits: Assembler(tools, limits=limits, profile="lenient"),
        (WEATHER,),
        Limits(),
        [wire],
    )
    assert [r.synthetic_id for r in seen.results] == [False, True]
    judged = run_checks(expect(spec, render(spec), "lenient"), seen, "must", OBSERVABLES)
    assert judged.failures == ()

"""The dialect seam: every dialect the harness renders has every part the layers above need,
and a dialect is added by adding its modules, with no change to the pipeline."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from callstream.certification.wires import WIRES
from callstream.core.case import run_case
from callstream.core.dialects import DIALECTS, literal_event, plain_route
from callstream.core.rendering import render
from callstream.core.spec import (
    CallPlan,
    Expected,
    ExpectedCall,
    Scenario,
    Splitting,
    StreamSpec,
)
from callstream.core.wire import Event, Rendered
from callstream.corpus.scenario import corpus_root, load_scenarios
from callstream.emulator import ROUTES_OF, SERVED
from callstream.reference import DIALECTS as REFERENCE_DIALECTS
from callstream.reference import Limits, Tool
from callstream.rules import QuirkId, RuleId, quirk_dialect
from callstream.strategies import GENERATORS

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_every_dialect_has_every_part(name: str) -> None:
    """A dialect the harness renders is read by the reference, drawn by the generators, served
    by the emulator and has its own folder of scenarios; its quirk ids name it."""
    dialect = DIALECTS[name]
    assert dialect.name == name
    assert name in REFERENCE_DIALECTS
    assert name in GENERATORS
    assert name in SERVED
    assert WIRES[name].quirks == dialect.quirks  # certify asks and reads it
    assert ROUTES_OF[name]  # and the emulator has routes to certify
    assert (corpus_root() / name).is_dir()
    assert dialect.quirks
    assert all(quirk_dialect(quirk) == name for quirk in dialect.quirks)


def test_every_corpus_scenario_is_in_the_dialect_of_its_folder() -> None:
    """A scenario under ``scenarios/<dialect>/`` is in that dialect (no file names another)."""
    for name in DIALECTS:
        loaded = load_scenarios([corpus_root() / name])
        assert loaded.errors == ()
        assert {scenario.spec.dialect for scenario in loaded.scenarios} == {name}


def test_a_file_outside_any_dialect_folder_is_openai_chat_unless_it_says(tmp_path: Path) -> None:
    """The dialect of a scenario: its own ``dialect``, else its file's, else its folder's,
    else openai-chat; an unknown one is a problem of the scenario's line."""
    (tmp_path / "a.yaml").write_text(
        "id: plain\ntitle: t\nrules: [A2]\ntools: [get_time]\ncalls: []\n", "utf-8"
    )
    (tmp_path / "b.yaml").write_text(
        "id: other\ntitle: t\ndialect: no-such-wire\nrules: [A2]\ntools: []\ncalls: []\n",
        "utf-8",
    )
    loaded = load_scenarios([tmp_path / "a.yaml", tmp_path / "b.yaml"])
    assert [scenario.spec.dialect for scenario in loaded.scenarios] == ["openai-chat"]
    assert [str(error) for error in loaded.errors] == [
        f"{tmp_path / 'b.yaml'}:3: dialect: unknown dialect 'no-such-wire'; known: "
        + ", ".join(DIALECTS)
    ]


# -- a dialect added by adding modules ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Lines:
    """A toy dialect: each fragment is an event ``{"call": n, "text": …}``, a call ends with
    ``{"call": n, "done": true}`` (a per-call boundary), the stream with ``{"end": true}``."""

    name: str = "toy-lines"
    quirks: tuple[QuirkId, ...] = (QuirkId("toy-lines/X1"),)
    not_certifiable: dict[RuleId, str] = field(default_factory=dict)

    def events(self, spec: StreamSpec) -> list[Event]:
        out = []
        for number, plan in enumerate(spec.calls):
            out += [Event({"call": number, "text": piece}) for piece in plan.fragments]
            out.append(Event({"call": number, "done": True}, boundaries=(number,)))
        return [*out, Event({"end": True}, finishes=(0,))]

    def literal(self, item: Any) -> Event:
        return literal_event(item)

    def expect(
        self, spec: StreamSpec, rendered: Rendered, profile: str, opt_ins: frozenset[str]
    ) -> Expected:
        plain_route(self.name, opt_ins)
        return Expected(
            tuple(
                ExpectedCall(
                    "ready",
                    index=number,
                    id=plan.id,
                    name=plan.name,
                    arguments_text=plan.arguments,
                    arguments=json.loads(plan.arguments),
                    check_arguments=True,
                    release_offset=rendered.boundary_offset(number),
                )
                for number, plan in enumerate(spec.calls)
            )
        )


class _ToyAssembler:
    """Reads the toy dialect: releases each call at its boundary."""

    def __init__(self, *, tools: Any, limits: Any) -> None:
        self.buffer = b""
        self.texts: dict[int, str] = {}

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self.buffer += data
        released = []
        while b"\n\n" in self.buffer:
            event, _, self.buffer = self.buffer.partition(b"\n\n")
            payload = json.loads(event.decode().removeprefix("data: "))
            if "text" in payload:
                self.texts[payload["call"]] = self.texts.get(payload["call"], "") + payload["text"]
            elif payload.get("done"):
                text = self.texts[payload["call"]]
                released.append(
                    {
                        "choice": 0,
                        "index": payload["call"],
                        "id": f"c{payload['call']}",
                        "name": "get_time",
                        "arguments_text": text,
                        "arguments": json.loads(text),
                        "status": "ready",
                        "reason": None,
                    }
                )
        return released

    def close(self) -> list[dict[str, Any]]:
        return []


def test_a_new_dialect_runs_through_the_unchanged_pipeline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Registered beside openai-chat, a new dialect's plan is rendered, predicted and judged by
    the same pipeline, its per-call boundary giving each call's release offset (C5)."""
    monkeypatch.setitem(DIALECTS, "toy-lines", _Lines())
    tool = Tool("get_time", {"type": "object"})
    calls = tuple(
        CallPlan("get_time", text, (text[:3], text[3:]), id=f"c{n}")
        for n, text in enumerate(['{"tz": "UTC"}', '{"tz": "CET"}'])
    )
    spec = StreamSpec((tool,), calls, limits=Limits(), dialect="toy-lines")
    rendered = render(spec)
    assert rendered.data.startswith(b'data: {"call":0,"text":"{\\"t"}\n\n')
    assert rendered.boundary_offset(0) is not None
    assert rendered.boundary_offset(0) < rendered.boundary_offset(1) < len(rendered.data)
    scenario = Scenario("toy", "toy", (RuleId("C5"),), spec, profiles=("lenient",))
    result = run_case(scenario, "lenient", Splitting("bytes"), _ToyAssembler)
    assert (result.outcome, result.failures) == ("passed", ())

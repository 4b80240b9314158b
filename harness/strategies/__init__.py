"""Hypothesis strategies for what callstream tests: tools, their arguments, argument text,
fragments, whole StreamSpecs, transport splittings and Scenarios.

Public strategies are built from smaller private ones, in layers:

- ``tools()`` draws tools with JSON Schemas; ``arguments_for(tool)`` draws objects valid against
  a tool's schema and ``invalid_arguments(tool)`` argument text it must refuse, with the reason;
  ``argument_text(value)`` spells a value in one of many equivalent ways; ``fragments(text)``
  cuts text where cutting is dangerous (``dangerous_cuts``).
- ``call_plans(tools)`` draws the calls of one stream, ``stream_specs()`` whole plans (calls,
  metadata policies, noise, ending, transport, limits), ``scenarios()`` wraps them as
  Scenarios (``scenario_for``, with rules from ``rules_for``).
- ``splittings(data)`` draws transport cuts, biased to ``dangerous_offsets(data)``; ``cases()``
  draws a scenario together with a splitting of its own bytes.

Each dialect's streams are drawn by its generator (``GENERATORS``, by dialect name; every public
strategy takes ``dialect=``, openai-chat by default). Every spec drawn is one the oracle predicts
under both profiles and the renderer renders (``predictable``, the filter every generator ends
with), so the reference assembler passes every case. Within a generator every knob is read from
a tape (``_tape``): bytes Hypothesis draws in one choice for a stream's knobs, one for each
call's and one for a splitting's, so a stream and its splitting cost about five choices where a
knob each cost sixty-four. Knobs are ordered so that shrinking leads somewhere readable: zero bytes
read as the ordinary value of every knob, every list of options starts with it, every unusual
knob is drawn "rarely" and shrinks to off, a cut instruction shrinks to no cut, so a failure
shrinks to one or two calls cut into a handful of fragments. Draws are labelled with
``hypothesis.event`` (``schedule: interleaved``, ``cut inside a \\u escape``) and
``stream_specs`` calls ``hypothesis.target`` on its fragment count and argument size, so
statistics and coverage-guided fuzzers have something to steer by."""

from __future__ import annotations

from ._arguments import arguments_for
from ._calls import call_plans
from ._fragments import dangerous_cuts, fragments
from ._invalid import InvalidArguments, invalid_arguments
from ._json_text import argument_text

# Out of ``__all__`` on purpose, as ``callstream.fuzz``'s ``InProcess``: a new short string
# literal in a local module changes the examples a derandomised search draws.
from ._knobs import forget_events as forget_events
from ._knobs import seen_events
from ._predictable import predictable
from ._scenarios import rules_for, scenario_for, scenarios

# Out of ``__all__`` too: the table most tools are drawn from, whose schemas the fuzz workers'
# server compiles before it forks (``callstream.fuzz._warming``).
from ._schemas import POOLED_TOOLS as POOLED_TOOLS
from ._schemas import tools
from ._splittings import cases, dangerous_offsets, splittings

# Out of ``__all__`` too: what ``splittings(data)`` draws, within a composite of the caller's,
# for ``callstream.fuzz``, which draws a scenario and its splitting as one example.
from ._splittings import draw_splitting as draw_splitting
from ._streams import GENERATORS, stream_specs

__all__ = [
    "GENERATORS",
    "InvalidArguments",
    "argument_text",
    "arguments_for",
    "call_plans",
    "cases",
    "dangerous_cuts",
    "dangerous_offsets",
    "fragments",
    "invalid_arguments",
    "predictable",
    "rules_for",
    "scenario_for",
    "scenarios",
    "seen_events",
    "splittings",
    "stream_specs",
    "tools",
]

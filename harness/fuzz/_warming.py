"""What the fuzz workers' server imports before it forks the first worker: the workers' module,
then a few scenarios of each dialect drawn and thrown away, and the schemas of the tools most
streams offer compiled; what the server then holds is frozen (``gc.freeze``), out of every
worker's collections.

A process pays for its first draws: Hypothesis reads the constants of every local module's
source (which it now and then draws), validates each strategy, and the tool schemas' metaschema
is compiled. Worked out here, in the server the workers fork from, that is paid once a session
rather than once a worker: a worker's first hundred examples took 5.0 G instructions cold, 4.5 G
forked from a warmed server, and the warm-up itself takes 0.76 G. So a session of one worker
pays about 0.25 G more (some 70 ms), one of two saves about as much, and a server that forks
again (the bench, a test run) saves 0.5 G a worker every time.

What is drawn stays what it was: the constants are read from the same modules (a worker reads
those it imports after the fork, the implementation's, as before), and the labels drawn here
are forgotten; a ci run through the workers draws the same examples, feature for feature, as
without it.
"""

from __future__ import annotations

import gc
from contextlib import suppress

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from callstream.reference.validate import validator_for

from .. import strategies
from ..core.rendering import render
from . import _workers  # noqa: F401  (what the workers run, imported before any fork)

_EXAMPLES = 2
"""Examples of each dialect drawn: the first pays for most; a second reaches more strategies
(three save no more)."""


def _warm_up() -> None:
    scenarios = [strategies.scenarios(dialect=name) for name in strategies.GENERATORS]

    @given(data=st.data())
    @settings(
        max_examples=_EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    def draw_each(data: st.DataObject) -> None:
        for drawn in scenarios:
            scenario = data.draw(drawn)
            data.draw(strategies.splittings(render(scenario.spec).data))

    with suppress(Exception):  # a warm-up only saves time: should it fail, the workers draw on
        draw_each()
        # The oracle compiles a tool's schema the first time a stream offers it (its check
        # against the metaschema, about 3 ms): the pool's twenty, once for every worker.
        for tool in strategies.POOLED_TOOLS:
            validator_for(tool.name, tool.parameters)
    strategies.forget_events()
    # What the server holds now every worker holds from its start and keeps: frozen, the
    # workers' full collections never walk it (nor touch its pages, which copy-on-write keeps
    # shared), as the gc module's documentation advises for a server that forks.
    gc.collect()
    gc.freeze()


_warm_up()

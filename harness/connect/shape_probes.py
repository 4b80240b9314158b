"""The streams a shape is checked on, and what one showed: :data:`PROBES`, three tiny real
streams, each fed in three chunks in the dialect the implementation reads (its first declared
one), and :func:`probe`, which runs one in this process."""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from dataclasses import dataclass, replace

from callstream.reference import Tool

from ..core.declaration import Implementation
from ..core.rendering import render
from ..core.spec import CallPlan, Ending, StreamSpec
from ..core.split import cut
from ..errors import StreamTimeout
from .result_shape import Problem, summarise_returned

__all__ = ["PROBES", "Probe", "StreamShape", "probe", "run_probes"]


@dataclass(frozen=True, slots=True)
class Probe:
    """A tiny real stream the shape is checked on, fed in three chunks."""

    name: str
    spec: StreamSpec

    def chunks(self, dialect: str = "openai-chat") -> list[bytes]:
        """The stream's bytes in ``dialect``, rendered by the project's renderer and cut in
        three."""
        data = render(replace(self.spec, dialect=dialect)).data
        return cut(data, [len(data) // 3, 2 * len(data) // 3])


_WEATHER = Tool(
    "get_weather",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def _stream(arguments: str, ending: Ending) -> StreamSpec:
    """One get_weather call, its arguments in two fragments, ending as ``ending`` says."""
    half = len(arguments) // 2
    plan = CallPlan("get_weather", arguments, (arguments[:half], arguments[half:]), id="call_1")
    return StreamSpec(tools=(_WEATHER,), calls=(plan,), ending=ending)


PROBES = (
    Probe("plain call", _stream('{"city": "Paris"}', Ending())),
    Probe("truncated call", _stream('{"city": "Par', Ending(finish="length"))),
    Probe("cut-off stream", _stream('{"city": "Paris"}', Ending(finish=None, done=False))),
)
"""The streams: a call that is ready, one the token limit cut (rejected ``truncated``) and one
whose connection ended before the response finished (in openai-chat released at ``close()``,
rejected ``interrupted``; where a call has a boundary of its own, its block's or item's stop,
ready at it). One tool, one choice: the least an implementation must take."""


@dataclass(frozen=True, slots=True)
class StreamShape:
    """What one probe showed: the results it released, the shape problems in them, and what
    went wrong on the stream, which is behaviour, for a run to judge."""

    stream: str
    released: tuple[str, ...] = ()
    """Each result as ``ready at feed() of chunk 3 of 3``, ``rejected truncated at close()`` or
    ``a result of the wrong shape at …``; what was not a list as ``not a list at …``."""
    problems: tuple[Problem, ...] = ()
    trouble: str | None = None
    """What the implementation raised, or that it hung or ended its process; None when the
    stream ran to its ``close()``."""
    hung: bool = False
    """The stream did not finish in time: the streams after it are not tried."""

    def summary(self) -> str:
        """One line: what came out, and what went wrong."""
        released = "; ".join(self.released) or "nothing released"
        return f"{self.stream}: {released}" + (f"; {self.trouble}" if self.trouble else "")


def probe(implementation: Implementation, stream: Probe) -> StreamShape:
    """Run ``stream`` on ``implementation`` in this process: what it released, the shape
    problems in what ``feed()`` and ``close()`` returned, and what it raised, if it did."""
    exposed = implementation.declaration.observables
    dialect = implementation.declaration.dialects[0]
    chunks = stream.chunks(dialect)
    released: list[str] = []
    problems: list[Problem] = []
    doing = "the factory"
    try:
        factory = implementation.factory_for(dialect)
        asm = factory(tools=list(stream.spec.tools), limits=stream.spec.limits)
        for number, chunk in enumerate(chunks, 1):
            doing = f"feed() of chunk {number} of {len(chunks)}"
            released += summarise_returned(asm.feed(chunk), stream.name, doing, exposed, problems)
        doing = "close()"
        released += summarise_returned(asm.close(), stream.name, doing, exposed, problems)
    except Exception as exc:  # the implementation's behaviour, for a run to judge
        trouble = f"{doing} raised {_gist(exc)}"
        hung = isinstance(exc, StreamTimeout)  # a program over the pipe that stopped answering
        return StreamShape(stream.name, tuple(released), tuple(problems), trouble, hung)
    return StreamShape(stream.name, tuple(released), tuple(problems))


def run_probes(implementation: Implementation) -> Iterator[StreamShape]:
    """What each probe showed, in order, up to one that hung."""
    for stream in PROBES:
        shape = probe(implementation, stream)
        yield shape
        if shape.hung:
            return


def _gist(exc: BaseException) -> str:
    """The last line of the exception as a traceback ends (what ``no_crash`` quotes)."""
    return "".join(traceback.format_exception_only(exc)).strip().splitlines()[-1]

"""``callstream check``: whether an implementation has the contract's shape, in about a second.

Shape is what every case of a run depends on before any rule is judged: the connectable loads,
its declaration reads (``callstream.connect.connectables``), the factory takes ``tools=`` and
``limits=``, and what ``feed()`` and ``close()`` hand back on three tiny real streams
(:data:`PROBES`) is a list of results with the contract's fields: ``choice`` and ``index``
integers, ``name`` text, ``id``, ``arguments_text`` and ``arguments`` of their types where the
declaration exposes them, ``status`` one of the contract's statuses and ``reason`` one of
:class:`callstream.reference.Reason`'s values, spelt as the contract spells them. A mistake there
fails every case of a run, each for the same reason, so ``callstream run`` and the pytest plugin
check the shape first and stop with its problems (exit code 2).

Behaviour is not shape, and the line between them is drawn so that nothing a run can judge is
refused here: *which* results come out, *when*, ready or rejected, with which id, name or text,
is for the run's checks. A plain call released rejected, a truncated call released ready, no
result at all, an exception, a stream that does not finish or that ends its process: each is
what a run reports as a failed case (``no_crash``, ``no_hang``, ``safe_release``…), so each is
shown here as what a stream did, never a shape problem. ``callstream check`` exits 2 when it saw
no result at all (every stream raised, say), since it could then check no result's shape; a run
goes on. What the harness itself reads as "nothing" (``None`` from ``feed()``) is accepted, as
the run accepts it.

The streams run in one process of their own, as a run's workers do, watched by the clock: an
implementation that hangs or ends its process costs at most the timeout, never the command.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass
from typing import TextIO

from callstream.reference import Limits

from ..core.declaration import Declaration, Implementation
from ..errors import UsageError
from .connectables import load_implementation
from .probe_process import probe_apart
from .processes import WorkerContext
from .result_shape import Problem, checked_fields
from .shape_probes import PROBES, StreamShape, run_probes

__all__ = [
    "ShapeCheck",
    "check_command",
    "check_in_process",
    "check_shape",
    "checked_before_a_run",
]


@dataclass(frozen=True, slots=True)
class ShapeCheck:
    """The verdict on an implementation's shape."""

    connectable: str
    declaration: Declaration | None
    """What it declares; None when it did not load."""
    problems: tuple[Problem, ...]
    """Every shape problem, each once (where it was first seen)."""
    streams: tuple[StreamShape, ...] = ()
    elapsed: float = 0.0

    @property
    def ok(self) -> bool:
        """True when no shape problem was found (a run may start)."""
        return not self.problems

    @property
    def results(self) -> int:
        """How many results (or returns that were not lists) the streams released, each
        checked."""
        return sum(len(stream.released) for stream in self.streams)

    @property
    def exit_code(self) -> int:
        """``callstream check``'s: 0 when the shape is right and some result showed it, else 2."""
        return 0 if self.ok and self.results else UsageError.exit_code

    def report(self) -> str:
        """What ``callstream check`` prints: what was checked, what the implementation declares,
        what each stream released, then the problems, one a line, or the verdict."""
        lines = [f"callstream check {self.connectable}"]
        if self.declaration is not None:
            declared = self.declaration.to_dict()
            dialects = declared["dialects"]
            read = f"dialect{'s' if len(dialects) > 1 else ''} {', '.join(dialects)}"
            opted = (
                ", route opt-ins " + ", ".join(declared["opt_ins"])
                if declared.get("opt_ins")
                else ""
            )
            lines += [
                f"  declares: profile {declared['profile']}, {read}{opted}",
                "  exposes: " + (", ".join(declared["observables"]) or "nothing"),
                "  fields checked: " + ", ".join(checked_fields(self.declaration.observables)),
            ]
        lines += [f"  {stream.summary()}" for stream in self.streams]
        if self.streams and (untried := [stream.name for stream in PROBES[len(self.streams) :]]):
            lines.append(f"  not tried: {', '.join(untried)}")
        if self.problems:
            lines.append(f"{len(self.problems)} shape problem(s):")
            for problem in self.problems:
                first, *rest = str(problem).splitlines()
                lines += [f"  {first}", *(f"    {line}" for line in rest)]
        elif not self.results:
            lines.append("no stream released a result, so no result's shape could be checked")
        else:
            lines.append(
                f"the shape is right: {self.results} result(s) of {len(self.streams)} stream(s) "
                f"checked ({self.elapsed:.1f} s)"
            )
        return "\n".join(lines) + "\n"


def checked_before_a_run(connectable: str) -> bool:
    """True unless ``connectable`` is one of callstream's own ``http:`` adapters: their shape
    is callstream's, tested by its own suite, and checking it would import the library once
    more."""
    return not connectable.startswith("http:")


def check_in_process(implementation: Implementation) -> ShapeCheck:
    """Check ``implementation``'s shape in this process (as the pytest plugin runs its cases):
    its factory's signature, then every probe."""
    started = time.perf_counter()
    problems = _signature_problems(implementation)
    streams = [] if problems else list(run_probes(implementation))
    return _verdict(implementation, problems, streams, time.perf_counter() - started)


def check_shape(
    implementation: Implementation,
    *,
    timeout: float = 10.0,
    context: WorkerContext | None = None,
) -> ShapeCheck:
    """Check ``implementation``'s shape: its factory's signature here, then every probe in one
    process of its own (started by ``context``, default
    :func:`~callstream.connect.processes.worker_context`), which loads it again from its
    connectable, as a run's workers do. A probe that does not finish within ``timeout``
    seconds, or that ends that process, ends the checking, as what the stream did. A
    :class:`HarnessError` when the process cannot load what this one loaded."""
    started = time.perf_counter()
    problems = _signature_problems(implementation)
    streams = [] if problems else probe_apart(implementation.connectable, timeout, context)
    return _verdict(implementation, problems, streams, time.perf_counter() - started)


def check_command(connectable: str, *, timeout: float, stdout: TextIO) -> int:
    """``callstream check``: load ``connectable`` (a load that fails is its one problem), check
    its shape, print the report; returns the exit code (0 when the shape is right, else 2)."""
    try:
        implementation = load_implementation(connectable)
    except UsageError as exc:
        shape = ShapeCheck(connectable, None, (Problem("load", str(exc)),))
    else:
        shape = check_shape(implementation, timeout=timeout)
    stdout.write(shape.report())
    return shape.exit_code


# -- the factory --------------------------------------------------------------------------------


def _signature_problems(implementation: Implementation) -> list[Problem]:
    """Whether the factory can be called as ``factory(tools=[...], limits=Limits(...))``."""
    factory = implementation.factory
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return []  # a callable without a readable signature: its calls will tell
    try:
        signature.bind(tools=[], limits=Limits())
    except TypeError as exc:
        return [
            Problem(
                "factory",
                f"{implementation.name}{signature} cannot be called as "
                f"factory(tools=[...], limits=Limits(...)): {exc}",
            )
        ]
    return []


def _verdict(
    implementation: Implementation,
    problems: list[Problem],
    streams: list[StreamShape],
    elapsed: float,
) -> ShapeCheck:
    """The check, each problem once: where the same mistake recurs, where it was first seen."""
    seen: set[str] = set()
    unique: list[Problem] = []
    for problem in [*problems, *(p for stream in streams for p in stream.problems)]:
        if problem.message not in seen:
            seen.add(problem.message)
            unique.append(problem)
    return ShapeCheck(
        implementation.connectable,
        implementation.declaration,
        tuple(unique),
        tuple(streams),
        elapsed,
    )

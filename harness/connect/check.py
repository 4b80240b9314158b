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

import contextlib
import difflib
import inspect
import signal
import time
import traceback
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, TextIO

from callstream.reference import Limits, Reason, Tool

from ..core.checks import STATUSES
from ..core.declaration import Declaration, Implementation
from ..core.rendering import render
from ..core.spec import CallPlan, Ending, StreamSpec
from ..core.split import cut
from ..errors import HarnessError, StreamTimeout, UsageError
from .connectables import load_implementation
from .processes import WorkerContext, end_worker, start_worker, worker_context

__all__ = [
    "FIELDS",
    "PROBES",
    "Probe",
    "Problem",
    "ShapeCheck",
    "StreamShape",
    "check_command",
    "check_in_process",
    "check_shape",
    "checked_before_a_run",
    "probe",
]

FIELDS = ("choice", "index", "id", "name", "arguments_text", "arguments", "status", "reason")
"""The fields of a result, in the contract's order (docs/contract.md)."""
REASONS = tuple(reason.value for reason in Reason)
"""The contract's reasons, as ``callstream.reference.Reason`` spells them."""
_LOAD_TIMEOUT = 120.0
"""Seconds the checking process may take to load the implementation, as a run's worker may."""
_REAP_TIMEOUT = 5.0


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an implementation's shape: where it was seen, and what it is."""

    where: str
    """``load``, ``factory``, or ``<stream>, feed() of chunk 2 of 3: result 0``."""
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass(frozen=True, slots=True)
class Probe:
    """A tiny real stream the shape is checked on, fed in three chunks."""

    name: str
    spec: StreamSpec

    def chunks(self) -> list[bytes]:
        """The stream's bytes, rendered by the project's renderer and cut in three."""
        data = render(self.spec).data
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
whose connection ended before it finished (released at ``close()``, rejected
``interrupted``). One tool, one choice: the least an implementation must take."""


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
            lines += [
                f"  declares: profile {declared['profile']}, dialect {declared['dialect']}",
                "  exposes: " + (", ".join(declared["observables"]) or "nothing"),
                "  fields checked: " + ", ".join(_checked_fields(self.declaration.observables)),
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
    streams = [] if problems else list(_probes(implementation))
    return _verdict(implementation, problems, streams, time.perf_counter() - started)


def check_shape(
    implementation: Implementation,
    *,
    timeout: float = 10.0,
    context: WorkerContext | None = None,
) -> ShapeCheck:
    """Check ``implementation``'s shape: its factory's signature here, then every probe in one
    process of its own (started by ``context``, default :func:`worker_context`), which loads it
    again from its connectable, as a run's workers do. A probe that does not finish within
    ``timeout`` seconds, or that ends that process, ends the checking, as what the stream did.
    A :class:`HarnessError` when the process cannot load what this one loaded."""
    started = time.perf_counter()
    problems = _signature_problems(implementation)
    streams = [] if problems else _probe_apart(implementation.connectable, timeout, context)
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


def probe(implementation: Implementation, stream: Probe) -> StreamShape:
    """Run ``stream`` on ``implementation`` in this process: what it released, the shape
    problems in what ``feed()`` and ``close()`` returned, and what it raised, if it did."""
    exposed = implementation.declaration.observables
    chunks = stream.chunks()
    released: list[str] = []
    problems: list[Problem] = []
    doing = "the factory"
    try:
        asm = implementation.factory(tools=list(stream.spec.tools), limits=stream.spec.limits)
        for number, chunk in enumerate(chunks, 1):
            doing = f"feed() of chunk {number} of {len(chunks)}"
            released += _released(asm.feed(chunk), stream.name, doing, exposed, problems)
        doing = "close()"
        released += _released(asm.close(), stream.name, doing, exposed, problems)
    except Exception as exc:  # the implementation's behaviour, for a run to judge
        trouble = f"{doing} raised {_gist(exc)}"
        hung = isinstance(exc, StreamTimeout)  # a program over the pipe that stopped answering
        return StreamShape(stream.name, tuple(released), tuple(problems), trouble, hung)
    return StreamShape(stream.name, tuple(released), tuple(problems))


def _probes(implementation: Implementation) -> Iterator[StreamShape]:
    """What each probe showed, in order, up to one that hung."""
    for stream in PROBES:
        shape = probe(implementation, stream)
        yield shape
        if shape.hung:
            return


# -- one result ---------------------------------------------------------------------------------

_ABSENT: Any = object()


def _released(
    returned: Any, stream: str, doing: str, exposed: Collection[str], problems: list[Problem]
) -> list[str]:
    """Each result of what ``feed()`` or ``close()`` returned (``doing``), summarised; its shape
    problems go to ``problems``."""
    where = f"{stream}, {doing}"
    if not returned:
        return []  # the harness reads None, or anything empty, as nothing released
    if isinstance(returned, str | bytes | Mapping) or not isinstance(returned, Iterable):
        kind = "a mapping (one result?)" if isinstance(returned, Mapping) else _a(returned)
        problems.append(
            Problem(
                where,
                f"returned {kind}, not a list of results (return [result], or [] when nothing "
                "is final)",
            )
        )
        return [f"not a list at {doing}"]
    summaries = []
    for number, result in enumerate(list(returned)):
        found = _result_problems(result, exposed)
        problems += [Problem(f"{where}: result {number}", message) for message in found]
        if found:
            summaries.append(f"a result of the wrong shape at {doing}")
            continue
        fields = _fields(result)
        status, reason = _value(fields["status"]), _value(fields["reason"])
        state = status if reason in (None, _ABSENT) else f"{status} {reason}"
        summaries.append(f"{state} at {doing}")
    return summaries


def _result_problems(result: Any, exposed: Collection[str]) -> list[str]:
    """What is wrong with one result's shape, each a sentence; empty when it is right."""
    if not isinstance(result, Mapping) and not all(
        hasattr(result, name) for name in ("status", "arguments_text")
    ):
        if not any(hasattr(result, name) for name in FIELDS):
            return [
                f"is {_a(result)}, not a mapping or an object with the contract's fields "
                f"({', '.join(FIELDS)})"
            ]
        missing = [name for name in ("status", "arguments_text") if not hasattr(result, name)]
        return [f"{_a(result)} has no attribute {name!r}" for name in missing]
    fields = _fields(result)
    # Without 'status' exposed, a result handed back with none is ready (docs/contract.md).
    ready_by_default = "status" not in exposed and _value(fields["status"]) in (None, _ABSENT)
    problems = [
        message
        for name, rule in _RULES.items()
        if rule.observable is None or rule.observable in exposed
        if not (name == "status" and ready_by_default)
        if (message := rule.problem(name, fields[name])) is not None
    ]
    status, reason = _value(fields["status"]), _value(fields["reason"])
    if "reason" in exposed and status == "rejected" and reason is None:
        problems.append(
            "a rejected result carries no reason, though the declaration exposes 'reason' "
            "(leave it out of 'observables' if rejected results carry none)"
        )
    if (
        "arguments" in exposed
        and status == "ready"
        and not isinstance(fields["arguments"], Mapping)
    ):
        problems.append(
            f"a ready function call's arguments are the parsed JSON object, not "
            f"{_shown(fields['arguments'])} (leave 'arguments' out of 'observables' if results "
            "carry the text only)"
        )
    return problems


def _fields(result: Any) -> dict[str, Any]:
    """The contract's fields of a mapping or an object, :data:`_ABSENT` where one is missing."""
    if isinstance(result, Mapping):
        return {name: result.get(name, _ABSENT) for name in FIELDS}
    return {name: getattr(result, name, _ABSENT) for name in FIELDS}


@dataclass(frozen=True, slots=True)
class _Rule:
    """What one field must hold; ``observable``, when set, decides whether it is checked."""

    types: tuple[type, ...]
    what: str
    observable: str | None = None
    allows_none: bool = False
    spellings: tuple[str, ...] = ()

    def problem(self, name: str, value: Any) -> str | None:
        """What is wrong with ``value`` as field ``name``, or None."""
        if value is _ABSENT:
            return None if self.allows_none else f"has no field {name!r} ({self.what})"
        value = _value(value)
        if value is None:
            return None if self.allows_none else f"field {name!r} is None, not {self.what}"
        if not isinstance(value, self.types) or isinstance(value, bool):
            return f"field {name!r} is {_shown(value)}, not {self.what}"
        if self.spellings and value not in self.spellings:
            close = difflib.get_close_matches(str(value), self.spellings, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            return f"{name} {value!r} is not one of {', '.join(self.spellings)}{hint}"
        return None


_RULES = {
    "choice": _Rule((int,), "an int (0 unless the response has several choices)"),
    "index": _Rule((int,), "an int (the call's position in its choice: 0, 1, 2…)"),
    "id": _Rule((str,), "a str (the call id)", "ids", allows_none=True),
    "name": _Rule((str,), "a str (the function name)", allows_none=True),
    "arguments_text": _Rule((str,), "a str (the argument fragments joined)", "arguments_text"),
    "status": _Rule((str,), "a str (ready or rejected)", spellings=STATUSES),
    "reason": _Rule(
        (str,), "a str (why it was rejected)", "reason", allows_none=True, spellings=REASONS
    ),
}
"""What each field must hold (``arguments`` is any JSON value, checked on ready calls only)."""


def _checked_fields(exposed: Collection[str]) -> list[str]:
    """The fields whose shape is checked, given what the implementation exposes."""
    rules = {name: rule.observable for name, rule in _RULES.items()} | {"arguments": "arguments"}
    return [name for name in FIELDS if rules[name] is None or rules[name] in exposed]


def _value(value: Any) -> Any:
    """An enum member as its value (a ``StrEnum`` status is its string), anything else as is."""
    return value.value if isinstance(value, Enum) else value


def _a(value: Any) -> str:
    """``a str``, ``an int``, ``a CallResult``."""
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _shown(value: Any, limit: int = 60) -> str:
    """A value as a person reads it in a problem: ``None``, ``'0'`` (a str)."""
    if value is None:
        return "None"
    text = repr(value)
    text = text if len(text) <= limit else text[:limit] + "…"
    return f"{text} ({_a(value)})"


def _gist(exc: BaseException) -> str:
    """The last line of the exception as a traceback ends (what ``no_crash`` quotes)."""
    return "".join(traceback.format_exception_only(exc)).strip().splitlines()[-1]


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


# -- the checking process -----------------------------------------------------------------------


def _probe_apart(
    connectable: str, timeout: float, context: WorkerContext | None
) -> list[StreamShape]:
    """Every probe, run in one process of its own; a probe that overruns ``timeout`` or ends
    the process is the last, reported as what its stream did."""
    context = context or worker_context(__name__)
    conn, child = context.Pipe()
    process = context.Process(target=_serve, args=(connectable, child), name="callstream-check")
    process.start()
    child.close()
    try:
        loaded = _next(conn, _LOAD_TIMEOUT)
        if loaded[0] != "ready":
            why = {
                "refused": loaded[-1],
                "ended": "it ended before it loaded it",
                "overran": f"it did not load it within {_LOAD_TIMEOUT:g} s",
            }[loaded[0]]
            raise HarnessError(f"a worker could not load {connectable}: {why}")
        streams: list[StreamShape] = []
        for stream in PROBES:
            said = _next(conn, timeout)
            shape = said[1] if said[0] == "seen" else _stopped(stream, said[0], process, timeout)
            streams.append(shape)
            if shape.hung or said[0] != "seen":
                break
        return streams
    finally:
        end_worker(process)
        conn.close()


def _stopped(stream: Probe, how: str, process: BaseProcess, timeout: float) -> StreamShape:
    """The probe during which the checking process ``ended`` or ``overran`` the timeout."""
    if how == "overran":
        return StreamShape(
            stream.name, trouble=f"did not finish within the timeout ({timeout:g} s)", hung=True
        )
    process.join(_REAP_TIMEOUT)  # the keeper first kills what the implementation left
    return StreamShape(
        stream.name, trouble=f"ended the process it ran in ({_how(process.exitcode)})"
    )


def _next(conn: Connection, timeout: float) -> tuple[Any, ...]:
    """The checking process's next message: ``("ready",)``, ``("refused", why)``,
    ``("seen", StreamShape)``, or ``("ended",)`` when it ended, ``("overran",)`` when it said
    nothing within ``timeout`` seconds."""
    if not conn.poll(timeout):
        return ("overran",)
    try:
        message: tuple[Any, ...] = conn.recv()
    except (EOFError, OSError):
        return ("ended",)
    return message


def _serve(connectable: str, conn: Connection) -> None:
    """The checking process: load the implementation, then send what each probe showed. On
    Linux the process called splits first, as a run's worker does: it stays behind as the
    keeper of the rest, so nothing the implementation starts outlives the check."""
    start_worker(conn)
    try:
        implementation = load_implementation(connectable)
    except UsageError as exc:
        conn.send(("refused", str(exc)))
        return
    conn.send(("ready",))
    for shape in _probes(implementation):
        conn.send(("seen", shape))


def _how(code: int | None) -> str:
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"

"""Running one case on an implementation, whatever the implementation does: in this process, where
what it raises is its crash and a stream it takes too long over is interrupted by a signal, or
alone in a process of its own, which it may end or hang as it likes."""

from __future__ import annotations

import faulthandler
import multiprocessing
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.context import ForkContext, SpawnContext
from typing import Any

from ..connect.connectables import load_implementation
from ..core.case import CaseResult, run_case
from ..core.checks import CHECKS
from ..core.declaration import Implementation
from ..core.judgement import Failure
from ..core.spec import Scenario, Splitting
from ..errors import HarnessError, ImplementationExit, StreamTimeout

Run = Callable[[Scenario, str, Splitting], CaseResult]
"""Runs one case (scenario, profile, splitting) on the implementation, whatever it does."""


class InProcess:
    """Cases run in this process: the implementation's ``BaseException`` becomes its crash, and
    a signal interrupts a stream after ``timeout`` seconds. A stream whose implementation
    catches that interruption and carries on still fails ``no_hang``; one that never gives
    control back is for the supervising process to notice."""

    def __init__(self, implementation: Implementation, timeout: float) -> None:
        self.implementation = implementation
        self.factories: dict[str, Callable[..., Any]] = {}
        """The implementation's factory for each dialect it was asked to read."""
        self.exposed = implementation.declaration.observables
        self.timeout = timeout

    def __call__(self, scenario: Scenario, profile: str, splitting: Splitting) -> CaseResult:
        """The verdict on the case, run here."""
        try:
            with _time_limit(self.timeout) as timer:
                case = run_case(scenario, profile, splitting, self._factory(scenario), self.exposed)
        except StreamTimeout:  # the signal came between two calls into the implementation
            return _failed(scenario, profile, splitting, "no_hang", self._late())
        if timer.fired and not any(failure.check == "no_hang" for failure in case.failures):
            message = self._late() + ", and the implementation caught the interruption"
            return _failed(scenario, profile, splitting, "no_hang", message)
        return case

    def _factory(self, scenario: Scenario) -> Callable[..., Any]:
        dialect = scenario.spec.dialect
        if dialect not in self.factories:
            self.factories[dialect] = _contained(self.implementation.factory_for(dialect))
        return self.factories[dialect]

    def _late(self) -> str:
        return f"the implementation did not finish the stream within {self.timeout:g} s"


class Isolated:
    """Cases run each in a process of its own, forked from this one where the platform can
    fork: one that ends its process fails ``no_crash``, one still running after ``timeout``
    seconds is killed and fails ``no_hang``."""

    def __init__(self, connectable: str, timeout: float) -> None:
        self.connectable = connectable
        self.timeout = timeout
        methods = multiprocessing.get_all_start_methods()
        self.context: ForkContext | SpawnContext = multiprocessing.get_context(
            "fork" if "fork" in methods else "spawn"
        )  # type: ignore[assignment]

    def __call__(self, scenario: Scenario, profile: str, splitting: Splitting) -> CaseResult:
        """The verdict on the case, run in a new process."""
        receive, send = self.context.Pipe(duplex=False)
        task = (self.connectable, scenario, profile, splitting, self.timeout, send)
        process = self.context.Process(target=_run_alone, args=task, daemon=True)
        process.start()
        send.close()
        answered = False
        message: tuple[str, Any] | None = None
        try:
            # The process interrupts itself at the timeout; killed only if that did not work.
            answered = receive.poll(self.timeout + min(1.0, self.timeout))
            if answered:
                message = receive.recv()
        except EOFError:  # it ended without answering
            pass
        finally:
            receive.close()
            if answered:  # it answered, or ended: it ends by itself, with its own exit status
                process.join(1.0)
            if process.exitcode is None:
                process.kill()
                process.join()
        if message is not None:
            kind, payload = message
            if kind == "error":
                raise HarnessError(f"the harness could not run a case: {payload}")
            result: CaseResult = payload
            return result
        if not answered:
            how = f"did not finish the stream within {self.timeout:g} s and was killed"
            return _failed(scenario, profile, splitting, "no_hang", f"the implementation {how}")
        how = f"ended the process running the stream ({_how(process)})"
        return _failed(scenario, profile, splitting, "no_crash", f"the implementation {how}")


def _run_alone(
    connectable: str,
    scenario: Scenario,
    profile: str,
    splitting: Splitting,
    timeout: float,
    send: Connection,
) -> None:
    """A process of one case: run it, send the verdict."""
    # A crash is the expected end of this process, not news: no fault handler's stack dump.
    faulthandler.disable()
    try:
        # Interrupted in process first, so an implementation that can be interrupted gives
        # the same verdict here as in a search process; the parent kills it otherwise.
        run = InProcess(load_implementation(connectable), timeout)
        answer: tuple[str, Any] = ("result", run(scenario, profile, splitting))
    except Exception:
        answer = ("error", traceback.format_exc())
    send.send(answer)
    send.close()


def _contained(factory: Callable[..., Any]) -> Callable[..., Any]:
    """``factory`` whose assemblers raise :class:`ImplementationExit` for what they raise that
    is not an ``Exception`` (``observe`` records an ``Exception`` as the crash), and hand back
    their results as lists, so a generator's exceptions come out here too."""

    def make(**arguments: Any) -> Any:
        return _Contained(_call(factory, "the factory", **arguments))

    return make


class _Contained:
    """An assembler whose ``feed`` and ``close`` raise only ``Exception``; other attributes
    (``findings``) are the assembler's own."""

    def __init__(self, assembler: Any) -> None:
        self._assembler = assembler
        self._feed = assembler.feed

    def feed(self, data: bytes) -> Any:
        # Called for every chunk (hundreds per example when a stream is cut byte by byte), so
        # it is inlined rather than :func:`_call`, and the usual answer, a list, skips the
        # ``Iterator`` check (an ABC's isinstance): about 0.8 µs a chunk down to 0.2.
        try:
            results = self._feed(data)
            if results.__class__ is list:
                return results
            return list(results) if isinstance(results, Iterator) else results
        except Exception:
            raise
        except BaseException as exc:
            raise _exit(exc, "feed()") from exc

    def close(self) -> Any:
        return _call(self._assembler.close, "close()")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._assembler, name)


def _call(function: Callable[..., Any], where: str, *args: Any, **kwargs: Any) -> Any:
    try:
        results = function(*args, **kwargs)
        return list(results) if isinstance(results, Iterator) else results
    except Exception:
        raise
    except BaseException as exc:
        raise _exit(exc, where) from exc


def _exit(exc: BaseException, where: str) -> ImplementationExit:
    """What a ``BaseException`` that came out of ``where`` is raised as."""
    return ImplementationExit(
        f"{exc!r} came out of {where}; it would have ended the fuzzing process"
    )


def _failed(
    scenario: Scenario, profile: str, splitting: Splitting, check: str, message: str
) -> CaseResult:
    """The verdict on a case whose implementation did not come back from a stream."""
    rules = next(known.rules for known in CHECKS if known.name == check)
    failure = Failure(check, rules, message)
    return CaseResult.of(scenario, profile, splitting, "failed", failures=(failure,))


def _how(process: Any) -> str:
    """How a process ended: ``exit code 3``, ``killed by SIGSEGV``."""
    code = process.exitcode
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


@dataclass
class _Timer:
    fired: bool = False


@contextmanager
def _time_limit(seconds: float) -> Iterator[_Timer]:
    """Interrupt the implementation with :class:`StreamTimeout` (recorded as a hang, which
    fails ``no_hang`` and is shrunk like any failure) when one example's stream takes longer
    than ``seconds``; the timer says whether it fired. A signal timer, so only in a main thread
    where SIGALRM exists: the command's worker processes; elsewhere the example runs
    unbounded."""
    timer = _Timer()
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield timer
        return

    def interrupt(signum: int, frame: Any) -> None:
        timer.fired = True
        raise StreamTimeout(f"the implementation did not finish the stream within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield timer
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

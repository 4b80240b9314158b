"""Implementations that fight the fuzzer: each is the reference on a stream that offers one tool,
and on a stream that offers two or more (which the generators draw within a few examples, and
which shrinks to exactly two tools) ends its process, raises what is not an ``Exception``, or
hangs in a way the fuzzer's timeout cannot interrupt.

``HOSTILE`` maps each factory's name to the check its misbehaviour must fail.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from callstream.reference import Assembler, Limits, Tool


class Escape(BaseException):
    """An exception that is not an ``Exception``."""


def _forever() -> None:
    while True:
        time.sleep(60)


class _Misbehaves:
    """An assembler that does ``act`` in ``feed()`` (or in ``close()``)."""

    def __init__(self, act: Callable[[], Any], *, in_close: bool = False) -> None:
        self.act = act
        self.in_close = in_close

    def feed(self, data: bytes) -> Any:
        return [] if self.in_close else self.act()

    def close(self) -> Any:
        return self.act() if self.in_close else []


def _exits_lazily() -> Iterator[Any]:
    """A generator of results that raises SystemExit once it is iterated."""
    sys.exit(0)
    yield  # pragma: no cover - makes this a generator


def _swallows_the_timeout() -> None:
    while True:
        with contextlib.suppress(BaseException):  # the fuzzer's interruption too
            _forever()


def _blocks_the_alarm() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    _forever()


def _ignores_the_alarm() -> None:
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    _forever()


def _cancels_the_timer() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)
    _forever()


def _carries_on_after_the_timeout() -> list[Any]:
    try:
        _forever()
    except BaseException:
        return []
    return []  # pragma: no cover


def _raise(exception: BaseException) -> Callable[[], Any]:
    def act() -> Any:
        raise exception

    return act


ACTS: dict[str, tuple[Callable[[], Any], bool, str]] = {
    # name: (what feed() or close() does, in close()?, the check it fails)
    "os_exit_zero": (lambda: os._exit(0), False, "no_crash"),
    "os_exit_three": (lambda: os._exit(3), False, "no_crash"),
    "sys_exit_zero": (lambda: sys.exit(0), False, "no_crash"),
    "sys_exit_in_close": (lambda: sys.exit(0), True, "no_crash"),
    "exits_from_a_generator": (_exits_lazily, False, "no_crash"),
    "keyboard_interrupt": (_raise(KeyboardInterrupt()), False, "no_crash"),
    "generator_exit": (_raise(GeneratorExit()), False, "no_crash"),
    "base_exception": (_raise(Escape("not an Exception")), False, "no_crash"),
    "segfaults": (lambda: ctypes.string_at(0), False, "no_crash"),
    "aborts": (os.abort, False, "no_crash"),
    "kills_itself": (lambda: os.kill(os.getpid(), signal.SIGKILL), False, "no_crash"),
    "swallows_the_timeout": (_swallows_the_timeout, False, "no_hang"),
    "blocks_the_alarm": (_blocks_the_alarm, False, "no_hang"),
    "ignores_the_alarm": (_ignores_the_alarm, False, "no_hang"),
    "cancels_the_timer": (_cancels_the_timer, False, "no_hang"),
    "carries_on_after_the_timeout": (_carries_on_after_the_timeout, False, "no_hang"),
}


def _factory(name: str) -> Callable[..., Any]:
    act, in_close, _ = ACTS[name]

    def factory(*, tools: Sequence[Tool], limits: Limits) -> Any:
        if len(tools) < 2:
            return Assembler(tools, limits=limits)
        return _Misbehaves(act, in_close=in_close)

    factory.__name__ = name
    factory.__doc__ = f"The reference on one tool; {name.replace('_', ' ')} on two or more."
    return factory


def exits_in_the_factory(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """The reference on one tool; ``sys.exit(0)`` from the factory itself on two or more."""
    if len(tools) < 2:
        return Assembler(tools, limits=limits)
    sys.exit(0)


HOSTILE: dict[str, str] = {name: check for name, (_, _, check) in ACTS.items()}
HOSTILE["exits_in_the_factory"] = "no_crash"

os_exit_zero = _factory("os_exit_zero")
os_exit_three = _factory("os_exit_three")
sys_exit_zero = _factory("sys_exit_zero")
sys_exit_in_close = _factory("sys_exit_in_close")
exits_from_a_generator = _factory("exits_from_a_generator")
keyboard_interrupt = _factory("keyboard_interrupt")
generator_exit = _factory("generator_exit")
base_exception = _factory("base_exception")
segfaults = _factory("segfaults")
aborts = _factory("aborts")
kills_itself = _factory("kills_itself")
swallows_the_timeout = _factory("swallows_the_timeout")
blocks_the_alarm = _factory("blocks_the_alarm")
ignores_the_alarm = _factory("ignores_the_alarm")
cancels_the_timer = _factory("cancels_the_timer")
carries_on_after_the_timeout = _factory("carries_on_after_the_timeout")

"""Implementations without the contract's shape, and some with it that misbehave on every stream,
for ``callstream check`` and the shape check before a run. Unlike the other fauxmplementations
they need no trigger: a shape is wrong on every stream. Each is the reference assembler with its
results (as ``CallResult.to_dict()``) bent one way.

Wrong shapes: ``done_status``, ``capital_status``, ``misspelt_reason``, ``string_index``,
``returns_one_result``, ``returns_a_call_result``, ``objects_without_text``,
``rejected_without_reason``, ``text_as_arguments``, ``takes_tool_list``.

Right shapes, for the check to accept: ``text_only`` (hands back no parsed arguments and a
numeric id, declaring neither); and, misbehaving, which a run judges: ``raises_always``,
``raises_on_truncation``, ``hangs_always``, ``exits_always``, ``daemon_then_hangs`` (starts a
daemon, writing its pid to the file ``$CALLSTREAM_TEST_PIDS`` names, then hangs).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from callstream.reference import Assembler, CallResult, Limits, Tool

from .spawning import spawn

Bend = Callable[[dict[str, Any]], dict[str, Any]]

EXIT_CODE = 5


class _Bent:
    """The reference, each result handed back as a dict bent by ``bend``."""

    def __init__(self, tools: Sequence[Tool], limits: Limits, bend: Bend) -> None:
        self.assembler = Assembler(tools, limits=limits)
        self.bend = bend

    def feed(self, data: bytes) -> Any:
        return [self.bend(result.to_dict()) for result in self.assembler.feed(data)]

    def close(self) -> Any:
        return [self.bend(result.to_dict()) for result in self.assembler.close()]


def _factory(bend: Bend, doc: str) -> Callable[..., Any]:
    def factory(*, tools: Sequence[Tool], limits: Limits) -> Any:
        return _Bent(tools, limits, bend)

    factory.__doc__ = doc
    return factory


def _ready_as(status: str) -> Bend:
    def bend(result: dict[str, Any]) -> dict[str, Any]:
        return {**result, "status": status} if result["status"] == "ready" else result

    return bend


def _misspell(result: dict[str, Any]) -> dict[str, Any]:
    reason = result["reason"]
    return {**result, "reason": reason[:-1]} if reason else result


done_status = _factory(_ready_as("done"), "Hands back a ready call with status 'done'.")
capital_status = _factory(_ready_as("Ready"), "Hands back a ready call with status 'Ready'.")
misspelt_reason = _factory(_misspell, "Drops a reason's last letter: 'truncate'.")
string_index = _factory(
    lambda result: {**result, "index": str(result["index"])}, "Hands back the index as text."
)
rejected_without_reason = _factory(
    lambda result: {**result, "reason": None}, "Rejects calls without a reason, declaring it."
)
text_as_arguments = _factory(
    lambda result: {**result, "arguments": result["arguments_text"]},
    "Hands back the argument text as the arguments, declaring parsed ones.",
)
text_only = _factory(
    lambda result: {**result, "arguments": None, "id": 7},
    "Hands back no parsed arguments and a numeric id, declaring neither.",
)
text_only.CALLSTREAM = {  # type: ignore[attr-defined]
    "observables": ["incremental", "status", "reason", "arguments_text", "choices"]
}


class _Unlisted:
    """The reference, handing back a single result as itself rather than in a list."""

    def __init__(self, tools: Sequence[Tool], limits: Limits, as_dict: bool) -> None:
        self.assembler = Assembler(tools, limits=limits)
        self.as_dict = as_dict

    def _one(self, results: list[CallResult]) -> Any:
        if not results:
            return None
        return results[0].to_dict() if self.as_dict else results[0]

    def feed(self, data: bytes) -> Any:
        return self._one(self.assembler.feed(data))

    def close(self) -> Any:
        return self._one(self.assembler.close())


def returns_one_result(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Returns the one result a chunk made final as a dict, not in a list."""
    return _Unlisted(tools, limits, as_dict=True)


def returns_a_call_result(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Returns the one result a chunk made final as a CallResult, not in a list."""
    return _Unlisted(tools, limits, as_dict=False)


class _Call:
    """A result object without the contract's ``arguments_text``."""

    def __init__(self, result: CallResult) -> None:
        self.choice = result.choice
        self.index = result.index
        self.status = result.status


class _Objects:
    def __init__(self, tools: Sequence[Tool], limits: Limits) -> None:
        self.assembler = Assembler(tools, limits=limits)

    def feed(self, data: bytes) -> Any:
        return [_Call(result) for result in self.assembler.feed(data)]

    def close(self) -> Any:
        return [_Call(result) for result in self.assembler.close()]


def objects_without_text(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Hands back objects with a status but no ``arguments_text`` attribute."""
    return _Objects(tools, limits)


def takes_tool_list(tool_list: Sequence[Tool], limits: Limits) -> Any:
    """A factory whose first parameter is not named ``tools``."""
    return Assembler(tool_list, limits=limits)


class _Misbehaves:
    """The reference, doing ``act`` in every ``feed()`` (or in those whose chunk holds
    ``only_on``)."""

    def __init__(
        self, tools: Sequence[Tool], limits: Limits, act: Callable[[], Any], only_on: bytes = b""
    ) -> None:
        self.assembler = Assembler(tools, limits=limits)
        self.act = act
        self.only_on = only_on

    def feed(self, data: bytes) -> Any:
        if self.only_on in data:
            self.act()
        return self.assembler.feed(data)

    def close(self) -> Any:
        return self.assembler.close()


def _raise() -> None:
    raise RuntimeError("misshapen: feed() raised")


def _hang() -> None:
    while True:
        time.sleep(60)


def _exit() -> None:
    os._exit(EXIT_CODE)


def raises_always(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Raises from every ``feed()``."""
    return _Misbehaves(tools, limits, _raise)


def raises_on_truncation(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Raises from the ``feed()`` that brings a ``length`` finish reason; the reference else."""
    return _Misbehaves(tools, limits, _raise, only_on=b'"length"')


def hangs_always(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Never returns from ``feed()``."""
    return _Misbehaves(tools, limits, _hang)


def exits_always(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Ends its process (``os._exit(5)``) in ``feed()``."""
    return _Misbehaves(tools, limits, _exit)


def daemon_then_hangs(*, tools: Sequence[Tool], limits: Limits) -> Any:
    """Starts a daemon (forked twice, ``setsid`` between), records its pid in the file
    ``$CALLSTREAM_TEST_PIDS`` names, then never returns from ``feed()``."""
    with open(os.environ["CALLSTREAM_TEST_PIDS"], "a") as pids:
        pids.write(f"{spawn(daemon=True)}\n")
    return _Misbehaves(tools, limits, _hang)

"""What every ``http:`` adapter shares: buffer a stream, serve it from the provider emulator to a
client library, and report what the library assembled in the contract's terms.

Theory of operation. The harness feeds an adapter chunks as it feeds any implementation; the
adapter keeps them (``feed`` releases nothing) and, at ``close()``, registers them with this
process's emulator (started on first use, on ``127.0.0.1``), points the library at its base URL
with the registered model name and the tools offered, and converts the calls the library hands
back into results. So every result comes out at ``close()``: release timing (C4) cannot be
observed, and no adapter exposes it.

How a library's answer maps onto the contract:

- a call the library hands back as part of the assistant message is ``ready``, with the
  library's own parse of its arguments where it has one, else ``json.loads`` of the text (what
  its users do); text that does not parse is rejected ``malformed_json`` (the exception the
  caller would get), never ready;
- what the library flags as invalid is rejected with the closest reason;
- an exception that is the library's documented signal of a bad stream (openai's in-band
  ``APIError``, ``LengthFinishReasonError``…) rejects the calls it cut short with the matching
  reason; any other exception is raised, so the harness records it as the library's crash.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from reference_impl import Limits, Tool

from ..connect import OBSERVABLES, Declaration
from ..emulator import Emulator

__all__ = [
    "AT_CLOSE",
    "MESSAGES",
    "HttpAdapter",
    "call_result",
    "openai_tools",
    "shared_emulator",
]

MESSAGES = [{"role": "user", "content": "Call the tools."}]
"""The conversation every adapter sends: the emulator answers whatever is asked."""
AT_CLOSE = frozenset(OBSERVABLES) - {"incremental", "findings"}
"""What an adapter exposes at most: every result comes out at ``close()`` (release timing is not
observable) and no library records the quirks of §7."""
TIMEOUT = 30.0
"""Seconds a library may wait on the emulator; the runner's per-case timeout comes first."""

_emulator: Emulator | None = None
_emulator_pid = 0
_emulator_lock = threading.Lock()


def shared_emulator() -> Emulator:
    """This process's provider emulator, started on first use (each worker starts its own)."""
    global _emulator, _emulator_pid
    with _emulator_lock:
        if _emulator is None or _emulator_pid != os.getpid():
            _emulator = Emulator().start()
            _emulator_pid = os.getpid()
        return _emulator


class HttpAdapter(ABC):
    """A client library under test: what it is, what it exposes, and how it runs one request.

    An instance is the connectable's factory: ``adapter(tools=…, limits=…)`` makes the object
    the harness feeds.
    """

    distributions: tuple[str, ...]
    """The installed distributions whose versions a report shows (the library first)."""
    declaration: Declaration

    @abstractmethod
    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """Run the library against ``base_url`` asking ``model`` with ``tools`` offered; the
        results, in the contract's shape."""

    @property
    def versions(self) -> dict[str, str]:
        """The version of each of ``distributions`` installed."""
        found = {}
        for distribution in self.distributions:
            with contextlib.suppress(metadata.PackageNotFoundError):
                found[distribution] = metadata.version(distribution)
        return found

    def __call__(self, *, tools: Sequence[Tool], limits: Limits) -> _Session:
        """The object one stream is fed to."""
        return _Session(self, tuple(tools))


class _Session:
    """Keeps the chunks; at ``close()`` serves them to the library and returns its results."""

    def __init__(self, adapter: HttpAdapter, tools: tuple[Tool, ...]) -> None:
        self._adapter = adapter
        self._tools = tools
        self._chunks: list[bytes] = []

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """Keep ``chunk``; nothing is released before the library has seen the whole stream."""
        self._chunks.append(bytes(chunk))
        return []

    def close(self) -> list[dict[str, Any]]:
        """Serve the chunks to the library, one write each, and report what it assembled."""
        emulator = shared_emulator()
        model = emulator.register(self._chunks)
        try:
            return self._adapter.assemble(emulator.base_url, model, self._tools)
        finally:
            emulator.unregister(model)


def openai_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """``tools`` as the ``tools`` field of a chat-completions request."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "parameters": dict(tool.parameters or {"type": "object", "properties": {}}),
            },
        }
        for tool in tools
    ]


_UNPARSED: Any = object()


def call_result(
    choice: Any,
    index: int,
    call_id: Any,
    name: Any,
    arguments_text: Any,
    *,
    arguments: Any = _UNPARSED,
    rejected: str | None = None,
) -> dict[str, Any]:
    """One result in the contract's shape. A call not ``rejected`` is ready with ``arguments``
    (the library's parse) or, when the library gave none, ``json.loads(arguments_text)``; text
    that does not parse makes it rejected ``malformed_json``."""
    result = {
        "choice": choice,
        "index": index,
        "id": call_id,
        "name": name,
        "arguments_text": arguments_text,
        "arguments": None,
        "status": "rejected",
        "reason": rejected,
    }
    if rejected is not None:
        return result
    if arguments is _UNPARSED:
        try:
            arguments = json.loads(arguments_text)
        except (TypeError, ValueError):
            result["reason"] = "malformed_json"
            return result
    result.update(arguments=arguments, status="ready")
    return result

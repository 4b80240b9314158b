"""What every ``http:`` adapter shares: buffer a stream, serve it from the provider emulator to a
client library, and report what the library handed back in the contract's terms.

Theory of operation. The harness feeds an adapter chunks as it feeds any implementation; the
adapter keeps them (``feed`` releases nothing) and, at ``close()``, registers them with this
process's emulator (started on first use, on ``127.0.0.1``), points the library at its base URL
with the registered model name and the tools offered, runs the library the way its users do,
and converts what the user's code would get into results. So every result comes out at
``close()``: no adapter exposes release timing ("incremental"), whatever the library does.

An adapter declares what it exposes (:class:`~callstream.core.declaration.Declaration`), never what
the library means to do: every check whose observable exists runs. How a library's answer maps
onto the contract:

- a call the library hands back for the caller to run is ``ready``, whatever its text: the
  library has declared it runnable. Its arguments are the library's own parse where it makes
  one; a library that hands back only the text exposes no ``arguments`` (its caller's
  ``json.loads`` is no part of the library);
- what the library itself sets apart as invalid is rejected with the closest reason;
- an exception that is the library's documented signal of a bad stream (openai's in-band
  ``APIError``, ``LengthFinishReasonError``…) rejects the calls it cut short with the matching
  reason; any other exception is raised, so the harness records it as the library's crash.
"""

from __future__ import annotations

import contextlib
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from callstream.reference import Limits, Tool

from ...core.declaration import Declaration
from ...emulator import Emulator

__all__ = [
    "MESSAGES",
    "HttpAdapter",
    "call_result",
    "custom_result",
    "function_tools",
    "in_band_error",
    "openai_tools",
    "shared_emulator",
]

MESSAGES = [{"role": "user", "content": "Call the tools."}]
"""The conversation every adapter sends: the emulator answers whatever is asked."""
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
    """What the adapter can observe of the library: never "incremental" (see the module)."""

    @abstractmethod
    def assemble(self, base_url: str, model: str, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        """Run the library against ``base_url`` asking ``model`` with ``tools`` offered, as its
        users do; what their code would get, in the contract's shape."""

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
    """``tools`` as the ``tools`` field of a chat-completions request: a function tool with its
    parameters, a custom tool with its input format (``{"type": "custom", "custom": …}``)."""
    return [_custom_tool(tool) if tool.kind == "custom" else _function_tool(tool) for tool in tools]


def function_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """``tools`` as function tools only, a custom tool offered as a function of the same name:
    for a library that can declare no chat-completions custom tool."""
    return [_function_tool(tool) for tool in tools]


def _function_tool(tool: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "parameters": dict(tool.parameters or {"type": "object", "properties": {}}),
        },
    }


def _custom_tool(tool: Tool) -> dict[str, Any]:
    custom: dict[str, Any] = {"name": tool.name}
    if tool.format is not None:
        custom["format"] = dict(tool.format)
    return {"type": "custom", "custom": custom}


def call_result(
    choice: Any,
    index: int,
    call_id: Any,
    name: Any,
    arguments_text: Any,
    *,
    arguments: Any = None,
    rejected: str | None = None,
) -> dict[str, Any]:
    """One result in the contract's shape: ``ready`` unless ``rejected`` gives the reason, with
    ``arguments`` the library's own parse where it makes one (a rejected call has none)."""
    return {
        "choice": choice,
        "index": index,
        "id": call_id,
        "name": name,
        "arguments_text": arguments_text,
        "arguments": None if rejected is not None else arguments,
        "status": "ready" if rejected is None else "rejected",
        "reason": rejected,
    }


def custom_result(
    choice: Any, index: int, call_id: Any, name: Any, text: Any, *, rejected: str | None = None
) -> dict[str, Any]:
    """A custom tool call's result: its input is its value, verbatim, never parsed as JSON."""
    return {
        **call_result(choice, index, call_id, name, text, arguments=text, rejected=rejected),
        "kind": "custom",
    }


def in_band_error(exc: BaseException | None) -> bool:
    """True for the openai SDK's ``APIError`` raised on an error payload inside a 200 stream:
    the provider's documented way to fail a stream once it has begun. An HTTP status or a
    connection failure is the emulator's or the harness's, never the stream's."""
    import openai  # each adapter's library speaks through the openai SDK; loaded only for them

    return isinstance(exc, openai.APIError) and not isinstance(
        exc, openai.APIStatusError | openai.APIConnectionError
    )

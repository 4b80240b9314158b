"""What every ``http:`` adapter shares: buffer a stream, serve it from the provider emulator to a
client library, and report what the library assembled in the contract's terms.

Theory of operation. The harness feeds an adapter chunks as it feeds any implementation; the
adapter keeps them (``feed`` releases nothing) and, at ``close()``, registers them with this
process's emulator (started on first use, on ``127.0.0.1``), points the library at its base URL
with the registered model name and the tools offered, and converts the calls the library hands
back into results. So every result comes out at ``close()``: release timing (C4) cannot be
observed, and no adapter claims it.

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
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from reference_impl import Limits, Tool

from ..connect import Claims
from ..emulator import Emulator
from ..rules import rule_group
from ..spec import Scenario

__all__ = [
    "MESSAGES",
    "OBSERVABLE",
    "HttpAdapter",
    "LibraryClaims",
    "call_result",
    "openai_tools",
    "shared_emulator",
]

MESSAGES = [{"role": "user", "content": "Call the tools."}]
"""The conversation every adapter sends: the emulator answers whatever is asked."""
OBSERVABLE = frozenset(
    [*(f"A{n}" for n in range(1, 8)), *(f"T{n}" for n in range(1, 5)), "C1"]
    + [f"E{n}" for n in range(1, 5)]
)
"""The rules any adapter can observe in what a library hands back at the end of a stream:
assembly (A1–A7; A8 is no part of the contract), transport (T), the finish signal (C1) and
dispatch (E). Release timing (C4) is not among them: every result comes out at ``close()``."""
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


@dataclass(frozen=True, slots=True)
class LibraryClaims(Claims):
    """What a client library claims, rule by rule rather than by group: an adapter can observe
    only part of a group (never release timing), and a library often does only part of one
    (langchain parses arguments, V1, but checks no schema, V2)."""

    groups: frozenset[str] = frozenset()
    """Whole rule groups claimed: none, unless a library does all a group asks."""
    rules: frozenset[str] = frozenset()
    """Every rule claimed, besides those of ``groups``."""
    single_choice: bool = False
    """The library assembles one choice only (it refuses ``n > 1`` when streaming, or its
    events name no choice), so scenarios with several choices are outside its claims."""

    def unclaimed(self, scenario: Scenario) -> str | None:
        """Why ``scenario`` is outside these claims, or None when it is claimed."""
        if self.single_choice and _choices(scenario) > 1:
            return "the library assembles a single choice; the scenario has several"
        missing = [
            rule
            for rule in scenario.rules
            if rule_group(rule) not in self.groups and rule not in self.rules
        ]
        if missing:
            which = "rule is" if len(missing) == 1 else "rules are"
            return f"{which} not claimed by the library: {', '.join(missing)}"
        cited = frozenset(rule_group(rule) for rule in scenario.rules)
        return Claims(self.groups | cited, self.profile, self.dialect).unclaimed(scenario)

    def to_dict(self) -> dict[str, Any]:
        """The claims as the report header shows them: rule groups and single rules."""
        claimed = sorted(self.groups | self.rules)
        return {
            "rules": claimed,
            "profile": self.profile,
            "dialect": self.dialect,
            "single_choice": self.single_choice,
        }


def _choices(scenario: Scenario) -> int:
    """How many choices the scenario's stream carries: its plan's or, for a literal stream, up
    to the highest choice index its payloads or its expectation name."""
    spec = scenario.spec
    seen: set[Any] = {
        call.choice for expected in (spec.expected or {}).values() for call in expected.calls
    }
    for payload in spec.literal_events or ():
        data = payload.get("data", payload) if isinstance(payload, dict) else payload
        if isinstance(data, dict) and isinstance(data.get("choices"), list):
            seen |= {c.get("index") for c in data["choices"] if isinstance(c, dict)}
    return max(spec.choices, 1 + max((c for c in seen if isinstance(c, int)), default=0))


class HttpAdapter(ABC):
    """A client library under test: what it is, what it claims, and how it runs one request.

    An instance is the connectable's factory: ``adapter(tools=…, limits=…)`` makes the object
    the harness feeds.
    """

    distributions: tuple[str, ...]
    """The installed distributions whose versions a report shows (the library first)."""
    claims: LibraryClaims

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

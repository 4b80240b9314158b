"""A small assembler written the way an implementer would, from docs/contract.md alone, for
the test that installs callstream's wheel outside the checkout (tests/test_installed.py).

It reads the SSE lines of an OpenAI Chat Completions stream, routes fragments by their
tool-call index, and releases the calls of a choice at its finish reason. Its one deliberate
bug is a common one: every finish reason counts as done, so a call cut by the token limit
(``finish_reason: length``) is handed back ready (rule C3).
"""

from __future__ import annotations

import json
from typing import Any

CALLSTREAM = {
    "profile": "lenient",
    "observables": ["status", "reason", "arguments_text", "arguments", "ids"],
}


class Assembler:
    """One stream's calls, fed bytes as they arrive."""

    def __init__(self, tools: Any, limits: Any) -> None:
        self._pending = b""
        self._calls: dict[int, dict[str, Any]] = {}
        self._released = False

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """The calls that became final with ``chunk``."""
        self._pending += chunk
        released: list[dict[str, Any]] = []
        while b"\n" in self._pending:
            line, self._pending = self._pending.split(b"\n", 1)
            text = line.decode("utf-8").rstrip("\r")
            if not text.startswith("data:"):
                continue
            payload = text[5:].strip()
            if payload == "[DONE]":
                continue
            for choice in json.loads(payload).get("choices") or []:
                for delta in (choice.get("delta") or {}).get("tool_calls") or []:
                    call = self._calls.setdefault(
                        delta.get("index", 0), {"id": None, "name": None, "text": ""}
                    )
                    function = delta.get("function") or {}
                    call["id"] = delta.get("id") or call["id"]
                    call["name"] = function.get("name") or call["name"]
                    call["text"] += function.get("arguments") or ""
                if choice.get("finish_reason") and not self._released:
                    released += self._release("ready", None)
        return released

    def close(self) -> list[dict[str, Any]]:
        """The connection ended: whatever was not released is interrupted."""
        return [] if self._released else self._release("rejected", "interrupted")

    def _release(self, status: str, reason: str | None) -> list[dict[str, Any]]:
        self._released = True
        results = []
        for position, (_, call) in enumerate(sorted(self._calls.items())):
            try:
                arguments = json.loads(call["text"] or "{}") if status == "ready" else None
            except ValueError:
                status, reason, arguments = "rejected", "malformed_json", None
            results.append(
                {
                    "choice": 0,
                    "index": position,
                    "id": call["id"],
                    "name": call["name"],
                    "arguments_text": call["text"],
                    "arguments": arguments,
                    "status": status,
                    "reason": reason,
                }
            )
        return results


def factory(tools: Any, limits: Any) -> Assembler:
    """A new assembler for one stream."""
    return Assembler(tools, limits)

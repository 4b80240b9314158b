"""The values that cross the reference assembler's public surface."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

__all__ = [
    "CallKind",
    "CallPreview",
    "CallResult",
    "Finding",
    "Limits",
    "Reason",
    "Status",
    "Tool",
]

CallKind = Literal["function", "custom"]
"""What a tool takes: JSON arguments (``function``) or free text in a declared format
(``custom``: Chat Completions ``{"type": "custom", "custom": {"name", "input"}}``)."""


class Status(StrEnum):
    """Whether a call may run."""

    READY = "ready"
    """Complete, parsed and valid: safe to execute."""
    REJECTED = "rejected"
    """Never to be executed; ``reason`` says why."""


class Reason(StrEnum):
    """Why a call was rejected. Compares equal to its string value."""

    TRUNCATED = "truncated"
    """The choice finished with ``length``: the token limit cut the arguments (C3)."""
    FILTERED = "filtered"
    """The choice finished with ``content_filter`` (C3)."""
    PROVIDER_FINISH = "provider_finish"
    """The choice finished with a finish reason outside the OpenAI set (C3, quirk C33)."""
    STREAM_ERROR = "stream_error"
    """An error payload or ``event: error`` ended the stream (C3, T4)."""
    UNFINISHED = "unfinished"
    """``[DONE]`` arrived before the choice had a finish reason (C2)."""
    INTERRUPTED = "interrupted"
    """The connection ended before the choice had a finish reason (C2, C3)."""
    CANCELLED = "cancelled"
    """The caller cancelled assembly (C6)."""
    MALFORMED_JSON = "malformed_json"
    """The complete arguments are not a JSON object (V1)."""
    SCHEMA_VIOLATION = "schema_violation"
    """The arguments do not match the tool's JSON Schema, or a custom call's input does not
    match its tool's format (V2)."""
    UNKNOWN_TOOL = "unknown_tool"
    """The name is not among the exposed tools of the call's kind (V3): a function call to a
    custom tool, or a custom call to a function tool, names no tool that was offered."""
    MISSING_ID = "missing_id"
    """The call never received an id (V4, strict profile)."""
    MISSING_NAME = "missing_name"
    """The call never received a name (V4)."""
    DUPLICATE_ID = "duplicate_id"
    """Another call of the same choice carries the same id, so a tool result could not say
    which call it answers (V4, E2; strict profile, quirk C34)."""
    TOO_LARGE = "too_large"
    """A limit was passed: argument size, call count, line length or event size (V5)."""
    PROTOCOL_ERROR = "protocol_error"
    """The stream broke the dialect so the call cannot be trusted: an unparseable chunk, an
    ambiguous or changed identity, or a quirk the strict profile rejects."""


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool exposed to the model: a function tool with the JSON Schema of its arguments, or a
    custom tool that takes free text in a declared format (see ``Tool.custom``)."""

    name: str
    parameters: Mapping[str, Any] | None = None
    """Draft 2020-12 JSON Schema of the arguments object; ``None`` means no parameters."""
    kind: CallKind = "function"
    format: Mapping[str, Any] | None = None
    """A custom tool's input format, as the request declares it: ``{"type": "text"}`` or
    ``{"type": "grammar", "grammar": {"syntax": "regex" | "lark", "definition": ...}}``;
    ``None`` means unconstrained text."""

    @classmethod
    def custom(cls, name: str, format: Mapping[str, Any] | None = None) -> Tool:
        """A custom tool: its calls carry verbatim input text, checked against ``format``."""
        return cls(name, None, "custom", format)

    @property
    def takes_no_parameters(self) -> bool:
        """True when the schema declares no properties, so ``{}`` is the only sensible call."""
        schema = self.parameters
        if not schema:
            return True
        return not schema.get("properties") and not schema.get("required")


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds that keep a runaway or hostile stream from exhausting memory (V5)."""

    max_argument_bytes: int = 1 << 20
    """UTF-8 bytes of argument text per call; past it the call is rejected ``too_large``."""
    max_calls: int = 128
    """Calls per stream, all choices together; past it the stream is rejected ``too_large``."""
    max_choices: int = 128
    """Choices (``n``) per stream; past it the stream is rejected ``too_large``."""
    max_line_length: int = 8 << 20
    """Characters in one SSE line; past it the stream is rejected ``too_large``."""
    max_event_size: int = 8 << 20
    """Characters of data in one SSE event; past it the stream is rejected ``too_large``."""

    def __post_init__(self) -> None:
        for name in (
            "max_argument_bytes",
            "max_calls",
            "max_choices",
            "max_line_length",
            "max_event_size",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Limits.{name} must be a positive integer, not {value!r}")


@dataclass(frozen=True, slots=True)
class CallResult:
    """One assembled tool call, final: ``ready`` to execute or ``rejected`` with a reason."""

    choice: int
    """The choice (``n > 1``) the call belongs to."""
    index: int
    """Position of the call within its choice, in order of first appearance (0, 1, 2…)."""
    id: str | None
    """The provider's call id, or a synthesised one (see ``synthetic_id``)."""
    name: str | None
    arguments_text: str
    """The exact concatenation of the argument fragments (cut at the size limit if passed); for
    a custom call, its input text."""
    arguments: Any
    """The parsed arguments when ``ready`` (for a custom call, its input text, verbatim);
    ``None`` otherwise."""
    status: Status
    reason: Reason | None = None
    detail: str | None = None
    """What went wrong, for a person: the failing schema path, the provider's message…"""
    synthetic_id: bool = False
    """True when the lenient profile made up the id because the provider sent none (V4)."""
    extras: Mapping[str, Any] | None = None
    """Provider data that must travel with the call, such as Gemini's ``extra_content``."""
    kind: CallKind = "function"
    wire_index: int | None = None
    """The tool-call index the provider put on the wire, before compaction into ``index``;
    ``None`` when it sent none (a legacy ``function_call``, or quirk C1)."""
    not_validated: str | None = None
    """Set when a ready custom call's input could not be checked against its tool's format (a
    grammar the reference cannot run), saying why: ready, but never claimed valid."""

    @property
    def ready(self) -> bool:
        """True when the call is complete, parsed and valid: safe to execute."""
        return self.status is Status.READY

    def to_dict(self) -> dict[str, Any]:
        """The result in the language-neutral contract shape (JSON-serialisable)."""
        out: dict[str, Any] = {
            "choice": self.choice,
            "index": self.index,
            "id": self.id,
            "name": self.name,
            "arguments_text": self.arguments_text,
            "arguments": self.arguments,
            "status": str(self.status),
            "reason": None if self.reason is None else str(self.reason),
            "detail": self.detail,
        }
        if self.synthetic_id:
            out["synthetic_id"] = True
        if self.extras:
            out["extras"] = dict(self.extras)
        if self.kind != "function":
            out["kind"] = self.kind
        if self.wire_index != self.index:
            # Only when compaction changed it, so the common shape stays the contract's.
            out["wire_index"] = self.wire_index
        if self.not_validated is not None:
            out["not_validated"] = self.not_validated
        return out


@dataclass(frozen=True, slots=True)
class Finding:
    """A deviation from the strict profile, by quirk id (research/wire_formats.md §7)."""

    quirk: str
    """The quirk's id, qualified by its dialect: ``openai-chat/C3``."""
    detail: str
    severity: str
    choice: int | None = None
    index: int | None = None
    count: int = 1
    """How many times the same quirk was seen for the same call (or stream)."""

    def __str__(self) -> str:
        if self.choice is None:
            where = ""
        elif self.index is None:
            where = f" (choice {self.choice})"
        else:
            where = f" (choice {self.choice}, call {self.index})"
        times = "" if self.count == 1 else f" ×{self.count}"
        return f"{self.quirk}{where}: {self.detail}{times}"

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON-serialisable data."""
        return {
            "quirk": self.quirk,
            "severity": self.severity,
            "detail": self.detail,
            "choice": self.choice,
            "index": self.index,
            "count": self.count,
        }


@dataclass(frozen=True, slots=True)
class CallPreview:
    """A progress view of a call still being assembled (A8). Never executable."""

    choice: int
    index: int
    id: str | None
    name: str | None
    arguments_text: str
    partial_arguments: Any = field(default=None)
    """Best-effort parse of the text so far, open strings and containers closed."""

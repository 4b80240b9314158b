"""The errors the reference assembler raises.

Everything a *peer* sends, however broken, becomes a result or a finding, never an exception:
a malformed stream is data, not a programming error. Exceptions are kept for mistakes made by
the *caller* of the library::

    CallstreamError                      base of everything raised here
    ├── ConfigurationError (ValueError)  bad arguments to Assembler: unknown dialect or profile,
    │   └── ToolSchemaError              a tool's parameters are not a usable JSON Schema
    │       └── SchemaRefError           a $ref that does not resolve inside the schema
    └── AssemblerClosedError (RuntimeError)
                                         feed() or close() after close() or cancel()
"""

from __future__ import annotations

__all__ = [
    "AssemblerClosedError",
    "CallstreamError",
    "ConfigurationError",
    "SchemaRefError",
    "ToolSchemaError",
]


class CallstreamError(Exception):
    """Base class of every exception the reference assembler raises."""


class ConfigurationError(CallstreamError, ValueError):
    """An Assembler was given an argument it cannot work with."""


class ToolSchemaError(ConfigurationError):
    """A tool's ``parameters`` is not a valid JSON Schema (Draft 2020-12), or uses a pattern that
    cannot be matched in linear time."""


class SchemaRefError(ToolSchemaError):
    """A ``$ref`` in a tool's schema points outside the schema (``http://``, ``https://``,
    ``file://``, another file) or at nothing. References are never fetched: bundle what they
    point to under ``$defs``."""

    def __init__(self, tool: str, ref: str) -> None:
        super().__init__(
            f"tool {tool!r}: $ref {ref!r} does not resolve inside the schema "
            "(references are never fetched: bundle the referenced schema under $defs)"
        )
        self.tool = tool
        self.ref = ref


class AssemblerClosedError(CallstreamError, RuntimeError):
    """Data was fed to an assembler after ``close()`` or ``cancel()``."""

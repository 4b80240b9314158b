"""The errors the reference assembler raises.

Everything a *peer* sends, however broken, becomes a result or a finding, never an exception:
a malformed stream is data, not a programming error. Exceptions are kept for mistakes made by
the *caller* of the library::

    CallstreamError                      base of everything raised here
    ├── ConfigurationError (ValueError)  bad arguments to Assembler: unknown dialect or profile,
    │   └── ToolSchemaError              a tool's parameters are not a valid JSON Schema
    └── AssemblerClosedError (RuntimeError)
                                         feed() or close() after close() or cancel()
"""

from __future__ import annotations

__all__ = [
    "AssemblerClosedError",
    "CallstreamError",
    "ConfigurationError",
    "ToolSchemaError",
]


class CallstreamError(Exception):
    """Base class of every exception the reference assembler raises."""


class ConfigurationError(CallstreamError, ValueError):
    """An Assembler was given an argument it cannot work with."""


class ToolSchemaError(ConfigurationError):
    """A tool's ``parameters`` is not a valid JSON Schema (Draft 2020-12)."""


class AssemblerClosedError(CallstreamError, RuntimeError):
    """Data was fed to an assembler after ``close()`` or ``cancel()``."""

"""callstream's reference assembler for streamed tool calls: sans-I/O, strict or lenient.

>>> from reference_impl import Assembler, Tool
>>> asm = Assembler(tools=[Tool("get_weather", {"type": "object"})])
>>> results = asm.feed(b'data: {"choices": [...]}\\n\\n')  # doctest: +SKIP
>>> results += asm.close()  # doctest: +SKIP
"""

from ._assembler import PROFILES, Assembler
from ._dispatch import (
    ExecutionLedger,
    assistant_message,
    idempotency_key,
    rejection_message,
    release_order,
    tool_message,
)
from ._errors import (
    AssemblerClosedError,
    CallstreamError,
    ConfigurationError,
    SchemaRefError,
    ToolSchemaError,
)
from ._model import CallPreview, CallResult, Finding, Limits, Reason, Status, Tool
from ._quirks import QUIRKS, Quirk
from ._sse import ServerSentEvent, SSEDecoder, SSELimitError
from .dialects import DIALECTS

__all__ = [
    "DIALECTS",
    "PROFILES",
    "QUIRKS",
    "Assembler",
    "AssemblerClosedError",
    "CallPreview",
    "CallResult",
    "CallstreamError",
    "ConfigurationError",
    "ExecutionLedger",
    "Finding",
    "Limits",
    "Quirk",
    "Reason",
    "SSEDecoder",
    "SSELimitError",
    "SchemaRefError",
    "ServerSentEvent",
    "Status",
    "Tool",
    "ToolSchemaError",
    "assistant_message",
    "idempotency_key",
    "rejection_message",
    "release_order",
    "tool_message",
]

"""callstream's harness: everything that tests an implementation of the assembler contract.

The public API is re-exported here; ``harness.cli`` is a thin command-line layer over it.
"""

from .assemble import AssembleRun, assemble_stream
from .errors import HarnessError, UsageError
from .tools import load_tools

__all__ = ["AssembleRun", "HarnessError", "UsageError", "assemble_stream", "load_tools"]

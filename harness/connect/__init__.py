"""Connectables: how an implementation reaches the harness, after Bowtie's.

- ``connectables`` — the connector table (``py:``, ``py+events:``, ``cmd:``, ``http:``) and
  :func:`load_implementation`;
- ``events`` — the ``py+events:`` connectable: an event-level assembler (``feed_event``)
  behind callstream's SSE decoder;
- ``pipe`` — the ``cmd:`` connectable: a program of any language over the pipe protocol;
- ``adapters`` — the ``http:`` connectables: client libraries run against the provider
  emulator, each loaded only when asked for;
- ``check`` — ``callstream check``: whether an implementation has the contract's shape, judged
  by ``result_shape`` (what one result must look like) on ``shape_probes`` (three tiny real
  streams) run in ``probe_process`` (a process of their own);
- ``processes`` — finding and ending every process an implementation started.
"""

from .check import check_command, check_shape, checked_before_a_run
from .connectables import CONNECTORS, Connector, load_implementation, load_python
from .pipe import PROTOCOL_VERSION, CommandFactory, load_command, pipe_schema

__all__ = [
    "CONNECTORS",
    "PROTOCOL_VERSION",
    "CommandFactory",
    "Connector",
    "check_command",
    "check_shape",
    "checked_before_a_run",
    "load_command",
    "load_implementation",
    "load_python",
    "pipe_schema",
]

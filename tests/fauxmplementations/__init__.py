"""Fauxmplementations: implementations broken on purpose, to test the harness itself (after
Bowtie's). Each is the reference assembler on ordinary streams and misbehaves only on a stream
that offers the tool named ``TRIGGER``, so a test can check that one bad case is reported and
the rest of the run goes on.

- ``raising``: ``feed()`` raises.
- ``hanging``: ``feed()`` sleeps forever.
- ``dying``: ``feed()`` ends its process, by ``os._exit`` (``exits``) or a segfault
  (``segfaults``).
- ``garbage``: ``feed()`` returns things that are not results.
- ``parent_only``: the module cannot be imported in a worker process at all.
- ``program``: a program over the pipe protocol (``cmd:``) that crashes, hangs, prints garbage or
  otherwise breaks the protocol, as its first argument says.
- ``misshapen``: no trigger needed: results without the contract's shape on every stream (a
  status ``done``, an index as text…), for ``callstream check``, and a few right shapes that
  raise, hang or exit on every stream, which a shape check must let run.
"""

from __future__ import annotations

from collections.abc import Sequence

from callstream.reference import Tool

__all__ = ["TRIGGER", "misbehaves"]

TRIGGER = "misbehave"
"""The tool name that makes a fauxmplementation misbehave."""


def misbehaves(tools: Sequence[Tool]) -> bool:
    """True when the stream offers the ``TRIGGER`` tool."""
    return any(tool.name == TRIGGER for tool in tools)

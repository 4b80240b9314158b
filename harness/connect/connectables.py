"""Connectables: how an implementation reaches the harness, and what it exposes.

A connectable is a string naming an implementation of the contract in DESIGN.md (after Bowtie):

- ``py:module:factory`` — imported in process. ``factory(tools=[Tool, …], limits=Limits)`` is
  called once per stream and returns an object with ``feed(bytes)`` and ``close()``.
- ``py+events:module:factory`` — the same, for an event-level object: it has
  ``feed_event(payload, *, event=…)`` and ``close()``, and callstream's SSE decoder reads the
  bytes for it (see ``callstream.connect.events``).
- ``cmd:PROGRAM ARGS`` — any program speaking the JSON-lines pipe protocol on its stdin and
  stdout: see ``callstream.connect.pipe`` and ``docs/pipe-protocol.md``. ``cmd+validate:…`` also
  checks every message against the protocol's schema. Its declaration comes from its ``start``
  answer.
- ``http:<library>`` — a client library run against the provider emulator: see
  ``callstream.connect.adapters``.

An implementation is judged on every rule whose effect it exposes, whatever it intends. It
declares only what it *exposes* (:data:`OBSERVABLES`), the profile it follows and the dialect
it reads. A ``py:`` implementation does so in a ``CALLSTREAM`` mapping, on the factory or else
in its module::

    CALLSTREAM = {"profile": "lenient", "dialect": "openai-chat",
                  "observables": ["incremental", "status", "reason", "arguments_text",
                                  "arguments", "ids", "choices", "findings"]}

Every key is optional: without one, everything is observable under the lenient profile. A check
whose observable is missing is reported *not observable* for the case, never passed; a scenario
with several choices, run on an implementation that does not expose ``choices``, is reported
*unsupported* (a declared non-feature, visible in every report); a scenario written for another
profile or dialect is *not applicable*.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from types import ModuleType
from typing import Any

from ..core.declaration import Implementation, declaration_from
from ..errors import UsageError
from .processes import start_worker

__all__ = ["CONNECTORS", "Connector", "load_implementation", "load_in_worker", "load_python"]


@dataclass(frozen=True, slots=True)
class Connector:
    """How one kind of connectable is loaded: the module and function that load it (imported
    only when a connectable of the kind is used: the pipe's subprocess machinery and the client
    libraries cost nothing otherwise), and what its spelling looks like."""

    module: str
    function: str
    form: str

    def load(self, spec: str) -> Implementation:
        """The implementation ``spec`` names."""
        loader: Callable[[str], Implementation] = getattr(
            importlib.import_module(self.module), self.function
        )
        return loader(spec)


CONNECTORS: dict[str, Connector] = {
    "py": Connector(__name__, "load_python", "py:module:factory"),
    "py+events": Connector("callstream.connect.events", "load_events", "py+events:module:factory"),
    "cmd": Connector("callstream.connect.pipe", "load_command", "cmd:PROGRAM ARGS"),
    "cmd+validate": Connector(
        "callstream.connect.pipe", "load_command", "cmd+validate:PROGRAM ARGS"
    ),
    "http": Connector("callstream.connect.adapters", "load_adapter", "http:LIBRARY"),
}
"""Each kind of connectable (the part before the first colon) and how it is loaded."""


def load_implementation(spec: str) -> Implementation:
    """Load the implementation ``spec`` names, by its kind in :data:`CONNECTORS`; a
    :class:`UsageError` says what is wrong. As with ``python -m``, modules in the working
    directory can be loaded."""
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    kind, colon, _ = spec.partition(":")
    connector = CONNECTORS.get(kind)
    if connector is None or not colon:
        forms = ", ".join(known.form for known in CONNECTORS.values())
        raise UsageError(f"{spec!r} is not a connectable: expected {forms}")
    return connector.load(spec)


def load_python(spec: str) -> Implementation:
    """A ``py:module:factory`` implementation, imported in process, with the declaration of its
    ``CALLSTREAM`` mapping (on the factory, else in its module). ``py+events:`` connectables are
    imported by it too, then wrapped (``callstream.connect.events``)."""
    kind, _, rest = spec.partition(":")
    module_name, colon, attribute = rest.partition(":")
    if not module_name or not colon or not attribute:
        raise UsageError(
            f"{spec!r}: a {kind}: connectable is {kind}:module:factory, e.g. {kind}:pkg.mod:make"
        )
    module = _import(spec, module_name)
    factory: Any = module
    for part in attribute.split("."):
        try:
            factory = getattr(factory, part)
        except AttributeError:
            raise UsageError(
                f"{spec!r}: module {module_name} has no attribute {attribute}"
            ) from None
    if not callable(factory):
        raise UsageError(
            f"{spec!r}: {module_name}:{attribute} is a {type(factory).__name__}, not a factory "
            "(a callable taking tools= and limits=)"
        )
    for owner in (factory, module):
        if hasattr(owner, "CLAIMS"):
            raise UsageError(
                f"{spec!r}: CLAIMS is no longer read: an implementation is judged on every rule "
                "whose effect it exposes. Rename it CALLSTREAM and keep 'profile' and 'dialect'; "
                "list what you cannot expose by leaving it out of 'observables' (see "
                "docs/contract.md)"
            )
    raw = getattr(factory, "CALLSTREAM", None)
    if raw is None:
        raw = getattr(module, "CALLSTREAM", None)
    declaration = declaration_from(raw, f"{spec!r}: CALLSTREAM")
    return Implementation(spec, f"{module_name}:{attribute}", factory, declaration)


def _import(spec: str, module_name: str) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
            raise UsageError(f"{spec!r}: no module named {module_name}") from None
        raise UsageError(f"{spec!r}: importing {module_name} failed: {exc}") from None
    except Exception as exc:
        raise UsageError(
            f"{spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}"
        ) from None


def load_in_worker(connectable: str, conn: Connection) -> Implementation | None:
    """In a worker process: split off the keeper of what the implementation starts
    (:func:`~callstream.connect.processes.start_worker`), load ``connectable`` and tell the
    parent over ``conn`` (``("ready",)``, or ``("refused", why)`` and None)."""
    start_worker(conn)
    try:
        implementation = load_implementation(connectable)
    except UsageError as exc:
        conn.send(("refused", str(exc)))
        return None
    conn.send(("ready",))
    return implementation

"""The ``cmd:`` connectable: an implementation in any language, run as a program that speaks
callstream's pipe protocol (after Bowtie's IHOP).

The protocol, version 1, is described by ``harness/schemas/pipe.schema.json`` and
``docs/pipe-protocol.md``: one JSON object per line, requests on the program's stdin, one
answer per request on its stdout, flushed at once; stderr is the program's own and is
captured. Expectations are never sent::

    → {"cmd": "start", "version": 1}
    ← {"version": 1, "implementation": {"name": …, "version": …, "language": …,
                                        "dialects": [...], "profile": …, "opt_ins": [...]}}
    → {"cmd": "run", "seq": S, "tools": [...], "limits": {...}, "dialect": …, "profile": …,
       "opt_ins": [...]}                             opt_ins only when the program declared some
    ← {"seq": S, "ok": true}
    → {"cmd": "feed", "seq": S, "data": "<base64 of one transport chunk>"}   once per chunk
    ← {"seq": S, "results": [result, …]}           the calls this chunk made final
    → {"cmd": "close", "seq": S}
    ← {"seq": S, "results": [...], "findings": [...]}   findings (quirk ids) are optional
    → {"cmd": "stop"}                                no answer: the program exits

Any answer may instead be ``{"seq": S, "error": {"message": …, "traceback": …}}``.

Theory of operation. :func:`load_command` starts the program once to read its declaration from the
``start`` answer, then stops it. The factory it returns keeps one long-lived program per
process, started on first use and reused stream after stream; each stream is one ``run``, a
``feed`` per chunk and a ``close``, so what a chunk releases stays observable. A program that
stops answering, exits or answers out of turn fails its stream and is killed, with everything
it started; the next stream starts a fresh one.

``cmd+validate:PROGRAM`` (what ``--validate-protocol`` asks for) also checks every message,
both ways, against the schema, to help people writing an adapter.

- ``codec`` — the messages: the protocol's version and schema, requests as lines, answers read;
- ``program`` — one running program: started, asked with deadlines, its stderr tail, ended;
- ``factory`` — :func:`load_command` and the factory that runs each stream over a program.
"""

from .codec import PROTOCOL_VERSION, pipe_schema, protocol_problem
from .factory import (
    DEFAULT_TIMEOUT,
    CommandFactory,
    PipeStream,
    load_command,
    with_protocol_validation,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "PROTOCOL_VERSION",
    "CommandFactory",
    "PipeStream",
    "load_command",
    "pipe_schema",
    "protocol_problem",
    "with_protocol_validation",
]

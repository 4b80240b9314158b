"""Every error callstream raises, in two families that never mix.

*The harness failed* ends a command with an exit code; *the implementation failed* becomes a
finding in the report (a failed check of the case), never an exit code::

    HarnessError                     callstream could not do its job (exit code 3)
    └── UsageError                   bad arguments or input files: names the file, line or byte
        │                            (exit code 2; also a ValueError)
        ├── MissingExtra             the command needs an optional dependency not installed
        ├── NotAStream               a cassette holds no event stream, so it is no scenario
        └── RequestError             a request the emulator's fake model cannot answer (HTTP 400)
    PlanError (ValueError)           a scenario plan the oracle cannot predict: lint reports it
                                     as the scenario file's problem (exit code 2)

    ImplementationError              a cmd: program failed on a stream: check no_crash
    ├── ProtocolError                it wrote something that is not the answer asked for
    ├── ImplementationExited         it ended, or closed its stdout, with a request waiting
    ├── ImplementationHung           it did not answer within the timeout (also a StreamTimeout)
    └── ImplementationReportedError  it answered with an error of its own
    ImplementationExit               an in-process implementation raised SystemExit or another
                                     BaseException while fuzzed: check no_crash
    StreamTimeout (TimeoutError)     an implementation did not answer within its timeout:
                                     check no_hang

Whatever else an implementation raises inside ``feed()``, ``close()`` or its factory is its
own failure too (``no_crash``); only the classes above are callstream's.
"""

from __future__ import annotations

from os import PathLike

__all__ = [
    "EXTRA_OF_MODULE",
    "INTERRUPTED",
    "HarnessError",
    "ImplementationError",
    "ImplementationExit",
    "ImplementationExited",
    "ImplementationHung",
    "ImplementationReportedError",
    "MissingExtra",
    "NotAStream",
    "PlanError",
    "ProtocolError",
    "RequestError",
    "StreamTimeout",
    "UsageError",
    "missing_extra",
]

INTERRUPTED = 130
"""The exit code of a command stopped by ^C (128 + SIGINT, as a shell reports it)."""

_STDERR_LINES = 20
"""Lines of a program's stderr kept in its error."""


class HarnessError(Exception):
    """callstream could not do its job. Exit code 3."""

    exit_code = 3


class UsageError(HarnessError, ValueError):
    """A command was given something it cannot use; the message says where. Exit code 2."""

    exit_code = 2


EXTRA_OF_MODULE = {
    "hypothesis": "fuzz",
    "uvicorn": "serve",
    "httpx": "serve",
    "pytest": "pytest",
    "xdist": "pytest",
    "openai": "openai",
    "langchain_core": "langchain",
    "langchain_openai": "langchain",
    "litellm": "litellm",
}
"""The optional dependencies callstream imports, and the extra (``pip install
'callstream[EXTRA]'``) that brings each."""


class MissingExtra(UsageError):
    """A command needs an optional dependency that is not installed; the message names the
    extra to install. Exit code 2."""

    def __init__(self, module: str, extra: str) -> None:
        super().__init__(
            f"this needs {module}, which is not installed: pip install 'callstream[{extra}]'"
        )
        self.module = module
        self.extra = extra


def missing_extra(exc: ModuleNotFoundError) -> MissingExtra | None:
    """The :class:`MissingExtra` that ``exc`` means, when callstream's own code failed to import
    one of its optional dependencies; None for anything else (an implementation's own missing
    module is the implementation's problem, not an extra to install)."""
    top = (exc.name or "").partition(".")[0]
    extra = EXTRA_OF_MODULE.get(top)
    if extra is None:
        return None
    frame = exc.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    importer = "" if frame is None else str(frame.tb_frame.f_globals.get("__name__", ""))
    return MissingExtra(top, extra) if importer.partition(".")[0] == "callstream" else None


class PlanError(ValueError):
    """A plan whose outcome the oracle cannot predict; write it as a literal with its
    expectation instead."""


class NotAStream(UsageError):
    """A cassette with no event stream in it, which cannot be a scenario."""

    def __init__(self, path: str | PathLike[str], reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.reason = reason


class RequestError(UsageError):
    """A request the fake model cannot answer (a 400 from the emulator); ``param`` names the
    field at fault."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class ImplementationExit(Exception):
    """The implementation raised ``SystemExit``, ``KeyboardInterrupt`` or another exception that
    is not an ``Exception``: recorded as its crash (``no_crash``) instead of ending the search."""


class StreamTimeout(TimeoutError):
    """Raised by a connection to an implementation (a program over a pipe, a server) that did not
    answer within its timeout: :func:`observe` records the stream as hung (``no_hang``), with
    the message, rather than as a crash."""


class ImplementationError(Exception):
    """The program behind a ``cmd:`` connectable failed on a stream. Raised inside ``feed()``,
    ``close()`` or the factory, so :func:`~callstream.core.observation.observe` records it as the
    implementation's failure, never the harness's. The message ends with the one-line summary
    (a report shows an error's last line as its gist), after what the program wrote to stderr
    during the stream.
    """

    def __init__(self, summary: str, stderr: str = "", traceback: str = "") -> None:
        super().__init__(summary)
        self.summary = summary
        self.stderr = stderr
        self.traceback = traceback
        """The traceback the program sent with an error answer, if any."""

    def __str__(self) -> str:
        return f"{self.details()}\n{type(self).__name__}: {self.summary}"

    def details(self) -> str:
        """The program's own traceback, if it sent one, and the tail of its stderr."""
        blocks = [_lines("traceback (from its answer)", self.traceback)] if self.traceback else []
        return "\n".join([*blocks, _lines("stderr", self.stderr)])


class ProtocolError(ImplementationError):
    """The program wrote a line that is not the answer the protocol asks for; the message
    quotes it."""


class ImplementationExited(ImplementationError):
    """The program ended (or closed its stdout) while a request waited for its answer."""


class ImplementationHung(ImplementationError, StreamTimeout):
    """The program did not answer a request within the timeout."""


class ImplementationReportedError(ImplementationError):
    """The program answered a request with ``{"error": …}``: it caught a failure of its own."""


def _lines(title: str, text: str) -> str:
    lines = text.rstrip("\n").splitlines()
    if not lines:
        return f"{title}: (nothing)"
    shown = lines[-_STDERR_LINES:]
    head = (
        f"{title} (last {len(shown)} of {len(lines)} lines):"
        if len(shown) < len(lines)
        else f"{title}:"
    )
    return "\n".join([head, *(f"  | {line}" for line in shown)])

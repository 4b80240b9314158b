"""The harness's own errors, kept apart from what an implementation does wrong.

An implementation that misbehaves produces *results* (a rejected call, a failed check), never
one of these. These are for the person running callstream::

    HarnessError            the harness itself failed (exit code 3)
    └── UsageError          bad arguments or input files: names the file, line or byte (exit code 2)
        └── MissingExtra    the command needs an optional dependency that is not installed
"""

from __future__ import annotations

__all__ = ["EXTRA_OF_MODULE", "HarnessError", "MissingExtra", "UsageError", "missing_extra"]


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

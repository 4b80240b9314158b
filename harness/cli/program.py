"""``callstream``: parse the command line, run the command, and end with its exit code.

Exit codes, the same for every command:

- 0 everything passed (every call ready);
- 1 the implementation or the stream failed (a case failed, a call was rejected);
- 2 a usage error: bad arguments or input files, printed as ``path:line: message``;
- 3 the harness failed: one line on stderr; for an unexpected exception (a bug in
  callstream) the line names the log file that holds its traceback;
- 130 interrupted by ^C.
"""

from __future__ import annotations

import sys
import tempfile
import traceback
from collections.abc import Sequence

from ..errors import INTERRUPTED, HarnessError, missing_extra
from .parser import build_parser

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code. Bare ``callstream`` prints the help."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    args.argv = ["callstream", *(sys.argv[1:] if argv is None else argv)]
    try:
        code: int = args.command(args)
    except ModuleNotFoundError as exc:
        extra = missing_extra(exc)
        if extra is None:
            print(f"callstream: internal error: {_gist(exc)}; {_log_traceback()}", file=sys.stderr)
            return HarnessError.exit_code
        print(f"callstream {args.argv[1]}: {extra}", file=sys.stderr)
        return extra.exit_code
    except HarnessError as exc:
        print(f"callstream: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("callstream: interrupted", file=sys.stderr)
        return INTERRUPTED
    except Exception as exc:  # a bug in callstream: never a traceback that exits 1
        print(f"callstream: internal error: {_gist(exc)}; {_log_traceback()}", file=sys.stderr)
        return HarnessError.exit_code
    return code


def _gist(exc: BaseException) -> str:
    """The exception's type and the first line of its message, clipped."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "…"


def _log_traceback() -> str:
    """Write the exception being handled, with its traceback, to a new log file; the words
    that point to it."""
    try:
        with tempfile.NamedTemporaryFile(
            "w",
            prefix="callstream-error-",
            suffix=".log",
            delete=False,
            encoding="utf-8",
            errors="backslashreplace",
        ) as log:
            log.write(f"callstream {' '.join(sys.argv[1:])}\n{traceback.format_exc()}")
    except OSError as exc:
        return f"the traceback could not be written to a log file: {exc.strerror or exc}"
    return f"the traceback is in {log.name}"

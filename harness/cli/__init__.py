"""The ``callstream`` command: a thin layer over functions the tests call directly.

- ``commands`` — the parser and one function per command;
- ``completion`` — shell completion written from the parser.
"""

from .commands import main

__all__ = ["main"]

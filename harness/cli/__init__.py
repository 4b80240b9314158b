"""The ``callstream`` command: a thin layer over functions the tests call directly.

- ``commands`` — the parser and one function per command;
- ``options`` — the options several commands share, declared once, and the argument types;
- ``completion`` — shell completion written from the parser.
"""

from .commands import main

__all__ = ["main"]

"""The ``callstream`` command: a thin layer over functions the tests call directly.

- ``commands`` — the table of commands, the parser built from it, one function per command;
- ``command`` — what a command is: its help, its arguments, the function that runs it;
- ``options`` — the options several commands share, declared once, and the argument types;
- ``completion`` — shell completion written from the parser.
"""

from .commands import main

__all__ = ["main"]

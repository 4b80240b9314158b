"""The ``callstream`` command: a thin layer over functions the tests call directly.

- ``program`` — ``main``: parse, run the command, turn what it raised into an exit code;
- ``parser`` — the table of commands and the parser built from it;
- ``command`` — what a command is: its help, its arguments, the function that runs it;
- ``options`` — the options several commands share, declared once, and the argument types;
- ``assemble_command`` — ``assemble`` and its printing;
- ``corpus_commands`` — ``run``, ``report merge``, ``check``, ``lint`` and ``explain``;
- ``fuzz_command`` — ``fuzz``;
- ``provider_commands`` — ``serve``, ``certify``, ``replay`` and ``matrix``;
- ``completion`` — shell completion written from the parser.
"""

from .program import main

__all__ = ["main"]

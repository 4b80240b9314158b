"""The third-party matrix: the corpus run through every installed client library (the
``http:`` adapters) and rendered as one table of libraries × rules. Needs the ``adapters``
extra.

- ``build`` — running the corpus on each adapter, and ``callstream matrix``;
- ``page`` — ``matrix.md`` and ``matrix.html``, from the reports alone;
- ``bugs`` — the reviewed record of known bugs, each failure traced to its cause.
"""

from .bugs import KnownBug, load_bugs, triage
from .build import matrix_command, run_matrix
from .page import render_matrix

__all__ = ["KnownBug", "load_bugs", "matrix_command", "render_matrix", "run_matrix", "triage"]

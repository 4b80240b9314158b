"""``python -m callstream.cli``: the console script."""

import sys

from .commands import main

sys.exit(main())

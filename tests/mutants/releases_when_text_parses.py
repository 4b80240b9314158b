"""Releases a call as soon as its accumulated arguments parse as JSON, before the finish reason.

vercel/ai finalised a streamed tool call the moment ``isParsableJson(arguments)`` held, so a
valid prefix ran before the rest of the stream could contradict it: a truncation, an error, a
cut connection, or more fragments. It was fixed as a security issue (vercel/ai#13137,
VULN-6861), lost again in a refactor whose regression test was deleted with the old code, and
fixed once more (vercel/ai#16838). Breaks C4: nothing is executable before its completion
signal, even when the text so far happens to parse.
"""

from __future__ import annotations

import json

from ._base import CALLSTREAM, BaseAssembler, Call

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["C4"]
CITES = ["vercel/ai#13137", "vercel/ai#16838"]


class ReleasesWhenTextParses(BaseAssembler):
    """Completes a call whenever a fragment leaves its text parseable."""

    def append_arguments(self, call: Call, fragment: str | None) -> None:
        super().append_arguments(call, fragment)
        if not call.final and _parses(call.text):
            self.complete(call)


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


factory = ReleasesWhenTextParses

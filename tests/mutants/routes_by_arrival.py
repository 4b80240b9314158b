"""Appends each fragment to the most recently opened call, not to the call its index names.

An accumulator that keeps only "the current call" (the last id seen) and appends every
fragment to it mixes interleaved parallel calls: one call is left without arguments and the
other gets an invalid mash of both. Seen in bifrost (maximhq/bifrost#1829), Microsoft's agent
framework (microsoft/agent-framework#8337) and Qwen-Agent before it aggregated by index.
Breaks A5: route by position, not by arrival order.
"""

from __future__ import annotations

from ._base import CALLSTREAM, BaseAssembler, Call

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A5"]
CITES = ["maximhq/bifrost#1829", "microsoft/agent-framework#8337"]


class RoutesByArrival(BaseAssembler):
    """A new id opens a call; every other delta goes to the latest call."""

    def route(
        self, choice: int, index: int | None, call_id: str | None, name: str | None
    ) -> Call | None:
        calls = self.calls_of(choice)
        if not calls or (call_id is not None and call_id != calls[-1].id):
            return self.open(choice)
        return calls[-1]


factory = RoutesByArrival

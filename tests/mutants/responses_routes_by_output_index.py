"""Routes every event by its output_index alone, ignoring item_id.

A reader that keys calls by ``output_index`` merges two calls a gateway put at the same index:
their deltas go to whichever call holds the index last, one call is left empty and the other
gets both texts. The Responses-to-Chat bridges that gave every call one index show the same
merge (mcowger/plexus#691, BerriAI/litellm#21337, diegosouzapw/OmniRoute#11144). Breaks A5: an
item is named by its ``item_id``.
"""

from __future__ import annotations

from typing import Any

from ._base import Call
from ._responses_base import CALLSTREAM, ResponsesAssembler

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A5"]
CITES = ["mcowger/plexus#691", "BerriAI/litellm#21337", "diegosouzapw/OmniRoute#11144"]


class ResponsesRoutesByOutputIndex(ResponsesAssembler):
    """The base Responses assembler with the bug of the module docstring."""

    def route_item(self, payload: dict[str, Any]) -> Call:
        """The call at the event's output_index."""
        call = self.positions.get((0, payload.get("output_index", -1)))
        return call if call is not None else super().route_item(payload)


factory = ResponsesRoutesByOutputIndex

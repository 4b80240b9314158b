"""Concatenates a repeated id or name: ``call_1`` sent on every chunk comes out ``call_1call_1``.

openai-python's ``accumulate_delta`` (openai/openai-python:src/openai/lib/streaming/_deltas.py)
appends every string field of a delta except ``index`` and ``type``, and many accumulators copy
that ``+=``. Providers that repeat the header then get doubled identities: LiteLLM sends ``id`` on
every chunk (BerriAI/litellm#20480), early llama.cpp repeated ``function.name``
(ggml-org/llama.cpp#12379), and MiniMax via NVIDIA NIM does too, which gave hermes-agent
``read_fileread_file`` (NousResearch/hermes-agent#12230). Breaks A3: set metadata, never
concatenate it.
"""

from __future__ import annotations

from typing import Literal

from ._base import CALLSTREAM, BaseAssembler, Call

__all__ = ["BREAKS", "CALLSTREAM", "CITES", "factory"]

BREAKS = ["A3"]
CITES = [
    "openai/openai-python:src/openai/lib/streaming/_deltas.py",
    "BerriAI/litellm#20480",
    "ggml-org/llama.cpp#12379",
    "NousResearch/hermes-agent#12230",
]


class ConcatenatesRepeatedId(BaseAssembler):
    """Appends every id and name it is sent, as it appends arguments."""

    def set_identity(self, call: Call, field: Literal["id", "name"], value: str | None) -> None:
        if value is not None:
            setattr(call, field, (getattr(call, field) or "") + value)


factory = ConcatenatesRepeatedId

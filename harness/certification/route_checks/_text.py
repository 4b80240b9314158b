"""Reading the text of an answer, which need not be what it claims: JSON that may not parse,
payloads of any shape, and the clipping of what a finding quotes."""

from __future__ import annotations

import json
from typing import Any

from callstream.reference.validate import closing_brackets

from ...corpus.cassette import Recording

NOT_JSON: Any = object()
"""What :func:`parse_json` gives for text that is not JSON, where None would be ambiguous."""


def parse_json(text: str, default: Any = None) -> Any:
    """``text`` parsed, or ``default`` when it is not JSON or cannot be held (nested too deep,
    an integer too long to convert)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return default


def content_type_of(recording: Recording) -> str:
    """The answer's content type, lower-cased; empty when there is none."""
    response = recording.response
    return "" if response is None else response.headers.get("content-type", "").strip().lower()


def looks_cut(text: str) -> bool:
    """True when ``text`` reads as JSON cut short: unclosed brackets, or a string left open."""
    try:
        json.loads(text)
    except RecursionError:
        return False
    except json.JSONDecodeError as exc:
        return (
            exc.pos >= len(text)
            or exc.msg.startswith("Unterminated string")
            or (closing_brackets(text) is not None)
        )
    return False


def error_message(body: str) -> str:
    """The message of an error body (OpenAI's ``{"error": {"message": …}}`` or a bare
    ``{"error": "…"}``), else the body itself, clipped."""
    payload = parse_json(body)
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return clip(body, 200) if body else ""


def writable(text: str) -> str:
    """``text`` with any lone surrogate (a stream's ``\\ud800``, decoded) written as its
    escape: no UTF-8 writer could write it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def clip(text: str, limit: int = 240) -> str:
    """``text`` if it fits ``limit``, else its head and tail around an ellipsis."""
    if len(text) <= limit:
        return text
    head = limit // 3
    return f"{text[:head]} … {text[len(text) - (limit - head) :]}"

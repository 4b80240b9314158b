"""Best-effort parsing of argument text that is still arriving, for progress displays (A8).

The result is for showing, never for running: it is computed from a copy of the text and
nothing here touches the execution buffer. Open strings and containers are closed; a key
without its value, a half-written literal or number, and a dangling comma are dropped.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["parse_partial"]

_NUMBER_END = "-+.eE"


def parse_partial(text: str) -> Any:
    """The JSON value ``text`` is on its way to becoming, as far as it can be told; else None."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    completion = _complete(text)
    if completion is None:
        return None
    try:
        return json.loads(completion)
    except (ValueError, RecursionError):
        return None


def _complete(text: str) -> str | None:
    # Each open container: [closer, expecting] where expecting is "key", "colon", "value" or
    # "comma". ``cut`` is where the text may be cut so that what precedes it, closed, is valid.
    stack: list[list[str]] = []
    in_string = escaped = False
    string_is_key = False
    string_start = token_start = 0
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
                if stack:
                    stack[-1][1] = "colon" if string_is_key else "comma"
            i += 1
            continue
        if char in " \t\r\n":
            i += 1
            continue
        token_start = i
        top = stack[-1] if stack else None
        if char == '"':
            in_string = True
            string_start = i
            string_is_key = top is not None and top[0] == "}" and top[1] == "key"
        elif char in "{[":
            if top:
                top[1] = "comma"
            stack.append(["}" if char == "{" else "]", "key" if char == "{" else "value"])
        elif char in "}]":
            if not stack:
                return None
            stack.pop()
        elif char == ":":
            if top:
                top[1] = "value"
        elif char == ",":
            if top:
                top[1] = "key" if top[0] == "}" else "value"
        else:
            # A literal or a number: read to its end.
            j = i
            while j < n and text[j] not in ' \t\r\n,:]}"[{':
                j += 1
            if j == n:
                return (
                    _close(text[:token_start], stack)
                    if not _complete_scalar(text[i:])
                    else (_close(text, stack))
                )
            if top:
                top[1] = "comma"
            i = j
            continue
        i += 1
    if in_string:
        if string_is_key:
            return _close(text[:string_start], stack)
        body = text[string_start:]
        if escaped:
            body = body[:-1]
        backslash = body.rfind("\\u")
        if (
            backslash != -1
            and len(body) - backslash < 6
            and body[backslash - 1 : backslash] != "\\"
        ):
            body = body[:backslash]
        if stack:
            stack[-1][1] = "comma"
        return _close(text[:string_start] + body + '"', stack)
    if stack and stack[-1][1] == "colon":
        return _close(text[:string_start], stack)
    return _close(text, stack)


def _complete_scalar(token: str) -> bool:
    if token in ("true", "false", "null"):
        return True
    return bool(token) and token[-1] not in _NUMBER_END and _is_number(token)


def _is_number(token: str) -> bool:
    try:
        json.loads(token)
    except ValueError:
        return False
    return True


def _close(prefix: str, stack: list[list[str]]) -> str:
    prefix = prefix.rstrip()
    while prefix.endswith((",", ":")):
        if prefix.endswith(":"):
            # Drop the key whose value never came.
            prefix = prefix[:-1].rstrip()
            prefix = prefix[: _string_start_before(prefix)].rstrip()
        else:
            prefix = prefix[:-1].rstrip()
    return prefix + "".join(closer for closer, _ in reversed(stack))


def _string_start_before(prefix: str) -> int:
    """Index of the opening quote of the string that ends ``prefix``."""
    i = len(prefix) - 2
    while i >= 0:
        if prefix[i] == '"':
            backslashes = 0
            j = i - 1
            while j >= 0 and prefix[j] == "\\":
                backslashes += 1
                j -= 1
            if backslashes % 2 == 0:
                return i
        i -= 1
    return 0

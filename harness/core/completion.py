"""What a call becomes once its stream has completed it (REQUIREMENTS.md V1–V4): named, known,
identified, parsed once and validated, then ``ready`` or rejected with the reason. Shared by
every dialect's expectation; what differs between dialects (when a call is complete at all, and
which quirk a deviation is) stays with the dialect.

Custom calls complete like function calls, but their input is never parsed: it is checked
against the tool's format with Python's ``re`` (a regex) or not at all (text; a lark grammar,
expected ready and ``not_validated``). A call of one kind naming a tool of the other is
``unknown_tool`` (V3).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from callstream.reference import Tool
from callstream.reference.validate import parse_int, schema_problem, validator_for

from .spec import CallPlan, ExpectedCall

__all__ = ["Completer", "Deviation", "strictly_json"]

Deviation = Literal["synthetic_id", "empty_parameterless", "repeated_arguments"]
"""What completing a call can meet that a dialect may record as one of its quirks: an id made
up for a call that had none (lenient), a parameterless call completed as ``{}`` from no
arguments, arguments that are one JSON text repeated."""


class Completer:
    """Completes the calls of one stream under one profile, telling ``met`` of each deviation
    it meets."""

    def __init__(
        self, tools: Mapping[str, Tool], *, strict: bool, met: Callable[[Deviation], None]
    ) -> None:
        self.tools = tools
        self.strict = strict
        self.met = met

    def complete(
        self, plan: CallPlan, base: dict[str, Any], *, named: bool, text: str, release: int | None
    ) -> ExpectedCall:
        """The call ``plan`` completed: ``base`` holds its expected position, identity and text
        (no ``id`` when none arrived), ``named`` whether its name arrived, ``text`` what its
        arguments parse from, ``release`` the byte from which it may be released (C4)."""
        if plan.name is None or not named:
            base["name"] = None
            return ExpectedCall("rejected", "missing_name", **base)
        tool = self.tools.get(plan.name)
        if tool is None or tool.kind != plan.kind:
            return ExpectedCall("rejected", "unknown_tool", **base)
        synthetic = False
        if "id" not in base:
            if self.strict:
                return ExpectedCall("rejected", "missing_id", **base)
            self.met("synthetic_id")
            synthetic = True
        if plan.kind == "custom":
            return self._custom(tool, base, synthetic, release)
        value, problem = self._parse(text, tool)
        if problem is not None:
            return ExpectedCall("rejected", problem, synthetic_id=synthetic, **base)
        return ExpectedCall(
            "ready",
            None,
            arguments=value,
            check_arguments=True,
            synthetic_id=synthetic,
            release_offset=release,
            **base,
        )

    def _custom(
        self, tool: Tool, base: dict[str, Any], synthetic: bool, release: int | None
    ) -> ExpectedCall:
        """The input is the value; a regex format must match all of it (V2)."""
        text = base["arguments_text"]
        syntax, definition = _grammar(tool.format)
        if syntax == "regex" and re.fullmatch(definition, text) is None:
            return ExpectedCall("rejected", "schema_violation", synthetic_id=synthetic, **base)
        return ExpectedCall(
            "ready",
            None,
            arguments=text,
            check_arguments=True,
            synthetic_id=synthetic,
            release_offset=release,
            not_validated=syntax == "lark",
            **base,
        )

    def _parse(self, text: str, tool: Tool) -> tuple[Any, str | None]:
        if text == "":
            if _takes_no_parameters(tool):
                self.met("empty_parameterless")
                return {}, None
            return None, "malformed_json"
        # Each profile's expectation completes the same calls: parsed and validated once.
        key = (text, id(tool))
        kept = _PARSED.get(key)
        if kept is None or kept[0] is not tool:
            kept = (tool, *_parsed(text, tool))
            if len(_PARSED) >= _KEPT:
                del _PARSED[next(iter(_PARSED))]
            _PARSED[key] = kept
        _, value, problem, repeated = kept
        if repeated:
            self.met("repeated_arguments")
        return value, problem


_PARSED: dict[tuple[str, int], tuple[Tool, Any, str | None, bool]] = {}
"""The calls completed last, by their text and the identity of their tool (kept with it): what
each parsed to (read only: both profiles' expectations hold the same value), the reason it was
refused, and whether it is one JSON text repeated."""
_KEPT = 64


def _parsed(text: str, tool: Tool) -> tuple[Any, str | None, bool]:
    """What ``text`` parses to as ``tool``'s arguments, or the reason it is refused, and whether
    it is malformed as one JSON text repeated."""
    try:
        value = _STRICT(text)
    except (ValueError, RecursionError):
        return None, "malformed_json", _repeated(text)
    if not isinstance(value, dict):
        return None, "malformed_json", False
    # The reference's evaluator: JSON Schema with RE2 patterns, internal $refs only, bounded.
    validator = validator_for(tool.name, tool.parameters)
    problem = None if validator is None else schema_problem(validator, value)
    if problem is not None:
        return None, problem.reason.value, False
    return value, None, False


def _grammar(fmt: Mapping[str, Any] | None) -> tuple[str | None, str]:
    """A custom format's grammar syntax and definition; (None, "") for unconstrained text."""
    if fmt is None or fmt.get("type") != "grammar":
        return None, ""
    grammar = fmt.get("grammar", fmt)
    return grammar.get("syntax"), grammar.get("definition", "")


def _takes_no_parameters(tool: Tool) -> bool:
    schema = tool.parameters
    return not schema or (not schema.get("properties") and not schema.get("required"))


def strictly_json(text: str) -> bool:
    """Whether ``text`` is one JSON value as the rules read JSON: ``NaN`` and ``Infinity`` are
    not JSON (Python's ``json.loads`` takes them), nor is nesting too deep to parse."""
    try:
        _STRICT(text)
    except (ValueError, RecursionError):
        return False
    return True


def _no_constant(name: str) -> Any:
    raise ValueError(name)


_STRICT = json.JSONDecoder(parse_constant=_no_constant, parse_int=parse_int).decode
"""``json.loads`` as the rules read JSON, its decoder built once (``json.loads`` with any
argument builds one a call)."""


def _repeated(text: str) -> bool:
    for size in range(1, len(text) // 2 + 1):
        if len(text) % size == 0 and text[:size] * (len(text) // size) == text:
            try:
                json.loads(text[:size])
            except ValueError:
                continue
            return True
    return False

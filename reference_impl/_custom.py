"""Checking a custom tool call's input against its tool's declared format.

A Chat Completions custom tool takes free text, optionally constrained by a format: ``text``
(anything), a ``regex`` grammar, or a ``lark`` grammar. The input is never parsed as JSON; it is
checked here, once, when the call completes.

Regexes are run by a small Thompson automaton (Pike's construction without captures), never by
``re``: a backtracking engine can take exponential time on model output such as ``(a+)+$``
against ``aaaa…b``. The automaton advances a *set* of states per character, so its work is
linear in the input times the pattern's size; state sets are memoised per character (a lazy
DFA), and a deterministic step budget bounds the rest. The dialect is the common core of the
Rust ``regex`` crate that OpenAI documents for these grammars: literals, ``.``, classes,
``\\d \\w \\s`` and their negations, groups, alternation, the greedy and lazy quantifiers
``* + ? {m} {m,} {m,n}``, and the anchors ``^ $ \\A \\z``. A pattern that uses anything else
(look-around, back-references, flags, Unicode classes, word boundaries) is *not validated*:
the call is released with a ``not_validated`` note, never as valid. So is a lark grammar, which
the reference cannot run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import ToolSchemaError

__all__ = ["InputCheck", "InputFormat", "input_format"]

_MAX_STATES = 20_000
"""Automaton size past which a pattern is not run (its counted repeats expand)."""
_STEP_BUDGET = 5_000_000
"""State visits allowed per input; past it the input is reported not validated."""
_MEMO_LIMIT = 8192
"""Memoised (state set, character) transitions kept per pattern."""


@dataclass(frozen=True, slots=True)
class InputCheck:
    """What checking one input found: a ``problem`` (it does not match), a ``not_validated``
    note (it could not be checked), or neither (it matches)."""

    problem: str | None = None
    not_validated: str | None = None


class InputFormat:
    """A custom tool's format, ready to check inputs."""

    def __init__(self, description: str, matcher: _Automaton | None, unchecked: str | None):
        self.description = description
        self._matcher = matcher
        self._unchecked = unchecked

    def check(self, text: str) -> InputCheck:
        """Check one complete input."""
        if self._unchecked is not None:
            return InputCheck(not_validated=self._unchecked)
        if self._matcher is None:
            return InputCheck()
        verdict = self._matcher.fullmatch(text)
        if verdict is None:
            return InputCheck(
                not_validated=f"the {self.description} needed more than {_STEP_BUDGET} steps"
            )
        if verdict:
            return InputCheck()
        return InputCheck(problem=f"the input does not match the {self.description}")


def input_format(tool: str, raw: Mapping[str, Any] | None) -> InputFormat:
    """The format of custom tool ``tool`` as a request declares it, ready to check inputs.

    Accepts the Chat Completions shape (``{"type": "grammar", "grammar": {"syntax",
    "definition"}}``), the Responses shape (``syntax`` and ``definition`` beside ``type``) and
    ``{"type": "text"}``; ``None`` is unconstrained text. Raises ToolSchemaError for a format
    that is not one of these or a regex that is not well formed.
    """
    if raw is None:
        return InputFormat("text format", None, None)
    if not isinstance(raw, Mapping):
        raise ToolSchemaError(f"custom tool {tool!r}: format must be an object")
    kind = raw.get("type")
    if kind == "text":
        return InputFormat("text format", None, None)
    if kind != "grammar":
        raise ToolSchemaError(
            f"custom tool {tool!r}: format type must be 'text' or 'grammar', not {kind!r}"
        )
    grammar = raw.get("grammar", raw)
    syntax = grammar.get("syntax") if isinstance(grammar, Mapping) else None
    definition = grammar.get("definition") if isinstance(grammar, Mapping) else None
    if not isinstance(definition, str):
        raise ToolSchemaError(f"custom tool {tool!r}: a grammar needs a string 'definition'")
    if syntax == "lark":
        return InputFormat("lark grammar", None, "lark grammars are not checked by the reference")
    if syntax != "regex":
        raise ToolSchemaError(
            f"custom tool {tool!r}: grammar syntax must be 'regex' or 'lark', not {syntax!r}"
        )
    description = f"regex {definition!r}"
    try:
        return InputFormat(description, _Automaton(_Parser(definition).parse()), None)
    except _Unsupported as exc:
        return InputFormat(description, None, f"the {description} uses {exc}, which is not run")
    except _BadPattern as exc:
        raise ToolSchemaError(f"custom tool {tool!r}: regex {definition!r}: {exc}") from None


# -- the pattern, parsed ------------------------------------------------------------------------


class _BadPattern(ValueError):
    """The pattern is not a well-formed regex."""


class _Unsupported(ValueError):
    """The pattern uses a construct this engine does not run; the message names it."""


Node = tuple[Any, ...]
"""``("chars", test)``, ``("seq", [nodes])``, ``("alt", [nodes])``, ``("repeat", node, min,
max or None)``, ``("start",)`` or ``("end",)``."""

CharTest = Callable[[str], bool]

_CLASS_ESCAPES: dict[str, CharTest] = {
    "d": str.isdecimal,
    "D": lambda c: not c.isdecimal(),
    "w": lambda c: c.isalnum() or c == "_",
    "W": lambda c: not (c.isalnum() or c == "_"),
    "s": str.isspace,
    "S": lambda c: not c.isspace(),
}
_CONTROL_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "f": "\f", "v": "\v", "0": "\0"}
_UNSUPPORTED_ESCAPES = {
    "b": "a word boundary",
    "B": "a word boundary",
    "p": "a Unicode class",
    "P": "a Unicode class",
    "x": "a hex escape",
    "u": "a Unicode escape",
}


class _Parser:
    """A recursive-descent parser: alternation of sequences of quantified atoms."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.at = 0

    def parse(self) -> Node:
        node = self._alternation()
        if self.at < len(self.pattern):
            raise _BadPattern(f"unbalanced ')' at character {self.at}")
        return node

    def _peek(self) -> str:
        return self.pattern[self.at] if self.at < len(self.pattern) else ""

    def _alternation(self) -> Node:
        branches = [self._sequence()]
        while self._peek() == "|":
            self.at += 1
            branches.append(self._sequence())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def _sequence(self) -> Node:
        items: list[Node] = []
        while self._peek() not in ("", "|", ")"):
            items.append(self._quantified(self._atom()))
        return ("seq", items)

    def _quantified(self, node: Node) -> Node:
        while True:
            char = self._peek()
            if char in ("*", "+", "?"):
                self.at += 1
                low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
            elif char == "{" and self._counted() is not None:
                low, high = self._counted_consume()
            else:
                return node
            if node[0] in ("start", "end"):
                raise _BadPattern(f"a quantifier after an anchor at character {self.at - 1}")
            if self._peek() == "?":
                self.at += 1  # lazy: the same language, so the same full match
            node = ("repeat", node, low, high)

    def _counted(self) -> tuple[int, int | None, int] | None:
        """``{m}``, ``{m,}`` or ``{m,n}`` at the cursor: (m, n, length), else None."""
        end = self.pattern.find("}", self.at)
        if end < 0:
            return None
        body = self.pattern[self.at + 1 : end]
        low, comma, high = body.partition(",")
        if not low.isdigit() or (high and not high.isdigit()):
            return None
        upper = int(low) if not comma else (int(high) if high else None)
        return int(low), upper, end + 1 - self.at

    def _counted_consume(self) -> tuple[int, int | None]:
        found = self._counted()
        assert found is not None
        low, high, length = found
        if high is not None and high < low:
            raise _BadPattern(f"repeat {{{low},{high}}} has its bounds reversed")
        self.at += length
        return low, high

    def _atom(self) -> Node:
        char = self._peek()
        self.at += 1
        if char == "(":
            return self._group()
        if char == "[":
            return ("chars", self._class())
        if char == ".":
            return ("chars", lambda c: c != "\n")
        if char == "^":
            return ("start",)
        if char == "$":
            return ("end",)
        if char == "\\":
            return self._escape()
        if char in ("*", "+", "?"):
            raise _BadPattern(f"nothing to repeat at character {self.at - 1}")
        return ("chars", char.__eq__)

    def _group(self) -> Node:
        if self.pattern.startswith("?:", self.at):
            self.at += 2
        elif self.pattern.startswith(("?P<", "?<"), self.at) and not self.pattern.startswith(
            ("?<=", "?<!"), self.at
        ):
            close = self.pattern.find(">", self.at)
            if close < 0:
                raise _BadPattern(f"unterminated group name at character {self.at}")
            self.at = close + 1
        elif self._peek() == "?":
            raise _Unsupported("a look-around or a flag group")
        node = self._alternation()
        if self._peek() != ")":
            raise _BadPattern("missing ')'")
        self.at += 1
        return node

    def _escape(self) -> Node:
        char = self._peek()
        if not char:
            raise _BadPattern("a trailing backslash")
        self.at += 1
        if char in _CLASS_ESCAPES:
            return ("chars", _CLASS_ESCAPES[char])
        if char == "A":
            return ("start",)
        if char == "z":
            return ("end",)
        return ("chars", self._escaped_char(char).__eq__)

    def _escaped_char(self, char: str) -> str:
        if char in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[char]
        if char.isdigit():
            raise _Unsupported("a back-reference")
        if char in _UNSUPPORTED_ESCAPES:
            raise _Unsupported(_UNSUPPORTED_ESCAPES[char])
        if char.isalnum():
            raise _BadPattern(f"unknown escape \\{char}")
        return char

    def _class(self) -> CharTest:
        negated = self._peek() == "^"
        if negated:
            self.at += 1
        ranges: list[tuple[str, str]] = []
        tests: list[CharTest] = []
        first = True
        while True:
            char = self._peek()
            if not char:
                raise _BadPattern("missing ']'")
            if char == "]" and not first:
                self.at += 1
                break
            first = False
            if self.pattern.startswith("[:", self.at) or self.pattern.startswith("&&", self.at):
                raise _Unsupported("a class operation")
            low = self._class_char(tests)
            if low is None:
                continue
            if self._peek() == "-" and self.pattern[self.at + 1 : self.at + 2] not in ("]", ""):
                self.at += 1
                high = self._class_char(tests)
                if high is None or high < low:
                    raise _BadPattern(f"bad range in a class at character {self.at}")
                ranges.append((low, high))
            else:
                ranges.append((low, low))

        def test(c: str) -> bool:
            hit = any(low <= c <= high for low, high in ranges) or any(t(c) for t in tests)
            return hit != negated

        return test

    def _class_char(self, tests: list[CharTest]) -> str | None:
        """One member of a class; a class escape (``\\d``) goes to ``tests`` (returns None)."""
        char = self._peek()
        self.at += 1
        if char == "[":
            raise _Unsupported("a nested class")
        if char != "\\":
            return char
        escaped = self._peek()
        if not escaped:
            raise _BadPattern("a trailing backslash")
        self.at += 1
        if escaped in _CLASS_ESCAPES:
            tests.append(_CLASS_ESCAPES[escaped])
            return None
        return self._escaped_char(escaped)


# -- the automaton ------------------------------------------------------------------------------

_CHAR, _SPLIT, _START, _END, _MATCH = range(5)


class _Automaton:
    """A Thompson NFA over the parsed pattern, run a state set at a time (linear time)."""

    def __init__(self, node: Node) -> None:
        self.kinds: list[int] = []
        self.tests: list[CharTest | None] = []
        self.next: list[list[int]] = []
        start = self._compile(node, self._state(_MATCH, None))
        self.initial = self._closure((start,), at_start=True)
        self._memo: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def _state(self, kind: int, test: CharTest | None, *targets: int) -> int:
        if len(self.kinds) >= _MAX_STATES:
            raise _Unsupported(f"more than {_MAX_STATES} automaton states")
        self.kinds.append(kind)
        self.tests.append(test)
        self.next.append(list(targets))
        return len(self.kinds) - 1

    def _compile(self, node: Node, then: int) -> int:
        """States matching ``node`` and continuing at ``then``; returns the entry state."""
        tag = node[0]
        if tag == "chars":
            return self._state(_CHAR, node[1], then)
        if tag == "start":
            return self._state(_START, None, then)
        if tag == "end":
            return self._state(_END, None, then)
        if tag == "seq":
            for item in reversed(node[1]):
                then = self._compile(item, then)
            return then
        if tag == "alt":
            return self._state(_SPLIT, None, *(self._compile(b, then) for b in node[1]))
        _, inner, low, high = node
        if high is None:
            loop = self._state(_SPLIT, None)
            self.next[loop] = [self._compile(inner, loop), then]
            entry = loop
        else:
            entry = then
            for _ in range(high - low):
                entry = self._state(_SPLIT, None, self._compile(inner, entry), then)
        for _ in range(low):
            entry = self._compile(inner, entry)
        return entry

    def _closure(self, states: tuple[int, ...], *, at_start: bool) -> frozenset[int]:
        """Every state reachable without reading a character. ``$`` states are kept, not
        followed: only the end of the input may pass them (see ``fullmatch``)."""
        seen: set[int] = set()
        stack = list(states)
        while stack:
            state = stack.pop()
            if state in seen:
                continue
            seen.add(state)
            kind = self.kinds[state]
            if kind == _SPLIT or (kind == _START and at_start):
                stack.extend(self.next[state])
        return frozenset(seen)

    def fullmatch(self, text: str) -> bool | None:
        """Whether the whole of ``text`` matches; None when the step budget ran out."""
        current = self.initial
        steps = 0
        memo = self._memo
        for char in text:
            key = (current, char)
            found = memo.get(key)
            if found is None:
                steps += len(current)
                if steps > _STEP_BUDGET:
                    return None
                targets = tuple(
                    self.next[s][0]
                    for s in current
                    if self.kinds[s] == _CHAR and self.tests[s](char)  # type: ignore[misc]
                )
                found = self._closure(targets, at_start=False)
                if len(memo) < _MEMO_LIMIT:
                    memo[key] = found
            current = found
            if not current:
                return False
        return self._accepts(current, at_start=not text)

    def _accepts(self, states: frozenset[int], *, at_start: bool) -> bool:
        """Whether ``states``, at the end of the input, reach the match: only there may ``$``
        states be passed."""
        pending = set(states)
        while not any(self.kinds[s] == _MATCH for s in pending):
            passed = tuple(n for s in pending if self.kinds[s] == _END for n in self.next[s])
            grown = self._closure(passed, at_start=at_start) - pending
            if not grown:
                return False
            pending |= grown
        return True

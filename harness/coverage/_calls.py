"""The calls a dialect's classifier traced on the wire, and the features every dialect's calls
share (:data:`CALL_FEATURES`, :data:`ARGUMENT_FEATURES`): how their ids, names and indices
travel, and what their argument text holds and where it is cut."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from callstream.reference import Tool

__all__ = ["ABSENT", "CallTrace", "Delta", "argument_features", "call_features"]

ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "ABSENT"})()
"""A field the delta did not carry (as opposed to one carried as null or ``""``)."""

_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)", re.DOTALL)
_NUMBER = frozenset("0123456789+-.eE")
_LETTERS = frozenset("truefalsn")
_DEEP = 5
_LONG_STRING = 200
_LARGE = 2048
_MANY_FRAGMENTS = 10


@dataclass(frozen=True, slots=True)
class Delta:
    """What one event said about one call."""

    id: Any = ABSENT
    name: Any = ABSENT
    index: Any = ABSENT
    arguments: str | None = None
    """The argument text it appended, None when it appended none."""


@dataclass
class CallTrace:
    """One call as the wire told it: each delta that spoke of it, in order."""

    deltas: list[Delta] = field(default_factory=list)

    @property
    def fragments(self) -> list[str]:
        """The argument text appended, delta by delta."""
        return [delta.arguments for delta in self.deltas if delta.arguments is not None]

    def seen(self, what: str) -> list[Any]:
        """The values of ``what`` (``id``, ``name``, ``index``) on each delta, absent ones too."""
        return [getattr(delta, what) for delta in self.deltas]

    def first(self, what: str) -> Any:
        """The first value of ``what`` the call carried, :data:`ABSENT` if none."""
        return next((value for value in self.seen(what) if value is not ABSENT), ABSENT)


def call_features(
    calls: Sequence[CallTrace], order: Sequence[int], tools: Iterable[Tool]
) -> set[str]:
    """The :data:`CALL_FEATURES` of ``calls``; ``order`` lists, for each non-empty argument
    fragment on the wire, the number of the call it belongs to."""
    features: set[str] = set()
    count = len(calls)
    features.add(
        "calls.none"
        if not count
        else "calls.one"
        if count == 1
        else "calls.two"
        if count == 2
        else "calls.many"
    )
    if _interleaved(order):
        features.add("calls.interleaved")
    offered = {tool.name for tool in tools}
    if not offered:
        features.add("calls.no-tools")
    names = [call.first("name") for call in calls]
    named = [name for name in names if isinstance(name, str) and name]
    if len(set(named)) < len(named):
        features.add("calls.same-name")
    if offered and any(name not in offered for name in named):
        features.add("calls.unknown-tool")
    ids = [call.first("id") for call in calls]
    present = [i for i in ids if i not in (ABSENT, None, "")]
    if len(set(map(repr, present))) < len(present):
        features.add("id.shared")
    for call in calls:
        pieces = [piece for piece in call.fragments if piece]
        if len(pieces) == 1:
            features.add("calls.whole")
        if len(pieces) >= _MANY_FRAGMENTS:
            features.add("calls.many-fragments")
        features |= _metadata(call, "id") | _metadata(call, "name")
        if any(index is ABSENT for index in call.seen("index")):
            features.add("index.missing")
    return features


def _metadata(call: CallTrace, what: str) -> set[str]:
    """``id.*`` or ``name.*``: how one call's id or name travelled."""
    seen = call.seen(what)
    carried = [value for value in seen if value is not ABSENT and value is not None]
    features: set[str] = set()
    if what == "id" and any(value == "" for value in carried):
        features.add("id.empty")
    if what == "id" and any(isinstance(value, int | float) for value in carried):
        features.add("id.numeric")
    real = [value for value in carried if value != ""]
    if not real:
        if what == "name" or not carried:
            features.add(f"{what}.missing")
        return features
    if seen[0] is ABSENT or seen[0] is None or seen[0] == "":
        features.add(f"{what}.late")
    distinct = {json.dumps(value) for value in real}
    if len(distinct) > 1:
        features.add(f"{what}.changed")
    if len(real) > len(distinct):
        features.add(f"{what}.repeated")
    return features


def _interleaved(order: Sequence[int]) -> bool:
    """Whether a call's fragments resume after another call's began."""
    done: set[int] = set()
    current: int | None = None
    for call in order:
        if call != current:
            if call in done:
                return True
            if current is not None:
                done.add(current)
            current = call
    return False


def argument_features(fragments: Sequence[str]) -> set[str]:
    """The :data:`ARGUMENT_FEATURES` of one call's argument text, cut into ``fragments``."""
    text = "".join(fragments)
    features: set[str] = set()
    if not text:
        return {"args.empty"}
    if "" in fragments and len(fragments) > 1:
        features.add("args.empty-fragment")
    if len(text.encode("utf-8", "surrogatepass")) >= _LARGE:
        features.add("args.large")
    if not text.isascii():
        features.add("args.non-ascii")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        features.add("args.invalid-json")
    else:
        if not isinstance(value, dict):
            features.add("args.not-object")
        if _depth(value) >= _DEEP:
            features.add("args.deep-nesting")
        if any(len(string) >= _LONG_STRING for string in _strings(value)):
            features.add("args.long-string")
    features |= _escapes_and_cuts(text, fragments)
    return features


def _escapes_and_cuts(text: str, fragments: Sequence[str]) -> set[str]:
    features: set[str] = set()
    inside_escape: set[int] = set()
    joints: set[int] = set()
    escapes = list(_ESCAPE.finditer(text))
    for number, match in enumerate(escapes):
        escape = match.group()
        inside_escape.update(range(match.start() + 1, match.end()))
        if len(escape) != 6:
            features.add("args.escape")
            continue
        features.add("args.unicode-escape")
        unit = int(escape[2:], 16)
        following = escapes[number + 1] if number + 1 < len(escapes) else None
        paired = (
            following is not None
            and following.start() == match.end()
            and len(following.group()) == 6
            and 0xDC00 <= int(following.group()[2:], 16) <= 0xDFFF
        )
        if 0xD800 <= unit <= 0xDBFF:
            if paired:
                features.add("args.surrogate-pair-escape")
                joints.add(match.end())
            else:
                features.add("args.lone-surrogate-escape")
        elif 0xDC00 <= unit <= 0xDFFF and match.start() not in joints:
            features.add("args.lone-surrogate-escape")
    outside = _outside_strings(text)
    if any(outside[i] and text[i] in " \t\r\n" for i in range(len(text))):
        features.add("args.whitespace")
    cut = 0
    for fragment in fragments[:-1]:
        cut += len(fragment)
        if not 0 < cut < len(text):
            continue
        before, after = text[cut - 1], text[cut]
        if cut in inside_escape:
            features.add("args.cut-in-escape")
        if cut in joints:
            features.add("args.cut-in-surrogate-pair")
        if outside[cut - 1] and outside[cut]:
            if before in _NUMBER and after in _NUMBER:
                features.add("args.cut-in-number")
            if before in _LETTERS and after in _LETTERS:
                features.add("args.cut-in-literal")
        if text[:cut].rstrip().endswith(("}", "]")) and _parses(text[:cut]):
            features.add("args.prefix-parses")
    return features


def _outside_strings(text: str) -> list[bool]:
    """For each character, whether it lies outside every JSON string (quotes count as
    inside)."""
    outside: list[bool] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            outside.append(False)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        else:
            in_string = char == '"'
            outside.append(not in_string)
    return outside


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _depth(value: Any) -> int:
    """How deeply objects and arrays nest in ``value`` (iteratively: the text may nest deeper
    than Python recurses)."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            stack += [
                (child, depth) for child in (item.values() if isinstance(item, dict) else item)
            ]
    return deepest


def _strings(value: Any) -> Iterable[str]:
    """Every string in ``value``, keys included."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack += list(item.keys()) + list(item.values())
        elif isinstance(item, list):
            stack += item

"""Tool schemas compiled so that checking peer data is self-contained and bounded.

A tool's JSON Schema is configuration; the arguments checked against it are peer data. So a
schema is vetted once, when the tool is given, and evaluation can then neither do I/O nor take
time or memory out of proportion to the arguments:

- ``$ref`` and ``$dynamicRef`` resolve only inside the schema itself (a registry with no
  retrieval). A reference to anything else, ``http://``, ``https://``, ``file://`` or a relative
  file, is a :class:`~callstream.reference.SchemaRefError` when the tool is given, never a fetch.
- ``pattern`` and ``patternProperties`` run on RE2, whose matching time is linear in the text.
  A pattern RE2 cannot run (lookaround, backreferences, a repetition past 1000) is a
  :class:`~callstream.reference.ToolSchemaError` when the tool is given: a call is never released
  as ready with a pattern left unchecked.
- ``uniqueItems`` sorts instead of comparing every pair, ``unevaluatedItems`` and
  ``unevaluatedProperties`` look up sets instead of lists, and ``multipleOf`` never overflows.
- Every keyword evaluation spends one step of a budget proportional to the size of the
  arguments, so a schema whose applicators multiply (``anyOf`` of ``$ref`` on deep data) stops
  with :class:`OverBudget` instead of running for hours.
- Error messages show arguments through bounded reprs, so a message about a 1 MB value or an
  integer of a million digits costs a few dozen characters.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator, Mapping
from contextvars import ContextVar, Token
from fractions import Fraction
from functools import lru_cache
from typing import Any

import re2  # type: ignore[import-untyped]
from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from ._errors import SchemaRefError, ToolSchemaError

__all__ = ["OverBudget", "bounded", "compile_schema", "spend", "stop_spending"]


class OverBudget(Exception):
    """Schema evaluation took more steps than the arguments' size allows."""


def compile_schema(name: str, schema: Any) -> Validator:
    """A validator for ``schema``, vetted: valid Draft 2020-12, every reference internal, every
    pattern runnable on RE2. Raises ToolSchemaError (or SchemaRefError) naming the tool."""
    try:
        _BoundedValidator.check_schema(schema)
        resource = DRAFT202012.create_resource(schema)
        root = Registry().resolver_with_root(resource)
        for resolver, ref in _references(resource, root):
            try:
                resolver.lookup(ref)
            except Unresolvable:
                raise SchemaRefError(name, ref) from None
        for pattern in _patterns(resource):
            try:
                _regex(pattern)
            except re2.error as exc:
                raise ToolSchemaError(
                    f"tool {name!r}: pattern {pattern!r} cannot run in linear time "
                    f"(RE2: {_re2_message(exc)})"
                ) from None
    except SchemaError as exc:
        raise ToolSchemaError(f"tool {name!r}: invalid JSON Schema: {exc.message}") from None
    except RecursionError:
        raise ToolSchemaError(f"tool {name!r}: schema nested too deeply") from None
    return _BoundedValidator(schema, registry=Registry())


def _re2_message(exc: Exception) -> str:
    detail = exc.args[0] if exc.args else exc
    return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)


def _references(resource: Resource[Any], resolver: Any) -> Iterator[tuple[Any, str]]:
    """Each ``$ref`` / ``$dynamicRef`` of the schema, with the resolver of its base URI."""
    contents = resource.contents
    if isinstance(contents, Mapping):
        for keyword in ("$ref", "$dynamicRef"):
            ref = contents.get(keyword)
            if isinstance(ref, str):
                yield resolver, ref
    for sub in resource.subresources():
        yield from _references(sub, resolver.in_subresource(sub))


def _patterns(resource: Resource[Any]) -> Iterator[str]:
    """Every regular expression the schema evaluates on data."""
    contents = resource.contents
    if isinstance(contents, Mapping):
        if isinstance(contents.get("pattern"), str):
            yield contents["pattern"]
        if isinstance(contents.get("patternProperties"), Mapping):
            yield from contents["patternProperties"]
    for sub in resource.subresources():
        yield from _patterns(sub)


# -- regular expressions ---------------------------------------------------------------------

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a sans-I/O library writes nothing to stderr
_OPTIONS.never_capture = True
_UNICODE_ESCAPE = re.compile(
    r"(\\\\)|\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})|\\u([0-9a-f]{4})", re.IGNORECASE
)


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> Any:
    """``pattern`` (ECMA-262 syntax) compiled for RE2; raises re2.error if it cannot be."""
    try:
        source = _UNICODE_ESCAPE.sub(_code_point, pattern).encode("utf-8")
    except UnicodeEncodeError:
        raise re2.error(b"a lone surrogate in the pattern") from None
    return re2.compile(source, _OPTIONS)


def _code_point(match: re.Match[str]) -> str:
    """ECMA-262 ``\\uXXXX`` (and a ``\\uD83D\\uDE00`` pair) as RE2's ``\\x{...}``."""
    if match[1]:
        return match[1]  # an escaped backslash: the "u" after it is a letter
    if match[2]:
        high, low = int(match[2], 16), int(match[3], 16)
        return f"\\x{{{0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00):x}}}"
    return f"\\x{{{match[4]}}}"


def _search(pattern: str, text: str) -> bool:
    # Lone surrogates, which JSON escapes can carry, are not UTF-8: pass their three bytes,
    # which RE2 reads as one character (as ECMA-262 does a UTF-16 code unit), rather than fail.
    return _regex(pattern).search(text.encode("utf-8", "surrogatepass")) is not None


# -- keywords replaced by bounded versions -----------------------------------------------------


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = [key for key in instance if not _matched_by_properties(key, schema)]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        shown = ", ".join(repr(extra) for extra in sorted(extras)[:_SHOWN])
        if len(extras) > _SHOWN:
            shown += f" and {len(extras) - _SHOWN} more"
        if "patternProperties" in schema:
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            verb = "does" if len(extras) == 1 else "do"
            yield ValidationError(f"{shown} {verb} not match any of the regexes: {patterns}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({shown} {verb} unexpected)"
            )


def _matched_by_properties(key: str, schema: Mapping[str, Any]) -> bool:
    if key in schema.get("properties", {}):
        return True
    return any(_search(pattern, key) for pattern in schema.get("patternProperties", {}))


def _unevaluated_properties(
    validator: Any, unevaluated: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_keys(validator, instance, schema)
    invalid = [
        key
        for key in instance
        if key not in evaluated
        and next(validator.descend(instance[key], unevaluated, path=key, schema_path=key), None)
    ]
    if invalid:
        shown = ", ".join(repr(key) for key in sorted(invalid)[:_SHOWN])
        verb = "was" if len(invalid) == 1 else "were"
        if unevaluated is False:
            yield ValidationError(
                f"Unevaluated properties are not allowed ({shown} {verb} unexpected)"
            )
        else:
            yield ValidationError(
                "Unevaluated properties are not valid under the given schema "
                f"({shown} {verb} unevaluated and invalid)"
            )


def _referred(validator: Any, schema: Mapping[str, Any]) -> Iterator[tuple[Any, Any]]:
    """The validator and schema each ``$ref`` and ``$dynamicRef`` of ``schema`` points to,
    resolved as jsonschema resolves them (through the validator's resolver)."""
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if ref is not None:
            resolved = validator._resolver.lookup(ref)
            yield (
                validator.evolve(schema=resolved.contents, _resolver=resolved.resolver),
                (resolved.contents),
            )


def _evaluated_keys(validator: Any, instance: Mapping[str, Any], schema: Any) -> set[str]:
    """The keys of ``instance`` that ``schema`` evaluates (for unevaluatedProperties), as
    jsonschema computes them (reaching, as it does, the validator's resolver for ``$ref``),
    with RE2 patterns and a set."""
    if not isinstance(schema, Mapping):
        return set()
    keys: set[str] = set()
    for referred, contents in _referred(validator, schema):
        keys |= _evaluated_keys(referred, instance, contents)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        keys.update(key for key in instance if key in properties)
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        subschema = schema.get(keyword)
        if subschema is not None:
            keys.update(
                key
                for key, value in instance.items()
                if next(validator.descend(value, subschema), None) is None
            )
    for pattern in schema.get("patternProperties", {}):
        keys.update(key for key in instance if _search(pattern, key))
    for key, subschema in schema.get("dependentSchemas", {}).items():
        if key in instance:
            keys |= _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if next(validator.descend(instance, subschema), None) is None:
                keys |= _evaluated_keys(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys |= _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                keys |= _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            keys |= _evaluated_keys(validator, instance, schema["else"])
    return keys


def _unevaluated_items(
    validator: Any, unevaluated: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "array"):
        return
    evaluated = _evaluated_indexes(validator, instance, schema)
    extra = [item for index, item in enumerate(instance) if index not in evaluated]
    if extra:
        shown = ", ".join(repr(item) for item in extra[:_SHOWN])
        if len(extra) > _SHOWN:
            shown += f" and {len(extra) - _SHOWN} more"
        verb = "was" if len(extra) == 1 else "were"
        yield ValidationError(f"Unevaluated items are not allowed ({shown} {verb} unexpected)")


def _evaluated_indexes(validator: Any, instance: list[Any], schema: Any) -> set[int]:
    """The indexes of ``instance`` that ``schema`` evaluates (for unevaluatedItems), as
    jsonschema computes them, in a set."""
    if not isinstance(schema, Mapping):
        return set()
    if "items" in schema:
        return set(range(len(instance)))
    indexes: set[int] = set()
    for referred, contents in _referred(validator, schema):
        indexes |= _evaluated_indexes(referred, instance, contents)
    if "prefixItems" in schema:
        indexes.update(range(len(schema["prefixItems"])))
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            indexes |= _evaluated_indexes(validator, instance, schema["if"])
            if "then" in schema:
                indexes |= _evaluated_indexes(validator, instance, schema["then"])
        elif "else" in schema:
            indexes |= _evaluated_indexes(validator, instance, schema["else"])
    for keyword in ("contains", "unevaluatedItems"):
        if keyword in schema:
            check = validator.evolve(schema=schema[keyword])
            indexes.update(index for index, item in enumerate(instance) if check.is_valid(item))
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if next(validator.descend(instance, subschema), None) is None:
                indexes |= _evaluated_indexes(validator, instance, subschema)
    return indexes


def _unique_items(
    validator: Any, unique: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if unique and validator.is_type(instance, "array") and not _all_unique(instance):
        yield ValidationError(f"{instance!r} has non-unique elements")


def _all_unique(items: list[Any]) -> bool:
    # Sorting comparable keys is O(n log n) whatever the values; a set would be quadratic on
    # integers chosen to share one hash (hash(n) is n modulo 2**61 - 1).
    keys = sorted(_sort_key(item) for item in items)
    return all(a != b for a, b in itertools.pairwise(keys))


def _sort_key(value: Any) -> tuple[Any, ...]:
    """A totally ordered key with JSON Schema equality: 1 equals 1.0, true does not equal 1."""
    kind = type(value)
    if kind is bool:
        return (0, value)
    if kind is _Text:
        return (2, value)
    if kind is _Array:
        return (3, tuple(map(_sort_key, value)))
    if kind is _Object:
        return (4, tuple(sorted(zip(value.keys(), map(_sort_key, value.values()), strict=True))))
    if value is None:
        return (5,)
    return (1, value)  # int, LongInt or float


def _multiple_of(
    validator: Any, divisor: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "number"):
        return
    if isinstance(instance, float) and not math.isfinite(instance):
        failed: Any = True  # a number too large for a float is a multiple of nothing known
    elif isinstance(divisor, float):
        try:
            quotient = instance / divisor
            failed = int(quotient) != quotient
        except OverflowError:  # exact, and cheap: a float's fraction has a small denominator
            failed = (Fraction(instance) / Fraction(divisor)).denominator != 1
    else:
        failed = instance % divisor
    if failed:
        yield ValidationError(f"{instance!r} is not a multiple of {divisor}")


_SHOWN = 10

# -- the budget --------------------------------------------------------------------------------

_STEPS: ContextVar[list[int] | None] = ContextVar("callstream_schema_steps", default=None)


def spend(steps: int) -> Token[list[int] | None]:
    """Bound the schema evaluations that follow, in this context, to ``steps`` keyword
    evaluations: past them, evaluation raises OverBudget. Undo with :func:`stop_spending`;
    without a budget, evaluation is unbounded."""
    return _STEPS.set([steps])


def stop_spending(token: Token[list[int] | None]) -> None:
    """Lift the budget ``spend`` set."""
    _STEPS.reset(token)


def _counted(keyword: Any) -> Any:
    def evaluate(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        left = _STEPS.get()
        if left is not None:
            left[0] -= 1
            if left[0] < 0:
                raise OverBudget
        return keyword(validator, value, instance, schema)

    return evaluate


_KEYWORDS = {
    **Draft202012Validator.VALIDATORS,
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "unevaluatedProperties": _unevaluated_properties,
    "unevaluatedItems": _unevaluated_items,
    "uniqueItems": _unique_items,
    "multipleOf": _multiple_of,
}
_BoundedValidator: type[Validator] = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    validators={name: _counted(keyword) for name, keyword in _KEYWORDS.items()},
)


# -- bounded reprs -----------------------------------------------------------------------------

_REPR_CHARS = 80


class _Text(str):
    __slots__ = ()

    def __repr__(self) -> str:
        if len(self) <= _REPR_CHARS:
            return str.__repr__(self)
        return str.__repr__(self[:_REPR_CHARS]) + f"…({len(self)} characters)"


class _Array(list[Any]):
    __slots__ = ()

    def __repr__(self) -> str:
        return _joined((repr(item) for item in self), "[", "]", len(self))


class _Object(dict[str, Any]):
    __slots__ = ()

    def __repr__(self) -> str:
        pairs = (f"{key!r}: {value!r}" for key, value in self.items())
        return _joined(pairs, "{", "}", len(self))


def _joined(pieces: Iterator[str], opening: str, closing: str, count: int) -> str:
    shown: list[str] = []
    size = 0
    for piece in pieces:
        if size > _REPR_CHARS:
            shown.append(f"…{count - len(shown)} more")
            break
        shown.append(piece)
        size += len(piece) + 2
    return opening + ", ".join(shown) + closing


def bounded(value: Any) -> tuple[Any, int]:
    """A copy of a parsed JSON value whose strings and containers have bounded reprs, and the
    number of values in it."""
    kind = type(value)
    if kind is str:
        return _Text(value), 1
    if kind is list:
        items, total = _Array(), 1
        for item in value:
            copy, count = bounded(item)
            items.append(copy)
            total += count
        return items, total
    if kind is dict:
        members, total = _Object(), 1
        for key, item in value.items():
            copy, count = bounded(item)
            members[_Text(key)] = copy
            total += count
        return members, total
    return value, 1

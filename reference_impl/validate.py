"""The reference's parsing and validation helpers, public for tools built beside it (the
harness's oracle, scenario loader and route checks use exactly these, so the suite predicts
what the reference would decide):

- :func:`validator_for` — a bounded Draft 2020-12 validator for a tool's schema: ``$ref`` only
  inside the schema, ``pattern`` on RE2;
- :func:`schema_problem` — the first violation of a value, with its path, or None;
- :func:`parse_int` — an integer of any length from JSON text, without CPython's digit limit;
- :func:`closing_brackets` — the brackets that would close a JSON prefix (route checks use it
  to tell a truncated argument text from a malformed one);
- :func:`outside_strings` — the one JSON string scanner: each character outside string
  literals, with its offset;
- :func:`input_format` — a custom tool's declared input format (text, regex, grammar).
"""

from ._custom import InputFormat, input_format
from ._validate import closing_brackets, outside_strings, parse_int, schema_problem, validator_for

__all__ = [
    "InputFormat",
    "closing_brackets",
    "input_format",
    "outside_strings",
    "parse_int",
    "schema_problem",
    "validator_for",
]

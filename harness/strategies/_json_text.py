"""JSON text: strings full of what breaks assemblers (escapes, surrogates, non-characters), and
the many equivalent ways to spell one value (``argument_text``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache, partial
from typing import Literal

from hypothesis import strategies as st

from ._knobs import Json, knobs, label_draw
from ._tape import Tape, readable

__all__ = [
    "CHARACTERS",
    "SURROGATE",
    "Spelling",
    "argument_text",
    "quote",
    "spell",
    "strings",
]


_NASTY = tuple('"\\/\n\r\t\b\f\x00\x1f\x7féß中\u2028\u2029\ufeff😀🎉𝄞\U0010fffd')
"""Characters that break naive escaping, framing or UTF-8 handling."""
_SURROGATES = ("\ud800", "\udbff", "\udc00", "\udfff", "\ud83d")
CHARACTERS = st.one_of(st.characters(codec="utf-8"), st.sampled_from(_NASTY))
_CHARACTERS_WITH_SURROGATES = st.one_of(
    st.characters(codec="utf-8"), st.sampled_from(_NASTY + _SURROGATES)
)
_PAIRED = re.compile("(?<=[\ud800-\udbff])[\udc00-\udfff]")
SURROGATE = re.compile("[\ud800-\udfff]")


@cache
def strings(
    min_size: int = 0, max_size: int = 10, lone_surrogates: bool = False
) -> st.SearchStrategy[str]:
    """Text full of quotes, backslashes, control and non-ASCII characters; with
    ``lone_surrogates``, also unpaired surrogates (JSON can only carry them as escapes). A tape
    reads it with :func:`read_text`."""
    if not lone_surrogates:
        text = st.text(CHARACTERS, min_size=min_size, max_size=max_size)
    else:
        # A high surrogate right before a low one would read back as one character: keep them
        # apart.
        text = st.text(_CHARACTERS_WITH_SURROGATES, min_size=min_size, max_size=max_size).map(
            lambda text: _PAIRED.sub("?", text)
        )
    return readable(text, partial(read_text, min_size, max_size, lone_surrogates))


_PRINTABLE = "".join(map(chr, range(0x20, 0x7F)))
_ZERO = _PRINTABLE.index("0")


def read_text(
    min_size: int, max_size: int, lone_surrogates: bool, tape: Tape, alphabet: str = ""
) -> str:
    """What ``strings(min_size, max_size, lone_surrogates)`` draws, read from ``tape``: a
    length, then three bytes a character whatever it is (so that the shrinker simplifies one
    character without moving the next): a character of ``alphabet`` when one is given, one
    time in two; else printable ASCII (a quarter; zero bytes read ``0``), one of the nasty
    characters (half; with ``lone_surrogates``, lone surrogates among them), any other
    character of the BMP (a fifth) or beyond it."""
    nasty = _NASTY + _SURROGATES if lone_surrogates else _NASTY
    out = []
    for _ in range(min_size + tape.below(max_size - min_size + 1)):
        how, at = tape.byte(), tape.fraction(65536)
        if alphabet and how & 1:
            out.append(alphabet[at * len(alphabet) >> 16])
        elif how < 64:
            out.append(_PRINTABLE[(_ZERO + at) % len(_PRINTABLE)])
        elif how < 192:
            out.append(nasty[at * len(nasty) >> 16])
        elif how < 240:
            code = 0x80 + at * (0xFFFF - 0x80 - 0x800) // 65536  # no surrogate
            out.append(chr(code + 0x800 if code >= 0xD800 else code))
        else:
            out.append(chr(0x10000 + ((how & 15) << 16 | at)))
    text = "".join(out)
    return _PAIRED.sub("?", text) if lone_surrogates else text


_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


@dataclass(frozen=True, slots=True)
class Spelling:
    """How one JSON text is written. Every choice keeps the value it stands for."""

    layout: str = "compact"
    item: str = ","
    key: str = ":"
    inner: str = ""
    """Whitespace after an opening and before a closing bracket."""
    indent: str | None = None
    escape: Literal["raw", "ascii", "every", "alternate"] = "raw"
    """Which characters of strings become ``\\uXXXX``: only those that must (raw), every
    non-ASCII one (``ensure_ascii``), every one, or every other one."""
    slash: bool = False
    """``/`` written as ``\\/``."""
    upper_hex: bool = False
    short: bool = True
    """``\\n`` rather than ``\\u000a``."""
    exponent: Literal["e+", "E", "e"] = "e+"
    reverse_keys: bool = False
    pad: tuple[str, str] = ("", "")
    """Whitespace before and after the whole text."""


_LAYOUTS = (
    Spelling("compact"),
    Spelling("spaced", item=", ", key=": "),
    Spelling("indented", key=": ", indent="  "),
    Spelling("tabs", key=": ", indent="\t"),
    Spelling("loose", item=" ,\r\n", key=" :\t", inner=" "),
)
_PADS = ((" ", ""), ("", "\n"), ("\r\n\t ", " \n"))


_ESCAPES: tuple[Literal["raw", "ascii", "every", "alternate"], ...] = (
    "raw",
    "ascii",
    "every",
    "alternate",
)
_EXPONENTS: tuple[Literal["e+", "E", "e"], ...] = ("e+", "E", "e")
_SPELLINGS = knobs(
    tuple((layout, 1) for layout in _LAYOUTS),
    tuple((escape, 1) for escape in _ESCAPES),
    tuple((exponent, 1) for exponent in _EXPONENTS),
    ((False, 4), (True, 1)),  # ``\\/`` for slashes (a fifth of the texts)
    ((False, 7), (True, 3)),  # upper-case hex
    ((True, 4), (False, 1)),  # short escapes (long ones a fifth of the time)
    ((False, 4), (True, 1)),  # keys in reverse order
    ((("", ""), 12), *((pad, 1) for pad in _PADS)),  # padding (a fifth, each alike)
)
"""Every spelling knob in one choice (an index into 1 125 000 weighted combinations), where
``st.builds`` of a knob each would take nine draws and spans; layout, escapes and exponent
uniform; shrinks to compact, raw, ``e+`` and the ordinary knobs."""


def _spelling(draw: st.DrawFn) -> Spelling:
    """One spelling, in one choice."""
    layout, escape, exponent, slash, upper_hex, short, reverse_keys, pad = _SPELLINGS.draw(draw)
    spelling: Spelling = layout
    return replace(
        spelling,
        escape=escape,
        slash=slash,
        upper_hex=upper_hex,
        short=short,
        exponent=exponent,
        reverse_keys=reverse_keys,
        pad=pad,
    )


def _write(value: Json, spelling: Spelling, depth: int = 0) -> str:
    """``value`` as JSON text, spelled as ``spelling`` says."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        if spelling.exponent == "E":
            return text.replace("e", "E")
        return text.replace("e+", "e") if spelling.exponent == "e" else text
    if isinstance(value, str):
        return quote(value, spelling)
    if isinstance(value, list):
        items = [_write(item, spelling, depth + 1) for item in value]
        return _container("[", "]", items, spelling, depth)
    if isinstance(value, dict):
        keys = list(value)[::-1] if spelling.reverse_keys else list(value)
        members = [
            quote(key, spelling) + spelling.key + _write(value[key], spelling, depth + 1)
            for key in keys
        ]
        return _container("{", "}", members, spelling, depth)
    raise TypeError(f"not a JSON value: {value!r}")


def _container(opening: str, closing: str, items: list[str], spelling: Spelling, depth: int) -> str:
    if not items:
        return opening + closing
    if spelling.indent is not None:
        pad = "\n" + spelling.indent * (depth + 1)
        return opening + pad + ("," + pad).join(items) + "\n" + spelling.indent * depth + closing
    return opening + spelling.inner + spelling.item.join(items) + spelling.inner + closing


def quote(text: str, spelling: Spelling) -> str:
    out = ['"']
    for position, char in enumerate(text):
        code = ord(char)
        if (
            char in '"\\'
            or code < 0x20
            or 0xD800 <= code <= 0xDFFF
            or spelling.escape == "every"
            or (spelling.escape == "ascii" and code > 0x7F)
            or (spelling.escape == "alternate" and position % 2 == 1)
        ):
            out.append(_escape(char, spelling))
        elif char == "/" and spelling.slash:
            out.append("\\/")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _escape(char: str, spelling: Spelling) -> str:
    if spelling.short and char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    if code > 0xFFFF:
        code -= 0x10000
        return _hex(0xD800 + (code >> 10), spelling) + _hex(0xDC00 + (code & 0x3FF), spelling)
    return _hex(code, spelling)


def _hex(code: int, spelling: Spelling) -> str:
    return f"\\u{code:04X}" if spelling.upper_hex else f"\\u{code:04x}"


def spell(draw: st.DrawFn, value: Json) -> str:
    """What ``argument_text(value)`` draws, drawn in the caller's span."""
    spelling = _spelling(draw)
    label_draw(f"spelling: {spelling.layout}, escapes {spelling.escape}")
    if spelling.slash:
        label_draw("spelling: escaped slashes")
    pad = spelling.pad
    return pad[0] + _write(value, spelling) + pad[1]


def argument_text(value: Json) -> st.SearchStrategy[str]:
    """``value`` written as JSON text in one of many valid ways, all parsing back to ``value``:
    compact, spaced, indented or loosely spaced; strings raw, ``ensure_ascii``-style or with
    any character as a ``\\uXXXX`` escape (non-BMP ones as surrogate pairs, upper or lower
    case hex); ``\\/`` for slashes; exponent spellings; key order; leading and trailing
    whitespace. Lone surrogates are always escaped, so the text is always UTF-8-encodable."""
    return _argument_text(value)


@st.composite
def _argument_text(draw: st.DrawFn, value: Json) -> str:
    return spell(draw, value)

"""Keeping secrets out of everything callstream writes: cassettes, certificates, reports, logs.

A :class:`Scrubber` knows the secret values of one run (the API key, and whatever the base URL
carries in its user info or in a key-like query parameter) and masks each occurrence with
asterisks, in text and in bytes, in every form a route or a writer can give it:

- raw, or JSON-escaped: any of its characters as ``\\uXXXX`` (either case of hex digits, a
  surrogate pair beyond the BMP, a backslash doubled by each further level of JSON, so the key
  inside tool-call arguments inside a chunk is found too) or as a short escape (``\\"``,
  ``\\/``);
- URL-encoded: any of its characters as ``%XX`` (either case), a space as ``+``;
- HTML-escaped (``&amp;`` and the like, as the HTML pages write them);
- base64 or base64url, at any of the three alignments it can have inside a longer encoded run
  (an ``Authorization: Basic`` value, a chunk stored as base64).

Masking keeps byte lengths, so a recorded body keeps its chunk boundaries and offsets. It works
on a whole body or a whole line, so a key cut in two by a network read is still found; a writer
that emits text piece by piece uses :class:`ScrubbedText`, which holds back the unfinished line.
Credential headers are dropped and credential query parameters and user info masked, whatever
their value (``is_credential`` says which names are credentials).
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import html
import io
import itertools
import json
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TextIO
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from .errors import HarnessError

__all__ = [
    "MASK",
    "MIN_SECRET",
    "ScrubbedText",
    "Scrubber",
    "is_credential",
    "scrubbed_output",
    "secrets_of_url",
]

MASK = "*"
MIN_SECRET = 8
"""Shorter values are not masked in free text, where they would match ordinary words (a key
such as ``none`` protects nothing); they are still dropped from headers and masked in URLs."""
_CREDENTIAL_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "accesstoken",
        "secret",
        "password",
        "passwd",
        "pwd",
        "auth",
        "authorization",
        "sig",
        "signature",
        "credential",
        "credentials",
        "cookie",
    }
)
_CREDENTIAL_ENDINGS = ("apikey", "accesskey", "subscriptionkey", "accesstoken", "clientsecret")
_WORD_SEPARATORS = re.compile(r"[-_.\s]+")
_JSON_SHORT = {'"': '"', "\\": "\\", "/": "/"}
"""Characters JSON may escape with a backslash and the character itself."""


def is_credential(name: str) -> bool:
    """True when a header or query parameter ``name`` carries a credential: one of its words
    (split at ``-``, ``_`` and ``.``, any case) is ``key``, ``token``, ``secret``,
    ``password``, ``auth``, ``authorization``, ``sig``, ``signature``, ``cookie``…, as in
    ``api-key``, ``x-goog-api-key``, ``subscription-key``, ``access_token`` or
    ``Proxy-Authorization``; or it runs such words together (``apikey``, ``accesstoken``)."""
    words = [word for word in _WORD_SEPARATORS.split(name.lower()) if word]
    return any(word in _CREDENTIAL_WORDS for word in words) or "".join(words).endswith(
        _CREDENTIAL_ENDINGS
    )


def secrets_of_url(url: str) -> list[str]:
    """The secret values a URL carries: its user name and password, the ``Authorization:
    Basic`` credentials a client makes of them, and the value of every key-like query parameter
    (see ``is_credential``)."""
    try:
        parts = urlsplit(url)
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
    except ValueError:
        return []
    found = [user, password]
    if user or password:
        basic = f"{user}:{password}".encode("utf-8", "surrogatepass")
        found.append(base64.b64encode(basic).decode("ascii"))
    found += [
        value
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if is_credential(name)
    ]
    return [value for value in found if value]


class Scrubber:
    """Masks the secrets of one run wherever they appear, in any of their forms."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first: the alternation takes the first secret that matches, and a secret
        # that contains another must be masked whole.
        kept = sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True)
        self.secrets = tuple(kept)
        """The values masked in free text."""
        self._text = _Forms(kept, as_bytes=False) if kept else None
        # Bytes are matched as Latin-1 text: one character per byte, so lengths hold.
        self._data = _Forms(kept, as_bytes=True) if kept else None

    def text(self, text: str) -> str:
        """``text`` with every form of every secret masked, its length kept."""
        return text if self._text is None else self._text.masked(text)

    def data(self, data: bytes) -> bytes:
        """``data`` with every form of every secret masked, its byte length kept."""
        if self._data is None:
            return data
        return self._data.masked(data.decode("latin-1")).encode("latin-1")

    def url(self, url: str) -> str:
        """``url`` with its user info and credential query parameters masked (``***``), then
        every secret."""
        try:
            parts = urlsplit(url)
        except ValueError:
            return self.text(url)
        netloc = parts.netloc
        if "@" in netloc:
            netloc = f"{MASK * 3}@{netloc.rpartition('@')[2]}"
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        query = urlencode(
            [(name, MASK * 3 if is_credential(name) else value) for name, value in pairs],
            safe="*",
        )
        return self.text(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """``headers`` (names lower-cased) without credential headers, the secrets masked."""
        return {
            name.lower(): self.text(value)
            for name, value in headers.items()
            if not is_credential(name)
        }

    def stream(self, body: bytes) -> bytes:
        """An event stream's ``body`` with every form of every secret masked, as ``data``
        does, and also every secret a route split across JSON strings: the pieces of a
        ``content`` or ``arguments`` value, each in its own event, are read together, as a
        client assembles them, and each piece of a secret found so is masked where it lies."""
        body = self.data(body)
        if self._text is None:
            return body
        masked = bytearray(body)
        for pieces in _string_runs(body):
            text = "".join(piece for piece, _ in pieces)
            ends = list(itertools.accumulate(len(piece) for piece, _ in pieces))
            for low, high in self._text.spans(text):
                first = bisect.bisect_right(ends, low)
                last = bisect.bisect_left(ends, high)
                for n in range(first, last + 1):
                    base = ends[n] - len(pieces[n][0])
                    for index, (start, end) in enumerate(_spans(body, pieces[n][1])):
                        if low <= base + index < high:
                            masked[start:end] = MASK.encode() * (end - start)
        return bytes(masked)

    def files(self, paths: Iterable[Path]) -> None:
        """Mask the secrets in files already written, in place: the last line of defence for
        files made by writers that never saw the scrubber."""
        if self._data is None:
            return
        for path in paths:
            data = path.read_bytes()
            masked = self.data(data)
            if masked != data:
                path.write_bytes(masked)


class ScrubbedText(io.TextIOBase):
    """A text stream that masks the secrets in what is written to it, line by line, before
    passing it to ``target``: an unfinished line is held back until its end (or ``close``), so
    a secret written in pieces is masked whole."""

    def __init__(self, target: TextIO, scrubber: Scrubber) -> None:
        super().__init__()
        self.target = target
        self.scrubber = scrubber
        self._pending = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        """Take ``text``; pass on every line it completes, masked."""
        self._pending += text
        done, newline, self._pending = self._pending.rpartition("\n")
        if newline:
            self.target.write(self.scrubber.text(done + newline))
        return len(text)

    def flush(self) -> None:
        """Flush the target (an unfinished line stays held back)."""
        self.target.flush()

    def close(self) -> None:
        """Pass on the unfinished line, masked, and flush."""
        if self._pending:
            self.target.write(self.scrubber.text(self._pending))
            self._pending = ""
        self.target.flush()
        super().close()


@contextlib.contextmanager
def scrubbed_output(scrubber: Scrubber) -> Iterator[None]:
    """Within the block, everything written to ``sys.stdout`` and ``sys.stderr`` is masked
    (:class:`ScrubbedText`), and so is the message of a HarnessError leaving it."""
    saved = sys.stdout, sys.stderr
    out, err = ScrubbedText(saved[0], scrubber), ScrubbedText(saved[1], scrubber)
    sys.stdout, sys.stderr = out, err
    try:
        yield
    except HarnessError as exc:
        exc.args = (scrubber.text(str(exc)),)
        raise
    finally:
        sys.stdout, sys.stderr = saved
        out.close()
        err.close()


# -- secrets split across events ------------------------------------------------------------

_LITERAL = re.compile(rb'"((?:[^"\\\n]|\\.)*)"(\s*:)?')
_ESCAPE = re.compile(rb"\\u([0-9a-fA-F]{4})|\\(.)|([\x00-\x7f]|[\xc0-\xff][\x80-\xbf]*)", re.S)


def _string_runs(body: bytes) -> list[list[tuple[str, re.Match[bytes]]]]:
    """The string values of ``body``'s JSON, grouped by the name of the member holding them
    (every ``content``, every ``arguments``…), in order: each decoded, with its literal."""
    runs: dict[bytes, list[tuple[str, re.Match[bytes]]]] = {}
    member = b""
    for literal in _LITERAL.finditer(body):
        if literal.group(2):  # a member's name, followed by its colon
            member = literal.group(1)
            continue
        raw = literal.group(1)
        try:
            value = json.loads(literal.group(0)) if b"\\" in raw else raw.decode("utf-8")
        except ValueError:
            continue
        runs.setdefault(member, []).append((value, literal))
    return list(runs.values())


def _spans(body: bytes, literal: re.Match[bytes]) -> list[tuple[int, int]]:
    """Where each character of a JSON string literal's value lies in ``body``: an escape
    (two escapes, for a surrogate pair) or the bytes of one UTF-8 character."""
    spans: list[tuple[int, int]] = []
    for piece in _ESCAPE.finditer(body, literal.start(1), literal.end(1)):
        low = piece.group(1) is not None and 0xDC00 <= int(piece.group(1), 16) < 0xE000
        if low and spans and _is_high(body[spans[-1][0] : spans[-1][1]]):
            spans[-1] = (spans[-1][0], piece.end())  # the pair is one character
        else:
            spans.append((piece.start(), piece.end()))
    return spans


def _is_high(escape: bytes) -> bool:
    return escape[:2] == b"\\u" and 0xD800 <= int(escape[2:6], 16) < 0xDC00


# -- the forms of a secret ----------------------------------------------------------------------

_ESCAPING = re.compile(r"[\\%&+]")
"""What every form but the plain ones holds: a backslash, a percent sign, an entity, a plus."""
_BACKSLASHES = r"\\{1,8}"
"""The backslashes of an escape, doubled by each level of JSON it is nested in (four levels)."""
_LONGEST_CHARACTER = 26
"""The most characters one character of a secret takes in any form: a surrogate pair of
``\\u`` escapes, each behind up to eight backslashes."""


class _Forms:
    """Every form of some secrets, found fast: the plain forms (the secret, its base64
    encodings) by substring search, the escaped forms by a regular expression run only near
    an escaping character, which each of them holds."""

    def __init__(self, secrets: Sequence[str], *, as_bytes: bool) -> None:
        plain = [form for secret in secrets for form in (secret, *_base64_forms(secret))]
        if as_bytes:
            plain = [f.encode("utf-8", "surrogatepass").decode("latin-1") for f in plain]
        # Longest first: a form that contains another is masked whole.
        self.plain = sorted(dict.fromkeys(plain), key=len, reverse=True)
        self.pattern = re.compile("|".join(_pattern(s, as_bytes=as_bytes) for s in secrets))
        self.reach = _LONGEST_CHARACTER * max(len(form) for form in self.plain)

    def masked(self, text: str) -> str:
        """``text`` with every form masked, its length kept."""
        out = []
        done = 0
        for start, end in sorted(self.spans(text)):
            start = max(start, done)
            if end > start:
                out += [text[done:start], MASK * (end - start)]
                done = end
        return "".join([*out, text[done:]])

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the forms are in ``text`` (possibly overlapping)."""
        found = []
        for form in self.plain:
            start = text.find(form)
            while start != -1:
                found.append((start, start + len(form)))
                start = text.find(form, start + 1)
        for start, end in self._windows(text):
            found += [match.span() for match in self.pattern.finditer(text, start, end)]
        return found

    def _windows(self, text: str) -> Iterator[tuple[int, int]]:
        """The stretches of ``text`` within reach of an escaping character, merged."""
        start = end = -1
        for found in _ESCAPING.finditer(text):
            low, high = found.start() - self.reach, found.end() + self.reach
            if low > end:
                if end > 0:
                    yield max(start, 0), min(end, len(text))
                start = low
            end = high
        if end > 0:
            yield max(start, 0), min(end, len(text))


def _pattern(secret: str, *, as_bytes: bool) -> str:
    """A regular expression for every form of ``secret``: it or one of its base64 encodings,
    each character in any of its forms (so a partly escaped secret matches)."""
    forms = [secret, *dict.fromkeys(_base64_forms(secret))]
    return "|".join("".join(_character(c, as_bytes=as_bytes) for c in form) for form in forms)


def _character(c: str, *, as_bytes: bool) -> str:
    utf8 = c.encode("utf-8", "surrogatepass")
    raw = utf8.decode("latin-1") if as_bytes else c
    forms = [re.escape(raw)]
    point = ord(c)
    if point > 0xFFFF:
        high, low = divmod(point - 0x10000, 0x400)
        pair = (
            _BACKSLASHES + "u" + _hex(0xD800 + high, 4) + _BACKSLASHES + "u" + _hex(0xDC00 + low, 4)
        )
        forms.append(pair)
    else:
        forms.append(_BACKSLASHES + "u" + _hex(point, 4))
    if c in _JSON_SHORT:
        forms.append(_BACKSLASHES + re.escape(_JSON_SHORT[c]))
    forms.append("".join("%" + _hex(byte, 2) for byte in utf8))
    if c == " ":
        forms.append(r"\+")
    escaped = html.escape(c)
    if escaped != c:
        forms.append(re.escape(escaped))
    return "(?:" + "|".join(forms) + ")"


def _hex(value: int, width: int) -> str:
    """``value`` in hexadecimal as a pattern that matches either case of each letter."""
    return "".join(
        f"[{digit}{digit.upper()}]" if digit.isalpha() else digit for digit in f"{value:0{width}x}"
    )


def _base64_forms(secret: str) -> Iterator[str]:
    """The base64 and base64url characters that only ``secret`` decides, at each alignment."""
    data = secret.encode("utf-8", "surrogatepass")
    for shift in range(3):
        encoded = base64.b64encode(bytes(shift) + data).decode("ascii")
        first = -(-8 * shift // 6)  # the first character whose bits are all the secret's
        last = 8 * (shift + len(data)) // 6  # past the last such character
        form = encoded[first:last]
        yield form
        yield form.translate(str.maketrans("+/", "-_"))

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
import contextlib
import html
import io
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
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
        text = "|".join(_pattern(secret, as_bytes=False) for secret in kept)
        data = "|".join(_pattern(secret, as_bytes=True) for secret in kept)
        # Bytes are matched as Latin-1 text: one character per byte, so lengths hold.
        self._text = re.compile(text) if kept else None
        self._data = re.compile(data) if kept else None

    def text(self, text: str) -> str:
        """``text`` with every form of every secret masked, its length kept."""
        if self._text is None:
            return text
        return self._text.sub(_masked, text)

    def data(self, data: bytes) -> bytes:
        """``data`` with every form of every secret masked, its byte length kept."""
        if self._data is None:
            return data
        return self._data.sub(_masked, data.decode("latin-1")).encode("latin-1")

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


# -- the forms of a secret ----------------------------------------------------------------------


def _masked(match: re.Match[str]) -> str:
    return MASK * (match.end() - match.start())


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
        forms.append(r"\\+u" + _hex(0xD800 + high, 4) + r"\\+u" + _hex(0xDC00 + low, 4))
    else:
        forms.append(r"\\+u" + _hex(point, 4))
    if c in _JSON_SHORT:
        forms.append(r"\\+" + re.escape(_JSON_SHORT[c]))
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

"""Keeping secrets out of everything callstream writes: cassettes, certificates, reports, logs.

A :class:`Scrubber` knows the secret values of one run (the API key) and masks each occurrence
with asterisks of the same length, in text and in bytes. Masking keeps lengths, so a recorded
body keeps its chunk boundaries and offsets; it works on a whole body, so a key cut in two by a
chunk boundary is still found. It also drops credential headers and masks credential query
parameters and passwords in URLs, whatever their value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["CREDENTIAL_HEADERS", "MASK", "Scrubber"]

MASK = "*"
MIN_SECRET = 8
"""Shorter values are not masked in free text, where they would match ordinary words (a key
such as ``none`` protects nothing); they are still dropped from headers and URLs."""
CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
    }
)
"""Headers that carry credentials: never written, whatever their value."""
_CREDENTIAL_PARAMS = re.compile(
    r"(?i)^(api[-_]?key|key|token|access[-_]token|secret|sig|signature|password)$"
)


class Scrubber:
    """Masks the secrets of one run wherever they appear."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        variants: set[str] = set()
        for secret in secrets:
            if len(secret) >= MIN_SECRET:
                variants.add(secret)
                variants.add(json.dumps(secret)[1:-1])  # as it appears inside a JSON string
        # Longest first, so a secret that contains another is masked whole.
        self._secrets = sorted(variants, key=len, reverse=True)
        self._encoded = [secret.encode("utf-8") for secret in self._secrets]

    def text(self, text: str) -> str:
        """``text`` with every secret masked."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK * len(secret))
        return text

    def data(self, data: bytes) -> bytes:
        """``data`` with every secret masked, byte length kept."""
        for secret in self._encoded:
            if secret in data:
                data = data.replace(secret, MASK.encode() * len(secret))
        return data

    def url(self, url: str) -> str:
        """``url`` with its password and credential query parameters masked, then the secrets."""
        parts = urlsplit(url)
        netloc = parts.netloc
        if parts.password is not None:
            netloc = netloc.replace(f":{parts.password}@", f":{MASK * 3}@", 1)
        query = urlencode(
            [
                (name, MASK * 3 if _CREDENTIAL_PARAMS.match(name) else value)
                for name, value in parse_qsl(parts.query, keep_blank_values=True)
            ],
            safe="*",
        )
        return self.text(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """``headers`` (names lower-cased) without credential headers, the secrets masked."""
        return {
            name.lower(): self.text(value)
            for name, value in headers.items()
            if name.lower() not in CREDENTIAL_HEADERS
        }

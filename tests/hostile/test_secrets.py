"""No secret leaves callstream, in any form: the key and whatever the base URL carries are masked
in every file ``certify`` writes and in everything it prints, however a hostile route echoes
them back (raw, JSON-escaped whole or in part, URL-encoded, in base64, cut by a network read,
split across events or argument fragments, in headers and in-band errors)."""

from __future__ import annotations

import base64
import binascii
import contextlib
import html
import io
import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from callstream.cli import main
from callstream.emulator import Emulator
from callstream.scrub import ScrubbedText, Scrubber, is_credential, secrets_of_url

KEY = "sk-planted-7f3a9c2e/5b1d+4f60"
KEY_LIKE = [
    "key",
    "api-key",
    "api_key",
    "apikey",
    "subscription-key",
    "Ocp-Apim-Subscription-Key",
    "x-api-key",
    "x-goog-api-key",
    "token",
    "access_token",
    "sig",
    "Authorization",
    "KEY",
]
KEY_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~+/="


# -- finding a secret in bytes, independently of the scrubber ---------------------------------

_U_ESCAPE = re.compile(r"\\+u([0-9a-fA-F]{4})")
_PERCENT = re.compile(r"(?:%[0-9a-fA-F]{2})+")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_=-]{12,}")


def decoded(data: bytes) -> str:
    """``data`` with every JSON ``\\u`` escape (at any depth), URL escape and HTML entity
    decoded, until nothing changes: a secret in any of those forms, whole or in part, is raw
    in the result."""
    text = data.decode("utf-8", "replace")
    while True:
        before = text
        text = _U_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        text = _PERCENT.sub(
            lambda m: bytes.fromhex(m.group().replace("%", "")).decode("utf-8", "replace"), text
        )
        text = html.unescape(text)
        if text == before:
            return text


def in_base64(key: str, text: str) -> bool:
    """True when some base64 or base64url run in ``text``, read from any of its first four
    characters, decodes to bytes holding ``key``."""
    wanted = key.encode()
    for run in _BASE64_RUN.findall(text):
        standard = run.replace("-", "+").replace("_", "/").rstrip("=")
        for start in range(4):
            piece = standard[start:]
            piece = piece[: len(piece) - (len(piece) % 4 == 1)]  # one character is no byte
            with contextlib.suppress(binascii.Error, ValueError):
                if wanted in base64.b64decode(piece + "=" * (-len(piece) % 4)):
                    return True
    return False


def leaks(key: str, outputs: dict[str, bytes]) -> list[str]:
    """The outputs in which ``key`` can be read, in any form."""
    return [
        name
        for name, data in outputs.items()
        if key in decoded(data) or in_base64(key, data.decode("latin-1"))
    ]


def test_the_leak_finder_sees_every_form_it_must() -> None:
    """The finder the property test relies on is not blind: every form is found, a masked
    key is not."""
    forms = [
        KEY,
        json.dumps(KEY, ensure_ascii=True)[1:-1],
        "".join(f"\\u{ord(c):04X}" for c in KEY),
        json.dumps(json.dumps({"q": "".join(f"\\u{ord(c):04x}" for c in KEY)})),
        quote(KEY, safe=""),
        quote_plus(KEY),
        html.escape(KEY),
        base64.b64encode(f"user:{KEY}".encode()).decode(),
        base64.urlsafe_b64encode(f"ab{KEY}".encode()).decode(),
    ]
    for form in forms:
        assert leaks(KEY, {"x": f"<{form}>".encode()}) == ["x"], form
    assert leaks(KEY, {"x": b"*" * len(KEY)}) == []


# -- the scrubber -----------------------------------------------------------------------------


def every_form(key: str) -> list[str]:
    half = len(key) // 2
    return [
        key,
        "".join(f"\\u{ord(c):04x}" for c in key),
        "".join(f"\\u{ord(c):04X}" if n % 3 else c for n, c in enumerate(key)),
        "".join(f"\\\\u{ord(c):04x}" for c in key),  # escaped once more, inside arguments
        json.dumps(key)[1:-1],
        quote(key, safe=""),
        quote(key[:half], safe="") + key[half:],
        quote_plus(key),
        html.escape(key),
        *(
            base64.b64encode(prefix.encode() + key.encode()).decode()
            for prefix in ("", "u", "us", "user:")
        ),
        base64.urlsafe_b64encode(key.encode()).decode(),
    ]


@pytest.mark.parametrize("form", every_form(KEY))
def test_every_form_of_the_key_is_masked_in_text_and_bytes_keeping_lengths(form: str) -> None:
    """Nothing of the key can be read back, and masking keeps lengths (offsets stay true)."""
    scrubber = Scrubber([KEY])
    text = f"before {form} after"
    masked = scrubber.text(text)
    assert len(masked) == len(text)
    assert leaks(KEY, {"text": masked.encode()}) == []
    data = text.encode()
    assert len(scrubber.data(data)) == len(data)
    assert leaks(KEY, {"data": scrubber.data(data)}) == []


def test_a_key_beyond_ascii_is_masked_as_utf8_and_as_surrogate_escapes() -> None:
    key = "clé-secrète-🔑-42"
    scrubber = Scrubber([key])
    escaped = json.dumps(key, ensure_ascii=True)[1:-1]  # \ud83d\udd11 for the emoji
    for form in (key, escaped, quote(key)):
        assert leaks(key, {"x": scrubber.data(form.encode())}) == [], form


def test_a_key_split_across_events_is_masked_piece_by_piece_in_the_stream() -> None:
    """Half the key in one content delta, half in the next; the key across two argument
    fragments, escaped once more inside them: each piece is masked where it lies, and every
    event is still JSON."""

    def event(delta: dict[str, object]) -> bytes:
        payload = {"choices": [{"index": 0, "delta": delta}]}
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY[12:])
    body = (
        event({"content": f"your key: {KEY[:5]}"})
        + event({"content": KEY[5:]})
        + event({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": "' + KEY[:12]}}]})
        + event({"tool_calls": [{"index": 0, "function": {"arguments": escaped + '"}'}}]})
        + b"data: [DONE]\n\n"
    )
    masked = Scrubber([KEY]).stream(body)
    assert len(masked) == len(body)
    events = [json.loads(line[6:]) for line in masked.split(b"\n\n")[:4]]
    content = "".join(e["choices"][0]["delta"]["content"] for e in events[:2])
    assert content == "your key: " + "*" * len(KEY)
    arguments = "".join(
        e["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] for e in events[2:]
    )
    assert (arguments[:7], set(arguments[7:-2]), arguments[-2:]) == ('{"q": "', {"*"}, '"}')
    assert leaks(KEY, {"joined": content.encode() + arguments.encode()}) == []


@pytest.mark.parametrize("name", KEY_LIKE)
def test_key_like_names_are_credentials_whatever_their_case(name: str) -> None:
    assert is_credential(name)
    url = f"https://h/v1?api-version=2024-10-21&{name}=s3cr3t-value-1"
    assert secrets_of_url(url) == ["s3cr3t-value-1"]
    assert Scrubber().url(url) == f"https://h/v1?api-version=2024-10-21&{name}=***"


@pytest.mark.parametrize(
    "name", ["api-version", "model", "x-ratelimit-remaining-tokens", "design", "keyboard"]
)
def test_ordinary_names_are_not_credentials(name: str) -> None:
    assert not is_credential(name)


def test_user_info_is_masked_and_known_as_a_secret() -> None:
    url = "https://alice:pa55word-long@h/v1"
    basic = base64.b64encode(b"alice:pa55word-long").decode()
    assert secrets_of_url(url) == ["alice", "pa55word-long", basic]
    assert Scrubber(secrets_of_url(url)).url(url) == "https://***@h/v1"


def test_a_key_written_in_pieces_is_masked_whole_on_a_scrubbed_stream() -> None:
    """ScrubbedText holds back the unfinished line: a key cut between two writes is masked."""
    target = io.StringIO()
    stream = ScrubbedText(target, Scrubber([KEY]))
    stream.write(f"the key is {KEY[:5]}")
    stream.flush()
    assert target.getvalue() == ""
    stream.write(f"{KEY[5:]}\nnext ")
    stream.write("line")
    stream.close()
    assert target.getvalue() == f"the key is {'*' * len(KEY)}\nnext line"


# -- the property: certify a hostile route, read every byte written ------------------------------


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator() as running:
        yield running


def certify_and_collect(
    base_url: str, env_key: str | None, *dialect: str
) -> tuple[int, dict[str, bytes]]:
    """Certify ``route:echoes-key`` at ``base_url`` (``route:anthropic-echoes-key`` with
    ``--dialect anthropic-messages``); every file written and both streams."""
    folder = Path(tempfile.mkdtemp(prefix="callstream-secrets-"))
    route = "route:anthropic-echoes-key" if dialect else "route:echoes-key"
    with pytest.MonkeyPatch.context() as monkeypatch:
        argv = ["certify", "--base-url", base_url, "--model", route, *dialect]
        argv += ["--out", str(folder / "out"), "--probes", "tool-choice-required,parameterless"]
        if env_key is not None:
            monkeypatch.setenv("PLANTED_KEY", env_key)
            argv += ["--api-key-env", "PLANTED_KEY"]
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(argv)
    outputs = {str(p): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    shutil.rmtree(folder)
    outputs["stdout"] = stdout.getvalue().encode()
    outputs["stderr"] = stderr.getvalue().encode()
    return code, outputs


@settings(max_examples=12, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(
    key=st.text(KEY_ALPHABET, min_size=8, max_size=40).map(lambda tail: f"sk-{tail}"),
    where=st.sampled_from(["env", "user info", *(f"query {name}" for name in KEY_LIKE)]),
)
def test_no_form_of_a_planted_key_reaches_any_byte_written(
    emulator: Emulator, key: str, where: str
) -> None:
    """A key planted as the API key, in the URL's user info, or in a key-like query parameter
    is echoed back by the route in every form; no file under the output folder, and neither
    stdout nor stderr, holds it in any form. (No shrinking: each example is a certification,
    and the failing key is already short.)"""
    host = emulator.base_url.removeprefix("http://")
    base_url = emulator.base_url
    if where == "user info":
        base_url = f"http://user:{quote(key, safe='')}@{host}"
    elif where.startswith("query "):
        base_url += f"?api-version=1&{where.removeprefix('query ')}={quote(key, safe='')}"
    code, outputs = certify_and_collect(base_url, key if where == "env" else None)
    assert code == 1  # the echoed arguments and the in-band error are findings
    assert len(outputs) >= 13
    assert leaks(key, outputs) == []
    if where == "user info":  # the route saw, and echoed, the Basic credentials
        sent = base64.b64encode(f"user:{key}".encode()).decode()
        assert leaks(sent, outputs) == []


@settings(max_examples=6, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(key=st.text(KEY_ALPHABET, min_size=8, max_size=40).map(lambda tail: f"sk-ant-{tail}"))
def test_no_form_of_an_x_api_key_reaches_any_byte_written(emulator: Emulator, key: str) -> None:
    """Certifying an Anthropic-wire route sends the key as ``x-api-key``; a gateway that echoes
    it back (raw and cut by a read, split across text deltas, escaped inside the input, in
    base64, in an error event and in response headers) gets it written nowhere: no cassette,
    certificate or report, and neither stdout nor stderr."""
    code, outputs = certify_and_collect(emulator.base_url, key, "--dialect", "anthropic-messages")
    assert code == 1  # the in-band error is a finding
    assert len(outputs) >= 13
    cassette = next(
        data for name, data in outputs.items() if name.endswith("stream.cassette.jsonl")
    )
    assert b'"anthropic-version": "2023-06-01"' in cassette  # the request went as Anthropic's
    assert b"authentication_error" in cassette  # and the echo came back, masked
    assert leaks(key, outputs) == []

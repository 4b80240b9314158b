"""Cassettes: one recorded request and its response, byte for byte, with chunk boundaries and
timing, secrets scrubbed. The format is described in docs/cassette-format.md and by
``schemas/cassette.schema.json``; every line is checked against it when written and read.

A cassette is JSON Lines: a header (what was asked of which route, and why), a response line
(status and headers; missing when no response came), one line per chunk as it was read from
the connection (its time and its bytes, as text or base64), and an end line saying how the
response ended. ``callstream replay`` re-checks cassettes offline; ``callstream run`` takes a
streamed cassette as a literal scenario (:func:`cassette_scenario`), so a route's bad stream
becomes a permanent regression case.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from callstream.reference import Assembler, Reason

from ..core.spec import Expected, ExpectedCall, Scenario, Splitting, StreamSpec
from ..core.tools import parse_tools
from ..errors import HarnessError, NotAStream, UsageError
from ..rules import QuirkId, rule_ids
from ..scrub import Scrubber

__all__ = [
    "FORMAT",
    "SUFFIX",
    "Chunk",
    "Ended",
    "RecordedRequest",
    "RecordedResponse",
    "Recording",
    "cassette_scenario",
    "is_cassette",
    "load_cassette",
    "remote_reference",
    "write_cassette",
]

FORMAT = 1
"""The version of the cassette format this module writes and reads."""
SUFFIX = ".cassette.jsonl"
How = Literal[
    "eof", "idle", "deadline", "too-large", "encoded", "error", "no-connection", "no-response"
]
"""How a response ended: the server closed it; no data event came within the timeout (silence
or keep-alive comments only); the total deadline passed; the body passed the byte cap, or a line
or an event passed the SSE decoder's limit; the body came compressed (and was not read); the
connection broke (before the response or during it); no connection could be made; or no
response came within the timeout."""
_SPLITTINGS = (
    Splitting("whole"),
    Splitting("bytes"),
    *(Splitting("random", seed=seed) for seed in range(1, 6)),
)
"""How ``callstream run`` cuts a recorded stream (no ``pairs``: a long recording would make
thousands of chunkings)."""
_PARTIAL = (Reason.PROTOCOL_ERROR, Reason.TOO_LARGE)
MAX_LINE = 32 << 20
"""The longest cassette line read, in bytes (a network read is 64 KiB at most, escaped)."""
MAX_BODY = 64 << 20
"""The largest body a cassette may hold, in bytes (sixteen times certify's default cap)."""
MAX_DEPTH = 100
"""The deepest nesting of arrays and objects in a cassette line."""
_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")


@dataclass(frozen=True, slots=True)
class Chunk:
    """Bytes as one read from the connection returned them."""

    t: float
    """Seconds since the request was sent."""
    data: bytes


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """The request as sent, credentials removed."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class RecordedResponse:
    """The response's status line and headers, credentials removed."""

    status: int
    headers: Mapping[str, str]
    t: float
    """Seconds from sending the request to receiving the headers."""


@dataclass(frozen=True, slots=True)
class Ended:
    """How the response ended."""

    how: How
    t: float
    error: str | None = None
    """What went wrong, for a person, when it did not end with ``eof``."""


@dataclass(frozen=True, slots=True)
class Recording:
    """One probe request of a certification and what the route answered."""

    probe: str
    """The probe's name."""
    title: str
    repeat: int
    """Which run of the probe (1 to ``--repeat``)."""
    stream: bool
    """The request asked for ``stream: true``."""
    calls: int
    """How many calls the probe asks the model for."""
    request: RecordedRequest
    response: RecordedResponse | None
    chunks: tuple[Chunk, ...]
    ended: Ended
    context: Mapping[str, Any] = field(default_factory=dict)
    """The certification it belongs to: ``session`` (when it started), ``route`` (base URL
    and model), ``profile``, ``timeout`` and ``deadline``, ``recorded`` (when)."""

    @property
    def body(self) -> bytes:
        """The whole response body."""
        return b"".join(chunk.data for chunk in self.chunks)


def is_cassette(path: str | PathLike[str]) -> bool:
    """True when ``path`` names a cassette file (by its suffix)."""
    return str(path).endswith(SUFFIX)


def write_cassette(path: str | PathLike[str], recording: Recording, scrubber: Scrubber) -> Path:
    """Write ``recording`` as a cassette at ``path`` (folders are created). Every line is
    checked against the schema and passed through ``scrubber`` once more before it is
    written, so nothing secret reaches the file even if it slipped into the recording."""
    path = Path(path)
    lines = [_line(entry, path, n, scrubber) for n, entry in enumerate(_entries(recording), 1)]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines), encoding="utf-8", newline="\n")
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the cassette: {exc.strerror or exc}") from None
    return path


def load_cassette(path: str | PathLike[str]) -> Recording:
    """Read and validate a cassette; UsageError names the line of any problem. A cassette may
    come from anyone, so reading it is bounded (``MAX_LINE`` per line, ``MAX_BODY`` of body)
    and refuses what would break the checks later: nesting deeper than ``MAX_DEPTH``, a lone
    surrogate, a number too long to convert, tools whose schemas are not self-contained."""
    path = Path(path)
    parsed: list[dict[str, Any]] = []
    try:
        with path.open("rb") as file:
            for number, text in enumerate(iter(lambda: file.readline(MAX_LINE + 1), b""), 1):
                parsed.append(_entry(text, f"{path}:{number}"))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the cassette: {exc.strerror or exc}") from None
    return _recording(parsed, path)


def remote_reference(schema: Any) -> str | None:
    """The first ``$ref`` (or ``$dynamicRef``, ``$recursiveRef``) in a JSON Schema that points
    outside it, or None. Only references within the schema (``#…``) can be resolved without
    fetching anything, which untrusted data must never make callstream do."""
    stack = [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if key in _REFERENCES and isinstance(item, str) and not item.startswith("#"):
                    return item
                stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)
    return None


def cassette_scenario(path: str | PathLike[str]) -> Scenario:
    """A streamed cassette as a literal scenario for ``callstream run``: its recorded body,
    the tools of its request, its dialect (the header's ``dialect``; openai-chat when it names
    none), and, as the expectation under each profile, what the reference assembler makes of
    that body in that dialect (kind ``must``: every implementation must settle each call
    the same way, ready with the same arguments or rejected for the same reason). Raises
    UsageError for a cassette that holds no event stream."""
    recording = load_cassette(path)
    if not recording.stream or recording.response is None or not recording.body:
        raise NotAStream(
            path,
            "holds no event stream (a non-streaming answer, or no answer at all): re-check it "
            "with callstream replay",
        )
    body = recording.body
    tools = tuple(parse_tools(recording.request.body.get("tools") or [], source=str(path)))
    dialect = recording.context.get("dialect", "openai-chat")
    expected = {
        profile: _reference_verdict(body, tools, profile, dialect)
        for profile in ("lenient", "strict")
    }
    route = recording.context.get("route", {})
    digest = hashlib.sha256(body).hexdigest()[:8]
    return Scenario(
        id=f"cassette-{recording.probe}-r{recording.repeat}-{digest}",
        title=f"{recording.title}: recorded from {route.get('model', '?')} at "
        f"{route.get('base_url', '?')} on {recording.context.get('recorded', '?')}",
        rules=rule_ids("R"),
        spec=StreamSpec(tools=tools, literal_sse=body, expected=expected, dialect=dialect),
        tags=("recording", "cassette"),
        splittings=_SPLITTINGS,
        source=f"{path}:1",
    )


# -- writing ------------------------------------------------------------------------------------


def _entries(recording: Recording) -> list[dict[str, Any]]:
    request = recording.request
    entries: list[dict[str, Any]] = [
        {
            "type": "header",
            "cassette": FORMAT,
            **recording.context,
            "probe": {
                "name": recording.probe,
                "title": recording.title,
                "repeat": recording.repeat,
                "calls": recording.calls,
            },
            "stream": recording.stream,
            "request": {
                "method": request.method,
                "url": request.url,
                "headers": dict(request.headers),
                "body": dict(request.body),
            },
        }
    ]
    response = recording.response
    if response is not None:
        entries.append(
            {
                "type": "response",
                "t": response.t,
                "status": response.status,
                "headers": dict(response.headers),
            }
        )
    for chunk in recording.chunks:
        try:
            entries.append({"type": "chunk", "t": chunk.t, "text": chunk.data.decode("utf-8")})
        except UnicodeDecodeError:  # cut inside a character, or not UTF-8 at all
            encoded = base64.b64encode(chunk.data).decode("ascii")
            entries.append({"type": "chunk", "t": chunk.t, "base64": encoded})
    ended = recording.ended
    entries.append(
        {
            "type": "end",
            "t": ended.t,
            "how": ended.how,
            "error": ended.error,
            "bytes": len(recording.body),
        }
    )
    return entries


def _line(entry: dict[str, Any], path: Path, number: int, scrubber: Scrubber) -> str:
    problem = _problem(entry)
    if problem:
        raise HarnessError(f"{path}:{number}: refusing to write an invalid line: {problem}")
    line = scrubber.text(json.dumps(entry, ensure_ascii=False, allow_nan=False))
    try:
        json.loads(line)
    except ValueError:  # a mask that cut an escape in two: better no cassette than a leak
        raise HarnessError(f"{path}:{number}: masking a secret broke the line") from None
    return line + "\n"


# -- reading ------------------------------------------------------------------------------------


@cache
def _validator() -> Draft202012Validator:
    text = resources.files("callstream").joinpath("schemas/cassette.schema.json").read_text("utf-8")
    return Draft202012Validator(json.loads(text))


def _entry(text: bytes, where: str) -> dict[str, Any]:
    """One cassette line, parsed, checked against the schema and for hostile values."""
    if len(text) > MAX_LINE:
        raise UsageError(f"{where}: a line longer than {MAX_LINE} bytes")
    try:
        entry = json.loads(text.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError as exc:
        raise UsageError(f"{where}: byte {exc.start}: not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where}: not a JSON line: {exc}") from None
    except RecursionError:
        raise UsageError(f"{where}: nested too deeply to read") from None
    except ValueError as exc:  # an integer past CPython's conversion limit, NaN, Infinity
        raise UsageError(f"{where}: {exc}") from None
    problem = _hostile(entry) or _problem(entry)
    if problem:
        raise UsageError(f"{where}: {problem}")
    result: dict[str, Any] = entry
    return result


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _hostile(entry: Any) -> str | None:
    """What in a parsed line would break the checks: nesting deeper than ``MAX_DEPTH``, a lone
    surrogate (which no UTF-8 writer can write), an infinite number."""
    stack = [(entry, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH} levels"
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str):
                    stack.append((key, depth))
                stack.append((item, depth + 1))
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                return f"a lone surrogate (U+{ord(value[exc.start]):04X}) in a string"
        elif isinstance(value, float) and not math.isfinite(value):
            return "a number too large for a double"
    return None


def _problem(entry: Any) -> str | None:
    error = best_match(_validator().iter_errors(entry))
    return None if error is None else f"{error.json_path}: {error.message}"


def _recording(entries: list[dict[str, Any]], path: Path) -> Recording:
    kinds = [entry["type"] for entry in entries]
    if not kinds or kinds[0] != "header":
        raise UsageError(f"{path}:1: the first line must be the header")
    if kinds[-1] != "end" or kinds.count("end") != 1 or kinds.count("header") != 1:
        raise UsageError(f"{path}: a cassette is a header, a response, chunks and one end line")
    if "response" in kinds[2:]:
        raise UsageError(
            f"{path}:{kinds.index('response', 2) + 1}: the response must follow the header"
        )
    header, ended = entries[0], entries[-1]
    if header["cassette"] != FORMAT:
        raise UsageError(
            f"{path}:1: cassette format {header['cassette']!r} is not one this callstream reads "
            f"(format {FORMAT})"
        )
    response = None
    if len(entries) > 1 and entries[1]["type"] == "response":
        line = entries[1]
        response = RecordedResponse(line["status"], line["headers"], line["t"])
    chunks = []
    size = 0
    for number, entry in enumerate(entries, 1):
        if entry["type"] != "chunk":
            continue
        if "text" in entry:
            data = entry["text"].encode("utf-8")
        else:
            try:
                data = base64.b64decode(entry["base64"], validate=True)
            except binascii.Error as exc:
                raise UsageError(f"{path}:{number}: not base64: {exc}") from None
        size += len(data)
        if size > MAX_BODY:
            raise UsageError(f"{path}:{number}: the body passes {MAX_BODY} bytes")
        chunks.append(Chunk(entry["t"], data))
    request = header["request"]
    _check_tools(request["body"].get("tools"), f"{path}:1: request.body")
    probe = header["probe"]
    context = {
        key: value
        for key, value in header.items()
        if key not in ("type", "cassette", "probe", "stream", "request")
    }
    recording = Recording(
        probe=probe["name"],
        title=probe["title"],
        repeat=probe["repeat"],
        stream=header["stream"],
        calls=probe["calls"],
        request=RecordedRequest(
            request["method"], request["url"], request["headers"], request["body"]
        ),
        response=response,
        chunks=tuple(chunks),
        ended=Ended(ended["how"], ended["t"], ended["error"]),
        context=context,
    )
    if ended["bytes"] != len(recording.body):
        raise UsageError(
            f"{path}:{len(entries)}: the end line counts {ended['bytes']} bytes, the chunks hold "
            f"{len(recording.body)}"
        )
    return recording


def _check_tools(tools: Any, where: str) -> None:
    """Refuse tools the checks could not use: malformed, or with a schema that is not
    self-contained."""
    if tools is None:
        return
    for number, entry in enumerate(tools if isinstance(tools, list) else ()):
        reference = remote_reference(entry)
        if reference is not None:
            raise UsageError(
                f"{where}.tools[{number}]: $ref {reference!r} points outside the schema: a "
                "cassette's tools must be self-contained, callstream fetches nothing"
            )
    parse_tools(tools, source=where)


def _reference_verdict(body: bytes, tools: tuple[Any, ...], profile: str, dialect: str) -> Expected:
    assembler = Assembler(
        tools, profile="strict" if profile == "strict" else "lenient", dialect=dialect
    )
    results = assembler.feed(body) + assembler.close()
    calls = tuple(
        ExpectedCall(
            status="ready" if result.ready else "rejected",
            reason=None if result.reason is None else str(result.reason),
            choice=result.choice,
            index=result.index,
            id=None if result.synthetic_id else result.id,
            name=result.name,
            # As the oracle does: a call rejected for a broken protocol or past the size limit
            # may hold any part of its text.
            arguments_text=None if result.reason in _PARTIAL else result.arguments_text,
            arguments=result.arguments,
            check_arguments=result.ready,
            synthetic_id=result.synthetic_id,
        )
        for result in results
    )
    return Expected(calls, frozenset(QuirkId(finding.quirk) for finding in assembler.findings))

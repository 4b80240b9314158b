"""The provider emulator's server: a real local HTTP server that answers like an
OpenAI-compatible route, streaming exactly the bytes it is given.

Theory of operation. :class:`ProviderApp` is a bare ASGI application that answers ``POST`` on
each dialect's path (:data:`~callstream.emulator.dialects.SERVED`: ``/v1/chat/completions``
for openai-chat) and ``GET /v1/models``, also without the ``/v1`` prefix. The request's
``model`` picks the answer:

- ``scenario:<id>`` streams a corpus scenario's SSE bytes whole, on its dialect's path only;
  ``scenario:<id>@<splitting>`` cuts them first (``bytes``, ``random-3``, ``at-5,9``: see
  ``callstream.core.split``). With ``stream: false`` the answer is the dialect's non-streaming
  answer assembled from the scenario's plan (a ``chat.completion`` for openai-chat).
- a name returned by :meth:`ProviderApp.register` plays a :class:`Reply`: raw chunks, a pause
  before each, a status, a content type, an optional non-streaming body, and how long the
  connection stays open after the last chunk (a route that never finishes), optionally with
  keep-alive comments meanwhile.
- ``route:<name>`` (and any other model, when the app was given a default ``route``) is
  answered, on its dialect's path, by an emulated route (``callstream.emulator.routes`` for
  openai-chat, ``.anthropic_routes`` and ``.responses_routes`` for the others: see
  :data:`~callstream.emulator.dialects.ROUTES_OF`): a fake model that reads the request's tools
  and options and answers as that kind of route does, quirks included. The route is handed
  the credentials the request carried (credential headers, a bearer token, key-like query
  parameters), which only a hostile route (``echoes-key``) uses.

Each chunk is its own ASGI body message, which uvicorn writes to the socket at once (chunked
transfer encoding, Nagle off), so a client reads the stream torn exactly where the plan tore it
(or finer, never coarser); each response closes its connection. Anything else gets an
OpenAI-shaped JSON error: 404 for an unknown model or path, 405 for a wrong method, 400 for a
request that is not JSON, names no model or no single chunking. The latest request bodies are
kept (``requests``), so a test can see what a client asked for.

:mod:`.server` runs it (:class:`~callstream.emulator.server.Emulator`, ``callstream serve``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping, Sequence
from typing import Any
from urllib.parse import parse_qsl

from ..core.rendering import render
from ..core.spec import Scenario
from ..core.split import chunkings, parse_splitting
from ..errors import UsageError
from ..scrub import is_credential
from .dialects import ROUTES_OF, SERVED, SERVED_AT
from .reply import SSE, Reply
from .routes import Route
from .wire_route import WireRoute

__all__ = ["ProviderApp"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_KEPT_REQUESTS = 64
_KEEPALIVE = b": keep-alive\n\n"
_CLOSE = (b"connection", b"close")
"""One request per connection. On a reused connection, a client that writes its headers and
body separately (httpx does) holds the body back until the server acknowledges the headers,
which the server delays by 40 ms: every request would take that long."""


class ProviderApp:
    """The ASGI application: answers chat completions for scenarios and registered replies."""

    def __init__(
        self, scenarios: Iterable[Scenario] = (), *, delay: float = 0.0, route: str | None = None
    ) -> None:
        """Serve ``scenarios`` as ``scenario:<id>`` and the emulated routes as ``route:<name>``,
        pausing ``delay`` seconds between chunks; ``route`` answers every other model name."""

        self.routes: dict[str, Route | WireRoute] = {
            name: kind() for routes in ROUTES_OF.values() for name, kind in routes.items()
        }
        """The emulated routes of every dialect by name, each with its own state."""
        self.spoken = {name: d for d, routes in ROUTES_OF.items() for name in routes}
        """The dialect each route speaks."""
        if route is not None and route not in self.routes:
            raise UsageError(f"unknown route {route!r}; known: {', '.join(self.routes)}")
        self.scenarios = {scenario.id: scenario for scenario in scenarios}
        self.delay = delay
        self.route = route
        self.requests: deque[Any] = deque(maxlen=_KEPT_REQUESTS)
        """The latest chat-completion request bodies received, parsed, oldest first."""
        self._replies: dict[str, Reply] = {}
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def register(
        self,
        chunks: Sequence[bytes],
        delay: float | Sequence[float] = 0.0,
        *,
        status: int = 200,
        content_type: str = SSE,
        completion: Mapping[str, Any] | None = None,
        linger: float = 0.0,
        heartbeat: float = 0.0,
    ) -> str:
        """Serve ``chunks`` under a fresh model name, which is returned. ``delay`` is either the
        pause between chunks or, as a sequence, the pause before each chunk; the other
        arguments are those of :class:`Reply`. Safe to call from any thread."""
        if isinstance(delay, int | float):
            delays = tuple(0.0 if n == 0 else float(delay) for n in range(len(chunks)))
        else:
            delays = tuple(float(pause) for pause in delay)
        reply = Reply(
            tuple(bytes(c) for c in chunks),
            delays,
            status,
            content_type,
            completion,
            linger,
            heartbeat,
        )
        with self._lock:
            name = f"stream-{next(self._numbers)}"
            self._replies[name] = reply
        return name

    def unregister(self, name: str) -> None:
        """Stop serving a registered model name (unknown names are ignored)."""
        with self._lock:
            self._replies.pop(name, None)

    @property
    def models(self) -> list[str]:
        """Every model name served: the scenarios, the routes, then the registered replies."""
        with self._lock:
            registered = list(self._replies)
        return (
            [f"scenario:{scenario}" for scenario in self.scenarios]
            + [f"route:{route}" for route in self.routes]
            + registered
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI entry point."""
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path = scope["path"].removeprefix("/v1")
        method = scope["method"]
        dialect = SERVED_AT.get(path)
        if (path == "/models" or dialect is not None) and method != (
            "GET" if path == "/models" else "POST"
        ):
            await _error(send, 405, f"{method} is not allowed on {scope['path']}", "method")
        elif path == "/models":
            await _json(send, 200, self._model_list())
        elif dialect is not None:
            await self._answer(dialect, await _body(receive), _credentials(scope), receive, send)
        else:
            served = " and ".join([*(f"POST /v1{at}" for at in SERVED_AT), "GET /v1/models"])
            await _error(
                send,
                404,
                f"no route {method} {scope['path']}: the emulator answers {served}",
                None,
                code="unknown_url",
            )

    def _model_list(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "callstream"}
                for name in self.models
            ],
        }

    async def _answer(
        self,
        dialect: str,
        body: bytes,
        credentials: tuple[str, ...],
        receive: Receive,
        send: Send,
    ) -> None:
        try:
            request = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            await _error(send, 400, f"the request body is not JSON: {exc}", None)
            return
        self.requests.append(request)
        model = request.get("model") if isinstance(request, dict) else None
        if not isinstance(model, str) or not model:
            await _error(send, 400, "the request names no model", "model")
            return
        try:
            reply = self._reply(model, dialect, request, credentials)
        except UsageError as exc:
            await _error(send, 400, str(exc), getattr(exc, "param", "model"))
            return
        if reply is None:
            await _error(
                send,
                404,
                f"the model {model!r} does not exist: ask for scenario:<id>[@<splitting>], "
                "route:<name> (GET /v1/models lists them) or a name the emulator registered",
                "model",
                code="model_not_found",
            )
        elif request.get("stream") is True:
            await _stream(reply, receive, send)
        elif reply.completion is None:
            await _error(
                send,
                400,
                f"the model {model!r} only streams: send stream: true",
                "stream",
            )
        else:
            await _json(send, 200, reply.completion, reply.headers)

    def _reply(
        self, model: str, dialect: str, request: Mapping[str, Any], credentials: tuple[str, ...]
    ) -> Reply | None:
        """What ``model`` is answered with on ``dialect``'s path: a registered reply, an
        emulated route of that dialect, or a scenario of that dialect."""
        with self._lock:
            registered = self._replies.get(model)
        if registered is not None:
            return registered
        kind, colon, rest = model.partition(":")
        if kind == "route" and colon and rest in self.routes:
            if self.spoken[rest] != dialect:
                at = SERVED[self.spoken[rest]].path
                raise UsageError(f"the route {rest!r} speaks {self.spoken[rest]}: POST to /v1{at}")
            return self.routes[rest].reply(request, self.delay, credentials=credentials)
        if kind != "scenario" or not colon:
            if self.route is not None and self.spoken[self.route] == dialect:
                route = self.routes[self.route]
                return route.reply(request, self.delay, credentials=credentials)
            return None
        scenario_id, at, label = rest.partition("@")
        scenario = self.scenarios.get(scenario_id)
        if scenario is None:
            return None
        if scenario.spec.dialect != dialect:
            at = SERVED[scenario.spec.dialect].path
            raise UsageError(
                f"the scenario {scenario_id!r} is in {scenario.spec.dialect}: POST it to /v1{at}"
            )
        data = render(scenario.spec).data
        chunks: Sequence[bytes] = [data]
        if at:
            splitting = parse_splitting(label)
            if splitting.kind == "pairs":
                raise UsageError(
                    "pairs stands for many chunkings; name one cut instead, as at-<offset>"
                )
            chunks = next(chunkings(data, splitting))
        delays = tuple(0.0 if n == 0 else self.delay for n in range(len(chunks)))
        completion = SERVED[dialect].completion(scenario)
        return Reply(tuple(chunks), delays, completion=completion)


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _body(receive: Receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return body
        body += bytes(message.get("body", b""))
        if not message.get("more_body", False):
            return body


async def _stream(reply: Reply, receive: Receive, send: Send) -> None:
    """Write ``reply`` chunk by chunk; stop early when the client goes away."""
    gone = asyncio.Event()

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()

    watcher = asyncio.create_task(watch())
    try:
        await send(
            {
                "type": "http.response.start",
                "status": reply.status,
                "headers": [
                    (b"content-type", reply.content_type.encode("latin-1")),
                    (b"cache-control", b"no-cache"),
                    *_encoded(reply.headers),
                    _CLOSE,
                ],
            }
        )
        for number, chunk in enumerate(reply.chunks):
            pause = reply.delays[number] if number < len(reply.delays) else 0.0
            if pause > 0 and await _waited_out(gone, pause):
                return
            if gone.is_set():
                return
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await asyncio.sleep(0)  # let the loop notice a client that has gone
        if reply.linger > 0 and await _linger(reply, gone, send):
            return
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


async def _linger(reply: Reply, gone: asyncio.Event, send: Send) -> bool:
    """Keep the connection open ``reply.linger`` seconds, writing a keep-alive comment every
    ``reply.heartbeat`` seconds if asked; True if the client left meanwhile."""
    if reply.heartbeat <= 0:
        return await _waited_out(gone, reply.linger)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + reply.linger
    while (left := deadline - loop.time()) > 0:
        if await _waited_out(gone, min(reply.heartbeat, left)):
            return True
        if left > reply.heartbeat:
            await send({"type": "http.response.body", "body": _KEEPALIVE, "more_body": True})
    return False


async def _waited_out(gone: asyncio.Event, seconds: float) -> bool:
    """Wait ``seconds``; True if the client left meanwhile."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(gone.wait(), seconds)
    return gone.is_set()


async def _json(
    send: Send, status: int, body: Any, headers: Sequence[tuple[str, str]] = ()
) -> None:
    data = json.dumps(body, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *_encoded(headers),
                _CLOSE,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data, "more_body": False})


def _encoded(headers: Sequence[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [
        (name.lower().encode("latin-1"), value.encode("latin-1", "replace"))
        for name, value in headers
    ]


def _credentials(scope: Scope) -> tuple[str, ...]:
    """The credentials a request carried: the value of each credential header (a bearer token
    without its scheme) and of each key-like query parameter."""
    found = []
    for raw_name, raw_value in scope.get("headers", ()):
        name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
        if is_credential(name):
            scheme, space, token = value.partition(" ")
            found.append(token if space and scheme.lower() in ("bearer", "basic") else value)
    query = scope.get("query_string", b"").decode("latin-1")
    found += [value for name, value in parse_qsl(query) if is_credential(name)]
    return tuple(value for value in found if value)


async def _error(
    send: Send, status: int, message: str, param: str | None, code: str | None = None
) -> None:
    """An error in OpenAI's shape, so SDKs raise their usual exception with our message."""
    kind = "invalid_request_error"
    await _json(
        send, status, {"error": {"message": message, "type": kind, "param": param, "code": code}}
    )

"""The provider emulator as a server: :class:`Emulator` runs the app
(:class:`~callstream.emulator.app.ProviderApp`) on uvicorn in a background thread on
``127.0.0.1``, port 0 by default; :func:`serve` runs it in the foreground for ``callstream
serve``."""

from __future__ import annotations

import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

import uvicorn

from ..core.spec import Scenario
from ..errors import HarnessError, UsageError
from .app import ProviderApp

__all__ = ["Emulator", "serve"]

_STARTUP_TIMEOUT = 10.0
"""Seconds uvicorn may take to start listening."""


class Emulator:
    """The provider emulator running on uvicorn in a background thread::

    with Emulator() as emulator:
        model = emulator.register([b"data: {...}\\n\\n", b"data: [DONE]\\n\\n"])
        client = OpenAI(base_url=emulator.base_url, api_key="none")
    """

    def __init__(
        self,
        scenarios: Iterable[Scenario] = (),
        *,
        delay: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        route: str | None = None,
    ) -> None:
        """Serve ``scenarios``, the emulated routes (and whatever is registered) on
        ``host``:``port`` (0: any free port), pausing ``delay`` seconds between the chunks of a
        scenario or route; ``route`` names the route that answers any other model."""
        self.app = ProviderApp(scenarios, delay=delay, route=route)
        self.host = host
        self.port = port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The ``base_url`` to give an OpenAI-compatible client: ``http://host:port/v1``."""
        if self._server is None:
            raise HarnessError("the emulator is not running: use it as a context manager")
        return f"http://{self.host}:{self.port}/v1"

    def register(
        self,
        chunks: Sequence[bytes],
        delay: float | Sequence[float] = 0.0,
        **reply: Any,
    ) -> str:
        """Serve ``chunks`` under a fresh model name (see :meth:`ProviderApp.register`)."""
        return self.app.register(chunks, delay, **reply)

    def unregister(self, name: str) -> None:
        """Stop serving a registered model name."""
        self.app.unregister(name)

    @property
    def requests(self) -> deque[Any]:
        """The latest chat-completion request bodies received (see :class:`ProviderApp`)."""
        return self.app.requests

    def start(self) -> Emulator:
        """Start listening; returns once the server accepts connections."""
        if self._server is not None:
            return self
        sock = _listen(self.host, self.port)
        self.port = sock.getsockname()[1]
        server = uvicorn.Server(_config(self.app))
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="callstream-emulator", daemon=True
        )
        thread.start()
        deadline = time.monotonic() + _STARTUP_TIMEOUT
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                sock.close()
                raise HarnessError(f"the provider emulator did not start on {self.host}")
            time.sleep(0.005)
        self._server, self._thread = server, thread
        return self

    def stop(self) -> None:
        """Stop the server, dropping any stream still being written."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.should_exit = True
        server.force_exit = True
        thread.join(_STARTUP_TIMEOUT)
        self._server = self._thread = None

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def serve(
    scenarios: Sequence[Scenario],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    delay: float = 0.0,
    route: str | None = None,
    out: TextIO,
) -> None:
    """Serve ``scenarios`` and the emulated routes in the foreground until interrupted
    (``callstream serve``); ``route`` answers every model name that is not a scenario."""
    app = ProviderApp(scenarios, delay=delay, route=route)
    try:
        sock = _listen(host, port)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    base = f"http://{host}:{sock.getsockname()[1]}/v1"
    example = scenarios[0].id if scenarios else "<id>"
    routes = (
        f"  any other model is answered as the {route} route"
        if route is not None
        else f"  or model route:<name>, an emulated route: {', '.join(app.routes)}"
    )
    print(
        f"callstream: serving {len(scenarios)} scenarios at {base}\n"
        f"  point a client at it: OPENAI_BASE_URL={base} OPENAI_API_KEY=none\n"
        f"  model scenario:<id>[@<splitting>], e.g. scenario:{example}@random-1; "
        f"GET {base}/models lists them\n"
        f"{routes}\n"
        "  ^C stops it",
        file=out,
        flush=True,
    )
    uvicorn.Server(_config(app)).run(sockets=[sock])


# -- the wire ---------------------------------------------------------------------------------


def _config(app: ProviderApp) -> uvicorn.Config:
    # No log_config: uvicorn must not reconfigure the logging of the process that hosts it.
    return uvicorn.Config(
        app,
        http="h11",
        ws="none",
        lifespan="off",
        log_config=None,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=1,
    )


def _listen(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock

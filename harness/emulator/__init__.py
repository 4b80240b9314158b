"""The provider emulator: a real local HTTP server on 127.0.0.1 that streams a scenario's bytes
(or an emulated route's answer) exactly as planned, for ``callstream serve``, the ``http:``
adapters and ``callstream certify``'s own tests.

- ``reply`` — :class:`Reply`, what one model name is answered with;
- ``dialects`` — the path each dialect is served on and its non-streaming answer;
- ``model`` — the fake model: a plausible, deterministic answer to any request;
- ``routes`` — the emulated routes: the fake model's answer as each kind of provider sends it,
  quirks included;
- ``wire_route``, ``anthropic_routes``, ``responses_routes`` — the emulated routes of the
  Anthropic Messages and Responses wires;
- ``app`` — the ASGI app (:class:`ProviderApp`);
- ``server`` — the app on uvicorn: in the background (:class:`Emulator`) or the foreground
  (:func:`serve`).
"""

from .app import ProviderApp
from .dialects import ROUTES_OF, SERVED, Served, chat_completion
from .reply import SSE, Reply
from .routes import ROUTES
from .server import Emulator, serve

__all__ = [
    "ROUTES",
    "ROUTES_OF",
    "SERVED",
    "SSE",
    "Emulator",
    "ProviderApp",
    "Reply",
    "Served",
    "chat_completion",
    "serve",
]

"""The provider emulator: a real local HTTP server on 127.0.0.1 that streams a scenario's bytes
(or an emulated route's answer) exactly as planned, for ``callstream serve``, the ``http:``
adapters and ``callstream certify``'s own tests.

- ``reply`` — :class:`Reply`, what one model name is answered with;
- ``routes`` — the emulated routes (a fake model per kind of provider, quirks included);
- ``app`` — the ASGI app (:class:`ProviderApp`), the background server (:class:`Emulator`) and
  :func:`serve`.
"""

from .app import Emulator, ProviderApp, completion_of, serve
from .reply import SSE, Reply
from .routes import ROUTES

__all__ = ["ROUTES", "SSE", "Emulator", "ProviderApp", "Reply", "completion_of", "serve"]

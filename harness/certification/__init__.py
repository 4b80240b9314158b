"""Certifying a provider route (``--dialect``: Chat Completions, Anthropic Messages or OpenAI
Responses): ``callstream certify`` sends the probes to a live route, records each answer as a
cassette, checks it and writes a certificate; ``callstream replay`` checks the cassettes again
offline. Needs the ``serve`` extra (httpx).

- ``probes`` — the requests sent, loaded from data files;
- ``wires`` — the dialects certify speaks (openai-chat, anthropic-messages, openai-responses):
  each one's request shape, and what is read back beyond the reference;
- ``recorder`` — one answer recorded as it arrives, bounded and scrubbed;
- ``route_checks`` — what one run of a probe says about the route: the checks, as a table;
- ``certificate`` — every finding across the runs, flakiness, the verdict, the files written;
- ``certifying`` — :func:`certify` and :func:`replay`.
"""

from .certificate import Certificate, write_certificate
from .certifying import Target, certify, replay
from .probes import Probe, load_probes, select_probes
from .route_checks import ROUTE_CHECKS, RouteFinding, check_probe

__all__ = [
    "ROUTE_CHECKS",
    "Certificate",
    "Probe",
    "RouteFinding",
    "Target",
    "certify",
    "check_probe",
    "load_probes",
    "replay",
    "select_probes",
    "write_certificate",
]

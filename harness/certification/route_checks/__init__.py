"""The checks of a certification: what one run of a probe says about the route.

Theory of operation. :func:`check_probe` takes the recordings of one run of a probe (its
streamed answer and, when the probe compares, its non-streaming one) and a profile, and returns
:class:`RouteFinding` s. The streamed body is fed to the reference assembler line by line, so
each deviation it records (a quirk id of research/wire_formats.md §7) is located at the event
that caused it. A wire-level pass over the same events checks what an assembler does not: the
status and content type, in-band errors, the finish reasons against what the request asked for,
the usage chunk, whether the model answered the probe at all, and how long it all took. Each
finding names its check (``ROUTE_CHECKS``), its quirk id where there is one, a severity, and
where in the stream it was seen. Everything is a pure function of the recordings, so
``callstream replay`` re-checks a cassette offline and finds the same.

Severity. ``error``: under the profile, the route breaks the contract or loses calls (strict:
every deviation from OpenAI's documented behaviour; lenient: what a lenient assembler cannot
mend). ``warning``: a deviation the lenient profile mends, recorded. ``info``: nothing wrong
with the route, but something a person should know (a probe the model did not exercise).

The parts:

- ``findings`` — the route checks a certificate lists (``ROUTE_CHECKS``), and
  :class:`RouteFinding`;
- ``reading`` — a streamed body's events, and its reading by the reference;
- ``timing`` — how long an answer took (:class:`Timing`);
- ``answer`` — what a check reads: an answer read once, what the probe asked for, and the gates
  (how far the answer got) a check may need;
- ``transport``, ``quirks``, ``calls``, ``progress``, ``finishes``, ``comparison`` — the checks,
  each a function of an answer that returns its findings;
- ``table`` — the checks in the order they run, each with its gate and the route checks it
  reports, and :func:`check_probe`.
"""

from .findings import ROUTE_CHECKS, SEVERITIES, Profile, RouteCheck, RouteFinding, Severity
from .table import NONSTREAM_CHECKS, STREAM_CHECKS, AnswerCheck, check_probe
from .timing import Timing, timing_of

__all__ = [
    "NONSTREAM_CHECKS",
    "ROUTE_CHECKS",
    "SEVERITIES",
    "STREAM_CHECKS",
    "AnswerCheck",
    "Profile",
    "RouteCheck",
    "RouteFinding",
    "Severity",
    "Timing",
    "check_probe",
    "timing_of",
]

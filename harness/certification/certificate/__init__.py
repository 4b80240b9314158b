"""The certificate of a route: every finding across the runs, flakiness, the verdict, and the
files it is written as.

Theory of operation. A certification runs each probe ``--repeat`` times; each run gives
:class:`~callstream.certification.route_checks.RouteFinding` s. Findings of different runs are the
same finding when they agree on probe, answer, check, quirk and title; a finding seen in only some
runs of its probe is **flaky**: a model is not deterministic, and a check that passes sometimes and
fails sometimes has not passed. The verdict:

- ``fail``: any error (flaky or not), or a probe that could not be run;
- ``pass-with-findings``: no error, but warnings (deviations the lenient profile mends);
- ``pass``: nothing but information.

The exit code is that of ``callstream run``: 0 for pass and pass-with-findings, 1 for fail.
The certificate is written as ``certificate.json`` (the data), ``certificate.md`` and
``certificate.html``, beside the usual report folder (``report.jsonl`` with one result per run
of a probe, and what is rendered from it: JUnit XML, the Markdown summary, the HTML page, the
badge).

The parts: ``model`` (the certificate, its findings and verdict, the summary printed),
``markdown`` and ``html`` (the pages), ``files`` (:func:`write_certificate`).
"""

from .files import write_certificate
from .model import FORMAT, Certificate, CertificateFinding, ProbeRun, Verdict

__all__ = [
    "FORMAT",
    "Certificate",
    "CertificateFinding",
    "ProbeRun",
    "Verdict",
    "write_certificate",
]

"""``junit.xml``: one ``<testsuite>`` per profile, one ``<testcase>`` per case, for CI test tabs."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

from .markup import visible
from .model import Report, count_outcomes
from .verdicts import LABEL, problems_of, report_name

__all__ = [
    "junit_xml",
]


def junit_xml(report: Report) -> str:
    """One <testsuite> per profile; a case is ``classname=scenario, name=profile/splitting``."""
    header = report.header
    root = ET.Element("testsuites", name=visible(f"callstream: {report_name(report)}"))
    suites: dict[str, list[Mapping[str, Any]]] = {}
    for result in report.results:
        suites.setdefault(result["profile"], []).append(result)
    for profile, results in suites.items():
        suite = ET.SubElement(root, "testsuite", name=visible(profile))
        _junit_counts(suite, results)
        suite.set("timestamp", header["started"])
        properties = ET.SubElement(suite, "properties")
        for name, value in (
            ("implementation", report_name(report)),
            ("connectable", header["implementation"]["connectable"]),
            ("callstream", header["callstream"]),
        ):
            ET.SubElement(properties, "property", name=name, value=visible(str(value)))
        for case in results:
            suite.append(_junit_case(case))
    _junit_counts(root, report.results)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _junit_counts(element: ET.Element, results: Sequence[Mapping[str, Any]]) -> None:
    counts = count_outcomes(results)
    element.set("tests", str(len(results)))
    element.set("failures", str(counts["failed"]))
    element.set("errors", str(counts["errored"]))
    element.set("skipped", str(counts["unsupported"] + counts["not_applicable"]))
    element.set("time", f"{sum(result['elapsed'] for result in results):.3f}")


def _junit_case(result: Mapping[str, Any]) -> ET.Element:
    case = ET.Element(
        "testcase",
        classname=visible(result["scenario"]),
        name=visible(f"{result['profile']}/{result['splitting']}"),
        time=f"{result['elapsed']:.3f}",
    )
    outcome = result["outcome"]
    if outcome == "failed":
        problems = problems_of(result)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        text = "\n".join(problems)
        if result["repro"] is not None:
            text += "\n\nrepro:\n" + result["repro"]
        failure = ET.SubElement(
            case,
            "failure",
            message=visible(problems[0] + more),
            type=visible(",".join(failure["check"] for failure in result["failures"])),
        )
        failure.text = visible(f"{result['title']}\n\n{text}")
    elif outcome in ("unsupported", "not_applicable"):
        skipped = ET.SubElement(case, "skipped", message=LABEL[outcome])
        skipped.text = visible(result["detail"] or "")
    elif outcome == "errored":
        detail = result["detail"]
        error = ET.SubElement(case, "error", message=visible(detail.strip().split("\n")[-1]))
        error.text = visible(detail)
    return case

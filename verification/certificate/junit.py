"""A certificate as JUnit XML (``--junit-xml PATH``): one test case per statement, so that CI systems show the
verdicts in their test views.  ``fail`` is a JUnit failure, ``error`` an error, ``skip`` a skipped case (with the
reason); a pass with declined instances is a pass whose ``system-out`` names the declines."""

from __future__ import annotations

import xml.etree.ElementTree as ET


def to_xml(cert: dict) -> str:
    records = cert["statements"]
    count = {k: sum(1 for r in records if r["verdict"] == k) for k in ("fail", "error", "skip")}
    root = ET.Element("testsuites")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=f"refvi.verification[{cert['implementation']}]",
        tests=str(len(records)),
        failures=str(count["fail"]),
        errors=str(count["error"]),
        skipped=str(count["skip"]),
        time=f"{sum(r['seconds'] for r in records):.3f}",
    )
    props = ET.SubElement(suite, "properties")
    for seed, paper in cert.get("papers", {}).items():
        ET.SubElement(props, "property", name=f"paper {seed}", value=paper["verdict"])
    ET.SubElement(props, "property", name="complete", value=str(cert.get("complete", True)).lower())
    for rec in records:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"refvi.{rec['id'].partition('.')[0]}",
            name=rec["id"],
            time=f"{rec['seconds']:.3f}",
        )
        detail = rec.get("detail", "") or ""
        if rec["verdict"] == "fail":
            ET.SubElement(case, "failure", message=detail[:300]).text = detail
        elif rec["verdict"] == "error":
            ET.SubElement(case, "error", message=detail[:300]).text = detail
        elif rec["verdict"] == "skip":
            ET.SubElement(case, "skipped", message=detail[:300] or "skipped")
        elif detail:
            ET.SubElement(case, "system-out").text = detail
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"

"""tests/benchmarks/peer_report.py: the report's schema, its Markdown, and the README block it keeps current
(measuring is exercised by running the script; here a saved report is rendered, so the test takes a second)."""

import json
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "benchmarks"))

import peer_report as pr  # noqa: E402

REPORT = HERE.parent / "docs" / "peer-report.json"


def test_saved_report_schema():
    rep = json.loads(REPORT.read_text())
    assert {"date", "machine", "estimators", "fit"} <= set(rep)
    assert [(r["N"], r["d"], r["S"]) for r in rep["estimators"]] == [tuple(g) for g in pr.bc.LOGISTIC_GRID]
    for r in rep["estimators"]:
        assert r["refvi_us"] > 0 and r["numpy_us"] > 0
    assert rep["fit"][0]["who"].startswith("refvi.fit")
    for r in rep["fit"]:
        assert {"who", "budget_s", "steps", "us_per_step", "gap"} <= set(r)


def test_readme_block_is_current_and_update_is_idempotent(tmp_path):
    readme = tmp_path / "README.md"
    shutil.copy(pr.README, readme)
    block = pr.markdown(json.loads(REPORT.read_text()))
    assert block in pr.README.read_text(), "README's peer-report block is stale: run peer_report.py --update-readme"
    assert pr.update_readme(block, readme) is False
    readme.write_text(readme.read_text().replace(block, "old"))
    assert pr.update_readme(block, readme) is True
    assert pr.update_readme(block, readme) is False


def test_missing_markers_are_an_error(tmp_path):
    bad = tmp_path / "README.md"
    bad.write_text("no markers here\n")
    with pytest.raises(SystemExit, match="markers"):
        pr.update_readme("x", bad)

"""tests/benchmarks/scaling.py keeps working: a tiny run (d = 5, a few steps, refvi's built-in contestants, whose
kernels come from Numba's cache) through the JSON, the figure and the page block; the committed report renders to
the block on docs/benchmarks.md.  No timed assertion: the times are whatever this machine gives."""

import json
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "benchmarks"))

import scaling as sc  # noqa: E402

REPORT = sc.FIGURES / "scaling.json"


def test_tiny_run_writes_report_figure_and_block(tmp_path):
    page = tmp_path / "benchmarks.md"
    page.write_text(f"head\n{sc.START}\nold\n{sc.END}\ntail\n")
    out, fig = tmp_path / "scaling.json", tmp_path / "scaling.png"
    assert sc.main(["--tiny", "--json", str(out), "--plot", str(fig), "--update-docs", "--page", str(page)]) == 0
    rep = json.loads(out.read_text())
    assert rep["tiny"] and [(r["d"], r["N"]) for r in rep["rows"]] == [(5, 500)]
    row = rep["rows"][0]
    assert {"prox_us", "eigh_us", "proj_us"} <= set(row["floor"])
    assert set(row["per_step"]) == set(sc.TINY_WHO) - {"plain"}
    assert set(row["time_to_accuracy"]) == set(sc.TINY_WHO)
    for r in row["time_to_accuracy"].values():
        assert r["steps"] in sc.GRID and (r["reached"] == (r["err"] <= sc.TOL))
    assert fig.stat().st_size > 0 or not _have("matplotlib")
    text = page.read_text()
    assert text.startswith("head\n") and text.endswith("tail\n") and "old" not in text
    assert sc.markdown(rep) in text and rep["date"] in text and rep["machine"] in text


def _have(mod):
    try:
        __import__(mod)
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not REPORT.exists(), reason="no committed scaling report")
def test_page_block_is_current_and_update_is_idempotent(tmp_path):
    rep = json.loads(REPORT.read_text())
    block = sc.markdown(rep)
    assert block in sc.PAGE.read_text(), "docs/benchmarks.md's scaling block is stale: run scaling.py --update-docs"
    page = tmp_path / "benchmarks.md"
    shutil.copy(sc.PAGE, page)
    assert sc.update_page(block, page) is False
    page.write_text(page.read_text().replace(block, "old"))
    assert sc.update_page(block, page) is True
    assert sc.update_page(block, page) is False


def test_goals_are_read_off_the_report():
    """The verdicts on the page follow the numbers: a step over 3x the floor, or NumPyro first, is 'not met'."""
    tta = lambda t: {
        "reached": t is not None,
        "time_s": t,
        "tried_s": 1.0,
        "err": 0.05 if t else 0.5,
        "sd_ratio": [1.0, 1.0],
        "steps": 10,
    }
    row = lambda d, fused_us, me, other: {
        "d": d,
        "N": 500,
        "floor": {"prox_us": 10.0, "eigh_us": 1.0, "proj_us": 11.0},
        "per_step": {"fused": {"us": fused_us}},
        "time_to_accuracy": {"fused": tta(me), "numpyro": {**tta(other), "lr": 1e-3}},
    }
    good = {"rows": [row(100, 29.0, 1.0, 2.0), row(5, 100.0, 1.0, None)]}
    g = sc.goals(good)
    assert g["step_goal_met"] and g["ahead_goal_met"]["fused"] and not g["ahead"]["plain"][0][2] == "ahead"
    bad = {"rows": [row(100, 31.0, 1.0, 2.0), row(200, 20.0, 2.0, 1.0)]}
    g = sc.goals(bad)
    assert not g["step_goal_met"] and not g["ahead_goal_met"]["fused"]
    assert [x for *_, x in g["ahead"]["fused"]] == ["ahead", "behind"]


def test_missing_markers_are_an_error(tmp_path):
    bad = tmp_path / "benchmarks.md"
    bad.write_text("no markers here\n")
    with pytest.raises(SystemExit, match="markers"):
        sc.update_page("x", bad)

"""Every notebook under notebooks/ runs as a script at reduced size (REFVI_SMALL=1) and writes its PNG figures."""

import os
import pathlib
import subprocess
import sys

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("*.py"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_and_writes_figures(path, tmp_path):
    env = dict(os.environ, REFVI_SMALL="1", REFVI_FIGURE_DIR=str(tmp_path), MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    pngs = list(tmp_path.glob("*.png"))
    assert pngs, "the notebook wrote no figure"
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

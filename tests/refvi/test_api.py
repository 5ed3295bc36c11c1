"""The public API: what ``refvi`` exports, and results built by keyword only (a reordered field cannot swap arrays)."""

import dataclasses
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import refvi
from refvi.targets import Gaussian


def test_top_level_exports():
    assert set(refvi.__all__) == {"fit", "FitResult", "FitConfig", "FitTrace", "DivergenceError", "ConvergenceWarning",
                                  "__version__"}
    for name in refvi.__all__:
        assert hasattr(refvi, name), name
    assert issubclass(refvi.ConvergenceWarning, Warning)
    assert issubclass(refvi.DivergenceError, Exception)


def test_import_refvi_is_light_and_loads_what_is_used():
    """``import refvi`` imports neither Numba nor SciPy (refvi's pytest plugin is loaded by every pytest run in the
    environment); the public names and the subpackages load on first use, as if imported; other names are missing."""
    code = textwrap.dedent("""
        import sys
        import refvi
        assert not {"numba", "scipy", "refvi.optim"} & set(sys.modules), sorted(sys.modules)
        assert refvi.targets.Gaussian.__module__ == "refvi.targets.gaussian"  # a subpackage, never imported by name
        assert refvi.kernels.prox.entropy_prox is not None
        assert refvi.fit is sys.modules["refvi.optim.fit"].fit
        assert refvi.DivergenceError is sys.modules["refvi.optim.fastpath"].DivergenceError
        assert {"fit", "FitResult", "targets"} <= set(dir(refvi))
        assert not hasattr(refvi, "no_such_name") and not hasattr(refvi, "__no_such_dunder__")
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


def test_result_records_are_keyword_only_and_read_through():
    res = refvi.fit(Gaussian(np.zeros(2), np.eye(2)), steps=200, progress=False)
    assert isinstance(res.config, refvi.FitConfig) and isinstance(res.trace, refvi.FitTrace)
    assert res.method == res.config.method and res.steps == res.config.steps == 200
    assert res.trace_objective is res.trace.objective and res.trace_steps is res.trace.steps
    fields = [f.name for f in dataclasses.fields(refvi.FitResult)]
    with pytest.raises(TypeError):
        refvi.FitResult(*[None] * len(fields))
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.config.steps = 3

"""The public API: what ``refvi`` exports, and results built by keyword only (a reordered field cannot swap arrays)."""

import dataclasses

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

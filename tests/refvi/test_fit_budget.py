"""The default budget of refvi.fit (refvi.optim.frame.default_budget): Thm 27's switch t* = 8(d+3) in the Laplace
frame sets T = max(10,000, 5 t*) and S = ceil(10 t* / T) for a default Prox-SGD run; every other run keeps 10,000
steps of one sample, and a given number of steps keeps one sample.  The accuracy it buys at d = 500 is measured by
tests/benchmarks/fit_at_scale.py (too slow for the test suite); here, what is chosen when, and that the script's
table renders and lands in its page block."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

from refvi.targets import Gaussian, LogisticRegression

F = importlib.import_module("refvi.optim.fit")  # the module (refvi.optim.fit is also the function's name)
FR = importlib.import_module("refvi.optim.frame")


@pytest.mark.parametrize(
    ("d", "want"),
    [
        (1, (10_000, 1)),
        (3, (10_000, 1)),
        (122, (10_000, 1)),
        (123, (10_000, 2)),
        (200, (10_000, 2)),
        (247, (10_000, 2)),
        (248, (10_040, 2)),
        (500, (20_120, 2)),
        (2000, (80_120, 2)),
    ],
)
def test_default_budget_follows_thm27_switch(d, want):
    assert FR.default_budget(d, "prox-sgd") == want
    T, S = want
    t_star = 8 * (d + 3)  # Thm 27: 4 floor(a/mu^2), a = 2(d+3) at M = mu = 1
    assert T >= 5 * t_star and S * T >= 10 * t_star
    assert T == 10_000 or T == 5 * t_star  # no more steps than the rule asks
    assert S == 1 or (S - 1) * T < 10 * t_star  # no more samples than the rule asks
    assert FR.default_budget(d, "proj-sgd") == (10_000, 1)


def _spec(target, **kw):
    return F._validate(
        target,
        kw.pop("method", "prox-sgd"),
        steps=kw.pop("steps", None),
        frame=kw.pop("frame", "auto"),
        diagnose=1000,
        samples=kw.pop("samples", None),
        trace_samples=64,
        trace_every=None,
        **{
            k: kw.get(k)
            for k in (
                "step_size",
                "seed",
                "average",
                "estimator",
                "structure",
                "m0",
                "C0",
                "M",
                "theorem",
                "keep_iterates",
                "progress",
                "fast",
            )
        },
        tail_fraction=0.5,
    )


def test_who_gets_the_scaled_budget():
    d = 130
    t = Gaussian(np.zeros(d), np.eye(d))
    budget = FR.default_budget(d, "prox-sgd")
    assert budget == (10_000, 2)
    s = _spec(t)
    assert (s.steps, s.samples) == budget  # fit(target): the derived budget
    assert (_spec(t, steps=500).steps, _spec(t, steps=500).samples) == (500, 1)  # steps given: one sample
    assert (_spec(t, samples=3).steps, _spec(t, samples=3).samples) == (budget[0], 3)
    for kw in ({"frame": None}, {"step_size": 0.01}, {"M": 2.0}, {"method": "proj-sgd"}, {"average": "theta"}):
        s = _spec(t, **kw)
        assert (s.steps, s.samples) == (10_000, 1), kw
    s = _spec(t, frame="laplace")  # a frame asked for by name: its rule
    assert (s.steps, s.samples) == budget


def test_small_targets_keep_the_former_defaults_bit_for_bit():
    """Below d = 123 nothing changes: passing steps=10_000, samples=1 is the same run as passing nothing."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 5))
    t = LogisticRegression(X, np.where(X @ np.ones(5) + rng.standard_normal(40) > 0, 1.0, -1.0))
    a = F.fit(t, diagnose=0)
    b = F.fit(t, steps=10_000, samples=1, diagnose=0)
    assert (a.steps, a.samples) == (10_000, 1)
    np.testing.assert_array_equal(a.m, b.m)
    np.testing.assert_array_equal(a.C, b.C)


def test_the_measurement_script_renders_its_block(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import fit_at_scale as fs

    row = {"seconds": 1.0, "steps": 10_000, "samples": 1, "restarts": 0, "err": 0.05, "sd_err": 0.01, "warned": False}
    bad = dict(row, err=0.2)
    rep = {
        "date": "2026-01-01",
        "machine": "2 cores, X",
        "load_average": 1.0,
        "refvi": "0",
        "rows": [{"kind": "logistic", "d": 500, "N": 1000, "default": row, "fixed": bad}],
    }
    block = fs.markdown(rep)
    assert "| logistic | 500 | 1,000 | 10,000 x 1 | 1.0 | 0 | 0.050 | 1.0 | 0 | 0.200 |" in block
    assert block.endswith("met.") and "not met" not in block
    assert "**not met**" in fs.markdown(dict(rep, rows=[dict(rep["rows"][0], default=bad)]))
    page = tmp_path / "b.md"
    page.write_text(f"head\n{fs.START}\nold\n{fs.END}\ntail\n")
    fs.update_page(block, page)
    text = page.read_text()
    assert text == f"head\n{fs.START}\n{block}\n{fs.END}\ntail\n"
    X, y_lin, y_log = fs.data(7)
    assert X.shape == (14, 7) and set(np.unique(y_log)) <= {-1.0, 1.0} and np.all(np.isfinite(y_lin))

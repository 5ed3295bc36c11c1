"""The posteriordb benchmark's claims as tests (``posteriordb_benchmark.py`` runs the full comparison and the figure).

* every linear-regression posterior is fitted by ``refvi.fit`` with defaults (10,000 steps) to < 0.1 reference sd on
  every parameter (mean; the issue's goal) and sd within 15% of the reference;
* the NumPyro comparison runs (skipped cleanly when NumPyro / JAX are not installed) and its JAX densities agree with
  refvi's Numba kernels.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import posteriordb_benchmark as B  # noqa: E402

from refvi.targets import posteriordb as P  # noqa: E402
from refvi.targets.posteriordb.models import LINEAR_REGRESSIONS  # noqa: E402


@pytest.mark.parametrize("name", LINEAR_REGRESSIONS)
def test_linear_regressions_reach_the_gold_standard_with_defaults(name):
    r = B.run_refvi(name)
    assert r["err"] < 0.1, (name, r["err"])
    # sd within 15%: the KL-optimal Gaussian itself is 10% narrow on mesquite's sigma (N = 46, flat priors: a long
    # S = 16, 40,000-step run gives 0.90 too); every other sd of every linear regression is within 3%
    assert np.all(np.abs(np.array(r["sd_ratio"]) - 1.0) < 0.15), (name, r["sd_ratio"])
    assert any("laplace frame" in n for n in r["notes"])


def test_non_gaussian_posteriors_run_with_defaults_and_say_so():
    """A posterior no Gaussian represents runs with defaults and says so: its notes name the non-convexity, and a run
    whose diagnostics fail (the Pareto k of a non-Gaussian posterior) warns with a ConvergenceWarning."""
    import warnings

    from refvi.optim.fit import ConvergenceWarning

    for name in ("eight_schools-eight_schools_noncentered", "gp_pois_regr-gp_pois_regr"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            r = B.run_refvi(name, steps=4000)
        assert np.isfinite(r["err"]) and r["err"] < 1.0, (name, r["err"])
        assert any("not convex" in n for n in r["notes"])
        warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
        assert warned == any("did not pass its diagnostics" in n for n in r["notes"]), (name, r["notes"])


@pytest.mark.slow  # JAX compiling NumPyro's ADVI: about 20 s
@pytest.mark.skipif(not B.have_numpyro(), reason="NumPyro / JAX not installed (optional peer comparison)")
def test_numpyro_comparison_runs_on_the_same_density():
    import jax

    jax.config.update("jax_enable_x64", True)
    for name in ("sblrc-blr", "gp_pois_regr-gp_pois_regr"):
        t = P.load(name)
        z = np.asarray(t.reference["u_mean"])
        lp = B.jax_logp(name)
        assert float(lp(z)) == pytest.approx(t.logp(z), rel=1e-10, abs=1e-8)
        np.testing.assert_allclose(np.asarray(jax.grad(lp)(z)), t.grad_logp(z), rtol=1e-7, atol=1e-7)
    r = B.run_numpyro("sblrc-blr", steps=100)
    assert r["steps"] >= 100 and len(r["sd_ratio"]) == 6


def test_every_posterior_fits_in_half_a_second_and_the_frame_search_is_a_tenth(benchmark):
    """Issue 28: refvi.fit with defaults, 10,000 steps, end to end (frame search included) takes at most 0.5 s on
    every bundled posterior, and the frame search at most a tenth of that budget, 50 ms (best of 5 calls after a
    warm-up call; frame.seconds is the search's own clock).  A tenth of the budget, not of the fit: a faster loop
    must not fail the frame search (kidiq-kidscore_momhs: fit 30 ms, search 3.4 ms).  A timing claim: runs with
    --benchmark-enable (track.py)."""
    import time

    import refvi

    if benchmark.disabled:
        pytest.skip("timing check: run with --benchmark-enable")
    slow = []
    for name in P.POSTERIORS:
        t = P.load(name)
        refvi.fit(t, steps=200, seed=0)
        walls, frames = [], []
        for _ in range(5):
            t0 = time.perf_counter()
            r = refvi.fit(t, steps=10_000, seed=0)
            walls.append(time.perf_counter() - t0)
            frames.append(r.frame.seconds)
        wall, frame = min(walls), min(frames)
        if wall > 0.5 or frame > 0.05:
            slow.append(f"{name}: {wall:.3f} s, frame search {1e3 * frame:.1f} ms")
    assert not slow, slow

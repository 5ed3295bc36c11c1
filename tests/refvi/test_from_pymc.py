"""``refvi.targets.from_pymc``: three bundled posteriordb posteriors written as PyMC models, against the hand-written
targets (log density up to a constant, gradient) and against the reference moments (fits with defaults, 10,000
steps, same accuracy as the hand-written target); the constrained pushforward and ``to_inference_data``; bad input.
Needs the ``pymc`` extra (skipped without it, a failure under REFVI_REQUIRE_PEERS=1)."""

from __future__ import annotations

import numpy as np
import pytest
from _fits import fit_expecting  # tests/_fits.py
from _peers import need  # tests/_peers.py

import refvi
from refvi.targets import from_pymc
from refvi.targets import posteriordb as P
from refvi.targets.posteriordb.models import _data


def _pymc():
    """PyMC, imported by the test that needs it (not at collection: importing it takes seconds in every worker)."""
    return need("pymc")


def sblrc():
    pm = _pymc()
    d = _data("sblrc")
    X, y = np.array(d["X"], dtype=float), np.array(d["y"], dtype=float)
    with pm.Model() as model:                     # posteriordb sblrc-blr: beta ~ N(0, 10), sigma ~ half-N(0, 10)
        beta = pm.Normal("beta", 0.0, 10.0, shape=X.shape[1])
        sigma = pm.HalfNormal("sigma", 10.0)
        pm.Normal("y", X @ beta, sigma, observed=y)
    return model


def kidiq_momhs():
    pm = _pymc()
    d = _data("kidiq")
    hs = np.array(d["mom_hs"], dtype=float)
    X = np.column_stack([np.ones_like(hs), hs])
    with pm.Model() as model:                     # flat beta, sigma ~ half-Cauchy(0, 2.5)
        beta = pm.Flat("beta", shape=2)
        sigma = pm.HalfCauchy("sigma", 2.5)
        pm.Normal("kid_score", X @ beta, sigma, observed=np.array(d["kid_score"], dtype=float))
    return model


def eight_schools_nc():
    pm = _pymc()
    d = _data("eight_schools")
    with pm.Model() as model:                     # non-centred: theta = mu + tau theta_trans
        theta_trans = pm.Normal("theta_trans", 0.0, 1.0, shape=8)
        mu = pm.Normal("mu", 0.0, 5.0)
        tau = pm.HalfCauchy("tau", 5.0)
        theta = pm.Deterministic("theta", mu + tau * theta_trans)
        pm.Normal("y", theta, np.array(d["sigma"], dtype=float), observed=np.array(d["y"], dtype=float))
    return model


MODELS = {"sblrc-blr": sblrc, "kidiq-kidscore_momhs": kidiq_momhs,
          "eight_schools-eight_schools_noncentered": eight_schools_nc}
_TARGETS: dict = {}


def pymc_target(name):
    if name not in _TARGETS:
        _TARGETS[name] = from_pymc(MODELS[name]())
    return _TARGETS[name]


def _points(t, n=4, seed=0):
    ref = t.reference
    return np.asarray(ref["u_mean"]) + np.asarray(ref["u_sd"]) * np.random.default_rng(seed).standard_normal((n, t.dim))


@pytest.mark.parametrize("name", MODELS)
def test_log_density_and_gradient_match_the_hand_written_target(name):
    t, h = pymc_target(name), P.load(name)
    assert t.dim == h.dim and t.is_numba
    Z = _points(h)
    diff = [t.logp(z) - h.logp(z) for z in Z]
    # PyMC's flat prior drops no constant the posteriordb kernel keeps but the normalising constants may differ: the
    # difference is one constant; |log p| <= 1e4 here, so 1e-12 relative of it is the rounding of both sums
    scale = 1.0 + max(abs(h.logp(z)) for z in Z)
    assert max(diff) - min(diff) <= 1e-11 * scale
    for z in Z:
        np.testing.assert_allclose(t.grad_logp(z), h.grad_logp(z), rtol=1e-9, atol=1e-9 * scale)


def _error(h, m, C):
    mean, sd = P.pushforward_moments(h, m, C, samples=200_000, seed=0)
    ref = h.reference
    return float(np.max(np.abs(mean - ref["mean"]) / ref["sd"])), sd / ref["sd"]


#: the default run fits one model (kidiq, 14 s); the two slower fits (sblrc 30 s: the same accuracy claim on a second
#: model; eight schools: a funnel no Gaussian represents) run with ``pytest --run-slow``
_FIT_MODELS = [pytest.param(n, marks=[] if n == "kidiq-kidscore_momhs" else [pytest.mark.slow]) for n in MODELS]


@pytest.mark.parametrize("name", _FIT_MODELS)
def test_fit_matches_the_hand_written_target_and_the_reference(name):
    t, h = pymc_target(name), P.load(name)
    rp = refvi.fit(t, steps=10_000, seed=0)
    rh = refvi.fit(h, steps=10_000, seed=0)
    assert rp.fast_path and rh.fast_path          # the PyMC density's njit log p / gradient run the fused loop
    err_p, ratio_p = _error(h, rp.m, rp.C)          # the same coordinates: the hand-written pushforward applies
    err_h, ratio_h = _error(h, rh.m, rh.C)
    if name in ("sblrc-blr", "kidiq-kidscore_momhs"):
        # a full-rank Gaussian is close to exact here: the README's accuracy, 0.03 reference sd on every mean and
        # every sd within 10 % of the reference
        assert err_p <= 0.03 and np.all(np.abs(ratio_p - 1) <= 0.10), (err_p, ratio_p)
    # the same accuracy as the hand-written target: both fits of one density with one seed, so their errors agree
    # to the optimizer's noise at 10,000 steps (a tenth of the tolerance above)
    assert abs(err_p - err_h) <= 0.01 + 0.1 * err_h, (err_p, err_h)
    np.testing.assert_allclose(ratio_p, ratio_h, rtol=0.05)


def test_pushforward_and_inference_data():
    az = pytest.importorskip("arviz")
    t, h = pymc_target("eight_schools-eight_schools_noncentered"), P.load("eight_schools-eight_schools_noncentered")
    ref = h.reference
    m = np.asarray(ref["u_mean"])
    C = np.linalg.cholesky(np.asarray(ref["u_cov"]))
    assert t.var_names == ("theta_trans", "mu", "tau", "theta")
    pf = t.pushforward_moments(m, C, samples=20_000, seed=1)
    mean_h, sd_h = P.pushforward_moments(h, m, C, samples=20_000, seed=1)
    got_mean = np.concatenate([pf["theta"][0], [pf["mu"][0]], [pf["tau"][0]]])
    got_sd = np.concatenate([pf["theta"][1], [pf["mu"][1]], [pf["tau"][1]]])
    # both draw U ~ N(0, I) (20,000 x d) from the same seed and push U C^T + m through their own constrain (PyMC's
    # graph against the hand-written map): the same draws, so the moments agree to rounding
    np.testing.assert_allclose(got_mean, mean_h, rtol=1e-10, atol=1e-10 * np.abs(mean_h).max())
    np.testing.assert_allclose(got_sd, sd_h, rtol=1e-10)

    res = fit_expecting(t, steps=2_000, seed=0)      # a short run for the plumbing: it may fail its diagnostics
    idata = res.to_inference_data(draws=400, target=t, chains=4)
    summary = az.summary(idata)
    assert "tau" in summary.index and "theta[7]" in summary.index
    assert idata.posterior["theta"].shape == (4, 100, 8)
    plain = res.to_inference_data(draws=10)
    assert plain.posterior["z"].shape == (1, 10, t.dim)


def test_bad_input():
    pm = _pymc()
    with pytest.raises(TypeError, match="pymc.Model"):
        from_pymc("not a model")
    with pm.Model() as empty:
        pass
    with pytest.raises(ValueError, match="no free random variables"):
        from_pymc(empty)
    with pm.Model() as discrete:
        pm.Poisson("k", 3.0)
    with pytest.raises(ValueError, match="discrete"):
        from_pymc(discrete)
    t = pymc_target("sblrc-blr")
    with pytest.raises(ValueError, match="shape"):
        t.constrain(np.zeros((2, t.dim + 1)))
    with pytest.raises(ValueError, match="draws"):
        t.draws(np.zeros(t.dim), np.eye(t.dim), draws=1)
    for chains in (3, 0, -2, True, 2.0):  # not dividing the draws, not a positive integer
        with pytest.raises(ValueError, match="chains"):
            t.inference_data(np.zeros(t.dim), np.eye(t.dim), draws=10, chains=chains)

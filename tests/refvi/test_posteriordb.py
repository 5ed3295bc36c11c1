"""The posteriordb targets: kernels against independent SciPy log densities and finite differences, the constrained
transforms and moments against the shipped reference, loading by name, bad input."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest
from scipy import stats

from refvi.targets import posteriordb as P
from refvi.targets import target_for
from refvi.targets.posteriordb.models import DATA, LINEAR_REGRESSIONS

SHARED = pathlib.Path(__file__).resolve().parents[3] / "shared" / "data" / "posteriordb"


def _d(stem):
    import gzip
    p = DATA / f"{stem}.json"
    if p.exists():
        return json.loads(p.read_text())
    with gzip.open(DATA / f"{stem}.json.gz", "rt") as fh:
        return json.load(fh)


def _lin(X, y, beta, sigma):
    return stats.norm.logpdf(y, X @ beta, sigma).sum()


def scipy_logp(name, z):
    """-log p written from the Stan programs with scipy.stats (independent of the Numba kernels): unconstrained z,
    log-Jacobians added."""
    z = np.asarray(z, dtype=float)
    if name in LINEAR_REGRESSIONS:
        beta, ls = z[:-1], z[-1]
        s = math.exp(ls)
        jac = ls
        if name == "sblrc-blr":
            d = _d("sblrc")
            X, y = np.array(d["X"]), np.array(d["y"])
            return (_lin(X, y, beta, s) + stats.norm.logpdf(beta, 0, 10).sum()
                    + stats.halfnorm.logpdf(s, scale=10) + jac)
        if name.startswith("kidiq"):
            d = _d("kidiq")
            hs, iq = np.array(d["mom_hs"], float), np.array(d["mom_iq"], float)
            X = np.column_stack([np.ones_like(hs), hs] + ([iq, hs * iq] if "interaction" in name else []))
            return _lin(X, np.array(d["kid_score"], float), beta, s) + stats.halfcauchy.logpdf(s, scale=2.5) + jac
        if name == "mesquite-logmesquite":
            d = _d("mesquite")
            c = [np.log(np.array(d[k], float)) for k in ("diam1", "diam2", "canopy_height", "total_height", "density")]
            X = np.column_stack([np.ones(len(d["weight"]))] + c + [np.array(d["group"], float)])
            return _lin(X, np.log(np.array(d["weight"], float)), beta, s) + jac
        if name == "earnings-logearn_interaction":
            d = _d("earnings")
            h, m = np.array(d["height"], float), np.array(d["male"], float)
            return _lin(np.column_stack([np.ones_like(h), h, m, h * m]), np.log(np.array(d["earn"], float)),
                        beta, s) + jac
        if name == "nes1972-nes":
            d = _d("nes1972")
            a = np.array(d["age_discrete"])
            X = np.column_stack([np.ones(a.size), d["real_ideo"], d["race_adj"], a == 2, a == 3, a == 4, d["educ1"],
                                 d["gender"], d["income"]]).astype(float)
            return _lin(X, np.array(d["partyid7"], float), beta, s) + jac
        if name == "arK-arK":
            d = _d("arK")
            y, K = np.array(d["y"], float), int(d["K"])
            mu = beta[0] + sum(beta[k] * y[K - k:len(y) - k] for k in range(1, K + 1))
            return (stats.norm.logpdf(y[K:], mu, s).sum() + stats.norm.logpdf(beta, 0, 10).sum()
                    + stats.halfcauchy.logpdf(s, scale=2.5) + jac)
        d = _d("diamonds")
        X = np.array(d["X"], float)
        Xc = X[:, 1:] - X[:, 1:].mean(axis=0)
        b, icpt = beta[:-1], beta[-1]
        return (stats.norm.logpdf(np.array(d["Y"], float), icpt + Xc @ b, s).sum()
                + stats.norm.logpdf(b, 0, 1).sum() + stats.t.logpdf(icpt, 3, 8, 10)
                + stats.t.logpdf(s, 3, 0, 10) + math.log(2) + jac)
    if name.startswith("eight_schools"):
        d = _d("eight_schools")
        tt, mu, lt = z[:8], z[8], z[9]
        tau = math.exp(lt)
        return (stats.norm.logpdf(tt).sum() + stats.norm.logpdf(mu, 0, 5) + stats.halfcauchy.logpdf(tau, scale=5)
                + lt + stats.norm.logpdf(np.array(d["y"], float), mu + tau * tt, np.array(d["sigma"], float)).sum())
    d = _d("gp_pois_regr")
    x, k = np.array(d["x"], float), np.array(d["k"])
    rho, alpha = math.exp(z[0]), math.exp(z[1])
    Kc = alpha ** 2 * np.exp(-(x[:, None] - x[None, :]) ** 2 / (2 * rho ** 2)) + 1e-10 * np.eye(x.size)
    f = np.linalg.cholesky(Kc) @ z[2:]
    return (stats.gamma.logpdf(rho, 25, scale=1 / 4) + z[0] + stats.halfnorm.logpdf(alpha, scale=2) + z[1]
            + stats.norm.logpdf(z[2:]).sum() + stats.poisson.logpmf(k, np.exp(f)).sum())


def _points(t, n=3, seed=0):
    ref = t.reference
    rng = np.random.default_rng(seed)
    return np.asarray(ref["u_mean"]) + np.asarray(ref["u_sd"]) * rng.standard_normal((n, t.dim))


@pytest.mark.parametrize("name", P.POSTERIORS)
def test_logp_matches_scipy_and_gradient_matches_finite_differences(name):
    t = P.load(name)
    Z = _points(t)
    lp, G = t.logp_and_grad(Z)
    for z, v, g in zip(Z, lp, G):
        ref = scipy_logp(name, z)
        # sums of N terms of size ~|ref|/N: 1e-10 relative covers the sufficient-statistic form of the likelihood
        assert v == pytest.approx(ref, rel=1e-9, abs=1e-8)
        h = 1e-5 * np.maximum(1.0, np.abs(z))
        fd = np.array([(scipy_logp(name, z + hi * e) - scipy_logp(name, z - hi * e)) / (2 * hi)
                       for hi, e in zip(h, np.eye(t.dim))])
        # central differences of the SciPy density: h^2 |f'''| + eps |f| / h, |f| up to 2e4 here
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6 * (1 + abs(ref)))
    np.testing.assert_array_equal(t.grad_logp(Z), G)            # batch path = single kernel call, deterministic
    assert t.logp(Z[0]) == lp[0]


@pytest.mark.parametrize("name", P.POSTERIORS)
def test_names_reference_and_constrain(name):
    t = target_for(f"posteriordb:{name}")
    ref = t.reference
    assert ref["names"] == t.draw_names and len(t.param_names) == t.dim
    assert np.all(ref["sd"] > 0) and np.all(ref["mcse_mean"] < 0.05 * ref["sd"])
    # the shipped unconstrained moments, pushed back through constrain, reproduce the constrained reference means
    # where the transform is near-linear over the posterior (every parameter of the linear regressions but sigma)
    Zs = np.random.default_rng(1).multivariate_normal(ref["u_mean"], ref["u_cov"], 100_000)
    mean = t.constrain(Zs).mean(axis=0)
    if name in LINEAR_REGRESSIONS:
        np.testing.assert_allclose(mean, ref["mean"], atol=0.05 * ref["sd"].max(), rtol=0)
        np.testing.assert_allclose(mean[:-1], ref["mean"][:-1], atol=0.02 * ref["sd"][:-1].max())


def test_pushforward_moments_closed_form_matches_monte_carlo():
    t = P.load("sblrc-blr")
    rng = np.random.default_rng(3)
    m = np.asarray(t.reference["u_mean"])
    C = np.linalg.cholesky(np.asarray(t.reference["u_cov"]))
    mean, sd = P.pushforward_moments(t, m, C)
    Y = t.constrain(m + rng.standard_normal((400_000, t.dim)) @ C.T)
    # MC error of the mean: sd / sqrt(4e5) = 0.0016 sd; 5 sigma
    np.testing.assert_allclose(mean, Y.mean(axis=0), atol=5 * 0.0016 * sd.max())
    np.testing.assert_allclose(sd, Y.std(axis=0), rtol=0.01)
    # and it is the closed form (log-normal sigma), not a Monte Carlo estimate of it: exact, and seed-independent
    v = np.sum(C * C, axis=1)
    want_mean = np.r_[m[:-1], np.exp(m[-1] + v[-1] / 2)]
    want_sd = np.r_[np.sqrt(v[:-1]), np.sqrt(np.expm1(v[-1])) * want_mean[-1]]
    np.testing.assert_allclose(mean, want_mean, rtol=1e-14)
    np.testing.assert_allclose(sd, want_sd, rtol=1e-14)


@pytest.mark.skipif(not SHARED.exists(), reason="the posteriordb source copy is not beside the repository")
def test_shipped_reference_moments_match_the_draws():
    for name in ("sblrc-blr", "eight_schools-eight_schools_noncentered"):
        chains = json.loads((SHARED / "reference_draws" / f"{name}.json").read_text())
        ref = P.reference(name)
        for i, k in enumerate(ref["names"]):
            x = np.concatenate([c[k] for c in chains])
            assert x.mean() == pytest.approx(ref["mean"][i], rel=1e-12, abs=1e-12)
            assert x.std(ddof=1) == pytest.approx(ref["sd"][i], rel=1e-12)


def test_bad_names_are_clear_errors():
    with pytest.raises(ValueError, match="unknown posteriordb posterior"):
        P.load("eight_schools")
    with pytest.raises(TypeError, match="string"):
        P.load(3)
    with pytest.raises(ValueError, match="unknown posteriordb posterior"):
        target_for("posteriordb:nope")
    t = P.load("sblrc-blr")
    with pytest.raises(ValueError, match="shape"):
        t.logp(np.zeros(t.dim + 1))
    with pytest.raises(ValueError, match="non-finite|finite"):
        t.grad_logp(np.full(t.dim, np.nan))

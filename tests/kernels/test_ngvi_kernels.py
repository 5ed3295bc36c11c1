"""refvi.kernels.ngvi: cross-checks against independent oracles, composition inside njit, determinism, bad input."""

import numba
import numpy as np
import pytest

from refvi import ngvi
from refvi.kernels import ngvi as kn
from refvi.ngvi import estimators, expfam
from refvi.verification.oracles import ngvi_expfam as OX
from refvi.verification.oracles import ngvi_glm as OG


def _blr(seed, n=30, d=4, s2=0.7):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    P = np.diag(rng.uniform(0.5, 2.0, d))
    mp = rng.standard_normal(d)
    return X, y, s2, P, mp


@pytest.mark.parametrize("seed", range(4))
def test_blr_update_matches_moment_form_oracle(seed):
    X, y, s2, P, mp = _blr(seed)
    rng = np.random.default_rng(100 + seed)
    mu, A = rng.standard_normal(4), rng.standard_normal((4, 4))
    S = A @ A.T + np.eye(4)
    lam, Lam = expfam.natural_from_moment(mu, S)
    lam_p, Lam_p = expfam.natural_from_moment(mp, P)
    idx = rng.integers(0, 30, 7)
    g = float(rng.uniform(0, 1))
    nl, nL = kn.blr_minibatch_update(lam, Lam, X, y, idx, 30 / (7 * s2), lam_p, Lam_p, g)
    mu_o, S_o = OX.ngd_blr_step_moments(mu, S, X, y, idx, s2, P, mp, g)
    mu_k, S_k = expfam.moment_from_natural(nl, nL)
    # two float64 routes (natural vs moment form, Cholesky vs LU inverses), condition numbers < 1e3: 1e-10 relative
    np.testing.assert_allclose(mu_k, mu_o, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(S_k, S_o, rtol=1e-10, atol=1e-12)
    assert np.array_equal(nL, nL.T)


def test_blr_full_batch_unit_step_is_posterior():
    X, y, s2, P, mp = _blr(7)
    lam_p, Lam_p = expfam.natural_from_moment(mp, P)
    nl, nL = kn.blr_minibatch_update(np.zeros(4), -0.5 * np.eye(4), X, y, np.arange(30), 1 / s2, lam_p, Lam_p, 1.0)
    mu_o, S_o = OX.blr_posterior(X, y, s2, P, mp)       # Gaussian conditioning (Woodbury), 1e-10 relative
    mu_k, S_k = expfam.moment_from_natural(nl, nL)
    np.testing.assert_allclose(mu_k, mu_o, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(S_k, S_o, rtol=1e-10, atol=1e-12)


def test_loop_matches_oracle_recursion_with_average():
    X, y, s2, P, mp = _blr(3, n=10, d=3)
    rng = np.random.default_rng(5)
    T, m = 6, 2
    idx = rng.integers(0, 10, (T, m))
    r = ngvi.stochastic_ngd_blr(ngvi.blr_problem(X, y, s2, P, mp), T, indices=idx)
    mu, S = np.zeros(3), np.eye(3)
    xb, Xb = np.zeros(3), np.zeros((3, 3))
    for t in range(T):
        g = 2 / (t + 2)
        mu, S = OX.ngd_blr_step_moments(mu, S, X, y, idx[t], s2, P, mp, g)
        xb, Xb = (1 - g) * xb + g * mu, (1 - g) * Xb + g * (S + np.outer(mu, mu))
    np.testing.assert_allclose(r.xi_bar, xb, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(r.Xi_bar, Xb, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(expfam.moment_from_natural(r.lam, r.Lam)[1], S, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("use_idx", [False, True])
def test_price_logistic_matches_loop_oracle(use_idx):
    rng = np.random.default_rng(11)
    n, d, S = 25, 5, 4
    X = rng.standard_normal((n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    mu = rng.standard_normal(d)
    L = np.tril(0.3 * rng.standard_normal((d, d))) + np.eye(d)
    U = rng.standard_normal((S, d))
    idx = rng.integers(0, n, 8) if use_idx else np.zeros(0, dtype=np.int64)
    scale = n / 8 if use_idx else 1.0
    gk, Gk = kn.price_logistic(mu, L, X, y, U, idx, scale)
    go, Go = OG.price_logistic_reference(mu, L, X, y, U, idx, scale)
    # same sums in a different order and a different sigmoid: 1e-12 relative to the scale
    np.testing.assert_allclose(gk, go, rtol=1e-12, atol=1e-12 * np.abs(go).max())
    np.testing.assert_allclose(Gk, Go, rtol=1e-12, atol=1e-12 * np.abs(Go).max())


@numba.njit
def _compose(lam, Lam, X, y, idx, c, lam_p, Lam_p):
    a, A = kn.blr_minibatch_update(lam, Lam, X, y, idx, c, lam_p, Lam_p, 0.5)
    mu = np.zeros(lam.shape[0])
    L = np.eye(lam.shape[0])
    U = np.ones((1, lam.shape[0]))
    yy = np.sign(y) + (y == 0)
    g, G = kn.price_logistic(mu, L, X, yy, U, idx, 1.0)
    return a.sum() + A.sum() + g.sum() + G.sum()


def test_kernels_compose_inside_njit():
    X, y, s2, P, mp = _blr(1, n=8, d=3)
    val = _compose(np.zeros(3), -0.5 * np.eye(3), X, y, np.arange(8), 1.0, np.zeros(3), -0.5 * np.eye(3))
    assert np.isfinite(val)


def test_determinism_bit_identical():
    X, y, s2, P, mp = _blr(2)
    p = ngvi.blr_problem(X, y, s2, P, mp)
    a = ngvi.stochastic_ngd_blr(p, 50, 5, rng=123)
    b = ngvi.stochastic_ngd_blr(p, 50, 5, rng=123)
    assert np.array_equal(a.lam, b.lam) and np.array_equal(a.Lam, b.Lam) and np.array_equal(a.Xi_bar, b.Xi_bar)
    Xl = X[:, :3]
    yl = np.where(y > 0, 1.0, -1.0)
    model = ngvi.logistic_model(Xl, yl)
    r1 = ngvi.ngd_glm(model, 20, 0.3, n_samples=3, rng=9, batch_size=5)
    r2 = ngvi.ngd_glm(model, 20, 0.3, n_samples=3, rng=9, batch_size=5)
    assert np.array_equal(r1.lam, r2.lam) and np.array_equal(r1.Lam, r2.Lam)
    U = np.random.default_rng(0).standard_normal((5, 3))
    w = expfam.expectation_from_moment(np.zeros(3), np.eye(3))
    assert all(np.array_equal(s, t) for s, t in zip(estimators.price_logistic(model, *w, U),
                                                      estimators.price_logistic(model, *w, U)))


def test_bad_input_to_kernel_wrappers():
    X, y, s2, P, mp = _blr(0, n=6, d=2)
    model = ngvi.logistic_model(X, np.where(y > 0, 1.0, -1.0))
    w = expfam.expectation_from_moment(np.zeros(2), np.eye(2))
    with pytest.raises(ValueError, match="shape"):
        estimators.price_logistic(model, *w, np.zeros((3, 5)))
    with pytest.raises(ValueError, match="idx"):
        estimators.price_logistic(model, *w, np.zeros((3, 2)), idx=np.array([0, 6]))
    with pytest.raises(ValueError, match="Xi - xi xi"):
        estimators.price_logistic(model, np.zeros(2), -np.eye(2), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="non-finite"):
        estimators.price_logistic(model, *w, np.full((1, 2), np.nan))
    p = ngvi.blr_problem(X, y, s2, P, mp)
    with pytest.raises(ValueError, match="indices"):
        ngvi.stochastic_ngd_blr(p, 2, indices=np.array([[0], [6]]))
    with pytest.raises(ValueError, match=r"shape \(T, m\)"):
        ngvi.stochastic_ngd_blr(p, 3, indices=np.zeros((2, 1), dtype=int))
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        ngvi.stochastic_ngd_blr(p, 3, 0, rng=0)

"""refvi.online.nn and refvi.kernels.online_nn: the ReLU-network loss, gradient and Monte Carlo expected-loss kernels
against the NumPy / finite-difference oracle, determinism, and bad input."""

import numpy as np
import pytest

from refvi.kernels import online_nn as kn
from refvi.online import nn
from refvi.verification.oracles import online_nn_oracle as oracle

P, H = 4, 5


def _case(seed):
    rng = np.random.default_rng(seed)
    d = nn.n_params(P, H)
    return rng.normal(size=d), rng.normal(size=P), float(rng.normal()), rng


@pytest.mark.parametrize("seed", range(5))
def test_loss_and_gradient_match_oracle(seed):
    theta, x, y, _ = _case(seed)
    g = np.empty(theta.size)
    val = kn.nn_sq_loss_grad(theta, x, y, H, g)
    ov, og = oracle.sq_loss_grad(theta, x, y, H)
    # same algebra, different evaluation order: 1e-12 relative
    assert val == pytest.approx(ov, rel=1e-12)
    np.testing.assert_allclose(g, og, rtol=1e-12, atol=1e-12)
    # central differences (step 1e-6): 1e-6 relative away from kinks (random theta is kink-free a.s.)
    np.testing.assert_allclose(g, oracle.fd_grad(theta, x, y, H), rtol=1e-6, atol=1e-6)
    assert (y - nn.nn_predict(theta, x[None], H)[0]) ** 2 == pytest.approx(val, rel=1e-12)


def test_mc_kernel_replays_oracle_on_the_same_samples():
    theta, x, y, rng = _case(9)
    sigma = rng.uniform(0.1, 1.0, theta.size)
    U = rng.standard_normal((7, theta.size))
    gm, gs = np.empty(theta.size), np.empty(theta.size)
    val = kn.nn_mc_expected(theta, sigma, x, y, H, U, gm, gs)
    ov, om, os_ = oracle.mc_expected(theta, sigma, x, y, H, U)
    assert val == pytest.approx(ov, rel=1e-12)
    np.testing.assert_allclose(gm, om, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(gs, os_, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("method", nn.METHODS)
def test_run_nn_deterministic_and_finite(method):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, P)) / 2, rng.normal(size=200)
    a = nn.run_nn(method, X, y, h=H, eta=0.05, beta=0.05, seed=3)
    b = nn.run_nn(method, X, y, h=H, eta=0.05, beta=0.05, seed=3)
    assert np.array_equal(a.losses, b.losses) and np.array_equal(a.m, b.m)
    assert np.all(np.isfinite(a.losses)) and np.all(np.abs(a.m) <= 20.0)
    if a.sigma is not None:
        assert np.all((a.sigma >= 0) & (a.sigma <= 1.0))


def test_run_nn_bad_input():
    X, y = np.ones((5, P)), np.ones(5)
    with pytest.raises(ValueError, match="method must be"):
        nn.run_nn("adam", X, y, h=H)
    with pytest.raises(ValueError, match="eta must be"):
        nn.run_nn("sva", X, y, h=H, eta=0.0)
    with pytest.raises(ValueError, match="h .hidden width"):
        nn.run_nn("sva", X, y, h=0)
    with pytest.raises(ValueError, match="sigma box"):
        nn.run_nn("sva", X, y, h=H, s=2.0, sbox=1.0)
    Xn = X.copy()
    Xn[2, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        nn.run_nn("sva", Xn, y, h=H)
    with pytest.raises(ValueError, match="length 5"):
        nn.run_nn("sva", X, np.ones(4), h=H)


def test_run_nn_base_samples_and_record():
    """Given base samples replace the seeded draws; record keeps the iterates (row t = state used at round t)."""
    rng = np.random.default_rng(5)
    X, y = rng.standard_normal((6, 2)), rng.standard_normal(6)
    d = nn.n_params(2, 3)
    U = rng.standard_normal((6, 2, d))
    r = nn.run_nn("sva", X, y, h=3, eta=0.05, n_samples=2, base_samples=U, record=True, m0=0.1 * np.ones(d))
    assert r.M.shape == (7, d) and r.S.shape == (7, d)
    np.testing.assert_array_equal(r.M[-1], r.m)
    np.testing.assert_array_equal(r.M[0], 0.1 * np.ones(d))
    again = nn.run_nn("sva", X, y, h=3, eta=0.05, n_samples=2, base_samples=U, m0=0.1 * np.ones(d))
    np.testing.assert_array_equal(again.m, r.m)
    with pytest.raises(ValueError, match="base_samples must have shape"):
        nn.run_nn("sva", X, y, h=3, base_samples=U[:, :, :-1])
    with pytest.raises(ValueError, match="finite"):
        nn.run_nn("sva", X, y, h=3, base_samples=np.full_like(U, np.nan))

"""pytest-benchmark: seed 004 NGVI kernels against plain NumPy versions of the SAME computations, same run.

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 python -m pytest tests/benchmarks/test_bench_ngvi.py --benchmark-enable

Target (issue 5): the mini-batch NGD update at d = 20, m = 100 at least 2x faster than NumPy.
"""

import bench_cases as bc
import numpy as np
import pytest
from scipy.special import expit

from refvi.kernels import ngvi as kn

UPDATE_GRID = ((20, 100), (100, 1000))          # (d, m)
PRICE_GRID = ((500, 20, 10), (569, 31, 10))     # (n, d, S); the second has breast-cancer size
LOOP_GRID = ((20, 100, 100),)                   # (d, m, T)


def update_case(d, m, n=2000, seed=0):
    rng = np.random.default_rng([d, m, seed])
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    A = rng.standard_normal((d, d))
    Lam = -0.5 * (A @ A.T / d + np.eye(d))
    return (rng.standard_normal(d), Lam, X, y, rng.integers(0, n, m), n / m, np.zeros(d), -0.5 * np.eye(d), 0.3)


def numpy_update(lam, Lam, X, y, idx, c, lam_p, Lam_p, g):
    Xb = X[idx]
    return ((1 - g) * lam + g * (c * (y[idx] @ Xb) + lam_p), (1 - g) * Lam + g * (Lam_p - 0.5 * c * (Xb.T @ Xb)))


def price_case(n, d, S, seed=0):
    rng = np.random.default_rng([n, d, S, seed])
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    L = np.tril(0.1 * rng.standard_normal((d, d))) + np.eye(d)
    return rng.standard_normal(d), L, X, y, rng.standard_normal((S, d)), np.zeros(0, dtype=np.int64), 1.0


def numpy_price(mu, L, X, y, U, idx, scale):
    Z = mu + U @ L.T
    T = Z @ X.T
    g = (y * expit(-y * T)).sum(axis=0) @ X / U.shape[0]
    p = expit(T)
    w = -(p * (1 - p)).sum(axis=0) / U.shape[0]
    H = (X.T * w) @ X
    return scale * (g - H @ mu), scale * 0.5 * H


def numpy_loop(lam, Lam, xb, Xb, X, y, idx_all, gammas, c, lam_p, Lam_p, average):
    for t, g in enumerate(gammas):
        lam, Lam = numpy_update(lam, Lam, X, y, idx_all[t], c, lam_p, Lam_p, g)
        if average:
            S = np.linalg.inv(-2.0 * Lam)
            S = 0.5 * (S + S.T)
            xi = S @ lam
            xb, Xb = (1 - g) * xb + g * xi, (1 - g) * Xb + g * (S + np.outer(xi, xi))
    return lam, Lam, xb, Xb


def _check(out, ref):
    # same sums in another order: 1e-12 of the output scale
    for a, b in zip(out, ref):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12 * max(1.0, float(np.max(np.abs(b)))))


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("d,m", UPDATE_GRID, ids=lambda v: str(v))
def test_blr_update(benchmark, impl, d, m):
    bc.race(benchmark, impl, f"NGD BLR mini-batch update d={d} m={m}", kn.blr_minibatch_update, numpy_update, update_case(d, m), _check)


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("n,d,S", PRICE_GRID, ids=lambda v: str(v))
def test_price_logistic(benchmark, impl, n, d, S):
    bc.race(benchmark, impl, f"Price logistic n={n} d={d} S={S}", kn.price_logistic, numpy_price, price_case(n, d, S), _check)


@pytest.mark.parametrize("impl", ("kernel", "numpy"))
@pytest.mark.parametrize("d,m,T", LOOP_GRID, ids=lambda v: str(v))
def test_ngd_loop(benchmark, impl, d, m, T):
    lam, Lam, X, y, _, c, lam_p, Lam_p, _ = update_case(d, m)
    rng = np.random.default_rng(1)
    args = (lam, Lam, np.zeros(d), np.zeros((d, d)), X, y, rng.integers(0, X.shape[0], (T, m)),
            2.0 / (np.arange(T) + 2.0), c, lam_p, Lam_p, True)
    bc.race(benchmark, impl, f"NGD BLR loop with omega average d={d} m={m} T={T}", kn.ngd_blr_loop, numpy_loop, args,
            _check)

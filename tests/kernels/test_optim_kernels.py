"""Whole-loop kernels (refvi.kernels.optim) against the plain-NumPy oracle loop (verification/oracles/sgd_reference),
composability inside @njit, determinism, and bad input."""

import numba
import numpy as np
import pytest

from refvi.kernels import optim as ko
from refvi.kernels.structure import structure_code
from refvi.optim import fastpath
from refvi.optim.proj_sgd import proj_sgd
from refvi.optim.prox_sgd import prox_sgd
from refvi.targets import CallableTarget, Gaussian, LinearRegression, LogisticRegression
from refvi.verification.oracles import sgd_reference as ref


def _targets(rng, N=40, d=3):
    X = rng.standard_normal((N, d)) / np.sqrt(d)
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    yl = rng.standard_normal(N)
    B = rng.standard_normal((d, d))
    P = B @ B.T + np.eye(d)
    P = 0.5 * (P + P.T)
    mean = rng.standard_normal(d)
    return [
        (Gaussian(mean, P), "gaussian", (mean, P)),
        (LinearRegression(X, yl, noise_scale=0.8, prior_scale=1.3), "linear", (X, yl, 0.8**-2, 1.3**-2)),
        (LogisticRegression(X, y, prior_scale=1.3), "logistic", (X, y, 1.3**-2)),
    ]


CASES = [("prox", "energy", "tril"), ("prox", "energy", "diag"), ("proj", "entropy", "sym"),
         ("proj", "stl", "sym"), ("proj", "entropy", "full")]


@pytest.mark.parametrize("method,estimator,structure", CASES)
@pytest.mark.parametrize("S", [1, 3])
def test_loop_matches_numpy_oracle(method, estimator, structure, S):
    rng = np.random.default_rng([S, len(structure)])
    for target, kind, params in _targets(rng):
        d, T = target.dim, 30
        M = target.smoothness
        m0 = rng.standard_normal(d)
        C0 = np.eye(d) if structure != "sym" else np.eye(d) * 1.2
        if structure == "tril":
            C0 = C0 + np.tril(0.2 * rng.standard_normal((d, d)), -1)
        U = rng.standard_normal((T, S, d))
        g = np.full(T, 0.5 / M)
        w = np.linspace(0.0, 1.0, T + 1)
        w /= w.sum()
        if method == "prox":
            r = prox_sgd(target, m0, C0, g, U, estimator=estimator, structure=structure, weights=w)
        else:
            r = proj_sgd(target, m0, C0, g, U, M, estimator=estimator, structure=structure, weights=w)
        assert r.fast_path
        m, C, am, aC = ref.sgd(method, kind, params, m0, C0, U, g, estimator, structure, M, w)
        # same arithmetic up to summation order (fastmath reassociation in the energy kernels) and LAPACK
        # (inv / eigh / svd backward error ~ d eps): after 30 contractive steps agreement to 1e-11 relative
        for a, b in ((r.m, m), (r.C, C), (r.m_avg, am), (r.C_avg, aC)):
            np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12)


def _two_runs(seed, which, T, S, **second):
    """Prox-SGD twice on the same target, draws and steps 1/M from (0, I): the second run with ``second``."""
    rng = np.random.default_rng(seed)
    target, _, _ = _targets(rng)[which]
    d = target.dim
    U = rng.standard_normal((T, S, d))
    g = np.full(T, 1.0 / target.smoothness)
    return prox_sgd(target, np.zeros(d), np.eye(d), g, U), prox_sgd(target, np.zeros(d), np.eye(d), g, U, **second)


def test_generic_path_agrees_with_fast_path():
    a, b = _two_runs(7, 2, 40, 2, fast=False)
    assert a.fast_path and not b.fast_path
    np.testing.assert_allclose(a.C, b.C, rtol=1e-12, atol=1e-14)   # both call the same kernels per step
    np.testing.assert_allclose(a.m, b.m, rtol=1e-12, atol=1e-14)


def test_kernels_compose_inside_njit():
    rng = np.random.default_rng(3)
    target, _, (X, y, ipv) = _targets(rng)[2]
    d = target.dim
    U = rng.standard_normal((5, 1, d))

    @numba.njit
    def two_steps(m, C, U, X, y, ipv, code):  # the structure code an argument, as in sgd_loop (a literal 1 here
        for t in range(2):  # would compile sgd_step and all it calls again, for Literal[int](1))
            m, C = ko.sgd_step(ko.PROX, ko.LOGISTIC, ko.ENERGY, code, m, C, U[t], 0.1, 0.0, X, y, ipv, 0.0)
        return m, C

    m, C = two_steps(np.zeros(d), np.eye(d), U, X, y, ipv, 1)
    r = prox_sgd(target, np.zeros(d), np.eye(d), np.full(2, 0.1), U[:2])
    np.testing.assert_array_equal(m, r.m)
    np.testing.assert_array_equal(C, r.C)


def test_loop_is_deterministic():
    a, b = _two_runs(5, 1, 50, 1)
    assert np.array_equal(a.m, b.m) and np.array_equal(a.C, b.C)


def test_divergence_reports_step_and_state():
    rng = np.random.default_rng(1)
    target, _, _ = _targets(rng)[1]
    d, T = target.dim, 2000
    U = rng.standard_normal((T, 1, d))
    with pytest.raises(fastpath.DivergenceError, match=r"diverged at step \d+") as e:
        prox_sgd(target, np.zeros(d), np.eye(d), np.full(T, 100.0 / target.smoothness), U)
    assert np.all(np.isfinite(e.value.m)) and np.all(np.isfinite(e.value.C))
    code = ko.sgd_loop(ko.PROX, ko.LINEAR, ko.ENERGY, structure_code("tril"), np.zeros(d), np.eye(d), U,
                       np.full(T, 100.0 / target.smoothness), np.zeros(T + 1), np.zeros(d), np.zeros((d, d)), 0.0,
                       target.X, target.y, target.noise_scale ** -2, target.prior_scale ** -2)
    assert code == e.value.step


def test_bad_input():
    rng = np.random.default_rng(2)
    target, _, _ = _targets(rng)[2]
    d = target.dim
    U = rng.standard_normal((3, 1, d))
    g = np.full(3, 0.01)
    with pytest.raises(ValueError, match="shape"):
        prox_sgd(target, np.zeros(d), np.eye(d), g, U[:2])
    with pytest.raises(ValueError, match="> 0"):
        prox_sgd(target, np.zeros(d), np.eye(d), -g, U)
    with pytest.raises(ValueError, match="positive diagonal"):
        prox_sgd(target, np.zeros(d), -np.eye(d), g, U)
    with pytest.raises(ValueError, match="count the entropy twice"):
        prox_sgd(target, np.zeros(d), np.eye(d), g, U, estimator="entropy")
    with pytest.raises(ValueError, match="estimates grad l only"):
        proj_sgd(target, np.zeros(d), np.eye(d), g, U, 10.0, estimator="energy")
    with pytest.raises(ValueError, match="positive definite"):
        proj_sgd(target, np.zeros(d), -np.eye(d), g, U, 10.0)
    with pytest.raises(ValueError, match="non-finite"):
        prox_sgd(target, np.zeros(d), np.eye(d), g, np.full((3, 1, d), np.nan))


def test_callable_target_takes_generic_path():
    t = CallableTarget(lambda z: -0.5 * np.sum(z * z, axis=-1), lambda z: -z, 2, smoothness=1.0,
                       strong_convexity=1.0)
    U = np.random.default_rng(0).standard_normal((20, 1, 2))
    r = prox_sgd(t, np.ones(2), np.eye(2), np.full(20, 0.5), U)
    assert not r.fast_path and np.all(np.isfinite(r.C))

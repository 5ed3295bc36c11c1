"""CallableTarget(logp_batch=..., grad_batch=...): functions of Z (S, d) called once per step for all S samples.

numba-compiled batched functions run the fused loop (bit for bit the generic path); Python ones (vectorized NumPy,
JAX jit(vmap(grad))) run one user call and one compiled call per step, again bit for bit the generic path's
arithmetic; both agree with the same density written per point."""

import numba
import numpy as np
import pytest

import refvi
from refvi import estimators as E
from refvi.optim import fastpath
from refvi.targets import CallableTarget

A = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.5]])
B = np.array([0.5, -1.0, 0.25])


def _lp_np(Z):
    return -0.5 * np.einsum("si,ij,sj->s", Z, A, Z) + Z @ B - 0.05 * Z[:, 0] ** 4


def _gr_np(Z):
    G = -Z @ A + B
    G[:, 0] -= 0.2 * Z[:, 0] ** 3
    return G


@numba.njit
def _lp_nb(Z):
    out = np.empty(Z.shape[0])
    for s in range(Z.shape[0]):
        z = Z[s]
        out[s] = -0.5 * z @ (A @ z) + z @ B - 0.05 * z[0] ** 4
    return out


@numba.njit
def _gr_nb(Z):
    G = -(Z @ A) + B
    for s in range(Z.shape[0]):
        G[s, 0] -= 0.2 * Z[s, 0] ** 3
    return G


@numba.njit
def _lp_one(z):
    return -0.5 * z @ (A @ z) + z @ B - 0.05 * z[0] ** 4


@numba.njit
def _gr_one(z):
    g = -(A @ z) + B
    g[0] -= 0.2 * z[0] ** 3
    return g


def _run(target, U, gamma, fast, method="prox", estimator="energy", structure="tril"):
    d, T = target.dim, U.shape[0]
    m, C = np.zeros(d), np.eye(d)
    w = np.full(T + 1, 1.0 / (T + 1))
    am, aC = w[0] * m, w[0] * C
    st = fastpath.run(method, target, estimator, structure, m, C, U, np.full(T, gamma), w, am, aC, M=4.0, fast=fast)
    return st, m, C, am, aC


@pytest.mark.parametrize("method,estimator,structure", [("prox", "energy", "tril"), ("proj", "entropy", "sym"),
                                                        ("proj", "stl", "full")])
def test_batched_targets_match_the_generic_path_bit_for_bit(method, estimator, structure):
    U = np.random.default_rng(3).standard_normal((50, 4, 3))
    nb = CallableTarget(dim=3, logp_batch=_lp_nb, grad_batch=_gr_nb)
    py = CallableTarget(dim=3, logp_batch=_lp_np, grad_batch=_gr_np)
    assert nb.is_numba and fastpath.has_fast_path(nb, estimator)
    assert not py.is_numba and not fastpath.has_fast_path(py, estimator)
    for t in (nb, py):
        a = _run(t, U, 0.1, True, method, estimator, structure)
        b = _run(t, U, 0.1, False, method, estimator, structure)
        assert a[0] == b[0] == -1
        for x, y in zip(a[1:], b[1:]):
            assert np.array_equal(x, y)
    # the same density batched (numba, NumPy) and per point: the same estimates up to rounding
    one = CallableTarget(_lp_one, _gr_one, 3)
    m, C = np.array([0.1, -0.2, 0.3]), np.tril(np.full((3, 3), 0.1)) + np.eye(3)
    for kind in ("energy", "stl", "score"):
        ref = E.ESTIMATORS[kind](one, m, C, U[0], "tril")
        for t in (nb, py):
            for x, y in zip(E.ESTIMATORS[kind](t, m, C, U[0], "tril"), ref):
                np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-13)


def test_python_batched_gradient_is_called_once_per_step():
    calls = []

    def grad(Z):
        calls.append(Z.shape)
        return _gr_np(Z)

    t = CallableTarget(dim=3, logp_batch=_lp_np, grad_batch=grad, smoothness=4.0)
    res = refvi.fit(t, steps=200, samples=5, seed=0, frame=None)
    steps = [c for c in calls if c == (5, 3)]
    assert len(steps) == 200                                 # one call per step, all S = 5 samples at once
    ref = refvi.fit(CallableTarget(_lp_one, _gr_one, 3, smoothness=4.0), steps=200, samples=5, seed=0, frame=None)
    np.testing.assert_allclose(res.m, ref.m, rtol=1e-10, atol=1e-12)


def test_jax_jit_vmap_grad_as_grad_batch():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    Aj, Bj = jnp.asarray(A), jnp.asarray(B)

    def logp(z):
        return -0.5 * z @ Aj @ z + z @ Bj - 0.05 * z[0] ** 4

    t = CallableTarget(dim=3, logp_batch=jax.jit(jax.vmap(logp)), grad_batch=jax.jit(jax.vmap(jax.grad(logp))))
    res = refvi.fit(t, steps=300, seed=1)                    # defaults: Laplace frame, Python gradient per step
    ref = refvi.fit(CallableTarget(_lp_one, _gr_one, 3), steps=300, seed=1)
    np.testing.assert_allclose(res.m, ref.m, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res.C, ref.C, rtol=1e-8, atol=1e-10)


def test_bad_batched_callables_are_clear_errors():
    with pytest.raises(TypeError, match="logp_batch and grad_batch"):
        CallableTarget(dim=3, logp_batch=_lp_np)
    with pytest.raises(TypeError, match="grad_batch must be a callable"):
        CallableTarget(dim=3, logp_batch=_lp_np, grad_batch=3.0)
    with pytest.raises(ValueError, match="dim must be a positive integer"):
        CallableTarget(logp_batch=_lp_np, grad_batch=_gr_np)
    bad = CallableTarget(dim=3, logp_batch=_lp_np, grad_batch=lambda Z: Z[:, :2])
    with pytest.raises(ValueError, match="grad_batch must return shape"):
        bad.grad_logp(np.zeros((4, 3)))
    bad = CallableTarget(dim=3, logp_batch=lambda Z: Z, grad_batch=_gr_np)
    with pytest.raises(ValueError, match="logp_batch must return 4 real numbers"):
        bad.logp(np.zeros((4, 3)))
    nan = CallableTarget(dim=3, logp_batch=_lp_np, grad_batch=lambda Z: np.full_like(Z, np.nan))
    with pytest.raises(ValueError, match="non-finite"):
        nan.grad_logp(np.zeros((2, 3)))


@numba.njit
def _gr_nb_wide(Z):
    return np.zeros((Z.shape[0], Z.shape[1] + 1))


@numba.njit
def _gr_nb_tall(Z):
    return np.zeros((Z.shape[0] + 1, Z.shape[1]))


def test_a_numba_grad_batch_of_another_shape_is_refused_by_the_kernel():
    """Wider or taller than Z (not only narrower): the compiled energy kernel names the shape it needs."""
    for grad in (_gr_nb_wide, _gr_nb_tall):
        t = CallableTarget(dim=3, logp_batch=_lp_nb, grad_batch=grad)
        with pytest.raises(ValueError, match=r"grad_batch must return an array of the shape of Z, \(S, dim\)"):
            E.energy(t, np.zeros(3), np.eye(3), np.ones((4, 3)))

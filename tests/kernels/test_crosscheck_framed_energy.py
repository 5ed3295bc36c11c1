"""The framed energy kernels of refvi.kernels.composed (``affine_energy``: one sample and several;
``affine_callable_energy``: a numba ``CallableTarget``) against the energy gradient of p_x(x) = p(z0 + L x) written
here from its definition with NumPy: g_s = -L^T grad log p(z0 + L (C u_s + m)), gm = mean g_s, gC = mean g_s u_s^T
(seed 000 Eq. 6 in the frame; the gradient of the Gaussian log p is written out by hand)."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from refvi import estimators as E
from refvi.targets import CallableTarget, Gaussian
from refvi.targets.affine import AffineTarget

D = 3
RNG = np.random.default_rng(5)
MEAN = RNG.standard_normal(D)
A = RNG.standard_normal((D, D))
PREC = A @ A.T + D * np.eye(D)


def _oracle(z0, L, m, C, U):
    Z = z0 + (U @ C.T + m) @ L.T
    G = (Z - MEAN) @ PREC @ L  # rows: -L^T grad log p(z_s) = L^T P (z_s - mean)
    return G.mean(axis=0), G.T @ U / len(U)


@numba.njit
def _logp(z):
    r = z - MEAN
    return -0.5 * r @ (PREC @ r)


@numba.njit
def _grad(z):
    return -(PREC @ (z - MEAN))


BASES = {"callable": lambda: CallableTarget(_logp, _grad, D), "gaussian": lambda: Gaussian(MEAN, PREC)}


@pytest.mark.parametrize("base", sorted(BASES))
@pytest.mark.parametrize("S", [1, 4])
def test_framed_energy_matches_the_definition(base, S):
    rng = np.random.default_rng(S)
    z0, L = rng.standard_normal(D), np.tril(rng.standard_normal((D, D))) + 2 * np.eye(D)
    m, C, U = rng.standard_normal(D), np.tril(rng.standard_normal((D, D))) + np.eye(D), rng.standard_normal((S, D))
    target = AffineTarget(BASES[base](), z0, L)
    assert target.kernels().energy is not None  # the compiled path is the one under test
    gm, gC = E.energy(target, m, C, U, "full")
    ref_m, ref_C = _oracle(z0, L, m, C, U)
    np.testing.assert_allclose(gm, ref_m, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gC, ref_C, rtol=1e-12, atol=1e-12)


def _builtin_targets():
    from refvi.targets import CosineQuadratic, HierarchicalLogisticRegression, LinearRegression, LogisticRegression

    rng = np.random.default_rng(11)
    X = rng.standard_normal((12, D))
    pm1 = np.where(rng.random(12) < 0.5, -1.0, 1.0)
    return {
        "gaussian": Gaussian(MEAN, PREC),
        "linear": LinearRegression(X, X @ MEAN + rng.standard_normal(12), noise_scale=0.7, prior_scale=2.0),
        "logistic": LogisticRegression(X, pm1, prior_scale=1.5),
        "hierarchical": HierarchicalLogisticRegression(X[:, :1], pm1, np.arange(12) % 2),
        "cosine": CosineQuadratic(0.8, rng.standard_normal(D), phi=0.3, beta=1.2, z0=rng.standard_normal(D)),
    }


@pytest.mark.parametrize("name", ["gaussian", "linear", "logistic", "hierarchical", "cosine"])
def test_each_builtin_target_frames_through_its_own_cached_kernel(name):
    """A built-in target's frame runs the cached framed kernel of its own base kernel (composed.FRAMED_ENERGY /
    FRAMED_NEGLOGP), and its energy (one sample and several) and -log p are those of p(z0 + L x), written here from
    the base target's own gradient and log density."""
    from refvi.kernels import composed

    base = _builtin_targets()[name]
    d = base.dim
    rng = np.random.default_rng(3)
    z0, L = rng.standard_normal(d), np.tril(rng.standard_normal((d, d))) + 2 * np.eye(d)
    target = AffineTarget(base, z0, L)
    plan, base_plan = target.kernels(), base.kernels()
    assert plan.energy[0] is composed.FRAMED_ENERGY[base_plan.energy[0]]
    assert plan.neglogp[0] is composed.FRAMED_NEGLOGP[base_plan.neglogp[0]]
    assert getattr(composed, f"framed_{name}_energy") is plan.energy[0]
    m, C = rng.standard_normal(d), np.tril(rng.standard_normal((d, d))) + np.eye(d)
    for S in (1, 4):
        U = rng.standard_normal((S, d))
        Z = z0 + (U @ C.T + m) @ L.T
        G = -np.stack([base.grad_logp(z) for z in Z]) @ L  # rows: -L^T grad log p(z_s)
        gm, gC = plan.energy[0](m, C, U, *plan.energy[1])
        np.testing.assert_allclose(gm, G.mean(axis=0), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(gC, G.T @ U / S, rtol=1e-10, atol=1e-12)
    X = rng.standard_normal((5, d))
    np.testing.assert_allclose(plan.neglogp[0](X, *plan.neglogp[1]), -base.logp(z0 + X @ L.T), rtol=1e-12)

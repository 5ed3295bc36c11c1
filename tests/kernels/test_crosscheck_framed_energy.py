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

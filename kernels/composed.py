"""Energy and -log p kernels built from other compiled functions (passed as first-class functions).

* ``joint_energy(m, C, U, kernel, args)``: for a batched kernel ``kernel(Z, *args) -> (log p (S,), grad (S, d))``
  (the posteriordb models, ``refvi.targets.posteriordb._kernels``): the mean over rows of
  (-grad log p(z_s), -grad log p(z_s) u_s^T), z_s = C u_s + m (seed 000 Eq. 6, before the projection onto V);
* ``joint_neglogp(Z, kernel, args)``: -log p on the rows of Z from the same kernel (``values_neglogp`` from a
  kernel returning log p alone);
* ``affine_energy(m, C, U, z0, L, energy, args)``: the energy gradient of p_x(x) = p(z0 + L x) from the energy
  kernel of p: x_s = C u_s + m maps to z_s = (z0 + L m) + (L C) u_s and grad_x log p_x = L^T grad_z log p, so
  (gm_x, gC_x) = (L^T gm_z, L^T gC_z) with ``(gm_z, gC_z) = energy(z0 + L m, L C, U, *args)``
  (:class:`refvi.targets.affine.AffineTarget`);
* ``affine_neglogp(Z, z0, L, neglogp, args)``: -log p_x on the rows of Z.

Like :func:`refvi.kernels.energy.callable_energy`, they are compiled per function argument in each process.
"""

from __future__ import annotations

import warnings

import numpy as np

from refvi.kernels._jit import jit_nocache, jit_reduce
from refvi.kernels.energy import mean_outer, transform

# a compiled function inside an argument tuple is typed as Numba's first-class function type, which Numba flags as
# experimental at every compilation; its use here is covered by the tests (tests/refvi/test_fused_loop.py)
warnings.filterwarnings("ignore", message="First-class function type feature is experimental")


@jit_nocache
def joint_energy(m, C, U, kernel, args):
    Z = transform(m, C, U)
    _, G = kernel(Z, *args)
    return mean_outer(-G, U)


@jit_nocache
def joint_neglogp(Z, kernel, args):
    lp, _ = kernel(Z, *args)
    return -lp


_SMALL = 32  # up to this d the frame's products run as plain loops (a BLAS call costs more than the arithmetic)


@jit_reduce
def _frame_in(m, C, z0, L):
    """(z0 + L m, L C)."""
    d = m.shape[0]
    if d > _SMALL:
        return z0 + np.dot(L, m), np.dot(L, C)
    mz = np.empty(d)
    Cz = np.zeros((d, d))
    for i in range(d):
        acc = z0[i]
        for k in range(d):
            a = L[i, k]
            acc += a * m[k]
            for j in range(d):
                Cz[i, j] += a * C[k, j]
        mz[i] = acc
    return mz, Cz


@jit_reduce
def _frame_out(gm, gC, L):
    """(L^T gm, L^T gC)."""
    d = gm.shape[0]
    if d > _SMALL:
        LT = np.ascontiguousarray(L.T)
        return np.dot(LT, gm), np.dot(LT, gC)
    om = np.zeros(d)
    oC = np.zeros((d, d))
    for i in range(d):
        g = gm[i]
        for k in range(d):
            a = L[i, k]
            om[k] += a * g
            for j in range(d):
                oC[k, j] += a * gC[i, j]
    return om, oC


@jit_nocache
def values_neglogp(Z, kernel, args):
    """-log p on the rows of Z from a kernel ``kernel(Z, *args) -> log p (S,)`` (no gradient)."""
    return -kernel(Z, *args)


@jit_nocache
def affine_energy(m, C, U, z0, L, energy, args):
    mz, Cz = _frame_in(m, C, z0, L)
    gm, gC = energy(mz, Cz, U, *args)
    return _frame_out(gm, gC, L)


@jit_nocache
def affine_neglogp(Z, z0, L, neglogp, args):
    X = np.dot(Z, L.T)
    S, d = X.shape
    for s in range(S):
        for i in range(d):
            X[s, i] += z0[i]
    return neglogp(X, *args)


@jit_nocache
def batch_energy(m, C, U, grad_batch):
    """The energy gradient from a numba-compiled ``grad_batch(Z) -> (S, d)``: one call for all rows of Z."""
    Z = transform(m, C, U)
    G = np.asarray(grad_batch(Z))
    if G.shape != Z.shape:
        raise ValueError("user grad_batch must return an array of the shape of Z, (S, dim)")
    return mean_outer(-G.astype(np.float64), U)


@jit_nocache
def batch_neglogp(Z, logp_batch):
    """-log p on the rows of Z from a numba-compiled ``logp_batch(Z) -> (S,)``."""
    v = np.asarray(logp_batch(Z))
    if v.shape != (Z.shape[0],):
        raise ValueError("user logp_batch must return an array of shape (S,) for Z of shape (S, dim)")
    return -v.astype(np.float64)

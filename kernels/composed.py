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
* ``affine_callable_energy(m, C, U, z0, L, grad)``: the same for a base target whose gradient is one numba
  function of one point (a ``CallableTarget``), without the intermediate batch;
* ``affine_neglogp(Z, z0, L, neglogp, args)``: -log p_x on the rows of Z; ``affine_callable_neglogp(Z, z0, L,
  logp)`` for a ``CallableTarget``'s per-point ``logp``;
* ``batch_energy(m, C, U, grad_batch)``, ``batch_neglogp(Z, logp_batch)``: a ``CallableTarget``'s batched functions
  (one call for all rows), and ``affine_batch_energy`` / ``affine_batch_neglogp`` through a frame.

The kernels that take another kernel as an argument are compiled per function argument in each process (Numba
cannot cache a specialisation on a function argument); the ``affine_callable_*``, ``batch_*`` and ``affine_batch_*``
kernels take the user's function as the address of its compiled code (:mod:`refvi.kernels.userfn`), and the built-in
targets' frames have one kernel each that names its base kernel (``FRAMED_ENERGY``, ``FRAMED_NEGLOGP``: the
``affine_energy`` / ``affine_neglogp`` of the Gaussian, linear, logistic, hierarchical and cosine kernels), so all of
these are compiled once and cached on disk (a default ``refvi.fit`` of a built-in target is framed: without them every
new process compiled its frame's kernels again, about 4 s).
"""

from __future__ import annotations

import warnings

import numpy as np

from refvi.kernels import energy as _energy
from refvi.kernels import neglogp as _neglogp
from refvi.kernels._jit import jit, jit_nocache, jit_reduce
from refvi.kernels.energy import mean_outer, transform
from refvi.kernels.neglogp import callable_neglogp
from refvi.kernels.userfn import grad_batch_function, grad_function, logp_batch_function

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


@jit_reduce
def _one_point(m, C, u, z0, L):
    """z0 + L (C u + m), the one sample's point, in O(d^2) (forming L C would cost d^3)."""
    d = m.shape[0]
    x = np.empty(d)
    for i in range(d):
        acc = m[i]
        for j in range(d):
            acc += C[i, j] * u[j]
        x[i] = acc
    z = np.empty(d)
    for i in range(d):
        acc = z0[i]
        for k in range(d):
            acc += L[i, k] * x[k]
        z[i] = acc
    return z


@jit_reduce
def _one_point_out(gm, u, L):
    """(L^T gm, (L^T gm) u^T): with one sample the kernel's gC is gm u^T, so L^T gC is the outer product."""
    d = gm.shape[0]
    om = np.zeros(d)
    for i in range(d):
        g = gm[i]
        for k in range(d):
            om[k] += L[i, k] * g
    oC = np.empty((d, d))
    for k in range(d):
        for j in range(d):
            oC[k, j] = om[k] * u[j]
    return om, oC


@jit_nocache
def affine_energy(m, C, U, z0, L, energy, args):
    S, d = U.shape
    if S == 1:
        # one sample (fit's default): the z-space kernel sees its one point z as the mean with a zero scale (an energy
        # kernel reads C only through z = C u + m), so no d x d x d product is formed on either side
        gm, _ = energy(_one_point(m, C, U[0], z0, L), np.zeros((d, d)), U, *args)
        return _one_point_out(gm, U[0], L)
    if d > _SMALL and 4 * S < d:
        # a few samples in a large d: sample by sample as above, O(S d^2), instead of L C (d^3 flops)
        gm = np.zeros(d)
        gC = np.zeros((d, d))
        zero = np.zeros((d, d))
        for s in range(S):
            g1, _ = energy(_one_point(m, C, U[s], z0, L), zero, U[s : s + 1], *args)
            om, oC = _one_point_out(g1, U[s], L)
            gm += om
            gC += oC
        return gm / S, gC / S
    mz, Cz = _frame_in(m, C, z0, L)
    gm, gC = energy(mz, Cz, U, *args)
    return _frame_out(gm, gC, L)


@jit
def affine_callable_energy(m, C, U, z0, L, grad):
    """``affine_energy`` when the base target's gradient is a numba-compiled ``grad_logp(z) -> (d,)`` of one point
    (a ``CallableTarget``), at the address ``grad``: per row z = z0 + L (C u + m) and grad_x = L^T grad log p(z),
    accumulated straight into (gm, gC) = mean(-grad_x, -grad_x u^T), with no intermediate batch (the user model's
    framed fit)."""
    grad_logp = grad_function(grad)
    S, d = U.shape
    gm = np.zeros(d)
    gC = np.zeros((d, d))
    for s in range(S):
        g = np.asarray(grad_logp(_one_point(m, C, U[s], z0, L)), dtype=np.float64)
        if g.ndim != 1 or g.shape[0] != d:
            raise ValueError("user grad_logp must return an array of shape (dim,)")
        for k in range(d):
            acc = 0.0
            for i in range(d):
                acc += L[i, k] * g[i]
            gm[k] -= acc
            for j in range(d):
                gC[k, j] -= acc * U[s, j]
    for k in range(d):
        gm[k] /= S
        for j in range(d):
            gC[k, j] /= S
    return gm, gC


@jit
def _frame_points(Z, z0, L):
    """The rows z0 + L x of the rows x of Z."""
    X = np.dot(Z, L.T)
    S, d = X.shape
    for s in range(S):
        for i in range(d):
            X[s, i] += z0[i]
    return X


@jit_nocache
def affine_neglogp(Z, z0, L, neglogp, args):
    return neglogp(_frame_points(Z, z0, L), *args)


# ---- the built-in targets' frames: affine_energy / affine_neglogp with the base kernel named, so cached on disk ----
# One function per kernel, written out: a factory returning a closure over the base kernel would not be cached, since
# Numba keys a closure's cache entry by its pickled cells and a dispatcher pickles differently in each process
# (checked with numba 0.65: two processes, two hashes for linear_energy).
@jit
def framed_gaussian_energy(m, C, U, z0, L, args):
    return affine_energy(m, C, U, z0, L, _energy.gaussian_energy, args)


@jit
def framed_linear_energy(m, C, U, z0, L, args):
    return affine_energy(m, C, U, z0, L, _energy.linear_energy, args)


@jit
def framed_logistic_energy(m, C, U, z0, L, args):
    return affine_energy(m, C, U, z0, L, _energy.logistic_energy, args)


@jit
def framed_hierarchical_energy(m, C, U, z0, L, args):
    return affine_energy(m, C, U, z0, L, _energy.hierarchical_energy, args)


@jit
def framed_cosine_energy(m, C, U, z0, L, args):
    return affine_energy(m, C, U, z0, L, _energy.cosine_energy, args)


@jit
def framed_gaussian_neglogp(Z, z0, L, args):
    return affine_neglogp(Z, z0, L, _neglogp.gaussian_neglogp, args)


@jit
def framed_linear_neglogp(Z, z0, L, args):
    return affine_neglogp(Z, z0, L, _neglogp.linear_neglogp, args)


@jit
def framed_logistic_neglogp(Z, z0, L, args):
    return affine_neglogp(Z, z0, L, _neglogp.logistic_neglogp, args)


@jit
def framed_hierarchical_neglogp(Z, z0, L, args):
    return affine_neglogp(Z, z0, L, _neglogp.hierarchical_neglogp, args)


@jit
def framed_cosine_neglogp(Z, z0, L, args):
    return affine_neglogp(Z, z0, L, _neglogp.cosine_neglogp, args)


#: base energy kernel -> its framed kernel ``(m, C, U, z0, L, args)``, the cached ``affine_energy`` of that kernel
FRAMED_ENERGY = {
    _energy.gaussian_energy: framed_gaussian_energy,
    _energy.linear_energy: framed_linear_energy,
    _energy.logistic_energy: framed_logistic_energy,
    _energy.hierarchical_energy: framed_hierarchical_energy,
    _energy.cosine_energy: framed_cosine_energy,
}
#: base -log p kernel -> its framed kernel ``(Z, z0, L, args)``, the cached ``affine_neglogp`` of that kernel
FRAMED_NEGLOGP = {
    _neglogp.gaussian_neglogp: framed_gaussian_neglogp,
    _neglogp.linear_neglogp: framed_linear_neglogp,
    _neglogp.logistic_neglogp: framed_logistic_neglogp,
    _neglogp.hierarchical_neglogp: framed_hierarchical_neglogp,
    _neglogp.cosine_neglogp: framed_cosine_neglogp,
}


@jit
def affine_callable_neglogp(Z, z0, L, logp):
    """``affine_neglogp`` for a ``CallableTarget``'s numba ``logp(z) -> float`` at the address ``logp``."""
    return callable_neglogp(_frame_points(Z, z0, L), logp)


@jit
def batch_energy(m, C, U, grad_batch):
    """The energy gradient from a numba-compiled ``grad_batch(Z) -> (S, d)`` at the address ``grad_batch``
    (:func:`refvi.kernels.userfn.address`): one call for all rows of Z."""
    Z = np.ascontiguousarray(transform(m, C, U))
    G = grad_batch_function(grad_batch)(Z)
    if G.shape != Z.shape:
        raise ValueError("user grad_batch must return an array of the shape of Z, (S, dim)")
    return mean_outer(-G, U)


@jit
def batch_neglogp(Z, logp_batch):
    """-log p on the rows of Z from a numba-compiled ``logp_batch(Z) -> (S,)`` at the address ``logp_batch``."""
    v = logp_batch_function(logp_batch)(np.ascontiguousarray(Z))
    if v.shape != (Z.shape[0],):
        raise ValueError("user logp_batch must return an array of shape (S,) for Z of shape (S, dim)")
    return -v


@jit
def affine_batch_energy(m, C, U, z0, L, grad_batch):
    """``affine_energy`` of :func:`batch_energy` (a user's batched ``grad_batch`` at its address), a cached kernel:
    one sample through its one point (no d x d x d product), several through (z0 + L m, L C) in one batched call."""
    if U.shape[0] == 1:
        d = U.shape[1]
        gm, _ = batch_energy(_one_point(m, C, U[0], z0, L), np.zeros((d, d)), U, grad_batch)
        return _one_point_out(gm, U[0], L)
    mz, Cz = _frame_in(m, C, z0, L)
    gm, gC = batch_energy(mz, Cz, U, grad_batch)
    return _frame_out(gm, gC, L)


@jit
def affine_batch_neglogp(Z, z0, L, logp_batch):
    """:func:`batch_neglogp` through the frame: a user's batched ``logp_batch`` at its address, a cached kernel."""
    return batch_neglogp(_frame_points(Z, z0, L), logp_batch)

"""Fused energy-gradient kernels, one per built-in target (seed 000 Eq. 6).

Each ``<target>_energy(m, C, U, ...)`` returns the mean over the rows u_s of U (S x d, pre-drawn base samples) of
g_energy(u_s) = (-grad log p(z_s), -grad log p(z_s) u_s^T) with z_s = C u_s + m, as ``(gm, gC_raw)`` where
``gC_raw`` is NOT yet projected onto V (use :func:`refvi.kernels.structure.project_V`).  Every kernel is a pure
function of its arrays (C-contiguous float64), so the same U gives bit-identical output, and all compose inside
other ``@njit`` code.  Inputs are assumed valid: :mod:`refvi.estimators` validates before calling.

Target parameters (the kernels take raw arrays, not target objects):

* Gaussian          ``mean`` (d,), ``precision`` (d, d):     -grad log p(z) = P (z - mean)
* LinearRegression  ``X`` (N, d), ``y``, 1/noise^2, 1/prior^2: -grad log p(z) = X^T (X z - y)/noise^2 + z/prior^2
* LogisticRegression ``X``, ``y`` in {-1,+1}, 1/prior^2:      -grad log p(z) = z/prior^2 - X^T (y * sigmoid(-y X z))
* HierarchicalLogisticRegression ``X``, ``y``, ``groups`` (int64), block d, prior precision P ((G+1)d square):
  -grad log p(z) = P z - sum_n y_n sigmoid(-y_n x_n^T z_{g(n)}) x_n placed in block g(n) + 1
* CosineQuadratic   alpha, ``b``, phi, beta, ``z0``:          -grad log p(z) = -alpha sin(b^T z + phi) b + beta (z - z0)
* CallableTarget    a numba-compiled ``grad_logp(z) -> (d,)``, passed as the address of its compiled code
  (:func:`refvi.kernels.userfn.address`), so these kernels are cached like the others.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.kernels._fastmath_exp import sigmoid_neg
from refvi.kernels._jit import jit, jit_reduce
from refvi.kernels.userfn import grad_function


@jit_reduce
def transform(m, C, U):
    """Z = U C^T + m, rows z_s = C u_s + m (S x d)."""
    S, d = U.shape
    if S == 1:
        Z = np.empty((1, d))
        for i in range(d):
            acc = 0.0
            for j in range(d):
                acc += C[i, j] * U[0, j]
            Z[0, i] = acc + m[i]
        return Z
    Z = np.dot(U, C.T)
    for s in range(S):
        for i in range(d):
            Z[s, i] += m[i]
    return Z


@jit
def mean_outer(Gneg, U):
    """(mean_s g_s, mean_s g_s u_s^T) for the rows g_s of Gneg and u_s of U."""
    S, d = U.shape
    gm = np.zeros(d)
    if S == 1:
        gC = np.empty((d, d))
        for i in range(d):
            gm[i] = Gneg[0, i]
            for j in range(d):
                gC[i, j] = Gneg[0, i] * U[0, j]
        return gm, gC
    for s in range(S):
        for i in range(d):
            gm[i] += Gneg[s, i]
    gm /= S
    gC = np.dot(Gneg.T, U) / S
    return gm, gC


@jit
def gaussian_energy(m, C, U, mean, precision):
    """Gaussian target N(mean, precision^{-1})."""
    Z = transform(m, C, U)
    S, d = Z.shape
    for s in range(S):
        for i in range(d):
            Z[s, i] -= mean[i]
    return mean_outer(np.dot(Z, precision), U)


@jit_reduce
def linear_energy(m, C, U, X, y, inv_noise_var, inv_prior_var):
    """Bayesian linear regression, y_n ~ N(x_n^T z, noise^2), z ~ N(0, prior^2 I)."""
    N, d = X.shape
    Z = transform(m, C, U)
    S = Z.shape[0]
    if S == 1:  # one fused pass over the rows of X, no temporaries
        z = Z[0]
        g = np.empty((1, d))
        for j in range(d):
            g[0, j] = z[j] * inv_prior_var
        for n in range(N):
            t = 0.0
            for j in range(d):
                t += X[n, j] * z[j]
            r = (t - y[n]) * inv_noise_var
            for j in range(d):
                g[0, j] += r * X[n, j]
        return mean_outer(g, U)
    L = np.dot(X, Z.T)  # N x S
    for n in range(N):
        for s in range(S):
            L[n, s] = (L[n, s] - y[n]) * inv_noise_var
    G = np.dot(L.T, X)  # S x d
    for s in range(S):
        for j in range(d):
            G[s, j] += Z[s, j] * inv_prior_var
    return mean_outer(G, U)


@jit_reduce
def logistic_energy(m, C, U, X, y, inv_prior_var):
    """Bayesian logistic regression, p(y_n | z) = sigmoid(y_n x_n^T z), z ~ N(0, prior^2 I), y_n in {-1, +1}."""
    N, d = X.shape
    Z = transform(m, C, U)
    S = Z.shape[0]
    if S == 1:
        return mean_outer(_logistic_grad_one(Z[0], X, y, inv_prior_var), U)
    L = np.dot(X, Z.T)  # logits, N x S
    for n in range(N):
        yn = y[n]
        for s in range(S):
            L[n, s] = yn * sigmoid_neg(yn * L[n, s])
    G = np.dot(L.T, X)  # R^T X, S x d
    for s in range(S):
        for j in range(d):
            G[s, j] = Z[s, j] * inv_prior_var - G[s, j]
    return mean_outer(G, U)


_BLOCK = 16  # rows of X per block in the S = 1 logistic pass (16 x d doubles stay in L1 between the sweeps)


@jit_reduce
def _logistic_grad_one(z, X, y, inv_prior_var):
    """-grad log p(z) for one z, in one pass over X: per block of 16 rows, the 16 dots, a vectorized sigmoid on
    the 16 logits, then the 16 axpys (4 rows per sweep over g).  The block buffer is the only temporary."""
    N, d = X.shape
    g = np.empty((1, d))
    for j in range(d):
        g[0, j] = z[j] * inv_prior_var
    r = np.zeros(_BLOCK)
    for n0 in range(0, N, _BLOCK):
        nb = min(_BLOCK, N - n0)
        for i in range(nb):
            t = 0.0
            for j in range(d):
                t += X[n0 + i, j] * z[j]
            r[i] = y[n0 + i] * t
        for i in range(nb):
            r[i] = y[n0 + i] * sigmoid_neg(r[i])
        if nb == _BLOCK:
            for i in range(0, _BLOCK, 4):
                n, r0, r1, r2, r3 = n0 + i, r[i], r[i + 1], r[i + 2], r[i + 3]
                for j in range(d):
                    g[0, j] -= r0 * X[n, j] + r1 * X[n + 1, j] + r2 * X[n + 2, j] + r3 * X[n + 3, j]
        else:
            for i in range(nb):
                ri = r[i]
                for j in range(d):
                    g[0, j] -= ri * X[n0 + i, j]
    return g


@jit_reduce
def hierarchical_energy(m, C, U, X, y, groups, prior_precision):
    """Hierarchical logistic regression on z = (theta, z_0, ..., z_{G-1}); row n uses block groups[n] + 1."""
    N, d = X.shape
    Z = transform(m, C, U)
    S = Z.shape[0]
    Gneg = np.dot(Z, prior_precision)
    for s in range(S):
        for n in range(N):
            off = (groups[n] + 1) * d
            t = 0.0
            for j in range(d):
                t += X[n, j] * Z[s, off + j]
            r = y[n] * sigmoid_neg(y[n] * t)
            for j in range(d):
                Gneg[s, off + j] -= r * X[n, j]
    return mean_outer(Gneg, U)


@jit_reduce
def cosine_energy(m, C, U, alpha, b, phi, beta, z0):
    """-log p(z) = alpha cos(b^T z + phi) + beta/2 ||z - z0||^2."""
    Z = transform(m, C, U)
    S, d = Z.shape
    G = np.empty((S, d))
    for s in range(S):
        t = phi
        for j in range(d):
            t += b[j] * Z[s, j]
        a = alpha * math.sin(t)
        for j in range(d):
            G[s, j] = beta * (Z[s, j] - z0[j]) - a * b[j]
    return mean_outer(G, U)


@jit
def callable_grad_rows(Z, grad):
    """grad log p on every row of Z (C-contiguous), from a numba-compiled ``grad_logp(z) -> (d,)`` at the address
    ``grad`` (:func:`refvi.kernels.userfn.address`) called once per row in-kernel.

    Raises ValueError if the user function returns a wrong shape; a non-finite value is passed on (the caller
    reports it: the estimator as ``NonFiniteError``, the fused loop as divergence at that step)."""
    grad_logp = grad_function(grad)
    S, d = Z.shape
    G = np.empty((S, d))
    for s in range(S):
        g = np.asarray(grad_logp(Z[s]), dtype=np.float64)
        if g.ndim != 1 or g.shape[0] != d:
            raise ValueError("user grad_logp must return an array of shape (dim,)")
        for j in range(d):
            G[s, j] = g[j]
    return G


@jit
def callable_energy(m, C, U, grad):
    """The energy gradient of a user target whose ``grad_logp(z) -> (d,)`` is itself numba-compiled, at the address
    ``grad`` (:func:`callable_grad_rows` on the rows of Z = U C^T + m)."""
    return mean_outer(-callable_grad_rows(transform(m, C, U), grad), U)

"""-log p(z_s) for each row z_s of Z (S x d), one kernel per built-in target (used by the score estimator).

``const`` is the target's normalizing constant (log p = const + the z-dependent part); see
the target's :meth:`~refvi.targets.base.Target.kernels` (its ``neglogp`` entry) for how it is computed from the
target's public attributes.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.kernels._fastmath_exp import log1pexp
from refvi.kernels._jit import jit, jit_reduce
from refvi.kernels.userfn import logp_function


@jit
def gaussian_neglogp(Z, mean, precision, const):
    S, d = Z.shape
    D = Z - mean
    Q = np.dot(D, precision)
    f = np.empty(S)
    for s in range(S):
        acc = 0.0
        for j in range(d):
            acc += Q[s, j] * D[s, j]
        f[s] = 0.5 * acc - const
    return f


@jit_reduce
def linear_neglogp(Z, X, y, inv_noise_var, inv_prior_var, const):
    S, d = Z.shape
    L = np.dot(X, Z.T)
    f = np.empty(S)
    for s in range(S):
        rss = 0.0
        for n in range(X.shape[0]):
            r = y[n] - L[n, s]
            rss += r * r
        zz = 0.0
        for j in range(d):
            zz += Z[s, j] * Z[s, j]
        f[s] = 0.5 * rss * inv_noise_var + 0.5 * zz * inv_prior_var - const
    return f


@jit_reduce
def logistic_neglogp(Z, X, y, inv_prior_var, const):
    S, d = Z.shape
    L = np.dot(Z, X.T)  # (S, N): row s contiguous, so the loop over n vectorizes
    f = np.empty(S)
    for s in range(S):
        acc = 0.0
        row = L[s]
        for n in range(X.shape[0]):
            acc += log1pexp(-y[n] * row[n])
        zz = 0.0
        for j in range(d):
            zz += Z[s, j] * Z[s, j]
        f[s] = acc + 0.5 * zz * inv_prior_var - const
    return f


@jit_reduce
def hierarchical_neglogp(Z, X, y, groups, prior_precision, const):
    S = Z.shape[0]
    N, d = X.shape
    Q = np.dot(Z, prior_precision)
    f = np.empty(S)
    for s in range(S):
        acc = 0.0
        for i in range(Z.shape[1]):
            acc += 0.5 * Q[s, i] * Z[s, i]
        for n in range(N):
            off = (groups[n] + 1) * d
            t = 0.0
            for j in range(d):
                t += X[n, j] * Z[s, off + j]
            acc += log1pexp(-y[n] * t)
        f[s] = acc - const
    return f


@jit_reduce
def cosine_neglogp(Z, alpha, b, phi, beta, z0):
    S, d = Z.shape
    f = np.empty(S)
    for s in range(S):
        t = phi
        dd = 0.0
        for j in range(d):
            t += b[j] * Z[s, j]
            dj = Z[s, j] - z0[j]
            dd += dj * dj
        f[s] = alpha * math.cos(t) + 0.5 * beta * dd
    return f


@jit
def callable_neglogp(Z, logp_address):
    """-log p on the rows of Z (C-contiguous) from a numba-compiled ``logp(z) -> float`` at ``logp_address``
    (:func:`refvi.kernels.userfn.address`)."""
    logp = logp_function(logp_address)
    S = Z.shape[0]
    f = np.empty(S)
    for s in range(S):
        v = float(logp(Z[s]))
        if not math.isfinite(v):
            raise ValueError("logp returned non-finite values at the sampled points")
        f[s] = -v
    return f

"""Prox and projection kernels (seed 000 Lemmas 31, 32; seed 002 Thm 7).  Inputs are validated by refvi.prox."""

from __future__ import annotations

import math

import numba
import numpy as np

from refvi.kernels._jit import jit


@numba.njit(cache=True, inline="always", error_model="numpy")
def prox_root(c, gamma, two_root_gamma):
    """The root p > 0 of p^2 - c p - gamma = 0 (one diagonal entry of :func:`entropy_prox`), two_root_gamma =
    2 sqrt(gamma) computed once by the caller; written out where :func:`entropy_prox` explains it.  Inlined into
    each caller (the framed loop too), so it compiles with that caller's flags."""
    r = math.hypot(c, two_root_gamma)
    return 0.5 * c + 0.5 * r if c >= 0.0 else gamma / (0.5 * r - 0.5 * c)


@jit
def entropy_prox(C, gamma):
    """prox_{gamma h}(C), h = -sum_i log C_ii, on lower-triangular C (seed 000 Lemma 31):
    off-diagonal entries unchanged, C_ii -> (C_ii + sqrt(C_ii^2 + 4 gamma)) / 2.

    Evaluated without cancellation: for c < 0 the same root is gamma / ((sqrt(c^2 + 4 gamma) - c) / 2) (the printed
    form returns 0 for c = -1e8, gamma = 1e-2, whose root is 1e-10), sqrt(c^2 + 4 gamma) = hypot(c, 2 sqrt(gamma)),
    and the halves are taken before the sums (2 gamma and r - c overflow for gamma or -c above 9e307, where the
    root is finite: gamma = 1e308, c = -1e296 gives 1e12)."""
    out = C.copy()
    two_root_gamma = 2.0 * math.sqrt(gamma)
    for i in range(C.shape[0]):
        out[i, i] = prox_root(C[i, i], gamma, two_root_gamma)
    return out


@jit
def project_wm_sym(C, M):
    """Projection of symmetric C onto W_M = {lambda_min(C) >= 1/sqrt(M)} (seed 000 Lemma 32): eigh, clip, rebuild.
    Reads only the lower triangle of C."""
    lam, Q = np.linalg.eigh(C)
    floor = 1.0 / math.sqrt(M)
    d = lam.shape[0]
    k = 0
    while k < d and lam[k] < floor:  # eigenvalues ascend: only the first k are clipped
        k += 1
    if k == 0:
        return C.copy()
    if -lam[0] > 4.0 * max(lam[d - 1], floor):
        # the update below carries rounding of order eps |lam_min|; when the clipped eigenvalues dominate, rebuild
        # Q max(lam, floor) Q^T instead, whose rounding is of order eps max(lam_max, floor)
        Qs = Q * np.maximum(lam, floor)
        out = np.dot(Qs, Q.T)
        return 0.5 * (out + out.T)
    # C + Q_k (floor - lam_k) Q_k^T: a rank-k update touches d^2 k flops instead of d^3
    out = C.copy()
    W = np.empty((d, k))
    for j in range(k):
        delta = floor - lam[j]
        for i in range(d):
            W[i, j] = Q[i, j] * delta
    out += np.dot(W, np.ascontiguousarray(Q[:, :k]).T)
    return 0.5 * (out + out.T)


@jit
def project_singular(C, M):
    """Seed 002 Thm 7: C = U S V^T -> U max(S, 1/sqrt(M)) V^T, applied as the rank-k correction
    C + U_k (1/sqrt(M) - S_k) V_k^T over the k clipped singular values (C itself when none is clipped)."""
    U, s, Vt = np.linalg.svd(C)
    floor = 1.0 / math.sqrt(M)
    d = s.shape[0]
    k0 = d
    while k0 > 0 and s[k0 - 1] < floor:  # singular values descend: the last d - k0 are clipped
        k0 -= 1
    if k0 == d:
        return C.copy()
    W = np.empty((d, d - k0))
    for j in range(k0, d):
        delta = floor - s[j]
        for i in range(d):
            W[i, j - k0] = U[i, j] * delta
    return C + np.dot(W, np.ascontiguousarray(Vt[k0:, :]))

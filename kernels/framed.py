"""Prox-SGD (seed 000 Def. 5) with the energy estimator (Eq. 6) in a lower-triangular affine frame, O(S d^2) a step.

``refvi.fit`` runs Prox-SGD on the framed target p_x(x) = p(z0 + L x) (:mod:`refvi.optim.frame`), with L lower
triangular with a positive diagonal (the Laplace frame's Cholesky factor) and C lower triangular.  Done through the
generic energy kernel, a step forms L C (d^3 flops) or, with one sample, allocates and fills d x d temporaries
several times.  This loop does the same step with only the O(S d^2) arithmetic it needs, on the built-in targets of
:mod:`refvi.kernels.optim` (Gaussian, linear and logistic regression, by target code) and on a user's
``CallableTarget`` whose ``grad_logp`` of one point is ``numba.njit`` code (code ``USER``, the gradient called at the
address of its compiled code, :mod:`refvi.kernels.userfn`):

1. x_s = C u_s + m and z_s = z0 + L x_s (two triangular matrix-vector products per sample);
2. g_s = -grad log p(z_s) (:func:`neg_grad_rows`), then the frame's chain rule gx_s = L^T g_s (seed 000 Eq. 6 for
   p_x: grad_x log p_x = L^T grad_z log p);
3. m' = m - gamma mean_s gx_s; C' = prox_{gamma h}(C - gamma tril(mean_s gx_s u_s^T)) (Lemma 31: only the diagonal
   changes under the prox);
4. the averages gain weights[t + 1] w^{t+1} (skipped when the weight is 0: the first half of a tail average).

Steps 3 and 4 and the next step's x_s = C' u_s + m' are one pass over the lower triangle of C, so a step reads C,
L (twice) and the data once: the floor of a dense Gaussian step is reading the data for the gradient and updating C.
If any of gx, m' or the proximal diagonal would not be finite, the loop returns the step index t with m, C still
holding w^t (the generic path's divergence), checked before anything is written: the rank-S update cannot
overflow when ``max|C| + gamma max_s |gx_s|_inf |u_s|_inf`` stays below 1e300, which the loop checks too (it returns t
otherwise: a step that large has already left every region where the theory applies).

The result equals the generic path (:func:`refvi.optim.fastpath.generic_step` on the framed target) up to rounding
(the sums are ordered differently): ``tests/kernels/test_framed_loop.py`` holds it to a NumPy reference at 1e-12.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.kernels._fastmath_exp import sigmoid_neg
from refvi.kernels._jit import jit_reduce
from refvi.kernels.optim import GAUSSIAN, LINEAR
from refvi.kernels.prox import prox_root
from refvi.kernels.userfn import grad_function

_BIG = 1e300
#: the target code of a user's per-point numba gradient (the built-in codes of refvi.kernels.optim are >= 0)
USER = -1


@jit_reduce
def neg_grad_rows(target, Z, G, P2, P1, s1, s2, grad):
    """G[s] = -grad log p(Z[s]) for a built-in target code (the parameter slots of :mod:`refvi.kernels.optim`), or
    for ``USER`` the user's gradient at the address ``grad``."""
    S, d = Z.shape
    if target == USER:
        grad_logp = grad_function(grad)
        for s in range(S):
            g = grad_logp(Z[s])
            if g.shape[0] != d:
                raise ValueError("user grad_logp must return an array of shape (dim,)")
            for j in range(d):
                G[s, j] = -g[j]
        return
    if target == GAUSSIAN:  # P2 = precision, P1 = mean: P (z - mean)
        for s in range(S):
            for i in range(d):
                acc = 0.0
                for j in range(d):
                    acc += P2[i, j] * (Z[s, j] - P1[j])
                G[s, i] = acc
        return
    N = P2.shape[0]
    for s in range(S):
        for j in range(d):
            G[s, j] = Z[s, j] * (s2 if target == LINEAR else s1)
    for n in range(N):  # one pass over the rows of X for all samples
        for s in range(S):
            t = 0.0
            for j in range(d):
                t += P2[n, j] * Z[s, j]
            if target == LINEAR:  # X = P2, y = P1, s1 = 1/noise^2, s2 = 1/prior^2
                r = (t - P1[n]) * s1
            else:  # logistic: X = P2, y = P1 in {-1, +1}, s1 = 1/prior^2
                r = -P1[n] * sigmoid_neg(P1[n] * t)
            for j in range(d):
                G[s, j] += r * P2[n, j]


@jit_reduce
def _lower_affine_rows(b, A, X, Y):
    """Y[s] = b + A X[s] for A lower triangular (the point C u + m, and the frame's z0 + L x)."""
    S, d = X.shape
    for s in range(S):
        for i in range(d):
            acc = b[i]
            for k in range(i + 1):
                acc += A[i, k] * X[s, k]
            Y[s, i] = acc


@jit_reduce
def _points(m, C, U, z0, L, X, Z):
    """X[s] = C u_s + m, Z[s] = z0 + L X[s] (C, L lower triangular)."""
    _lower_affine_rows(m, C, U, X)
    _lower_affine_rows(z0, L, X, Z)


@jit_reduce
def framed_prox_loop(target, m, C, U, gammas, weights, acc_m, acc_C, z0, L, P2, P1, s1, s2, grad):
    """Run len(gammas) Prox-SGD steps in the frame (see the module docstring); -1, or the first step whose update is
    not finite (m, C then hold the last finite state).  C, L lower triangular; only lower triangles are read and
    written (the upper triangles of C and acc_C stay as they are: zero).  ``grad`` is the address of the user's
    gradient for ``target == USER`` and is not read otherwise."""
    T, S, d = U.shape
    X = np.empty((S, d))
    Z = np.empty((S, d))
    G = np.empty((S, d))
    GX = np.empty((S, d))
    gm = np.empty(d)
    inv_s = 1.0 / S
    if T == 0:
        return -1
    cmax = 0.0
    for i in range(d):
        for j in range(i + 1):
            cmax = max(cmax, abs(C[i, j]))
    _points(m, C, U[0], z0, L, X, Z)
    for t in range(T):
        gamma = gammas[t]
        neg_grad_rows(target, Z, G, P2, P1, s1, s2, grad)
        # gx_s = L^T g_s: row i of L scaled by g_s[i], added into gx_s[:i+1] (row-wise access of L)
        for s in range(S):
            for k in range(d):
                GX[s, k] = 0.0
            for i in range(d):
                gi = G[s, i]
                for k in range(i + 1):
                    GX[s, k] += L[i, k] * gi
        gmax = 0.0
        umax = 0.0
        finite = True
        for k in range(d):
            acc = 0.0
            for s in range(S):
                acc += GX[s, k]
                gmax = max(gmax, abs(GX[s, k]))
                umax = max(umax, abs(U[t, s, k]))
            gm[k] = acc * inv_s
            if not math.isfinite(acc):
                finite = False
        if not finite or not math.isfinite(gamma * gmax) or cmax + gamma * gmax * umax * S >= _BIG:
            return t
        for i in range(d):
            if not math.isfinite(m[i] - gamma * gm[i]):
                return t
        w = weights[t + 1]
        nxt = t + 1 < T
        two_root_gamma = 2.0 * math.sqrt(gamma)
        cmax = 0.0
        for i in range(d):
            mi = m[i] - gamma * gm[i]
            m[i] = mi
            # row i of Y = C - gamma tril(mean_s gx_s u_s^T); the prox (Lemma 31) changes its diagonal only
            for s in range(S):  # s outside, j inside: a vectorized axpy over the row
                a = gamma * inv_s * GX[s, i]
                for j in range(i + 1):
                    C[i, j] -= a * U[t, s, j]
            C[i, i] = prox_root(C[i, i], gamma, two_root_gamma)
            for j in range(i + 1):  # a compare-and-select, which vectorizes where max() does not
                a = abs(C[i, j])
                cmax = a if a > cmax else cmax
            if w != 0.0:
                acc_m[i] += w * mi
                for j in range(i + 1):
                    acc_C[i, j] += w * C[i, j]
            if nxt:  # the next step's x_s = C' u_s + m', row i, while row i of C' is in cache
                for s in range(S):
                    acc = mi
                    for j in range(i + 1):
                        acc += C[i, j] * U[t + 1, s, j]
                    X[s, i] = acc
        if nxt:
            _lower_affine_rows(z0, L, X, Z)
    return -1

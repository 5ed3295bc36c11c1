"""Numba kernels for boosting VI by Frank-Wolfe (seed 001, Locatello et al.).

Atoms are truncated Gaussians TN(mu, diag(sigma^2); A) on a box A = [lo, hi] (seed 001 §3, Thm 8).  Everything the
exact algorithms need is evaluated on fixed quadrature nodes z_n with weights w_n:

* ``tn_log_normalizer``  log Z(mu, sigma) = sum_j log(Phi(b_j) - Phi(a_j)), a_j = (lo_j - mu_j)/sigma_j, ...
* ``atom_table``         T[k, n] = s_k(z_n), the atom densities on the nodes;
* ``exact_lmo``          argmin_k <s_k, v> = argmin_k (T v)_k with v = w * grad f(q) on the nodes (Eq. 8);
* ``gram_matrix``        closed-form L2 inner products <s_i, s_j> of truncated Gaussians;
* ``mixture_on_nodes``   q(z_n) = sum_k alpha_k T[k, n];
* ``kl_on_nodes``        sum_n w_n q_n (log q_n - log p_n) (f(q) up to the quadrature error);
* ``kl_line_search``     argmin_{gamma in [0,1]} f((1 - gamma) q + gamma s) ("line search on the original
  objective");
* ``qp_simplex``         min 1/2 a^T H a + b^T a over the simplex (primal active set; Alg 3 Variant 0 and the Newton
  sub-problem of Variant 1).

Kernels assume validated input (see :mod:`refvi.boosting`), take C-contiguous float64 arrays and are composable.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.kernels._jit import jit, jit_reduce

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@jit
def log_ndtr_diff(a, b):
    """log(Phi(b) - Phi(a)) for a < b, accurate in both tails (erfc of the side away from the mass)."""
    if a >= 0.0:
        return math.log(0.5 * (math.erfc(a / _SQRT2) - math.erfc(b / _SQRT2)))
    if b <= 0.0:
        return math.log(0.5 * (math.erfc(-b / _SQRT2) - math.erfc(-a / _SQRT2)))
    return math.log1p(-0.5 * math.erfc(-a / _SQRT2) - 0.5 * math.erfc(b / _SQRT2))


@jit
def tn_log_normalizer(mu, sigma, lo, hi):
    """log P(N(mu, diag sigma^2) in [lo, hi]) for one atom (vectors of length d)."""
    out = 0.0
    for j in range(mu.shape[0]):
        out += log_ndtr_diff((lo[j] - mu[j]) / sigma[j], (hi[j] - mu[j]) / sigma[j])
    return out


@jit
def tn_log_normalizers(means, scales, lo, hi):
    """log Z for each of K atoms (rows of means / scales)."""
    K = means.shape[0]
    out = np.empty(K)
    for k in range(K):
        out[k] = tn_log_normalizer(means[k], scales[k], lo, hi)
    return out


@jit
def atom_table(means, scales, lo, hi, nodes):
    """T[k, n] = s_k(z_n) for K atoms and Q nodes (nodes inside the box)."""
    K = means.shape[0]
    Q = nodes.shape[0]
    d = nodes.shape[1]
    T = np.empty((K, Q))
    for k in range(K):
        c = -tn_log_normalizer(means[k], scales[k], lo, hi)
        for j in range(d):
            c -= math.log(scales[k, j]) + _LOG_SQRT_2PI
        for n in range(Q):
            e = c
            for j in range(d):
                t = (nodes[n, j] - means[k, j]) / scales[k, j]
                e -= 0.5 * t * t
            T[k, n] = math.exp(e)
    return T


@jit_reduce
def exact_lmo(T, v):
    """(argmin_k score_k, scores) with score_k = sum_n T[k, n] v[n]: the exact LMO over the K atoms of T (Eq. 8).

    The scores are one BLAS matrix-vector product (the memory-bound K x Q pass, threaded like NumPy's), then one
    pass for the argmin (first minimizer on ties)."""
    scores = np.dot(T, v)
    best = 0
    for k in range(scores.shape[0]):
        if scores[k] < scores[best]:
            best = k
    return best, scores


@jit
def _log_gauss_overlap(mi, si, mj, sj, lo, hi):
    """log of int_lo^hi N(z; mi, si^2) N(z; mj, sj^2) dz in one dimension."""
    v = si * si + sj * sj
    dm = mi - mj
    log_peak = -0.5 * dm * dm / v - 0.5 * math.log(v) - _LOG_SQRT_2PI
    m = (mi * sj * sj + mj * si * si) / v
    s = si * sj / math.sqrt(v)
    return log_peak + log_ndtr_diff((lo - m) / s, (hi - m) / s)


@jit
def gram_matrix(means, scales, lo, hi):
    """G[i, j] = <s_i, s_j>_{L2(A)} of truncated Gaussians, closed form (product over dimensions)."""
    K = means.shape[0]
    d = means.shape[1]
    logz = tn_log_normalizers(means, scales, lo, hi)
    G = np.empty((K, K))
    for i in range(K):
        for j in range(i + 1):
            acc = -logz[i] - logz[j]
            for a in range(d):
                acc += _log_gauss_overlap(means[i, a], scales[i, a], means[j, a], scales[j, a], lo[a], hi[a])
            G[i, j] = math.exp(acc)
            G[j, i] = G[i, j]
    return G


@jit_reduce
def mixture_on_nodes(T, alpha):
    """q(z_n) = sum_k alpha_k T[k, n]."""
    Q = T.shape[1]
    q = np.zeros(Q)
    for k in range(T.shape[0]):
        a = alpha[k]
        if a != 0.0:
            for n in range(Q):
                q[n] += a * T[k, n]
    return q


@jit_reduce
def kl_on_nodes(q, logp, w):
    """sum_n w_n q_n (log q_n - log p_n): KL(q || p) for normalized p, KL - log p(x) for a joint."""
    acc = 0.0
    for n in range(q.shape[0]):
        acc += w[n] * q[n] * (math.log(q[n]) - logp[n])
    return acc


@jit_reduce
def _ls_derivs(q, s, logp, w, g):
    d1 = 0.0
    d2 = 0.0
    for n in range(q.shape[0]):
        diff = s[n] - q[n]
        y = q[n] + g * diff
        d1 += w[n] * diff * (math.log(y) - logp[n] + 1.0)
        d2 += w[n] * diff * diff / y
    return d1, d2


@jit
def kl_line_search(q, s, logp, w, tol=1e-14, max_iter=100):
    """argmin_{gamma in [0, 1]} phi(gamma), phi(gamma) = sum_n w_n y_n (log y_n - log p_n), y = q + gamma (s - q).

    phi is convex (phi'' = sum w (s - q)^2 / y >= 0); safeguarded Newton on phi' inside a shrinking bracket.
    """
    d0, _ = _ls_derivs(q, s, logp, w, 0.0)
    if d0 >= 0.0:
        return 0.0
    d1, _ = _ls_derivs(q, s, logp, w, 1.0)
    if d1 <= 0.0:
        return 1.0
    a = 0.0
    b = 1.0
    g = 0.5
    for _ in range(max_iter):
        f1, f2 = _ls_derivs(q, s, logp, w, g)
        if f1 > 0.0:
            b = g
        else:
            a = g
        if b - a <= tol:
            break
        gn = g - f1 / f2 if f2 > 0.0 else -1.0
        if not (a < gn < b):
            gn = 0.5 * (a + b)
        if abs(gn - g) <= tol * 0.5:
            g = gn
            break
        g = gn
    return g


@jit
def _eq_qp(H, b, free):
    """Minimize 1/2 x^T H x + b^T x on {sum x = 1, x_i = 0 for i not free}; least-squares KKT solve."""
    idx = np.nonzero(free)[0]
    m = idx.shape[0]
    A = np.zeros((m + 1, m + 1))
    r = np.zeros(m + 1)
    for i in range(m):
        for j in range(m):
            A[i, j] = H[idx[i], idx[j]]
        A[i, m] = 1.0
        A[m, i] = 1.0
        r[i] = -b[idx[i]]
    r[m] = 1.0
    sol = np.linalg.lstsq(A, r, -1.0)[0]
    x = np.zeros(H.shape[0])
    for i in range(m):
        x[idx[i]] = sol[i]
    return x, sol[m]


@jit
def qp_simplex(H, b, alpha0, tol=1e-12, max_iter=1000):
    """min 1/2 a^T H a + b^T a over the probability simplex, H symmetric PSD (primal active-set method).

    Starts from the feasible ``alpha0``; the working set holds the bounds a_i >= 0 that are active.  Returns
    (alpha, iterations).  KKT at exit: grad_i + nu >= -tol on the working set, alpha >= 0, sum alpha = 1.
    """
    n = H.shape[0]
    a = alpha0.copy()
    free = a > 0.0
    it = 0
    for it in range(max_iter):  # noqa: B007  (the iteration count is returned after the loop)
        x, nu = _eq_qp(H, b, free)
        # feasibility of the equality-constrained minimizer along the segment a -> x
        step = 1.0
        block = -1
        for i in range(n):
            if free[i] and x[i] < 0.0:
                t = a[i] / (a[i] - x[i])
                if t < step:
                    step = t
                    block = i
        if block >= 0:
            for i in range(n):
                a[i] = a[i] + step * (x[i] - a[i]) if free[i] else 0.0
            a[block] = 0.0
            free[block] = False
            continue
        for i in range(n):
            a[i] = x[i] if free[i] else 0.0
        # multipliers of the active bounds: lambda_i = (H a + b)_i + nu, must be >= 0
        g = H @ a + b
        worst = -tol * (1.0 + abs(nu))
        j = -1
        for i in range(n):
            if not free[i]:
                lam = g[i] + nu
                if lam < worst:
                    worst = lam
                    j = i
        if j < 0:
            break
        free[j] = True
    s = 0.0
    for i in range(n):
        if a[i] < 0.0:
            a[i] = 0.0
        s += a[i]
    for i in range(n):
        a[i] /= s
    return a, it + 1

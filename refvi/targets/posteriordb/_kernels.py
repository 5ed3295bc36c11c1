"""Numba log densities and gradients of the posteriordb models, on the unconstrained scale, batched over rows of Z.

Every kernel returns ``(logp, grad)`` of shapes (S,) and (S, d) for the rows of Z (S x d), all normalizing constants
of the priors and likelihoods included (as Stan's ``*_lpdf``), plus the log-Jacobian of each log transform.
Prior codes: 0 flat, 1 Normal(loc, scale), 2 Student-t(df, loc, scale), 3 Cauchy(loc, scale); a scale parameter
s = exp(t) takes the half version (twice the density on s > 0) of the same codes (loc must be 0 there).
"""

from __future__ import annotations

import math

import numpy as np

from refvi.kernels._jit import jit

LOG_2PI = math.log(2.0 * math.pi)
FLAT, NORMAL, STUDENT, CAUCHY = 0, 1, 2, 3


@jit
def prior_logpdf(kind, x, loc, scale, df):
    """(log density, d/dx) of the prior code ``kind`` at x."""
    if kind == FLAT:
        return 0.0, 0.0
    r = x - loc
    if kind == NORMAL:
        return -0.5 * (r / scale) ** 2 - math.log(scale) - 0.5 * LOG_2PI, -r / (scale * scale)
    if kind == STUDENT:
        q = r * r / (df * scale * scale)
        lp = (
            math.lgamma(0.5 * (df + 1.0))
            - math.lgamma(0.5 * df)
            - 0.5 * math.log(df * math.pi)
            - math.log(scale)
            - 0.5 * (df + 1.0) * math.log1p(q)
        )
        return lp, -(df + 1.0) * r / (df * scale * scale + r * r)
    # Cauchy
    return -math.log(math.pi * scale) - math.log1p((r / scale) ** 2), -2.0 * r / (scale * scale + r * r)


@jit
def log_scale_prior(kind, t, scale, df):
    """(log p(s) + log s, d/dt) at t = log s for the half prior ``kind`` on s (log-Jacobian included)."""
    s = math.exp(t)
    lp, g = prior_logpdf(kind, s, 0.0, scale, df)
    if kind != FLAT:
        lp += math.log(2.0)
    return lp + t, g * s + 1.0


@jit
def glm_normal(Z, A, b, yy, N, bkind, bloc, bscale, bdf, skind, sscale, sdf):
    """y ~ Normal(X beta, sigma) on z = (beta, log sigma), from the sufficient statistics A = X^T X, b = X^T y,
    yy = y^T y:  log lik = -N log sigma - (N/2) log 2 pi - (yy - 2 beta^T b + beta^T A beta) / (2 sigma^2).
    Priors on beta_j by code (``bkind[j]``, ``bloc``, ``bscale``, ``bdf``), half prior on sigma by code."""
    S, d = Z.shape
    D = d - 1
    lp = np.empty(S)
    G = np.empty((S, d))
    for s in range(S):
        t = Z[s, D]
        inv = math.exp(-2.0 * t)
        quad = yy
        for i in range(D):
            Ab = 0.0
            for j in range(D):
                Ab += A[i, j] * Z[s, j]
            quad += Z[s, i] * (Ab - 2.0 * b[i])
            G[s, i] = (b[i] - Ab) * inv
        quad = max(quad, 0.0)
        val = -N * t - 0.5 * N * LOG_2PI - 0.5 * quad * inv
        gt = quad * inv - N
        for i in range(D):
            pl, pg = prior_logpdf(bkind[i], Z[s, i], bloc[i], bscale[i], bdf[i])
            val += pl
            G[s, i] += pg
        pl, pg = log_scale_prior(skind, t, sscale, sdf)
        lp[s] = val + pl
        G[s, D] = gt + pg
    return lp, G


@jit
def eight_schools_nc(Z, y, sig):
    """Non-centred eight schools on z = (theta_trans[J], mu, log tau): theta_trans ~ N(0, 1), mu ~ N(0, 5),
    tau ~ half-Cauchy(0, 5), y_j ~ N(mu + tau theta_trans_j, sigma_j)."""
    S, d = Z.shape
    J = d - 2
    lp = np.empty(S)
    G = np.zeros((S, d))
    for s in range(S):
        mu, t = Z[s, J], Z[s, J + 1]
        tau = math.exp(t)
        val, gmu = prior_logpdf(NORMAL, mu, 0.0, 5.0, 0.0)
        pl, gt = log_scale_prior(CAUCHY, t, 5.0, 0.0)
        val += pl
        for j in range(J):
            th = Z[s, j]
            pl, gth = prior_logpdf(NORMAL, th, 0.0, 1.0, 0.0)
            r = y[j] - mu - tau * th
            ll = -0.5 * (r / sig[j]) ** 2 - math.log(sig[j]) - 0.5 * LOG_2PI
            w = r / (sig[j] * sig[j])  # d ll / d(theta_j) = w
            val += pl + ll
            G[s, j] = gth + w * tau
            gmu += w
            gt += w * th * tau
        lp[s] = val
        G[s, J] = gmu
        G[s, J + 1] = gt
    return lp, G


@jit
def _forward(L, b, x, n):
    """x[:n] = L[:n, :n]^{-1} b[:n] for lower-triangular L (forward substitution)."""
    for i in range(n):
        acc = b[i]
        for k in range(i):
            acc -= L[i, k] * x[k]
        x[i] = acc / L[i, i]


@jit
def _chol_lower(K):
    """The lower Cholesky factor of K, row by row: row i below the diagonal solves L[:i, :i] L[i, :i] = K[i, :i]."""
    n = K.shape[0]
    L = np.zeros((n, n))
    for i in range(n):
        _forward(L, K[i], L[i], i)
        acc = K[i, i]
        for k in range(i):
            acc -= L[i, k] * L[i, k]
        L[i, i] = math.sqrt(acc)
    return L


@jit
def _solve_lower(L, B):
    """L^{-1} B for lower-triangular L (B is n x m), a column at a time."""
    n, m = B.shape
    X = np.empty((n, m))
    for c in range(m):
        _forward(L, B[:, c], X[:, c], n)
    return X


@jit
def _chol_tangent(L, dK):
    """dL = L Phi(L^{-1} dK L^{-T}), Phi = lower triangle with the diagonal halved (derivative of the Cholesky
    factor along dK)."""
    n = L.shape[0]
    W = _solve_lower(L, dK)  # L^{-1} dK
    P = _solve_lower(L, W.T.copy())  # L^{-1} (L^{-1} dK)^T = L^{-1} dK L^{-T} (symmetric)
    for i in range(n):
        P[i, i] *= 0.5
        for j in range(i + 1, n):
            P[i, j] = 0.0
    return L @ P


@jit
def _gp_row(z, x, D2, E):
    """One row z = (log rho, log alpha, f_tilde) of the GP model: fill D2 = (x_i - x_j)^2 and E = exp(-D2 / (2 rho^2))
    (N x N, N = len(x)) and return (rho, alpha, L, f_tilde, f), L the lower Cholesky factor of the covariance
    K = alpha^2 E + 1e-10 I and f = L f_tilde."""
    N = x.shape[0]
    rho, alpha = math.exp(z[0]), math.exp(z[1])
    for i in range(N):
        for j in range(N):
            D2[i, j] = (x[i] - x[j]) ** 2
            E[i, j] = math.exp(-0.5 * D2[i, j] / (rho * rho))
    K = alpha * alpha * E
    for i in range(N):
        K[i, i] += 1e-10
    L = _chol_lower(K)
    ft = z[2:].copy()
    return rho, alpha, L, ft, L @ ft


@jit
def _gp_pois_value(lr, la, rho, ft, f, k, lgk):
    """(log p, d/d log alpha of the prior on alpha) of one row of :func:`gp_pois`, given f_tilde and f = L f_tilde:
    the one expression of the log density that :func:`gp_pois` and :func:`gp_pois_logp` share."""
    val = 25.0 * math.log(4.0) - math.lgamma(25.0) + 24.0 * lr - 4.0 * rho + lr  # Gamma + Jacobian
    pl, g_la = log_scale_prior(NORMAL, la, 2.0, 0.0)
    val += pl
    for i in range(f.shape[0]):
        val += -0.5 * ft[i] * ft[i] - 0.5 * LOG_2PI
        ef = math.exp(f[i])
        val += k[i] * f[i] - ef
    return val - lgk, g_la


@jit
def gp_pois(Z, x, k, lgk):
    """GP Poisson regression on z = (log rho, log alpha, f_tilde[N]): rho ~ Gamma(25, rate 4), alpha ~
    half-Normal(0, 2), f_tilde ~ N(0, I), f = chol(alpha^2 exp(-(x_i - x_j)^2 / (2 rho^2)) + 1e-10 I) f_tilde,
    k_i ~ Poisson(exp(f_i)); ``lgk`` = sum_i log k_i!."""
    S, d = Z.shape
    N = d - 2
    lp = np.empty(S)
    G = np.zeros((S, d))
    E = np.empty((N, N))
    D2 = np.empty((N, N))
    for s in range(S):
        rho, alpha, L, ft, f = _gp_row(Z[s], x, D2, E)
        val, g_la = _gp_pois_value(Z[s, 0], Z[s, 1], rho, ft, f, k, lgk)
        g_lr = 24.0 - 4.0 * rho + 1.0
        gf = np.empty(N)
        for i in range(N):
            gf[i] = k[i] - math.exp(f[i])
        gft = L.T @ gf
        for i in range(N):
            G[s, 2 + i] = gft[i] - ft[i]
        dL_a = _chol_tangent(L, 2.0 * alpha * alpha * E)  # dK / d log alpha
        dL_r = _chol_tangent(L, alpha * alpha * E * D2 / (rho * rho))  # dK / d log rho
        G[s, 0] = g_lr + gf @ (dL_r @ ft)
        G[s, 1] = g_la + gf @ (dL_a @ ft)
        lp[s] = val
    return lp, G


@jit
def gp_pois_logp(Z, x, k, lgk):
    """log p of :func:`gp_pois` alone (no Cholesky tangents: the objective trace needs no gradient), by the same
    functions, so the values are identical."""
    S, d = Z.shape
    N = d - 2
    lp = np.empty(S)
    E = np.empty((N, N))
    D2 = np.empty((N, N))
    for s in range(S):
        rho, _, _, ft, f = _gp_row(Z[s], x, D2, E)
        lp[s] = _gp_pois_value(Z[s, 0], Z[s, 1], rho, ft, f, k, lgk)[0]
    return lp


@jit
def gp_f(Z, x):
    """The constrained f = chol(K) f_tilde for each row of Z (the pushforward of the GP model)."""
    S, d = Z.shape
    N = d - 2
    F = np.empty((S, N))
    E = np.empty((N, N))
    D2 = np.empty((N, N))
    for s in range(S):
        F[s] = _gp_row(Z[s], x, D2, E)[4]
    return F

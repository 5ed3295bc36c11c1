"""Independent oracles for seed 004 (Wu & Gardner): Gaussian exponential-family quantities, the BLR posterior, a
numerical mirror-descent argmin, and exact enumeration of every mini-batch path of stochastic NGD.

Imports only numpy / scipy / sympy.  Every quantity is computed by a different road from refvi.ngvi:

* KL as cross-entropy minus entropy (scipy.stats), not the Cholesky closed form;
* A, A*, their gradients and the Fisher matrix by SymPy differentiation in minimal coordinates (d <= 2);
* the BLR posterior by Gaussian conditioning of the joint (z, y) (Woodbury form) and log p(y) by scipy.stats;
* the mirror-descent step by numerically minimizing <g, omega> + KL(omega, omega_t) / gamma (scipy.optimize);
* Theorem 1's expectation by depth-first enumeration of all batch paths, with moment-space recursions.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.stats
import sympy as sp

from refvi.verification.oracles.matrices import mean_and_log_cholesky

# ---------------------------------------------------------------------------------------------------------------
# Gaussians
# ---------------------------------------------------------------------------------------------------------------


def kl_gauss(mu1, S1, mu2, S2) -> float:
    """KL(N1 || N2) = cross-entropy(N1, N2) - entropy(N1) (scipy.stats entropy; LU solves)."""
    mu1, mu2 = np.asarray(mu1, float), np.asarray(mu2, float)
    S1, S2 = np.atleast_2d(np.asarray(S1, float)), np.atleast_2d(np.asarray(S2, float))
    d = mu1.size
    diff = mu2 - mu1
    _, logdet2 = np.linalg.slogdet(S2)
    ce = 0.5 * (
        np.trace(scipy.linalg.solve(S2, S1, assume_a="sym"))
        + diff @ scipy.linalg.solve(S2, diff)
        + logdet2
        + d * math.log(2 * math.pi)
    )
    h = scipy.stats.multivariate_normal(mean=mu1, cov=S1).entropy()
    return float(ce - h)


def moments_from_natural(lam, Lam):
    S = scipy.linalg.inv(-2.0 * np.asarray(Lam, float))
    S = 0.5 * (S + S.T)
    return S @ np.asarray(lam, float), S


def natural_from_moments(mu, S):
    P = scipy.linalg.inv(np.asarray(S, float))
    P = 0.5 * (P + P.T)
    return P @ np.asarray(mu, float), -0.5 * P


# ---------------------------------------------------------------------------------------------------------------
# symbolic A in minimal coordinates: theta = (lam, diag Lam, Lam_ij i<j), statistics (z, z_i^2, 2 z_i z_j)
# ---------------------------------------------------------------------------------------------------------------


def _minimal_symbols(d):
    lam = sp.symbols(f"l0:{d}", real=True)
    diag = sp.symbols(f"L0:{d}", real=True)
    off = sp.symbols(f"o0:{d * (d - 1) // 2}", real=True)
    Lam = sp.zeros(d, d)
    k = 0
    for i in range(d):
        Lam[i, i] = diag[i]
        for j in range(i + 1, d):
            Lam[i, j] = Lam[j, i] = off[k]
            k += 1
    return list(lam) + list(diag) + list(off), sp.Matrix(lam), Lam


@functools.cache
def symbolic_A(d: int):
    """Lambdified (A, grad A, Hess A) in minimal coordinates, from A = -1/4 lam^T Lam^{-1} lam - 1/2 logdet(-2 Lam)
    differentiated by SymPy (d in {1, 2})."""
    if d not in (1, 2):
        raise ValueError("symbolic oracle supports d in {1, 2}")
    theta, lam, Lam = _minimal_symbols(d)
    A = -sp.Rational(1, 4) * (lam.T * Lam.inv() * lam)[0, 0] - sp.Rational(1, 2) * sp.log((-2 * Lam).det())
    grad = [sp.diff(A, t) for t in theta]
    hess = [[sp.diff(g, t) for t in theta] for g in grad]
    f = sp.lambdify([theta], A, "numpy")
    g = sp.lambdify([theta], grad, "numpy")
    h = sp.lambdify([theta], hess, "numpy")
    return (
        lambda th: float(f(list(th))),
        lambda th: np.array(g(list(th)), float),
        lambda th: np.array(h(list(th)), float),
    )


@functools.cache
def _symbolic_blr_loss(d: int):
    """l^(n)(theta) for BLR with generic data summaries, as a lambdified gradient in theta.

    l = (1/(2 s2)) [-2 b^T xi + tr(G Xi)] + KL(q, N(mp, P)) + const with G = X^T X, b = X^T y."""
    theta, lam, Lam = _minimal_symbols(d)
    G = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"G{min(i, j)}{max(i, j)}", real=True))
    b = sp.Matrix(sp.symbols(f"b0:{d}", real=True))
    Pi = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"Q{min(i, j)}{max(i, j)}", real=True))  # P^{-1}
    mp = sp.Matrix(sp.symbols(f"m0:{d}", real=True))
    s2 = sp.Symbol("s2", positive=True)
    S = (-2 * Lam).inv()
    mu = S * lam
    Xi = S + mu * mu.T
    lik = (-2 * (b.T * mu)[0, 0] + (G * Xi).trace()) / (2 * s2)
    kl = sp.Rational(1, 2) * (
        (Pi * S).trace() + ((mp - mu).T * Pi * (mp - mu))[0, 0] - d - sp.log(Pi.det()) - sp.log(S.det())
    )
    loss = lik + kl
    params = list(G.free_symbols) + list(b) + list(Pi.free_symbols) + list(mp) + [s2]
    params = sorted(set(params), key=lambda s: s.name)
    grad = sp.lambdify([theta, params], [sp.diff(loss, t) for t in theta], "numpy")
    return grad, [p.name for p in params]


def blr_grad_theta(theta, X, y, sigma2, P, mp):
    """Gradient of the BLR negative ELBO with respect to the minimal natural coordinates (symbolic, d <= 2)."""
    X = np.asarray(X, float)
    d = X.shape[1]
    grad, names = _symbolic_blr_loss(d)
    G, b, Pi = X.T @ X, X.T @ np.asarray(y, float), scipy.linalg.inv(np.asarray(P, float))
    vals = {}
    for i in range(d):
        vals[f"b{i}"] = b[i]
        vals[f"m{i}"] = float(np.asarray(mp, float)[i])
        for j in range(i, d):
            vals[f"G{i}{j}"] = G[i, j]
            vals[f"Q{i}{j}"] = Pi[i, j]
    vals["s2"] = float(sigma2)
    return np.array(grad(list(theta), [vals[nm] for nm in names]), float)


def fim_ngd_step(theta, grad_theta, gamma):
    """theta - gamma Hess A(theta)^{-1} grad (canonical NGD, Def. 2), Hess A from SymPy."""
    d = {2: 1, 5: 2}[len(theta)]
    H = symbolic_A(d)[2](theta)
    return np.asarray(theta, float) - gamma * scipy.linalg.solve(H, grad_theta)


# ---------------------------------------------------------------------------------------------------------------
# Bayesian linear regression
# ---------------------------------------------------------------------------------------------------------------


def blr_posterior(X, y, sigma2, P, mp):
    """Posterior of z | y by conditioning the joint Gaussian: K = X P X^T + s2 I,
    mu* = mp + P X^T K^{-1} (y - X mp), Sigma* = P - P X^T K^{-1} X P."""
    X, y, P, mp = (np.asarray(a, float) for a in (X, y, P, mp))
    K = X @ P @ X.T + sigma2 * np.eye(X.shape[0])
    B = scipy.linalg.solve(K, X @ P, assume_a="pos")
    mu = mp + B.T @ (y - X @ mp)
    S = P - P @ X.T @ B
    return mu, 0.5 * (S + S.T)


def blr_log_evidence(X, y, sigma2, P, mp) -> float:
    X, P = np.asarray(X, float), np.asarray(P, float)
    return float(
        scipy.stats.multivariate_normal(
            mean=X @ np.asarray(mp, float), cov=X @ P @ X.T + sigma2 * np.eye(X.shape[0])
        ).logpdf(y)
    )


def blr_neg_elbo(mu, S, X, y, sigma2, P, mp) -> float:
    """-E_q log p(y | z) + KL(q, p) with E_q (y_i - x_i^T z)^2 = (y_i - x_i^T mu)^2 + x_i^T S x_i."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    r = y - X @ mu
    nll = 0.5 * X.shape[0] * math.log(2 * math.pi * sigma2) + (r @ r + np.einsum("ni,ij,nj->", X, S, X)) / (2 * sigma2)
    return float(nll + kl_gauss(mu, S, mp, P))


# ---------------------------------------------------------------------------------------------------------------
# mirror descent argmin, numerically
# ---------------------------------------------------------------------------------------------------------------


def md_argmin(g_xi, G_Xi, mu_t, S_t, gamma):
    """argmin over Omega of <(g, G), omega> + KL(q(omega), q_t) / gamma, by L-BFGS over (mu, tril L) with
    Sigma = L L^T (log-diagonal), started at q_t.  Returns (mu, Sigma)."""
    d = len(mu_t)
    tri = np.tril_indices(d)
    g_xi, G = np.asarray(g_xi, float), 0.5 * (np.asarray(G_Xi, float) + np.asarray(G_Xi, float).T)

    def unpack(p):
        return mean_and_log_cholesky(p, d)

    def obj(p):
        mu, L = unpack(p)
        S = L @ L.T
        Xi = S + np.outer(mu, mu)
        return g_xi @ mu + np.sum(G * Xi) + kl_gauss(mu, S, mu_t, S_t) / gamma

    L0 = np.linalg.cholesky(S_t)
    p0 = np.concatenate([mu_t, np.where(np.eye(d, dtype=bool), np.log(np.abs(L0) + 1e-300), L0)[tri]])
    res = scipy.optimize.minimize(obj, p0, method="BFGS", options={"gtol": 1e-11, "maxiter": 5000})
    mu, L = unpack(res.x)
    return mu, L @ L.T


# ---------------------------------------------------------------------------------------------------------------
# Theorem 1 by exact enumeration
# ---------------------------------------------------------------------------------------------------------------


def batches_with_prob(n: int, m: int):
    """Multisets of m indices from [0, n) with their probability under i.i.d. uniform sampling."""
    out = []
    for combo in itertools.combinations_with_replacement(range(n), m):
        c = np.bincount(combo, minlength=n)
        w = math.factorial(m) / math.prod(math.factorial(int(k)) for k in c)
        out.append((combo, w / n**m))
    return out


def _eta_hat(combo, X, y, sigma2, lam_p, Lam_p, n):
    Xb, yb = X[list(combo)], y[list(combo)]
    c = n / (len(combo) * sigma2)
    return c * Xb.T @ yb + lam_p, Lam_p - 0.5 * c * Xb.T @ Xb


def variance12(lam, Lam, gamma, X, y, sigma2, P, mp, m):
    """Eq. (12) at eta_t = (lam, Lam), from its definition: (1/gamma) E <g_hat - g, omega_{t+1,*} - omega_{t+1}>
    with g_hat - g = eta* - eta_hat (BLR).  The two omegas differ by O(gamma), so their float difference loses
    eps / gamma relative: below gamma = 1e-3 the same definition is evaluated in 30 + log10(1/gamma) digits
    (mpmath)."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    n = X.shape[0]
    lam_p, Lam_p = natural_from_moments(mp, P)
    ls, Ls = X.T @ y / sigma2 + lam_p, Lam_p - 0.5 * X.T @ X / sigma2
    if gamma < 1e-3:
        return _variance12_mp(lam, Lam, gamma, ls, Ls, X, y, sigma2, lam_p, Lam_p, m)

    def omega(l, L):
        mu, S = moments_from_natural(l, L)
        return mu, S + np.outer(mu, mu)

    ws = omega((1 - gamma) * lam + gamma * ls, (1 - gamma) * Lam + gamma * Ls)
    tot = 0.0
    for combo, p in batches_with_prob(n, m):
        lh, Lh = _eta_hat(combo, X, y, sigma2, lam_p, Lam_p, n)
        w = omega((1 - gamma) * lam + gamma * lh, (1 - gamma) * Lam + gamma * Lh)
        tot += p * (((ls - lh) @ (ws[0] - w[0])) + np.sum((Ls - Lh) * (ws[1] - w[1]))) / gamma
    return float(tot)


def _variance12_mp(lam, Lam, gamma, ls, Ls, X, y, sigma2, lam_p, Lam_p, m):
    """variance12's definition in 30 + log10(1/gamma) digits (the O(gamma) difference keeps 30); inputs exact."""
    import mpmath

    n = X.shape[0]
    with mpmath.workdps(30 + int(math.ceil(-math.log10(gamma)))):
        M = lambda a: mpmath.matrix(np.atleast_2d(a).tolist())  # noqa: E731
        V = lambda a: mpmath.matrix(np.asarray(a, float).reshape(-1, 1).tolist())  # noqa: E731
        g = mpmath.mpf(gamma)

        def omega(l, L):
            S = (-2 * L) ** -1
            mu = S * l
            return mu, S + mu * mu.T

        def inner(a, b):
            return mpmath.fsum(a[i, j] * b[i, j] for i in range(a.rows) for j in range(a.cols))

        lam_m, Lam_m, ls_m, Ls_m = V(lam), M(Lam), V(ls), M(Ls)
        ws = omega((1 - g) * lam_m + g * ls_m, (1 - g) * Lam_m + g * Ls_m)
        tot = mpmath.mpf(0)
        for combo, p in batches_with_prob(n, m):
            lh, Lh = _eta_hat(combo, X, y, sigma2, lam_p, Lam_p, n)
            lh_m, Lh_m = V(lh), M(Lh)
            w = omega((1 - g) * lam_m + g * lh_m, (1 - g) * Lam_m + g * Lh_m)
            dl, dL = ls_m - lh_m, Ls_m - Lh_m
            tot += mpmath.mpf(p) * (inner(dl, ws[0] - w[0]) + inner(dL, ws[1] - w[1])) / g
        return float(tot)


def enumerate_thm1(X, y, sigma2, P, mp, m, T, lam0, Lam0):
    """All batch paths of T+1 stochastic NGD steps with gamma_t = 2/(t+2): returns a list of
    (path, probability, (xi_bar, Xi_bar)), the exact E KL(q_bar_{T+1}, q*) and V = max of Eq. (12) over every
    state at which a step is taken (t = 0..T)."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    n = X.shape[0]
    lam_p, Lam_p = natural_from_moments(mp, P)
    mu_s, S_s = blr_posterior(X, y, sigma2, P, mp)
    bp = batches_with_prob(n, m)
    hats = [(_eta_hat(c, X, y, sigma2, lam_p, Lam_p, n), c, p) for c, p in bp]
    out = []
    Vmax = [0.0]
    cache = {}

    def rec(t, lam, Lam, xb, Xb, path, prob):
        if t == T + 1:
            mu, S = xb, Xb - np.outer(xb, xb)
            out.append((path, prob, (xb, Xb), kl_gauss(mu, S, mu_s, S_s)))
            return
        g = 2.0 / (t + 2)
        key = (t, lam.tobytes(), Lam.tobytes())
        if key not in cache:
            cache[key] = variance12(lam, Lam, g, X, y, sigma2, P, mp, m)
        Vmax[0] = max(Vmax[0], cache[key])
        for (lh, Lh), c, p in hats:
            ln, Ln = (1 - g) * lam + g * lh, (1 - g) * Lam + g * Lh
            mu, S = moments_from_natural(ln, Ln)
            Xi = S + np.outer(mu, mu)
            rec(t + 1, ln, Ln, (1 - g) * xb + g * mu, (1 - g) * Xb + g * Xi, path + (c,), prob * p)

    d = X.shape[1]
    rec(0, np.asarray(lam0, float), np.asarray(Lam0, float), np.zeros(d), np.zeros((d, d)), (), 1.0)
    ekl = sum(p * k for _, p, _, k in out)
    return [(pa, p, w) for pa, p, w, _ in out], float(ekl), float(Vmax[0])


def ngd_blr_step_moments(mu, S, X, y, idx, sigma2, P, mp, gamma):
    """One stochastic NGD step for BLR written in moment (VON) form with explicit inverses:
    Sigma'^{-1} = (1-g) Sigma^{-1} + g (P^{-1} + c sum_k x_k x_k^T),
    mu' = Sigma' [(1-g) Sigma^{-1} mu + g (P^{-1} mp + c sum_k y_k x_k)],  c = n / (m sigma2)."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    c = X.shape[0] / (len(idx) * sigma2)
    Si, Pi = scipy.linalg.inv(S), scipy.linalg.inv(P)
    prec = (1 - gamma) * Si + gamma * (Pi + c * sum(np.outer(X[i], X[i]) for i in idx))
    rhs = (1 - gamma) * Si @ mu + gamma * (Pi @ mp + c * sum(y[i] * X[i] for i in idx))
    S_new = scipy.linalg.inv(prec)
    S_new = 0.5 * (S_new + S_new.T)
    return S_new @ rhs, S_new


def blr_natural_step(lam, Lam, X, y, idx, sigma2, P, mp, gamma):
    """One stochastic NGD step of BLR in natural parameters, (1 - gamma) eta + gamma eta_hat(batch idx), computed by
    another road: :func:`ngd_blr_step_moments` (moment form, explicit inverses) mapped back to natural parameters."""
    mu, S = moments_from_natural(lam, Lam)
    return natural_from_moments(*ngd_blr_step_moments(mu, S, X, y, list(np.ravel(idx)), sigma2, P, mp, gamma))


def blr_runs(X, y, sigma2, P, mp, paths, lam0, Lam0, steps=None):
    """Many stochastic NGD runs of BLR from (lam0, Lam0) at once, ``paths`` (R, T, m) their batches, steps gamma_t =
    2/(t+2) unless given: returns (lam_T (R, d), Lam_T (R, d, d), xi_bar (R, d), Xi_bar (R, d, d)), the omega average
    started at omega(q_0) and updated as omega_bar <- (1 - gamma_t) omega_bar + gamma_t omega_(t+1) (Thm 1's average
    written as a recursion; the from-scratch replay of every run, vectorized over the runs)."""
    X, y, P, mp = (np.asarray(a, float) for a in (X, y, P, mp))
    paths = np.asarray(paths)
    R, T, m = paths.shape
    n, d = X.shape
    lam_p, Lam_p = natural_from_moments(mp, P)
    c = n / (m * sigma2)
    gam = 2.0 / (np.arange(T) + 2.0) if steps is None else np.asarray(steps, float)
    lam = np.broadcast_to(np.asarray(lam0, float), (R, d)).copy()
    Lam = np.broadcast_to(np.asarray(Lam0, float), (R, d, d)).copy()

    def omega(lam, Lam):
        S = np.linalg.inv(-2.0 * Lam)
        S = 0.5 * (S + np.swapaxes(S, 1, 2))
        mu = np.einsum("rij,rj->ri", S, lam)
        return mu, S + np.einsum("ri,rj->rij", mu, mu)

    xb, Xb = omega(lam, Lam)
    for t in range(T):
        Xbat, ybat = X[paths[:, t]], y[paths[:, t]]  # (R, m, d), (R, m)
        lh = c * np.einsum("rkd,rk->rd", Xbat, ybat) + lam_p
        Lh = Lam_p - 0.5 * c * np.einsum("rki,rkj->rij", Xbat, Xbat)
        g = gam[t]
        lam, Lam = (1 - g) * lam + g * lh, (1 - g) * Lam + g * Lh
        w = omega(lam, Lam)
        xb, Xb = (1 - g) * xb + g * w[0], (1 - g) * Xb + g * w[1]
    return lam, Lam, xb, Xb

"""Independent oracles for seed 004's non-conjugate models (numpy / scipy / mpmath only).

* 1-D Gaussian expectations of logistic quantities by adaptive ``scipy.integrate.quad`` (breakpoints at the mean and
  +-10 sd) or by ``mpmath.quad`` at 30 digits (needed for the large-variance witness W2);
* the logistic negative ELBO on the zero-mean diagonal slice of §5 / App. E.1;
* the Poisson negative ELBO in closed form (§2.7, E.2) and its minimizer over (mu, tril C) by BFGS (Prop. 1).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import scipy.integrate
import scipy.optimize
from scipy.special import expit

from refvi.verification.oracles.matrices import mean_and_log_cholesky


def gauss_expect(f, a: float, v: float) -> float:
    """E f(u), u ~ N(a, v), by adaptive quad over [a - 40 sd, a + 40 sd] with breakpoints (abs/rel tol 1e-13)."""
    sd = math.sqrt(v)
    dens = lambda u: f(u) * math.exp(-0.5 * (u - a) ** 2 / v) / math.sqrt(2 * math.pi * v)  # noqa: E731
    pts = [a - 10 * sd, a - sd, a, a + sd, a + 10 * sd]
    val, _ = scipy.integrate.quad(dens, a - 40 * sd, a + 40 * sd, points=pts, epsabs=1e-13, epsrel=1e-13, limit=400)
    return float(val)


def softplus(u: float) -> float:
    return float(np.logaddexp(0.0, u))


def logistic_point_expectations(a: float, v: float, y: float):
    """(E log p, E d/du log p, E d2/du2 log p) for log p(y | u) = -softplus(-y u), u ~ N(a, v)."""
    f = gauss_expect(lambda u: -softplus(-y * u), a, v)
    f1 = gauss_expect(lambda u: y * expit(-y * u), a, v)
    f2 = gauss_expect(lambda u: -expit(u) * (1 - expit(u)), a, v)
    return f, f1, f2


def softplus_variance_curve(v: float) -> float:
    """F(v) = E_{u ~ N(0, v)} softplus(u) (quad)."""
    return gauss_expect(softplus, 0.0, v)


def logistic_slice_loss(s1: float, s2: float, x, y) -> float:
    """l(omega) on {xi = 0, Xi = diag(s1, s2)} for 1-D logistic regression with bias, z = (w, b), prior N(0, I):
    sum_i E softplus(-y_i (w x_i + b)) + KL(N(0, diag(s1, s2)) || N(0, I)); w x_i + b ~ N(0, x_i^2 s1 + s2)."""
    tot = 0.0
    for xi, yi in zip(np.asarray(x, float), np.asarray(y, float), strict=True):
        tot += gauss_expect(lambda u, yi=yi: softplus(-yi * u), 0.0, xi * xi * s1 + s2)
    kl = 0.5 * sum(s - 1.0 - math.log(s) for s in (s1, s2))
    return float(tot + kl)


def logistic_slice_loss_mp(s1, s2, x, y, dps: int = 30):
    """The same at ``dps`` digits with mpmath (for large variances)."""
    with mpmath.workdps(dps):
        tot = mpmath.mpf(0)
        for xi, yi in zip(x, y, strict=True):
            v = mpmath.mpf(xi) ** 2 * mpmath.mpf(s1) + mpmath.mpf(s2)
            sd = mpmath.sqrt(v)
            dens = lambda u, yi=yi, v=v: (
                mpmath.log1p(mpmath.exp(-yi * u)) * mpmath.exp(-u * u / (2 * v)) / mpmath.sqrt(2 * mpmath.pi * v)
            )
            tot += mpmath.quad(dens, [-40 * sd, -10 * sd, -sd, 0, sd, 10 * sd, 40 * sd])
        kl = sum(mpmath.mpf(s) - 1 - mpmath.log(mpmath.mpf(s)) for s in (s1, s2)) / 2
        return tot + kl


def phi_h2(v: float) -> float:
    """E_{u ~ N(0, v)} h''(u) with h = sigmoid (1 - sigmoid): h'' = h (6 s^2 - 6 s + 1)."""

    def h2(u):
        s = expit(u)
        return s * (1 - s) * (6 * s * s - 6 * s + 1)

    return gauss_expect(h2, 0.0, v)


# ---------------------------------------------------------------------------------------------------------------
# Poisson
# ---------------------------------------------------------------------------------------------------------------


def _kl(mu, S, mp, P):
    d = len(mu)
    Pi = np.linalg.inv(P)
    r = mp - mu
    return 0.5 * (np.trace(Pi @ S) + r @ Pi @ r - d + np.linalg.slogdet(P)[1] - np.linalg.slogdet(S)[1])


def poisson_neg_elbo(xi, Xi, X, y, P=None, mp=None) -> float:
    """sum_i [-y_i xi^T x_i + exp(xi^T x_i + x_i^T (Xi - xi xi^T) x_i / 2)] + KL(q, N(mp, P)) (log y! dropped)."""
    xi, Xi, X, y = (np.asarray(a, float) for a in (xi, Xi, X, y))
    d = xi.size
    P = np.eye(d) if P is None else np.asarray(P, float)
    mp = np.zeros(d) if mp is None else np.asarray(mp, float)
    S = Xi - np.outer(xi, xi)
    a = X @ xi
    v = np.einsum("ni,ij,nj->n", X, S, X)
    return float(np.sum(-y * a + np.exp(a + 0.5 * v)) + _kl(xi, S, mp, P))


def poisson_minimize_mr(X, y, P=None, mp=None):
    """Minimize l^(mr)(mu, C) = l(mu, C C^T + mu mu^T) over (mu, tril C with log diagonal) by BFGS; returns
    (xi*, Xi*) (Prop. 1's proof route, Domke 2020 strong convexity in (mu, C))."""
    X = np.asarray(X, float)
    d = X.shape[1]
    tri = np.tril_indices(d)

    def unpack(p):
        return mean_and_log_cholesky(p, d)

    def obj(p):
        mu, L = unpack(p)
        return poisson_neg_elbo(mu, L @ L.T + np.outer(mu, mu), X, y, P, mp)

    p0 = np.zeros(d + len(tri[0]))
    res = scipy.optimize.minimize(obj, p0, method="BFGS", options={"gtol": 1e-12, "maxiter": 10000})
    mu, L = unpack(res.x)
    return mu, L @ L.T + np.outer(mu, mu)


def price_logistic_reference(mu, L, X, y, U, idx=None, scale=1.0):
    """Eq. (11) for logistic regression, sample by sample and point by point (explicit loops, scipy expit):
    g_s = sum_i y_i expit(-y_i x_i^T z_s) x_i, H_s = -sum_i expit(t)(1 - expit(t)) x_i x_i^T, z_s = mu + L u_s;
    returns (mean (g_s - H_s mu), mean H_s / 2) times ``scale`` on the rows ``idx``."""
    mu, L, X, y, U = (np.asarray(a, float) for a in (mu, L, X, y, U))
    rows = range(X.shape[0]) if idx is None or len(idx) == 0 else idx
    d = mu.size
    gx, G = np.zeros(d), np.zeros((d, d))
    for u in U:
        z = mu + L @ u
        g, H = np.zeros(d), np.zeros((d, d))
        for i in rows:
            t = float(X[i] @ z)
            g += y[i] * expit(-y[i] * t) * X[i]
            H -= expit(t) * (1 - expit(t)) * np.outer(X[i], X[i])
        gx += scale * (g - H @ mu)
        G += scale * 0.5 * H
    return gx / len(U), G / len(U)


# ---------------------------------------------------------------------------------------------------------------
# the omega-gradient of the GLMs' negative ELBO and exact NGD on it (Prop. 1's algorithm), by Price's theorem
# ---------------------------------------------------------------------------------------------------------------


def price_poisson_reference(mu, L, X, y, U, scale=1.0):
    """Eq. (11) for Poisson regression (log link), sample by sample: g_s = sum_i (y_i - e^{t_i}) x_i, H_s = -sum_i
    e^{t_i} x_i x_i^T, t_i = x_i^T z_s, z_s = mu + L u_s; returns (mean (g_s - H_s mu), mean H_s / 2) times
    ``scale``."""
    mu, L, X, y, U = (np.asarray(a, float) for a in (mu, L, X, y, U))
    d = mu.size
    gx, G = np.zeros(d), np.zeros((d, d))
    for u in U:
        z = mu + L @ u
        g, H = np.zeros(d), np.zeros((d, d))
        for i in range(X.shape[0]):
            e = math.exp(float(X[i] @ z))
            g += (y[i] - e) * X[i]
            H -= e * np.outer(X[i], X[i])
        gx += scale * (g - H @ mu)
        G += scale * 0.5 * H
    return gx / len(U), G / len(U)


def glm_grad_omega(kind, X, y, xi, Xi):
    """grad_omega l for the logistic / Poisson GLM with prior N(0, I): -grad_omega E_q log p + eta(omega) - eta_prior
    (Lemma 4), the first part by Price's theorem per data point, d/dmu = sum_i E[f_i'] x_i, d/dSigma = 1/2 sum_i
    E[f_i''] x_i x_i^T (logistic: 1-D adaptive quadrature; Poisson: closed form E f' = y - e^{a + v/2},
    E f'' = -e^{a + v/2}), chained to omega = (mu, Sigma + mu mu^T): d/dxi = d/dmu - 2 (d/dSigma) mu, d/dXi =
    d/dSigma.  Returns (g_xi, G_Xi)."""
    X, y, xi, Xi = (np.asarray(a, float) for a in (X, y, xi, Xi))
    d = xi.size
    S = Xi - np.outer(xi, xi)
    a, v = X @ xi, np.einsum("ni,ij,nj->n", X, S, X)
    if kind == "poisson":
        e = np.exp(a + 0.5 * v)
        f1, f2 = y - e, -e
    else:
        parts = [logistic_point_expectations(float(p), float(q), float(r)) for p, q, r in zip(a, v, y, strict=True)]
        f1, f2 = np.array([p[1] for p in parts]), np.array([p[2] for p in parts])
    dmu, dS = X.T @ f1, 0.5 * (X * f2[:, None]).T @ X
    g_xi, G_Xi = dmu - 2.0 * dS @ xi, dS
    P = np.linalg.inv(S)
    P = 0.5 * (P + P.T)
    return -g_xi + P @ xi, -G_Xi - 0.5 * P + 0.5 * np.eye(d)


def glm_ngd_exact_reference(kind, X, y, T, gamma, lam, Lam):
    """T deterministic NGD steps eta <- eta - gamma grad_omega l(omega(eta)) (Eq. 8 with :func:`glm_grad_omega`)
    from (lam, Lam); returns eta_T."""
    lam, Lam = np.asarray(lam, float), np.asarray(Lam, float)
    for _ in range(int(T)):
        S = np.linalg.inv(-2.0 * Lam)
        S = 0.5 * (S + S.T)
        mu = S @ lam
        g, G = glm_grad_omega(kind, X, y, mu, S + np.outer(mu, mu))
        lam, Lam = lam - gamma * g, Lam - gamma * 0.5 * (G + G.T)
    return lam, Lam

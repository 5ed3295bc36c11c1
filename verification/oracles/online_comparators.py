"""Comparators and exact right-hand sides for the regret bounds of seed 003 (numpy / scipy only, never refvi).

* ``hinge_value``: closed-form Gaussian hinge expectation written with ``scipy.special.ndtr`` (an independent road
  from the kernels' erfc-based code), vectorized over a stream.
* ``best_hinge_point``: inf over the box [-M, M]^d of sum_t (1 - y_t <theta, x_t>)_+ as a linear program (HiGHS).
* ``best_quadratic_point``: inf over the box of sum_t H/2 ||theta - z_t||^2 (the clipped mean, exact).
* ``sva_comparator``: argmin over (m, sigma) in the box of sum_t bar L_t(m, sigma) + KL(q || N(0, s^2 I)) / eta
  (smooth, strongly convex; L-BFGS-B), i.e. the right side of Thm 2 without the eta L^2 T / alpha term.
* ``ewa_log_partition``: log E_pi exp(-eta sum_t ell_t) on an interval by adaptive quadrature (the exact right side
  of Thm 1 via Lemma 1).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, optimize
from scipy.special import ndtr


def _hinge_ridges(X, y, a, b):
    """Per row: E (1 - y (a + bZ))_+ = c Phi(c/b) + b phi(c/b), c = 1 - y a, and Phi(c/b), phi(c/b)/b (b = 0: the point
    loss and its subgradient); ``bs`` is b with zeros replaced by 1."""
    c = 1.0 - y * a
    bs = np.where(b > 0, b, 1.0)
    z = c / bs
    P = np.where(b > 0, ndtr(z), (c > 0).astype(float))
    p = np.where(b > 0, np.exp(-0.5 * np.minimum(z * z, 1500.0)) / math.sqrt(2 * math.pi), 0.0)
    return np.where(b > 0, c * P + b * p, np.maximum(c, 0.0)), P, p / bs


def hinge_value(X, y, m, sigma):
    """sum_t E_{N(m, diag sigma^2)} (1 - y_t <theta, x_t>)_+ and its gradients (sums over t)."""
    X, y, m, sigma = (np.asarray(v, dtype=np.float64) for v in (X, y, m, sigma))
    val, P, pb = _hinge_ridges(X, y, X @ m, np.sqrt((X**2) @ (sigma**2)))
    return float(val.sum()), -(y * P) @ X, sigma * (pb @ (X**2))


def kl_to_prior(m, sigma, s):
    m, sigma = np.asarray(m, dtype=np.float64), np.asarray(sigma, dtype=np.float64)
    return 0.5 * float((m @ m + sigma @ sigma) / s**2 + np.sum(np.log(s**2 / sigma**2)) - m.size)


def sva_comparator(X, y, eta, s, mbox=np.inf, sbox=np.inf, x0=None):
    """(m, sigma, value) minimizing sum_t bar L_t + KL(q_mu || pi) / eta over the box (hinge loss)."""
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]

    def f(z):
        m, sg = z[:d], z[d:]
        v, gm, gs = hinge_value(X, y, m, sg)
        k = kl_to_prior(m, sg, s)
        return v + k / eta, np.concatenate([gm + m / (s**2 * eta), gs + (sg / s**2 - 1.0 / sg) / eta])

    mb = None if not np.isfinite(mbox) else mbox
    sb = None if not np.isfinite(sbox) else sbox
    bounds = [(-mb if mb else None, mb)] * d + [(1e-12, sb)] * d
    z0 = np.concatenate([np.zeros(d), np.full(d, min(s, sbox))]) if x0 is None else np.asarray(x0, float)
    res = optimize.minimize(
        f, z0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 2000, "ftol": 1e-15, "gtol": 1e-11}
    )
    return res.x[:d], res.x[d:], float(res.fun)


def best_hinge_point(X, y, M):
    """(theta, value) = argmin over [-M, M]^d of sum_t (1 - y_t <theta, x_t>)_+ by LP (HiGHS):
    min sum xi  s.t.  xi_t >= 1 - y_t <theta, x_t>, xi >= 0."""
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    T, d = X.shape
    c = np.concatenate([np.zeros(d), np.ones(T)])
    A = np.hstack([-(y[:, None] * X), -np.eye(T)])
    b = -np.ones(T)
    bounds = [(-M, M)] * d + [(0, None)] * T
    res = optimize.linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"linprog failed: {res.message}")
    theta = res.x[:d]
    return theta, float(np.maximum(0.0, 1.0 - y * (X @ theta)).sum())


def best_quadratic_point(Z, H, M):
    """argmin over [-M, M]^d of sum_t H/2 ||theta - z_t||^2: the clipped mean (separable, exact)."""
    Z = np.asarray(Z, dtype=np.float64)
    theta = np.clip(Z.mean(axis=0), -M, M)
    return theta, float(0.5 * H * np.sum((Z - theta) ** 2))


def ewa_log_partition(loss_sum, eta, lo, hi, log_prior=None, breaks=()):
    """log( int_lo^hi pi(theta) exp(-eta loss_sum(theta)) dtheta ) with pi uniform on [lo, hi] unless log_prior
    (a normalized log-density) is given; adaptive quadrature with a max-shift for stability."""
    lp = (lambda t: -math.log(hi - lo)) if log_prior is None else log_prior
    grid = np.linspace(lo, hi, 4001)
    shift = max(lp(t) - eta * loss_sum(t) for t in grid)
    g = lambda t: math.exp(lp(t) - eta * loss_sum(t) - shift)
    pts = sorted(set(float(p) for p in breaks if lo < p < hi))
    val, _ = integrate.quad(g, lo, hi, points=pts or None, epsabs=0.0, epsrel=1e-13, limit=2000)
    return math.log(val) + shift


def euclidean_comparator(X, y, eta, mu1, mbox=np.inf, sbox=np.inf):
    """(m, sigma, value) minimizing sum_t bar L_t(m, sigma) + ||mu - mu_1||^2 / eta over the box (hinge loss):
    the right side of Thm 4's first bound without eta L^2 T."""
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    mu1 = np.asarray(mu1, dtype=np.float64)

    def f(z):
        v, gm, gs = hinge_value(X, y, z[:d], z[d:])
        r = z - mu1
        return v + r @ r / eta, np.concatenate([gm, gs]) + 2.0 * r / eta

    mb = None if not np.isfinite(mbox) else mbox
    sb = None if not np.isfinite(sbox) else sbox
    bounds = [(-mb if mb else None, mb)] * d + [(0.0, sb)] * d
    res = optimize.minimize(
        f,
        mu1.copy(),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": 2000, "ftol": 1e-15, "gtol": 1e-11},
    )
    return res.x[:d], res.x[d:], float(res.fun)


def toy_hinge_risk(theta):
    """E_*(theta) = E (1 - y <theta, x>)_+ for the toy distribution of seed 003 §5: y = +1 w.p. 2/3 with
    x ~ N((1, 1), [[1, 1], [1, 3]]), y = -1 w.p. 1/3 with x ~ N((-1, -1), I).  The margin y <theta, x> is Gaussian
    in each class, so E_* is a two-term mixture of c Phi(c/b) + b phi(c/b)."""
    th = np.asarray(theta, dtype=np.float64)
    out = 0.0
    for w, mu, cov in (
        (2 / 3, np.array([1.0, 1.0]), np.array([[1.0, 1.0], [1.0, 3.0]])),
        (1 / 3, np.array([1.0, 1.0]), np.eye(2)),
    ):  # class -1: y x ~ N((1, 1), I)
        a = float(mu @ th)
        b = math.sqrt(float(th @ cov @ th))
        c = 1.0 - a
        out += w * (
            c * ndtr(c / b) + b * math.exp(-0.5 * (c / b) ** 2) / math.sqrt(2 * math.pi) if b > 0 else max(c, 0.0)
        )
    return float(out)


def toy_hinge_risk_quad(theta):
    """The same risk by 1-D quadrature of the hinge against each class's margin density (independent road)."""
    th = np.asarray(theta, dtype=np.float64)
    out = 0.0
    for w, mu, cov in (
        (2 / 3, np.array([1.0, 1.0]), np.array([[1.0, 1.0], [1.0, 3.0]])),
        (1 / 3, np.array([1.0, 1.0]), np.eye(2)),
    ):
        a = float(mu @ th)
        b = math.sqrt(float(th @ cov @ th))
        g = lambda s: (1.0 - s) * math.exp(-0.5 * ((s - a) / b) ** 2) / (b * math.sqrt(2 * math.pi))
        val, _ = (
            integrate.quad(g, a - 40 * b, 1.0, epsabs=1e-14, epsrel=1e-13, limit=500) if a - 40 * b < 1 else (0.0, 0.0)
        )
        out += w * val
    return float(out)


def toy_sample(rng, n):
    """n i.i.d. points (X, y) of the toy distribution (labels in {-1, +1})."""
    y = np.where(rng.random(n) < 2 / 3, 1.0, -1.0)
    Lp = np.linalg.cholesky(np.array([[1.0, 1.0], [1.0, 3.0]]))
    Z = rng.standard_normal((n, 2))
    X = np.where(y[:, None] > 0, Z @ Lp.T + 1.0, Z - 1.0)
    return X, y


def ewa_box_moments(loss_sum, eta, lo, hi, log_prior=None):
    """(log E_pi exp(-eta loss_sum), posterior mean (2,)) on the box [lo_1, hi_1] x [lo_2, hi_2] by adaptive 2-D
    quadrature (``scipy.integrate.dblquad``, shifted by the integrand's maximum on a grid); ``loss_sum(t1, t2)`` and
    ``log_prior(t1, t2)`` (a normalized log-density, uniform if None) take scalars."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    area = float(np.prod(hi - lo))
    lp = (lambda a, b: -math.log(area)) if log_prior is None else log_prior
    g1, g2 = np.linspace(lo[0], hi[0], 81), np.linspace(lo[1], hi[1], 81)
    shift = max(lp(a, b) - eta * loss_sum(a, b) for a in g1 for b in g2)
    dens = lambda b, a: math.exp(lp(a, b) - eta * loss_sum(a, b) - shift)  # noqa: E731  (dblquad: y, x)
    kw = dict(epsabs=0.0, epsrel=1e-12)
    z = integrate.dblquad(dens, lo[0], hi[0], lo[1], hi[1], **kw)[0]
    m1 = integrate.dblquad(lambda b, a: a * dens(b, a), lo[0], hi[0], lo[1], hi[1], **kw)[0]
    m2 = integrate.dblquad(lambda b, a: b * dens(b, a), lo[0], hi[0], lo[1], hi[1], **kw)[0]
    return math.log(z) + shift, np.array([m1 / z, m2 / z])


def _full_pack(d):
    rows, cols = np.tril_indices(d)
    return rows, cols, rows == cols


def kl_full_to_prior(m, C, s):
    """KL(N(m, C C^T) || N(0, s^2 I)) for lower-triangular C with a positive diagonal."""
    m, C = np.asarray(m, dtype=np.float64), np.asarray(C, dtype=np.float64)
    d = m.size
    return 0.5 * float((m @ m + np.sum(C**2)) / s**2 - 2 * np.sum(np.log(np.diag(C))) + 2 * d * math.log(s) - d)


def _minimize_full(obj_grad, d, s):
    """Minimize a smooth function of (m, C) over m in R^d and lower-triangular C with diagonal >= 1e-12 (L-BFGS-B)."""
    rows, cols, diag = _full_pack(d)

    def unpack(z):
        C = np.zeros((d, d))
        C[rows, cols] = z[d:]
        return z[:d], C

    def f(z):
        m, C = unpack(z)
        v, gm, gC = obj_grad(m, C)
        return v, np.concatenate([gm, gC[rows, cols]])

    z0 = np.concatenate([np.zeros(d), np.where(diag, s, 0.0)])
    bounds = [(None, None)] * d + [(1e-12, None) if dg else (None, None) for dg in diag]
    res = optimize.minimize(
        f, z0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 5000, "ftol": 1e-16, "gtol": 1e-12}
    )
    m, C = unpack(res.x)
    return m, C, float(res.fun)


def _kl_full_grad(m, C, s):
    return m / s**2, np.tril(C / s**2 - np.diag(1.0 / np.diag(C)))


def ftrl_full_argmin(Gm, GC, eta, s):
    """argmin over (m, C) of <m, Gm> + <C, GC> + KL(N(m, C C^T) || N(0, s^2 I)) / eta, numerically (the FTRL step
    of SVA over full-covariance Gaussians; no closed form used)."""
    Gm, GC = np.asarray(Gm, dtype=np.float64), np.tril(np.asarray(GC, dtype=np.float64))

    def obj(m, C):
        km, kC = _kl_full_grad(m, C, s)
        return float(m @ Gm + np.sum(C * GC)) + kl_full_to_prior(m, C, s) / eta, Gm + km / eta, GC + kC / eta

    m, C, _ = _minimize_full(obj, Gm.size, s)
    return m, C


def hinge_value_full(X, y, m, C):
    """sum_t E (1 - y_t <theta, x_t>)_+, theta = m + C u, and its gradients in m and (lower-triangular) C."""
    X, y, m, C = (np.asarray(v, dtype=np.float64) for v in (X, y, m, C))
    V = X @ C  # row t: v_t = C^T x_t
    val, P, pb = _hinge_ridges(X, y, X @ m, np.sqrt(np.sum(V**2, axis=1)))
    return float(val.sum()), -(y * P) @ X, np.tril(X.T @ (V * pb[:, None]))


def sva_full_comparator(X, y, eta, s):
    """(m, C, value) minimizing sum_t bar L_t(m, C) + KL(N(m, C C^T) || pi) / eta over the full-covariance family
    (hinge loss): the right side of Thm 2 for full-covariance SVA without the eta L^2 T / alpha term."""
    X = np.asarray(X, dtype=np.float64)

    def obj(m, C):
        v, gm, gC = hinge_value_full(X, y, m, C)
        km, kC = _kl_full_grad(m, C, s)
        return v + kl_full_to_prior(m, C, s) / eta, gm + km / eta, gC + kC / eta

    return _minimize_full(obj, X.shape[1], s)


# ------------------------------------------------------------------------------------------------------------------
# numerical argmins of the learners' one-step problems (the oracles of the closed forms (9), (10), (15) and of the
# OGA-EL / FTRL equivalence): generic minimizers, never the closed forms
# ------------------------------------------------------------------------------------------------------------------


def sva_ftrl_argmin(G_m, G_s, eta, s, mbox=np.inf, sbox=np.inf):
    """argmin over (m, sigma) in the box of G_m^T m + G_s^T sigma + KL(q_mu || N(0, s^2 I)) / eta (eq. 6 with the
    gradient sums), by bounded L-BFGS-B from the prior: the oracle of the closed form (9) with lazy projection."""
    G_m, G_s = np.asarray(G_m, dtype=np.float64), np.asarray(G_s, dtype=np.float64)
    d = G_m.size

    def f(z):
        m, sg = z[:d], z[d:]
        val = G_m @ m + G_s @ sg + kl_to_prior(m, sg, s) / eta
        return val, np.concatenate([G_m + m / (s * s * eta), G_s + (sg / s**2 - 1.0 / sg) / eta])

    mb = None if not np.isfinite(mbox) else mbox
    sb = None if not np.isfinite(sbox) else sbox
    res = optimize.minimize(
        f,
        np.concatenate([np.zeros(d), np.full(d, s)]),
        jac=True,
        method="L-BFGS-B",
        bounds=[(-mb if mb else None, mb)] * d + [(1e-12, sb)] * d,
        options={"maxiter": 5000, "ftol": 1e-16, "gtol": 1e-12},
    )
    return res.x[:d], res.x[d:]


def svb_prox_argmin(gm, gs, m_t, s_t, eta):
    """argmin over (m, sigma > 0) of gm^T m + gs^T sigma + KL(q_mu || N(m_t, diag s_t^2)) / eta (eq. 7), by
    L-BFGS-B from (m_t, s_t): the oracle of the closed form (10)."""
    gm, gs, m_t, s_t = (np.asarray(v, dtype=np.float64) for v in (gm, gs, m_t, s_t))
    d = gm.size

    def f(z):
        m, sg = z[:d], z[d:]
        kl = 0.5 * float(np.sum((sg**2 + (m - m_t) ** 2) / s_t**2 + np.log(s_t**2 / sg**2) - 1.0))
        return (
            gm @ m + gs @ sg + kl / eta,
            np.concatenate([gm + (m - m_t) / (s_t**2 * eta), gs + (sg / s_t**2 - 1.0 / sg) / eta]),
        )

    r = optimize.minimize(
        f,
        np.concatenate([m_t, s_t]),
        jac=True,
        method="L-BFGS-B",
        bounds=[(None, None)] * d + [(1e-12, None)] * d,
        options={"maxiter": 5000, "ftol": 1e-16, "gtol": 1e-12},
    )
    return r.x[:d], r.x[d:]


def ngvi_prox_argmin(gm, gs, m_t, s_t, eta, alpha, s):
    """argmin over (m, sigma) of mu^T grad_mu bar L_t(mu_t) + KL(q || N(0, s^2 I)) / eta + KL(q || q_t) / alpha (eq. 8),
    mu = (m, m^2 + sigma^2), grad_mu bar L = (gm - 2 g_v m_t, g_v), g_v = gs / (2 sigma_t): L-BFGS-B, then Nelder-Mead
    polishing (argmin to ~1e-6): the oracle of the closed form (15)."""
    gm, gs, m_t, s_t = (np.asarray(v, dtype=np.float64) for v in (gm, gs, m_t, s_t))
    gv = gs / (2 * s_t)
    lin = np.concatenate([gm - 2 * gv * m_t, gv])
    d = m_t.size

    def f(z):
        m, sg = z[:d], z[d:]
        mu = np.concatenate([m, m**2 + sg**2])
        kl_t = float(np.sum((sg**2 + (m - m_t) ** 2) / (2 * s_t**2) + np.log(s_t / sg) - 0.5))
        return float(lin @ mu) + kl_to_prior(m, sg, s) / eta + kl_t / alpha

    res = optimize.minimize(
        f,
        np.concatenate([m_t, s_t]),
        method="L-BFGS-B",
        bounds=[(None, None)] * d + [(1e-8, None)] * d,
        options={"maxiter": 10000, "ftol": 1e-16, "gtol": 1e-12},
    )
    res = optimize.minimize(f, res.x, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20000})
    return res.x[:d], res.x[d:]


def euclid_ftrl_argmin(G, mu1, eta, scale=0.5):
    """argmin over mu of G^T mu + scale ||mu - mu_1||^2 / eta (BFGS; ``scale`` 1/2: OGA-EL's corrected regularizer,
    1: the printed one of App. 6.2)."""
    G, mu1 = np.asarray(G, dtype=np.float64), np.asarray(mu1, dtype=np.float64)
    r = optimize.minimize(
        lambda z: (G @ z + scale * (z - mu1) @ (z - mu1) / eta, G + 2.0 * scale * (z - mu1) / eta),
        mu1,
        jac=True,
        method="BFGS",
        options={"gtol": 1e-12},
    )
    return r.x


def best_hinge_ball(X, y, R, tol=1e-7, max_cuts=200):
    """(lower, primal) for min over ||theta|| <= R of sum_t (1 - y_t <theta, x_t>)_+, Thm 3's comparator on the ball,
    by cutting planes: the LP (HiGHS) over the polytope {<theta, u_k> <= R} (tangent planes, starting with the box
    [-R, R]^d) contains the ball, so its value is a lower bound; its solution scaled onto the ball gives the upper
    bound ``primal``; a tangent plane at that point is added until the two agree to ``tol`` (relative).  The lower
    bound makes the measured regret an upper bound of the true one."""
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    T, d = X.shape
    c = np.concatenate([np.zeros(d), np.ones(T)])
    A_hinge, b_hinge = np.hstack([-(y[:, None] * X), -np.eye(T)]), -np.ones(T)
    cuts: list[np.ndarray] = []
    bounds = [(-R, R)] * d + [(0, None)] * T
    lower = primal = math.nan
    for _ in range(max_cuts):
        A = np.vstack([A_hinge] + [np.concatenate([u, np.zeros(T)])[None, :] for u in cuts])
        b = np.concatenate([b_hinge, np.full(len(cuts), R)])
        res = optimize.linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs")
        if res.status != 0:
            raise RuntimeError(f"linprog failed: {res.message}")
        lower = float(res.fun)
        theta = res.x[:d]
        n = float(np.linalg.norm(theta))
        on_ball = theta if n <= R else theta * (R / n)
        primal = float(np.maximum(0.0, 1.0 - y * (X @ on_ball)).sum())
        if primal - lower <= tol * (1.0 + abs(primal)) or n <= R:
            break
        cuts.append(theta / n)
    return lower, primal

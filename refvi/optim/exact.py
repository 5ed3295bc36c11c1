"""Exact energy l(w) = -E_{q_w} log p(z, x) and its gradient for the built-in targets (seed 002 §6).

Used by the deterministic gradient descent of seed 002 and by ``refvi.fit``'s exact objective trace.

* Gaussian / LinearRegression: -log p is the quadratic 1/2 z^T A z - b^T z + c, so
  l = 1/2 m^T A m + 1/2 tr(C^T A C) - b^T m + c, grad_m = A m - b, grad_C = A C.
* LogisticRegression: E softplus(-y x^T z) = E_s softplus(-s), s ~ N(a, beta^2), a = y x^T m, beta = ||C^T x||.
  Gradients by Stein's lemma: grad_m = m/s^2 - X^T (y * E sigmoid(-s)), grad_C = C/s^2 + X^T diag(E sigmoid'(s)) X C.
  The three one-dimensional expectations are integrated in the variable s (not t) by 16-point Gauss-Legendre on
  panels whose breakpoints merge a dyadic grid around s = 0 (where the integrands bend, on scale 1) with the grid
  a + k beta, k = -9..9 (the Gaussian weight), over [a - 9 beta, a + 9 beta] (outside: mass < 3e-19).
  Agreement with the quadrature oracle is tested at 1e-11 relative on l (tests/refvi/test_optim_gd.py).

The objective is f = l + h with h = -log|det C| (the entropy constant -(d/2)(1 + log 2 pi) dropped, seed 000 Lemma 14).
"""

from __future__ import annotations

import numpy as np

from refvi.targets import Gaussian, LinearRegression, LogisticRegression

_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
_DYADIC = np.concatenate([-(2.0 ** np.arange(-1, 10))[::-1], [0.0], 2.0 ** np.arange(-1, 10)])
_KGRID = np.arange(-9.0, 9.5, 1.0)
LOG_2PI = float(np.log(2.0 * np.pi))


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def ridge_expectations(a, beta):
    """(E softplus(-s), E sigmoid(-s), E sigmoid'(s)) for s ~ N(a, beta^2), elementwise over arrays a, beta >= 0."""
    a = np.asarray(a, dtype=np.float64).ravel()
    beta = np.asarray(beta, dtype=np.float64).ravel()
    out = [np.empty_like(a) for _ in range(3)]
    point = beta <= 1e-12 * np.maximum(1.0, np.abs(a))
    if np.any(point):
        s = a[point]
        out[0][point], out[1][point] = np.logaddexp(0.0, -s), _sigmoid(-s)
        out[2][point] = _sigmoid(s) * _sigmoid(-s)
    q = ~point
    if np.any(q):
        aq, bq = a[q], beta[q]
        lo, hi = aq - 9.0 * bq, aq + 9.0 * bq
        br = np.concatenate([np.broadcast_to(_DYADIC, (aq.size, _DYADIC.size)),
                             aq[:, None] + bq[:, None] * _KGRID[None, :]], axis=1)
        br = np.sort(np.clip(br, lo[:, None], hi[:, None]), axis=1)
        left, right = br[:, :-1], br[:, 1:]
        half = 0.5 * (right - left)
        S = (0.5 * (right + left))[:, :, None] + half[:, :, None] * _GL_X[None, None, :]
        zt = (S - aq[:, None, None]) / bq[:, None, None]
        W = half[:, :, None] * _GL_W[None, None, :] * np.exp(-0.5 * zt * zt) / (np.sqrt(2.0 * np.pi) * bq[:, None, None])
        sig_m = _sigmoid(-S)
        out[0][q] = np.sum(np.logaddexp(0.0, -S) * W, axis=(1, 2))
        out[1][q] = np.sum(sig_m * W, axis=(1, 2))
        out[2][q] = np.sum(sig_m * (1.0 - sig_m) * W, axis=(1, 2))
    return tuple(out)


def supports(target) -> bool:
    """Whether refvi has the exact energy of ``target`` (Gaussian, linear or logistic regression)."""
    return type(target) in (Gaussian, LinearRegression, LogisticRegression)


def _quadratic(target):
    if type(target) is Gaussian:
        A = target.precision
        b = A @ target.mean
        c = 0.5 * target.mean @ b - 0.5 * target._logdet + 0.5 * target.dim * LOG_2PI
        return A, b, c
    X, y = target.X, target.y
    sn, s = target.noise_scale, target.prior_scale
    N, d = X.shape
    A = target.precision
    b = X.T @ y / sn**2
    c = y @ y / (2 * sn**2) + 0.5 * N * (LOG_2PI + 2 * np.log(sn)) + 0.5 * d * (LOG_2PI + 2 * np.log(s))
    return A, b, c


def energy(target, m, C):
    """(l, grad_m l, grad_C l) with grad_C over the full matrix (project onto V yourself)."""
    if not supports(target):
        raise TypeError(f"no exact energy for {type(target).__name__}; exact gradients exist for Gaussian, "
                        f"LinearRegression and LogisticRegression targets")
    m = np.asarray(m, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    if type(target) is LogisticRegression:
        X, y = target.X, target.y
        ip = target.prior_scale ** -2
        a = y * (X @ m)
        V = X @ C
        beta = np.sqrt(np.sum(V * V, axis=1))
        sp, sg, ds = ridge_expectations(a, beta)
        const = 0.5 * target.dim * (LOG_2PI + 2 * np.log(target.prior_scale))
        l = const + 0.5 * ip * (m @ m + np.sum(C * C)) + float(np.sum(sp))
        return float(l), ip * m - X.T @ (y * sg), ip * C + (X.T * ds) @ V
    A, b, c = _quadratic(target)
    AC = A @ C
    return float(0.5 * m @ A @ m + 0.5 * np.sum(C * AC) - b @ m + c), A @ m - b, AC


def objective(target, m, C) -> float:
    """f(w) = l(w) - log|det C| (seed 000 Eq. 15, entropy constant dropped); +inf for singular C."""
    sign, logdet = np.linalg.slogdet(np.asarray(C, dtype=np.float64))
    if sign == 0:
        return float("inf")
    return energy(target, m, C)[0] - float(logdet)


def gradient(target, m, C, structure: str = "tril"):
    """(grad_m f, grad_C f) with grad_C projected onto V = ``structure`` (f = l + h, grad h = -C^{-T})."""
    from refvi.families.gaussian import proj_V

    _, gm, gC = energy(target, m, C)
    return gm, proj_V(gC - np.linalg.inv(C).T, structure)


def solve(target, structure: str = "tril", tol: float = 1e-10, max_iter: int = 500):
    """The optimal Gaussian (m*, C*, f*) for a built-in target.

    Gaussian / linear: closed form (m* = A^{-1} b, C* C*^T = A^{-1}).  Logistic: the stationarity conditions of
    Gaussian VI, E_q grad(-log p) = 0 and Sigma^{-1} = E_q Hess(-log p) = I/s^2 + X^T diag(E sigmoid'(s_n)) X,
    iterated as a fixed point in Sigma with a Newton step in m (whose Hessian is that same matrix), until the
    projected gradient of f is below ``tol``.  C* is the Cholesky factor (tril / full) or the symmetric root (sym).
    """
    if not supports(target):
        raise TypeError(f"no exact solver for {type(target).__name__}")
    d = target.dim
    if type(target) is LogisticRegression:
        X, y, ip = target.X, target.y, target.prior_scale ** -2
        m = np.zeros(d)
        Sigma = np.eye(d) / ip
        for _ in range(max_iter):
            a = y * (X @ m)
            beta = np.sqrt(np.maximum(np.einsum("nd,de,ne->n", X, Sigma, X), 0.0))
            _, sg, ds = ridge_expectations(a, beta)
            Lam = ip * np.eye(d) + (X.T * ds) @ X
            Lam = 0.5 * (Lam + Lam.T)
            m = m - np.linalg.solve(Lam, ip * m - X.T @ (y * sg))
            Sigma = np.linalg.inv(Lam)
            Sigma = 0.5 * (Sigma + Sigma.T)
            C = _factor(Sigma, structure)
            gm, gC = gradient(target, m, C, structure)
            if np.sqrt(gm @ gm + np.sum(gC * gC)) < tol:
                break
        else:
            raise RuntimeError(f"exact.solve did not reach gradient norm {tol:g} in {max_iter} iterations")
    else:
        A, b, _ = _quadratic(target)
        m = np.linalg.solve(A, b)
        C = _factor(np.linalg.inv(A), structure)
    return m, C, objective(target, m, C)


def _factor(Sigma, structure):
    if structure in ("tril", "full"):
        return np.linalg.cholesky(Sigma)
    if structure == "sym":
        lam, Q = np.linalg.eigh(Sigma)
        S = (Q * np.sqrt(lam)) @ Q.T
        return 0.5 * (S + S.T)
    raise ValueError(f"no closed-form factor for structure {structure!r}")

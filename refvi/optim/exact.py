"""Exact energy l(w) = -E_{q_w} log p(z, x), its gradient and the Gaussian VI optimum, for targets that have them
(seed 002 §6).

Used by the deterministic gradient descent of seed 002 and by ``refvi.fit``'s exact objective trace.  The target
supplies the closed form: ``target.exact_energy(m, C)`` (Gaussian and linear regression: the quadratic
``quadratic_form()``; logistic regression: the ridge reduction of :mod:`refvi.targets.ridge`).  Only a class that
itself defines ``exact_energy`` counts (a subclass that changes ``logp`` does not inherit it).

The objective is f = l + h with h = -log|det C| (the entropy constant -(d/2)(1 + log 2 pi) dropped, seed 000 Lemma 14).
"""

from __future__ import annotations

import numpy as np

from refvi.targets.ridge import ridge_expectations


def supports(target) -> bool:
    """Whether ``target`` has a closed-form energy (built in: Gaussian, linear and logistic regression)."""
    has = getattr(target, "has_exact_energy", None)
    return bool(has()) if callable(has) and not isinstance(target, type) else False


def energy(target, m, C):
    """(l, grad_m l, grad_C l) with grad_C over the full matrix (project onto V yourself)."""
    if not supports(target):
        raise TypeError(
            f"no exact energy for {type(target).__name__}; exact gradients exist for targets that define "
            f"exact_energy (Gaussian, LinearRegression and LogisticRegression)"
        )
    return target.exact_energy(np.asarray(m, dtype=np.float64), np.asarray(C, dtype=np.float64))


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
    """The optimal Gaussian (m*, C*, f*) for a target with an exact energy.

    Quadratic -log p (``target.quadratic_form()``): closed form, m* = A^{-1} b, C* C*^T = A^{-1}.  Otherwise the
    stationarity conditions of Gaussian VI, E_q grad(-log p) = 0 and Sigma^{-1} = E_q Hess(-log p), iterated as a
    fixed point in Sigma with a Newton step in m, for a logistic ridge likelihood (``ridge_likelihood =
    "logistic"``, ``target.X``, ``target.y``, ``target.prior_scale``): E_q Hess = I/s^2 + X^T diag(E sigmoid'(s_n)) X,
    until the projected gradient of f is below ``tol``.  C* is the Cholesky factor (tril / full) or the symmetric
    root (sym).
    """
    if not supports(target):
        raise TypeError(f"no exact solver for {type(target).__name__}")
    if "quadratic_form" in type(target).__dict__:
        A, b, _ = target.quadratic_form()
        m = np.linalg.solve(A, b)
        C = _factor(np.linalg.inv(A), structure)
        return m, C, objective(target, m, C)
    if type(target).__dict__.get("ridge_likelihood") != "logistic":
        raise TypeError(
            f"no exact solver for {type(target).__name__}: it needs quadratic_form() or a logistic ridge "
            f"likelihood (ridge_likelihood = 'logistic' with X, y, prior_scale)"
        )
    d = target.dim
    X, y, ip = target.X, target.y, target.prior_scale**-2
    m, P = np.zeros(d), ip * np.eye(d)  # the mean and the precision Sigma^{-1}
    C = _factor(np.eye(d) / ip, structure)
    f, w = objective(target, m, C), 1.0
    for _ in range(max_iter):
        gm, gC = gradient(target, m, C, structure)
        if np.sqrt(gm @ gm + np.sum(gC * gC)) < tol:
            break
        Sigma = np.linalg.inv(P)
        a = y * (X @ m)
        beta = np.sqrt(np.maximum(np.einsum("nd,de,ne->n", X, 0.5 * (Sigma + Sigma.T), X), 0.0))
        _, sg, ds = ridge_expectations(a, beta)
        H = ip * np.eye(d) + (X.T * ds) @ X  # E_q Hess(-log p)
        dm = -np.linalg.solve(0.5 * (H + H.T), ip * m - X.T @ (y * sg))
        # the fixed point relaxed by w in (m, precision): both parts are descent directions of f (the m step is
        # Newton's; moving P towards H changes f by -w tr((H - P) Sigma (H - P) Sigma) / 2), so halving w until f does
        # not increase turns the undamped iteration's period-2 cycles (separable data) into convergence
        while True:
            P_new = P + w * (H - P)
            P_new = 0.5 * (P_new + P_new.T)
            m_new = m + w * dm
            C_new = _factor(np.linalg.inv(P_new), structure)
            f_new = objective(target, m_new, C_new)
            if f_new <= f + 1e-12 * abs(f) or w < 2.0**-30:
                break
            w *= 0.5
        m, P, C, f = m_new, P_new, C_new, f_new
    else:
        raise RuntimeError(f"exact.solve did not reach gradient norm {tol:g} in {max_iter} iterations")
    return m, C, objective(target, m, C)


def _factor(Sigma, structure):
    if structure in ("tril", "full"):
        return np.linalg.cholesky(Sigma)
    if structure == "sym":
        lam, Q = np.linalg.eigh(Sigma)
        S = (Q * np.sqrt(lam)) @ Q.T
        return 0.5 * (S + S.T)
    raise ValueError(f"no closed-form factor for structure {structure!r}")

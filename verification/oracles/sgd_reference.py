"""Plain-NumPy Prox-SGD and Proj-SGD (seed 000 Defs. 5 and 8) for the GLM and Gaussian targets, from raw arrays.

The reference the whole-loop kernels (``refvi.kernels.optim``) are cross-checked and benchmarked against: written
from the paper's formulas with numpy only (never refvi), one vectorized NumPy expression per line, same update order,
same pre-drawn base samples U (T, S, d).

-grad log p(z): Gaussian P (z - mean); linear X^T (X z - y)/noise^2 + z/prior^2; logistic
z/prior^2 - X^T (y sigmoid(-y X z)).  Estimators: energy (Eq. 6), entropy (Eq. 8), STL (§5), score (Eq. 4, with
-log p's every constant).
Prox (Lemma 31): C_ii -> (C_ii + sqrt(C_ii^2 + 4 gamma))/2.  Projection (Lemma 32): eigenvalue clip at 1/sqrt(M);
full C: singular-value clip (seed 002 Thm 7).

:func:`sgd_batch` runs R independent runs of the same loop at once (one NumPy expression over the stack of runs per
line): the replay of many seeded runs of an optimizer under test, step for step on its own base samples.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles.matrices import proj_V as _proj

_LOG_2PI = float(np.log(2.0 * np.pi))


def model_params(model):
    """The raw arrays :func:`sgd` takes (``params``) for an oracle model dict (kind gaussian / linear / logistic)."""
    k = model["kind"]
    if k == "gaussian":
        return (model["mean"], model["precision"])
    if k == "linear":
        return (model["X"], model["y"], 1.0 / model["noise_scale"] ** 2, 1.0 / model["prior_scale"] ** 2)
    if k == "logistic":
        return (model["X"], model["y"], 1.0 / model["prior_scale"] ** 2)
    raise ValueError(f"model kind must be gaussian, linear or logistic, got {k!r}")


def neg_grad_logp(kind, Z, params):
    """Rows: -grad log p(z_s) for the rows of Z (S x d, or a stack of them: every formula broadcasts)."""
    if kind == "gaussian":
        mean, P = params
        return (Z - mean) @ P
    if kind == "linear":
        X, y, inv_noise_var, inv_prior_var = params
        return ((Z @ X.T - y) * inv_noise_var) @ X + Z * inv_prior_var
    X, y, inv_prior_var = params
    T = (Z @ X.T) * y
    e = np.exp(-np.abs(T))
    R = y * np.where(T >= 0, e / (1.0 + e), 1.0 / (1.0 + e))  # y sigmoid(-y x^T z)
    return Z * inv_prior_var - R @ X


def neg_logp(kind, Z, params):
    """Rows: -log p(z_s) with every constant (the Gaussian's normalisation, the likelihood's and the prior's), what the
    score estimator multiplies by (its per-sample value depends on the constants; its mean does not)."""
    d = Z.shape[-1]
    if kind == "gaussian":
        mean, P = params
        R = Z - mean
        return 0.5 * np.einsum("...i,ij,...j->...", R, P, R) - 0.5 * np.linalg.slogdet(P)[1] + 0.5 * d * _LOG_2PI
    ip = _inv_prior_var(kind, params)
    prior = 0.5 * ip * np.sum(Z * Z, axis=-1) + 0.5 * d * (_LOG_2PI - np.log(ip))
    if kind == "linear":
        X, y, inv_noise_var, _ = params
        r = Z @ X.T - y
        n = X.shape[0]
        return 0.5 * inv_noise_var * np.sum(r * r, axis=-1) + 0.5 * n * (_LOG_2PI - np.log(inv_noise_var)) + prior
    X, y, _ = params
    return np.sum(np.logaddexp(0.0, -(Z @ X.T) * y), axis=-1) + prior


def neg_hess_logp(kind, z, params):
    """-Hess log p(z) at one point: P; X^T X / noise^2 + I / prior^2; or X^T diag(s(1 - s)) X + I / prior^2 with
    s = sigmoid(y x^T z) (logistic)."""
    if kind == "gaussian":
        return np.asarray(params[1], dtype=np.float64)
    if kind == "linear":
        X, _, inv_noise_var, inv_prior_var = params
        return inv_noise_var * X.T @ X + inv_prior_var * np.eye(z.size)
    X, y, inv_prior_var = params
    s = 0.5 * (1.0 + np.tanh(0.5 * y * (X @ z)))
    return (X.T * (s * (1.0 - s))) @ X + inv_prior_var * np.eye(z.size)


def point_of_gradient(kind, params, b, z, tol=1e-14, max_iter=100):
    """The z with -grad log p(z) = b, by Newton's method from ``z``: the sample a one-sample energy step used, from
    the mean update it made (m' = m - gamma (-grad log p(z))).  -log p is strongly convex for every kind here (a
    Gaussian prior), so z is unique; the Hessian is :func:`neg_hess_logp`'s.  Damped: a step is halved until the
    residual |-grad log p - b| shrinks (a full Newton step on a logistic likelihood can overshoot far from z).  Stops
    when the step is below ``tol`` (1 + |z|)."""
    z = np.array(z, dtype=np.float64)
    res = neg_grad_logp(kind, z, params) - b
    for _ in range(max_iter):
        step = np.linalg.solve(neg_hess_logp(kind, z, params), res)
        if np.max(np.abs(step)) <= tol * (1.0 + np.max(np.abs(z))):
            return z - step
        t = 1.0
        while True:
            new = neg_grad_logp(kind, z - t * step, params) - b
            if np.linalg.norm(new) < np.linalg.norm(res) or t < 1e-10:
                break
            t *= 0.5
        z, res = z - t * step, new
    raise ArithmeticError(f"point_of_gradient: Newton did not converge in {max_iter} steps")


def _inv_prior_var(kind, params):
    return params[3] if kind == "linear" else params[2]


def estimate(kind, params, estimator, structure, m, C, U):
    Z = U @ C.T + m
    S = U.shape[0]
    if estimator == "score":  # Eq. 4: -log p(z) grad_w log q_w(z), with grad_m = C^-T u, grad_C = C^-T (u u^T - I)
        f = neg_logp(kind, Z, params)
        V = np.linalg.solve(C.T, U.T).T  # rows C^-T u_s
        gm = (f[:, None] * V).mean(axis=0)
        gC = (f[:, None] * V).T @ U / S - np.mean(f) * np.linalg.inv(C).T
        return gm, _proj(gC, structure)
    G = neg_grad_logp(kind, Z, params)
    gm, gC = G.mean(axis=0), G.T @ U / S
    if estimator == "entropy":
        gC = gC - np.linalg.inv(C).T
    elif estimator == "stl":
        V = np.linalg.solve(C.T, U.T).T
        gm, gC = gm - V.mean(axis=0), gC - V.T @ U / S
    return gm, _proj(gC, structure)


def prox_entropy(C, gamma):
    out = C.copy()
    c = np.diag(C)
    r = np.sqrt(c * c + 4.0 * gamma)
    np.fill_diagonal(out, np.where(c >= 0, 0.5 * (c + r), 2.0 * gamma / (r - c)))
    return out


def project(C, M, structure):
    if structure == "sym":
        lam, Q = np.linalg.eigh(C)
        out = (Q * np.maximum(lam, 1.0 / np.sqrt(M))) @ Q.T
        return 0.5 * (out + out.T)
    U, s, Vt = np.linalg.svd(C)
    return (U * np.maximum(s, 1.0 / np.sqrt(M))) @ Vt


def sgd(method, kind, params, m, C, U, gammas, estimator="energy", structure="tril", M=None, weights=None):
    """Run the loop; returns (m_T, C_T, m_avg, C_avg) with the average sum_t weights[t] w^t (t = 0..T)."""
    m, C = np.array(m, dtype=float), np.array(C, dtype=float)
    T = len(gammas)
    w = np.zeros(T + 1) if weights is None else np.asarray(weights, dtype=float)
    if weights is None:
        w[T] = 1.0
    am, aC = w[0] * m, w[0] * C
    for t in range(T):
        gm, gC = estimate(kind, params, estimator, structure, m, C, U[t])
        m, Y = m - gammas[t] * gm, C - gammas[t] * gC
        C = prox_entropy(Y, gammas[t]) if method == "prox" else project(Y, M, structure)
        am, aC = am + w[t + 1] * m, aC + w[t + 1] * C
    return m, C, am, aC


def _project_batch(C, M, structure):
    if structure == "sym":
        lam, Q = np.linalg.eigh(C)
        out = (Q * np.maximum(lam, 1.0 / np.sqrt(M))[:, None, :]) @ np.swapaxes(Q, -1, -2)
        return 0.5 * (out + np.swapaxes(out, -1, -2))
    U, s, Vt = np.linalg.svd(C)
    return (U * np.maximum(s, 1.0 / np.sqrt(M))[:, None, :]) @ Vt


def _prox_entropy_batch(C, gamma):
    out = C.copy()
    i = np.arange(C.shape[-1])
    c = C[:, i, i]
    r = np.sqrt(c * c + 4.0 * gamma)
    out[:, i, i] = np.where(c >= 0, 0.5 * (c + r), 2.0 * gamma / (r - c))
    return out


def sgd_batch(method, kind, params, m0, C0, UU, gammas, estimator="energy", structure="tril", M=None, weights=None):
    """R runs of :func:`sgd` from the same start (m0, C0) on the base samples UU[r] (UU of shape (R, T, S, d)), all at
    once: returns the stacks (m_T (R, d), C_T (R, d, d), m_avg (R, d), C_avg (R, d, d)); the average's weights
    (length T + 1, None: the last iterate) are normalised to sum 1.  Same formulas, same update order as :func:`sgd`."""
    UU = np.asarray(UU, dtype=float)
    R, T, S, d = UU.shape
    m = np.broadcast_to(np.asarray(m0, dtype=float), (R, d)).copy()
    C = np.broadcast_to(np.asarray(C0, dtype=float), (R, d, d)).copy()
    w = np.zeros(T + 1)
    if weights is None:
        w[T] = 1.0
    else:
        w = np.asarray(weights, dtype=float) / np.sum(weights)
    am, aC = w[0] * m, w[0] * C
    for t in range(T):
        U = UU[:, t]  # (R, S, d)
        Z = U @ np.swapaxes(C, -1, -2) + m[:, None, :]
        G = neg_grad_logp(kind, Z, params)  # its formulas broadcast over the stack of runs
        gm, gC = G.mean(axis=1), np.swapaxes(G, -1, -2) @ U / S
        if estimator == "entropy":
            gC = gC - np.swapaxes(np.linalg.inv(C), -1, -2)
        elif estimator == "stl":
            V = np.swapaxes(np.linalg.solve(np.swapaxes(C, -1, -2), np.swapaxes(U, -1, -2)), -1, -2)
            gm, gC = gm - V.mean(axis=1), gC - np.swapaxes(V, -1, -2) @ U / S
        gC = _proj(gC, structure)
        m, Y = m - gammas[t] * gm, C - gammas[t] * gC
        C = _prox_entropy_batch(Y, gammas[t]) if method == "prox" else _project_batch(Y, M, structure)
        am, aC = am + w[t + 1] * m, aC + w[t + 1] * C
    return m, C, am, aC


def prox_sgd_logistic_s1(m, C, U, gamma, X, y, inv_prior_var):
    """The benchmark's plain-NumPy loop: Prox-SGD, S = 1, energy estimator, tril C, constant step, last iterate.
    U is (T, d).  Every step: z = C u + m, t = y X z, r = y sigmoid(-t), g = z/s^2 - X^T r,
    C <- prox(C - gamma tril(g u^T))."""
    m, C = m.copy(), C.copy()
    idx = np.diag_indices_from(C)
    for u in U:
        z = C @ u + m
        t = y * (X @ z)
        e = np.exp(-np.abs(t))
        r = y * np.where(t >= 0, e / (1.0 + e), 1.0 / (1.0 + e))
        g = z * inv_prior_var - X.T @ r
        m -= gamma * g
        C -= gamma * np.tril(np.outer(g, u))
        c = C[idx]
        C[idx] = 0.5 * (c + np.sqrt(c * c + 4.0 * gamma))
    return m, C

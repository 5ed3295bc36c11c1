"""Oracle: -log p(z, x), its gradient and its Hessian for the linear models of seed 000 §7.3 (Thm 21 - Cor 25).

numpy / scipy / sympy only (never refvi).  Models are plain dicts, as in :mod:`.vi_objective`:

    {"kind": "linear", "X": (N, d), "y": (N,), "noise_scale": s_n, "prior_scale": s}
    {"kind": "logistic", "X": (N, d), "y": (N,) in {-1, +1}, "prior_scale": s}
    {"kind": "glm", "X": (N, d), "y": (N,), "Sigma_inv": (d, d), "phi": phi}
        -log p = z^T Sigma_inv z / 2 + sum_n phi(x_n^T z, y_n), ``phi(a, b) -> (phi, d phi/da, d^2 phi/da^2)``
    {"kind": "hierarchical_logistic", "X": (N, d), "y": (N,), "groups": (N,) ints, "n_groups": G,
     "Sigma": (d, d), "Delta": (d, d)}      latent (theta, z_0, ..., z_{G-1}) in R^{(G+1) d}

Three roads to the Hessian, none of which is refvi's ``hess_logp``:

* :func:`hessian_fd`: central differences of the analytic gradient written here (error <= h^2 |f'''|/6 + eps |g|/h);
* :func:`hessian_sympy`: SymPy differentiates the scalar expression of -log p twice (tiny instances only);
* :func:`glm_hessian`: the closed form Sigma^{-1} + sum_n phi''(x_n^T z, y_n) x_n x_n^T of Thm 21's proof.

Normalizing constants: Gaussian prior and Gaussian noise normalized (as refvi's targets); constants do not matter
for gradients and Hessians, and :func:`neg_log_joint` keeps them so values can be compared too.
"""

from __future__ import annotations

import numpy as np

LOG_2PI = float(np.log(2.0 * np.pi))


def _log1pexp(t):
    """log(1 + e^t), stable for large |t|."""
    return np.logaddexp(0.0, t)


def _sig(t):
    """The logistic sigmoid 1 / (1 + e^{-t}), stable."""
    t = np.asarray(t, dtype=np.float64)
    e = np.exp(-np.abs(t))
    return np.where(t >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def logistic_phi(a, b):
    """phi(a, b) = log(1 + exp(-a b)) and its first two a-derivatives (Cor 23's proof, b = label in {-1, +1})."""
    t = a * b
    return _log1pexp(-t), -b * _sig(-t), b * b * _sig(t) * _sig(-t)


def neg_log_joint(model: dict, z) -> float:
    """-log p(z, x) for one point z."""
    z = np.asarray(z, dtype=np.float64)
    kind = model["kind"]
    if kind == "linear":
        X, y, sn, s = model["X"], model["y"], model["noise_scale"], model["prior_scale"]
        N, d = X.shape
        r = y - X @ z
        return float(
            r @ r / (2 * sn**2)
            + 0.5 * N * (LOG_2PI + 2 * np.log(sn))
            + z @ z / (2 * s**2)
            + 0.5 * d * (LOG_2PI + 2 * np.log(s))
        )
    if kind == "logistic":
        X, y, s = model["X"], model["y"], model["prior_scale"]
        d = X.shape[1]
        return float(np.sum(_log1pexp(-y * (X @ z))) + z @ z / (2 * s**2) + 0.5 * d * (LOG_2PI + 2 * np.log(s)))
    if kind == "glm":
        phi, _, _ = model["phi"](model["X"] @ z, model["y"])
        return float(0.5 * z @ model["Sigma_inv"] @ z + np.sum(phi))
    if kind == "hierarchical_logistic":
        theta, zs = _split(model, z)
        Si, Di = np.linalg.inv(model["Sigma"]), np.linalg.inv(model["Delta"])
        out = 0.5 * theta @ Si @ theta
        for g in range(model["n_groups"]):
            r = zs[g] - theta
            out += 0.5 * r @ Di @ r
        a = np.einsum("nd,nd->n", model["X"], zs[model["groups"]])
        out += np.sum(_log1pexp(-model["y"] * a))
        d, G = theta.size, model["n_groups"]
        out += (
            0.5 * (G + 1) * d * LOG_2PI
            + 0.5 * np.linalg.slogdet(model["Sigma"])[1]
            + 0.5 * G * np.linalg.slogdet(model["Delta"])[1]
        )
        return float(out)
    raise ValueError(f"unknown model kind {kind!r}")


def grad_neg_log_joint(model: dict, z) -> np.ndarray:
    """The gradient of :func:`neg_log_joint` in z (derived by hand, written independently of refvi)."""
    z = np.asarray(z, dtype=np.float64)
    kind = model["kind"]
    if kind == "linear":
        X, y, sn, s = model["X"], model["y"], model["noise_scale"], model["prior_scale"]
        return -(X.T @ (y - X @ z)) / sn**2 + z / s**2
    if kind == "logistic":
        X, y, s = model["X"], model["y"], model["prior_scale"]
        return -X.T @ (y * _sig(-y * (X @ z))) + z / s**2
    if kind == "glm":
        _, d1, _ = model["phi"](model["X"] @ z, model["y"])
        return model["Sigma_inv"] @ z + model["X"].T @ d1
    if kind == "hierarchical_logistic":
        theta, zs = _split(model, z)
        Si, Di = np.linalg.inv(model["Sigma"]), np.linalg.inv(model["Delta"])
        G = model["n_groups"]
        g_theta = Si @ theta
        g_z = np.zeros_like(zs)
        for g in range(G):
            r = Di @ (zs[g] - theta)
            g_theta -= r
            g_z[g] += r
        X, y, grp = model["X"], model["y"], model["groups"]
        a = np.einsum("nd,nd->n", X, zs[grp])
        w = -y * _sig(-y * a)
        for n in range(X.shape[0]):
            g_z[grp[n]] += w[n] * X[n]
        return np.concatenate([g_theta, g_z.ravel()])
    raise ValueError(f"unknown model kind {kind!r}")


def hessian_fd(model: dict, z, step: float = 1e-5) -> np.ndarray:
    """Hessian of -log p by central differences of :func:`grad_neg_log_joint`, symmetrized.

    Error per entry <= step^2 max|third derivative| / 6 + ~1e-16 |grad| / step: about 1e-10 relative for the
    O(1)-scaled models used here (third derivatives of log sigmoid are bounded by 0.1 |x|^3).
    """
    z = np.asarray(z, dtype=np.float64)
    n = z.size
    H = np.empty((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = step
        H[:, i] = (grad_neg_log_joint(model, z + e) - grad_neg_log_joint(model, z - e)) / (2 * step)
    return 0.5 * (H + H.T)


def glm_hessian(X, y, Sigma_inv, phi, z) -> np.ndarray:
    """Sigma^{-1} + sum_n phi''(x_n^T z, y_n) x_n x_n^T (the identity in the proof of seed 000 Thm 21)."""
    X = np.asarray(X, dtype=np.float64)
    _, _, d2 = phi(X @ np.asarray(z, dtype=np.float64), np.asarray(y, dtype=np.float64))
    return np.asarray(Sigma_inv, dtype=np.float64) + (X.T * d2) @ X


def glm_curvature_interval(X, Sigma_inv, theta_min: float, theta_max: float) -> tuple[float, float]:
    """(lambda_min(Sigma^{-1} + theta_min X^T X), lambda_max(Sigma^{-1} + theta_max X^T X)): the interval that
    contains every eigenvalue of -Hess log p when theta_min <= phi'' <= theta_max (Thm 21, with E000-1 fixed)."""
    X = np.asarray(X, dtype=np.float64)
    G = X.T @ X
    lo = np.linalg.eigvalsh(Sigma_inv + theta_min * G)[0]
    hi = np.linalg.eigvalsh(Sigma_inv + theta_max * G)[-1]
    return float(lo), float(hi)


def hessian_sympy(model: dict, z) -> np.ndarray:
    """Exact Hessian of -log p by SymPy differentiation of the scalar expression, evaluated at z (rational
    arithmetic for the data, float evaluation at the end).  For tiny instances (dimension <= 6, N <= 6)."""
    import sympy as sp

    z = np.asarray(z, dtype=np.float64)
    n = z.size
    v = sp.symbols(f"v0:{n}", real=True)
    kind = model["kind"]
    R = lambda x: sp.nsimplify(float(x), rational=True)  # noqa: E731
    if kind in ("linear", "logistic"):
        X, y = model["X"], model["y"]
        s = R(model["prior_scale"])
        expr = sum(vi**2 for vi in v) / (2 * s**2)
        for row, label in zip(X, y, strict=True):
            a = sum(R(xj) * vj for xj, vj in zip(row, v, strict=True))
            if kind == "linear":
                expr += (R(label) - a) ** 2 / (2 * R(model["noise_scale"]) ** 2)
            else:
                expr += sp.log(1 + sp.exp(-R(label) * a))
    elif kind == "hierarchical_logistic":
        d, G = model["X"].shape[1], model["n_groups"]
        Si = sp.Matrix(np.linalg.inv(model["Sigma"])).applyfunc(R)
        Di = sp.Matrix(np.linalg.inv(model["Delta"])).applyfunc(R)
        th = sp.Matrix(v[:d])
        zs = [sp.Matrix(v[(g + 1) * d : (g + 2) * d]) for g in range(G)]
        expr = (th.T * Si * th)[0] / 2
        for g in range(G):
            r = zs[g] - th
            expr += (r.T * Di * r)[0] / 2
        for row, label, g in zip(model["X"], model["y"], model["groups"], strict=True):
            a = sum(R(xj) * zs[int(g)][j] for j, xj in enumerate(row))
            expr += sp.log(1 + sp.exp(-R(label) * a))
    else:
        raise ValueError(f"hessian_sympy does not handle kind {kind!r}")
    H = sp.hessian(expr, v)
    f = sp.lambdify(v, H, "mpmath")
    import mpmath

    with mpmath.workdps(30):
        Hv = f(*[mpmath.mpf(float(t)) for t in z])
        return np.array([[float(Hv[i, j]) for j in range(n)] for i in range(n)])


def _split(model, z):
    d = model["X"].shape[1]
    G = model["n_groups"]
    return z[:d], z[d:].reshape(G, d)


# ---- the model constants M and mu, from the papers' formulas (never from an implementation) ---------------------
def hierarchical_prior_precision(Sigma, Delta, n_groups: int) -> np.ndarray:
    """The constant precision P of the Gaussian part of the hierarchical model (seed 000 Cor 25, E000-5 fixed):
    P_{theta theta} = Sigma^{-1} + G Delta^{-1}, P_{theta z_g} = -Delta^{-1}, P_{z_g z_g} = Delta^{-1}."""
    Si, Di = np.linalg.inv(np.asarray(Sigma, float)), np.linalg.inv(np.asarray(Delta, float))
    d, G = Si.shape[0], int(n_groups)
    P = np.zeros(((G + 1) * d, (G + 1) * d))
    P[:d, :d] = Si + G * Di
    for g in range(1, G + 1):
        s = slice(g * d, (g + 1) * d)
        P[:d, s] = P[s, :d] = -Di
        P[s, s] = Di
    return 0.5 * (P + P.T)


def model_constants(model: dict) -> tuple[float, float]:
    """(mu, M) with mu I <= -Hess log p <= M I for every z (seed 000 Defs. 19-20), each the tightest value:

    * gaussian / linear: the extreme eigenvalues of the constant Hessian (Cor 22 with E000-2 fixed);
    * logistic: mu = 1/s^2 (approached far from the data), M = lambda_max(I/s^2 + X^T X/4) (attained at z = 0; Cor 23
      with E000-1 fixed);
    * hierarchical_logistic: mu = lambda_min(P), M = lambda_max(P + blockdiag(0, X_g^T X_g / 4)) (attained at z = 0;
      Cor 25 with E000-5 fixed);
    * cosine: M = beta + |alpha| ||b||^2 (attained), mu = max(0, beta - |alpha| ||b||^2);
    * callable: the constants the instance declares (``smoothness``, ``strong_convexity``).
    """
    kind = model["kind"]
    if kind == "gaussian":
        lam = np.linalg.eigvalsh(0.5 * (model["precision"] + np.transpose(model["precision"])))
        return float(lam[0]), float(lam[-1])
    if kind == "linear":
        X, sn, s = np.asarray(model["X"], float), model["noise_scale"], model["prior_scale"]
        lam = np.linalg.eigvalsh(np.eye(X.shape[1]) / s**2 + X.T @ X / sn**2)
        return float(lam[0]), float(lam[-1])
    if kind == "logistic":
        X, s = np.asarray(model["X"], float), model["prior_scale"]
        return 1.0 / s**2, float(np.linalg.eigvalsh(np.eye(X.shape[1]) / s**2 + 0.25 * X.T @ X)[-1])
    if kind == "hierarchical_logistic":
        X, grp, G = np.asarray(model["X"], float), np.asarray(model["groups"]), int(model["n_groups"])
        d = X.shape[1]
        P = hierarchical_prior_precision(model["Sigma"], model["Delta"], G)
        B = np.zeros_like(P)
        for g in range(G):
            Xg = X[grp == g]
            B[(g + 1) * d : (g + 2) * d, (g + 1) * d : (g + 2) * d] = 0.25 * Xg.T @ Xg
        return float(np.linalg.eigvalsh(P)[0]), float(np.linalg.eigvalsh(P + B)[-1])
    if kind == "cosine":
        curv = abs(model["alpha"]) * float(np.dot(model["b"], model["b"]))
        return max(0.0, model["beta"] - curv), model["beta"] + curv
    if kind == "callable":
        if model.get("smoothness") is None:
            raise ValueError("a 'callable' model declares no smoothness constant")
        return float(model.get("strong_convexity", 0.0)), float(model["smoothness"])
    raise ValueError(f"unknown model kind {kind!r}")

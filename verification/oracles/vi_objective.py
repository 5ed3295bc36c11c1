"""Exact VI objective oracle for the Gaussian family q = N(m, C C^T) (seed 000 Eq. 1-2; seed 002 §3).

Imports numpy / scipy only (never refvi).  Models are plain dicts:

* ``{"kind": "gaussian", "mean": (d,), "precision": (d, d)}``
* ``{"kind": "linear", "X": (N, d), "y": (N,), "noise_scale": s_n, "prior_scale": s}``
* ``{"kind": "logistic", "X": (N, d), "y": (N,) in {-1, +1}, "prior_scale": s}``
* ``{"kind": "hierarchical", "X": (N, d), "y": (N,), "groups": (N,) ints, "prior_scale": s, "group_scale": g}``
  (optional "n_groups"): seed 000 Cor 25's model with scalar scales, latent (theta, z_0, .., z_{G-1}); treated as
  a logistic likelihood on block-embedded rows plus the Gaussian prior's precision P (see _logistic_parts).
* ``{"kind": "cosine", "alpha": a, "b": (d,), "phi": p, "beta": k, "z0": (d,)}``: -log p = a cos(b^T z + p)
  + k/2 ||z - z0||^2 (unnormalized); free_energy only, by E cos(b^T z + p) = cos(b^T m + p)
  exp(-||C^T b||^2 / 2).

``free_energy(model, m, C) -> (l, gm, gC)`` with l(w) = -E_{z ~ q} log p(z, x) (prior N(0, s^2 I) and likelihood
normalized), gm = dl/dm and gC = dl/dC over the full matrix (not projected onto V).

* gaussian / linear: -log p is a quadratic 1/2 z^T A z - b^T z + c, so l = 1/2 m^T A m + 1/2 tr(C^T A C) - b^T m + c,
  gm = A m - b, gC = A C (closed form).
* logistic: E softplus(-y x^T z) depends on (m, C) only through a = y x^T m and beta = ||C^T x||; the expectations
  E_t softplus(-(a + beta t)), E_t sigmoid(-(a + beta t)) and E_t sigmoid'(a + beta t) over t ~ N(0, 1) are taken by
  probabilists' Gauss-Hermite (200 nodes) when beta <= 2 and by a graded composite Gauss-Legendre rule otherwise
  (measured agreement with adaptive QUADPACK in quadrature.py: 1e-15 relative for beta in [0, 1e4], |a| <= 50).
  Stein's lemma gives gC = sum_n E[sigmoid'(s_n)] x_n x_n^T C + C / s^2.  With C = 0 this is -log p and its
  gradient exactly (beta = 0), which makes free_energy(model, z, 0) a pointwise oracle for -log p too.

``objective(model, m, C) -> l - log|det C|`` (seed 000's f = l + h, entropy constant dropped);
``grad_objective(model, m, C) -> (gm, gC - C^{-T})`` (full matrix); ``stationarity(model, m, C, structure)`` the
norm of that gradient projected onto V, relative to 1 + max |grad l| (0 at the optimum);
``quadratic_form(model) -> (A, b, c)`` for the quadratic kinds; ``ridge_moments(a, beta)`` the three
one-dimensional expectations above (:mod:`.ridge_moments`).

``solve(model, structure) -> (m*, C*, f*)``: closed form for gaussian / linear (diag: the mean-field optimum
C_ii = A_ii^{-1/2}), Newton's method on the exact objective for logistic (gradient norm <= 1e-9; in practice ~1e-14).
For "sym" C* is the symmetric square root of the optimal covariance, for "tril"/"full" its Cholesky factor.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles.ridge_moments import _dsigmoid, _sigmoid, ridge_moments

LOG_2PI = float(np.log(2.0 * np.pi))
_STRUCTURES = ("full", "tril", "sym", "diag")


# ----------------------------------------------------------------------------------------------------------- input
def _arr(x, name, ndim):
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains non-finite values")
    return a


def _pos(x, name):
    v = float(x)
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a positive finite number, got {x!r}")
    return v


def _dim(model) -> int:
    if not isinstance(model, dict) or "kind" not in model:
        raise TypeError("model must be a dict with a 'kind' key")
    kind = model["kind"]
    if kind == "gaussian":
        return int(np.shape(model["mean"])[0])
    if kind in ("linear", "logistic"):
        return int(np.shape(model["X"])[1])
    if kind == "hierarchical":
        G = int(model.get("n_groups", np.max(model["groups"]) + 1))
        return (G + 1) * int(np.shape(model["X"])[1])
    if kind == "cosine":
        return int(np.shape(model["b"])[0])
    raise ValueError(f"unknown model kind {kind!r}; use 'gaussian', 'linear', 'logistic', 'hierarchical' or 'cosine'")


def _params(model, m, C):
    d = _dim(model)
    m = _arr(m, "m", 1)
    C = _arr(C, "C", 2)
    if m.shape != (d,) or C.shape != (d, d):
        raise ValueError(f"expected m of shape ({d},) and C of shape ({d}, {d}), got {m.shape}, {C.shape}")
    return d, m, C


# ------------------------------------------------------------------------------------------------------ quadratics
def quadratic_form(model):
    """(A, b, c) with -log p(z) = 1/2 z^T A z - b^T z + c, for 'gaussian' and 'linear' models."""
    kind = model["kind"]
    if kind == "gaussian":
        mu = _arr(model["mean"], "mean", 1)
        P = _arr(model["precision"], "precision", 2)
        d = mu.shape[0]
        if P.shape != (d, d) or not np.allclose(P, P.T, rtol=0, atol=0):
            raise ValueError("precision must be a symmetric (d, d) matrix")
        sign, logdet = np.linalg.slogdet(P)
        if sign <= 0 or np.linalg.eigvalsh(P)[0] <= 0:
            raise ValueError("precision must be positive definite")
        c = 0.5 * mu @ P @ mu - 0.5 * logdet + 0.5 * d * LOG_2PI
        return P, P @ mu, float(c)
    if kind == "linear":
        X = _arr(model["X"], "X", 2)
        y = _arr(model["y"], "y", 1)
        if y.shape[0] != X.shape[0]:
            raise ValueError("X and y disagree in length")
        sn = _pos(model.get("noise_scale", 1.0), "noise_scale")
        s = _pos(model.get("prior_scale", 1.0), "prior_scale")
        N, d = X.shape
        A = X.T @ X / sn**2 + np.eye(d) / s**2
        b = X.T @ y / sn**2
        c = y @ y / (2 * sn**2) + 0.5 * N * (LOG_2PI + 2 * np.log(sn)) + 0.5 * d * (LOG_2PI + 2 * np.log(s))
        return A, b, float(c)
    raise ValueError(f"model kind {kind!r} is not quadratic")


# -------------------------------------------------------------------------------------------------------- logistic
def _labels(model, n):
    y = _arr(model["y"], "y", 1)
    if y.shape[0] != n:
        raise ValueError("X and y disagree in length")
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("logistic labels y must be in {-1, +1}")
    return y


def _logistic_parts(model):
    """(Xt, y, P, c): -log p(z) = 1/2 z^T P z + c + sum_n softplus(-y_n xt_n^T z) for the two logistic kinds.

    logistic: Xt = X, P = I / s^2, c = (d/2)(log 2 pi + 2 log s).
    hierarchical: z = (theta, z_0, .., z_{G-1}), theta ~ N(0, s^2 I), z_g ~ N(theta, g^2 I), y_n | z_{g(n)}
    logistic; xt_n is x_n placed in block g(n) + 1; P is read off the quadratic
    |theta|^2 / (2 s^2) + sum_g |z_g - theta|^2 / (2 g^2); c = (D/2) log 2 pi + d log s + G d log g.
    """
    X = _arr(model["X"], "X", 2)
    y = _labels(model, X.shape[0])
    s = _pos(model.get("prior_scale", 1.0), "prior_scale")
    N, d = X.shape
    if model["kind"] == "logistic":
        return X, y, np.eye(d) / s**2, 0.5 * d * (LOG_2PI + 2 * np.log(s))
    g = _pos(model.get("group_scale", 1.0), "group_scale")
    groups = np.asarray(model["groups"])
    if groups.shape != (N,) or not np.issubdtype(groups.dtype, np.integer) or groups.min() < 0:
        raise ValueError("groups must be N non-negative integers")
    G = int(model.get("n_groups", groups.max() + 1))
    D = (G + 1) * d
    Xt = np.zeros((N, D))
    for n in range(N):
        Xt[n, (groups[n] + 1) * d : (groups[n] + 2) * d] = X[n]
    P = np.zeros((D, D))
    I = np.eye(d)
    P[:d, :d] += I / s**2
    for k in range(G):  # |z_k - theta|^2 / (2 g^2) = 1/2 [theta; z_k]^T [[I, -I], [-I, I]] / g^2 [.]
        sl = slice((k + 1) * d, (k + 2) * d)
        P[:d, :d] += I / g**2
        P[sl, sl] += I / g**2
        P[:d, sl] -= I / g**2
        P[sl, :d] -= I / g**2
    return Xt, y, P, 0.5 * D * LOG_2PI + d * np.log(s) + G * d * np.log(g)


def _logistic_free_energy(model, m, C):
    X, y, P, c = _logistic_parts(model)
    a = y * (X @ m)
    V = X @ C  # rows v_n = C^T x_n
    beta = np.sqrt(np.sum(V * V, axis=1))
    sp, sg, ds = ridge_moments(a, beta)
    PC = P @ C
    l = c + 0.5 * m @ P @ m + 0.5 * np.sum(C * PC) + float(np.sum(sp))
    gm = P @ m - X.T @ (y * sg)
    gC = PC + (X.T * ds) @ V
    return float(l), gm, gC


def _cosine_free_energy(model, m, C):
    alpha = float(model["alpha"])
    b = _arr(model["b"], "b", 1)
    phi = float(model.get("phi", 0.0))
    beta = float(model.get("beta", 1.0))
    z0 = _arr(model.get("z0", np.zeros_like(b)), "z0", 1)
    v = C.T @ b
    damp = np.exp(-0.5 * v @ v)
    arg = b @ m + phi
    D = m - z0
    l = alpha * np.cos(arg) * damp + 0.5 * beta * (D @ D + np.sum(C * C))
    gm = -alpha * np.sin(arg) * damp * b + beta * D
    gC = -alpha * np.cos(arg) * damp * np.outer(b, v) + beta * C
    return float(l), gm, gC


# ------------------------------------------------------------------------------------------------------ public API
def free_energy(model, m, C):
    """(l, dl/dm, dl/dC) with l(m, C) = -E_{z ~ N(m, C C^T)} log p(z, x); gC is the full (unprojected) gradient."""
    d, m, C = _params(model, m, C)
    if model["kind"] in ("logistic", "hierarchical"):
        return _logistic_free_energy(model, m, C)
    if model["kind"] == "cosine":
        return _cosine_free_energy(model, m, C)
    A, b, c = quadratic_form(model)
    l = 0.5 * m @ A @ m + 0.5 * np.sum(C * (A @ C)) - b @ m + c
    return float(l), A @ m - b, A @ C


def objective(model, m, C) -> float:
    """f(m, C) = l(m, C) - log|det C| (seed 000 f = l + h); +inf when C is singular."""
    l, _, _ = free_energy(model, m, C)
    sign, logdet = np.linalg.slogdet(np.asarray(C, dtype=np.float64))
    return float("inf") if sign == 0 else float(l - logdet)


def grad_objective(model, m, C):
    """(df/dm, df/dC) over the full matrix: (gm, gC - C^{-T})."""
    _, gm, gC = free_energy(model, m, C)
    return gm, gC - np.linalg.inv(np.asarray(C, dtype=np.float64)).T


def stationarity(model, m, C, structure: str) -> float:
    """How far (m, C) is from stationary for f = l + h over V = ``structure``: ||(df/dm, proj_V df/dC)|| (the
    Frobenius norm of both) divided by 1 + max |grad l| there; 0 at the VI optimum (f is strictly convex on W for
    these models).  proj_V: the lower triangle (tril), the diagonal (diag), the symmetric part (sym), all (full)."""
    _, gm, gC = free_energy(model, m, C)
    G = gC - np.linalg.inv(np.asarray(C, dtype=np.float64)).T
    d = G.shape[0]
    if structure == "sym":
        G = 0.5 * (G + G.T)
    elif structure in ("tril", "diag"):
        G = np.where(_mask(d, structure), G, 0.0)
    scale = 1.0 + float(np.abs(np.concatenate([gm, gC.ravel()])).max())
    return float(np.sqrt(gm @ gm + np.sum(G * G))) / scale


def _scale(cov, structure):
    if structure in ("tril", "full"):
        return np.linalg.cholesky(cov)
    if structure == "sym":
        lam, Q = np.linalg.eigh(0.5 * (cov + cov.T))
        S = (Q * np.sqrt(lam)) @ Q.T
        return 0.5 * (S + S.T)  # exactly symmetric (an element of V = S^d)
    raise ValueError(f"structure {structure!r} has no closed form here")


def solve(model, structure: str = "tril"):
    """The VI optimum (m*, C*, f*) over C in V = ``structure``.

    gaussian / linear: m* = A^{-1} b, C* C*^T = A^{-1} (Cholesky factor for tril/full, symmetric root for sym,
    C*_ii = (A_ii)^{-1/2} for diag, the mean-field optimum).  logistic: Newton on the exact objective.
    """
    if structure not in _STRUCTURES:
        raise ValueError(f"structure must be one of {_STRUCTURES}, got {structure!r}")
    d = _dim(model)
    if model["kind"] == "cosine":
        raise ValueError("solve() supports 'gaussian', 'linear', 'logistic' and 'hierarchical' models")
    if model["kind"] in ("gaussian", "linear"):
        A, b, _ = quadratic_form(model)
        m = np.linalg.solve(A, b)
        if structure == "diag":
            C = np.diag(1.0 / np.sqrt(np.diag(A)))
        else:
            C = _scale(np.linalg.inv(A), structure)
        return m, C, objective(model, m, C)
    m, L = _newton_logistic(model, d, "diag" if structure == "diag" else "tril")
    C = L if structure in ("tril", "full", "diag") else _scale(L @ L.T, "sym")
    return m, C, objective(model, m, C)


def _mask(d, structure):
    return np.eye(d, dtype=bool) if structure == "diag" else np.tril(np.ones((d, d), dtype=bool))


def _newton_logistic(model, d, structure, tol=1e-9, max_iter=100):
    """Damped Newton on packed (m, C[mask]) from the Laplace approximation.  The Hessian is a forward difference of
    the exact gradient, reused (chord steps) while each step still shrinks the gradient 10-fold."""
    X, y, P, _ = _logistic_parts(model)
    mask = _mask(d, structure)

    def unpack(p):
        C = np.zeros((d, d))
        C[mask] = p[d:]
        return p[:d], C

    def f(p):
        m, C = unpack(p)
        if np.any(np.diag(C) <= 0):
            return float("inf")
        return objective(model, m, C)

    def g(p):
        m, C = unpack(p)
        gm, gC = grad_objective(model, m, C)
        return np.concatenate([gm, gC[mask]])

    # start: MAP and the Laplace covariance
    m = np.zeros(d)
    for _ in range(100):
        t = y * (X @ m)
        grad = P @ m - X.T @ (y * _sigmoid(-t))
        H = P + (X.T * _dsigmoid(t)) @ X
        m = m - np.linalg.solve(H, grad)
        if np.linalg.norm(grad) < 1e-12:
            break
    L0 = np.linalg.cholesky(np.linalg.inv(H))
    if structure == "diag":
        L0 = np.diag(1.0 / np.sqrt(np.diag(H)))
    p = np.concatenate([m, L0[mask]])
    gp = g(p)
    best, stall = np.inf, 0
    Hs, prev = None, np.inf
    for _ in range(max_iter):
        gn = float(np.linalg.norm(gp))
        # iterate past tol until the gradient stops shrinking (rounding floor), so the answer is well inside tol
        stall = stall + 1 if gn >= 0.5 * best else 0
        best = min(best, gn)
        if gn <= 1e-3 * tol or (gn <= tol and stall >= 2):
            break
        if Hs is None or gn > 0.1 * prev:
            n, h = p.size, 1e-6
            Hs = np.empty((n, n))
            for j in range(n):
                e = np.zeros(n)
                e[j] = h
                Hs[:, j] = (g(p + e) - gp) / h
            Hs = 0.5 * (Hs + Hs.T)
        prev = gn
        try:
            step = -np.linalg.solve(Hs, gp)
        except np.linalg.LinAlgError:
            step = -gp
        if gp @ step >= 0:
            step = -gp
        f0, t = f(p), 1.0
        # Armijo backtracking, but accept a full step that shrinks the gradient (f is flat to rounding near p*)
        while f(p + t * step) > f0 + 1e-4 * t * (gp @ step) and t > 1e-12:
            if t == 1.0 and np.isfinite(f(p + step)) and np.linalg.norm(g(p + step)) < 0.5 * np.linalg.norm(gp):
                break
            t *= 0.5
        p = p + t * step
        gp = g(p)
    if np.linalg.norm(gp) > tol:
        raise RuntimeError(f"logistic VI solve did not converge (gradient norm {np.linalg.norm(gp):.3g})")
    return unpack(p)

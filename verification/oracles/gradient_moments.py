"""Exact second moments E||g(u)||^2 of the reparameterization estimators (seed 000 Thm 1-3, Thm 26, §5).

Independent oracle: NumPy / SciPy only, never refvi.  Models are plain dicts, as in :mod:`vi_objective`:

    {"kind": "gaussian", "mean": (d,), "precision": (d, d)}
    {"kind": "linear", "X": (N, d), "y": (N,), "noise_scale": s_n, "prior_scale": s_p}
    {"kind": "logistic", "X": (N, d), "y": (N,) in {-1,+1}, "prior_scale": s_p}
    {"kind": "cosine", "alpha": a, "b": (d,), "phi": p, "beta": be, "z0": (d,)}
        -log p(z) = a cos(b^T z + p) + (be/2)||z - z0||^2 (+ const)

Estimators at w = (m, C), u ~ N(0, I), phi = -log p, z = C u + m:

    g_energy(u) = (grad phi(z), P_V(grad phi(z) u^T))          (seed 000 Eq. 6)
    g_ent(u)    = g_energy(u) + (0, -P_V(C^{-T}))               (seed 000 Eq. 8, Lemma 16.2)

Two roads to E||g||^2:

* quadratic phi = 1/2 (z - mu)^T H (z - mu): closed form by Isserlis.  With A = H C, b = H (m - mu),
  E[X_ij X_kl] = (a_i.a_k + b_i b_k) delta_jl + A_ij A_kl + A_il A_kj for X = (A u + b) u^T, summed over the
  coordinates V keeps (:func:`energy_second_moment_quadratic`);
* any phi in d <= 3: tensor-product probabilists' Gauss-Hermite rule (:func:`hermite_tensor_rule`), with an error
  estimate from a second, larger order (:func:`energy_second_moment_quadrature`).
"""

from __future__ import annotations

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy.optimize import minimize

from refvi.verification.oracles.matrices import proj_V as proj

STRUCTURES = ("full", "tril", "sym", "diag")


# ---- small independent helpers --------------------------------------------------------------------------------------
def hermite_tensor_rule(d: int, order: int) -> tuple[np.ndarray, np.ndarray]:
    """(U, w): order^d nodes (rows of U) and weights (sum 1) of the tensor Gauss-Hermite rule for N(0, I_d).

    Meant for d <= 3 (or low orders, e.g. order 3 in d <= 5); refuses rules above 250000 nodes.

    Exact for polynomials of degree <= 2*order - 1 in each coordinate.
    """
    if int(d) < 1 or int(order) < 1:
        raise ValueError(f"need d >= 1 and order >= 1, got d={d}, order={order}")
    if int(order) ** int(d) > 250_000:
        raise ValueError(
            f"tensor rule too large: order^d = {order}^{d} > 250000 nodes (meant for d <= 3, or low orders in small d)"
        )
    t, w = hermegauss(int(order))
    w = w / w.sum()
    grids = np.meshgrid(*([t] * d), indexing="ij")
    wgrids = np.meshgrid(*([w] * d), indexing="ij")
    U = np.stack([g.ravel() for g in grids], axis=1)
    W = np.prod(np.stack([g.ravel() for g in wgrids], axis=1), axis=1)
    return U, W


def degree3_rule(d: int) -> np.ndarray:
    """Rows +-sqrt(d) e_i: an equal-weight rule exact for every polynomial of degree <= 3 under N(0, I_d)."""
    E = np.sqrt(d) * np.eye(d)
    return np.concatenate([E, -E], axis=0)


# ---- models ---------------------------------------------------------------------------------------------------------
def quadratic_form(model: dict) -> tuple[np.ndarray, np.ndarray]:
    """(H, mu) with -log p(z) = 1/2 (z - mu)^T H (z - mu) + const, for 'gaussian' and 'linear' models."""
    kind = model["kind"]
    if kind == "gaussian":
        H = np.asarray(model["precision"], dtype=np.float64)
        return H, np.asarray(model["mean"], dtype=np.float64)
    if kind == "linear":
        X = np.asarray(model["X"], dtype=np.float64)
        y = np.asarray(model["y"], dtype=np.float64)
        sn, sp = float(model["noise_scale"]), float(model["prior_scale"])
        H = X.T @ X / sn**2 + np.eye(X.shape[1]) / sp**2
        return H, np.linalg.solve(H, X.T @ y / sn**2)
    raise ValueError(f"model kind {kind!r} is not quadratic")


def grad_phi(model: dict, Z: np.ndarray) -> np.ndarray:
    """grad of phi = -log p at each row of Z (S x d), from the model's formula."""
    Z = np.atleast_2d(np.asarray(Z, dtype=np.float64))
    kind = model["kind"]
    if kind in ("gaussian", "linear"):
        H, mu = quadratic_form(model)
        return (Z - mu) @ H.T
    if kind == "logistic":
        X = np.asarray(model["X"], dtype=np.float64)
        y = np.asarray(model["y"], dtype=np.float64)
        T = y[None, :] * (Z @ X.T)
        s = 0.5 * (1.0 - np.tanh(0.5 * T))  # sigmoid(-T), stable for both signs
        return -(s * y[None, :]) @ X + Z / float(model["prior_scale"]) ** 2
    if kind == "cosine":
        b = np.asarray(model["b"], dtype=np.float64)
        z0 = np.asarray(model.get("z0", np.zeros(b.shape[0])), dtype=np.float64)
        a, ph, be = float(model["alpha"]), float(model.get("phi", 0.0)), float(model["beta"])
        return -a * np.sin(Z @ b + ph)[:, None] * b[None, :] + be * (Z - z0)
    raise ValueError(f"unknown model kind {kind!r}")


def phi_value(model: dict, z) -> float:
    """phi(z) = -log p(z) up to an additive constant (for locating a stationary point)."""
    z = np.asarray(z, dtype=np.float64)
    kind = model["kind"]
    if kind in ("gaussian", "linear"):
        H, mu = quadratic_form(model)
        return float(0.5 * (z - mu) @ H @ (z - mu))
    if kind == "logistic":
        X = np.asarray(model["X"], dtype=np.float64)
        y = np.asarray(model["y"], dtype=np.float64)
        return float(np.sum(np.logaddexp(0.0, -y * (X @ z))) + 0.5 * z @ z / float(model["prior_scale"]) ** 2)
    if kind == "cosine":
        b = np.asarray(model["b"], dtype=np.float64)
        z0 = np.asarray(model.get("z0", np.zeros(b.shape[0])), dtype=np.float64)
        return float(model["alpha"]) * float(np.cos(z @ b + float(model.get("phi", 0.0)))) + 0.5 * float(
            model["beta"]
        ) * float((z - z0) @ (z - z0))
    raise ValueError(f"unknown model kind {kind!r}")


def stationary_point(model: dict, x0=None, tol: float = 1e-12) -> np.ndarray:
    """A local minimizer of phi = -log p (so grad phi = 0): BFGS on phi, then Newton polishing on grad phi = 0.

    For 'gaussian' / 'linear' it is mu exactly; for convex models it is the mode.  Raises ValueError if the final
    gradient norm exceeds 1e3 * ``tol``.
    """
    kind = model["kind"]
    if kind in ("gaussian", "linear"):
        return quadratic_form(model)[1].copy()
    d = _dim(model)
    x = np.zeros(d) if x0 is None else np.asarray(x0, dtype=np.float64).copy()
    g = lambda z: grad_phi(model, z[None, :])[0]
    res = minimize(lambda z: phi_value(model, z), x, jac=g, method="BFGS", options={"gtol": 1e-10, "maxiter": 1000})
    x = res.x
    for _ in range(30):  # Newton on grad phi = 0 with a central-difference Jacobian
        gx = g(x)
        if np.linalg.norm(gx) <= tol:
            break
        x = x - np.linalg.lstsq(_jac_fd(g, x), gx, rcond=None)[0]
    if not np.linalg.norm(g(x)) <= 1e3 * tol:
        raise ValueError(f"no stationary point found (|grad| = {np.linalg.norm(g(x)):.3g})")
    return x


def _jac_fd(g, x, h=1e-6):
    d = x.shape[0]
    J = np.empty((d, d))
    for j in range(d):
        e = np.zeros(d)
        e[j] = h
        J[:, j] = (g(x + e) - g(x - e)) / (2 * h)
    return J


def _dim(model):
    if model["kind"] == "cosine":
        return int(np.asarray(model["b"]).shape[0])
    if model["kind"] == "gaussian":
        return int(np.asarray(model["mean"]).shape[0])
    return int(np.asarray(model["X"]).shape[1])


# ---- closed forms for quadratic phi ---------------------------------------------------------------------------------
def projected_outer_moment(A: np.ndarray, b: np.ndarray, structure: str) -> float:
    """E||P_V((A u + b) u^T)||_F^2 for u ~ N(0, I), by Isserlis (see module docstring)."""
    A = np.asarray(A, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    row = np.sum(A * A, axis=1) + b * b  # ||a_i||^2 + b_i^2
    if structure == "full":
        return float(A.shape[1] * row.sum() + 2.0 * np.sum(A * A))
    if structure == "tril":
        d = A.shape[0]
        count = np.arange(1, d + 1)  # row i keeps columns j <= i
        return float(count @ row + 2.0 * np.sum(np.tril(A) ** 2))
    if structure == "diag":
        return float(row.sum() + 2.0 * np.sum(np.diag(A) ** 2))
    if structure == "sym":
        full = A.shape[1] * row.sum() + 2.0 * np.sum(A * A)
        cross = row.sum() + np.trace(A @ A) + np.trace(A) ** 2  # sum_ij E X_ij X_ji
        return float(0.5 * (full + cross))
    raise ValueError(f"structure must be one of {STRUCTURES}, got {structure!r}")


def grad_free_energy_quadratic(H, mu, m, C, structure):
    """(grad_m l, grad_C l) = (H (m - mu), P_V(H C)) for phi = 1/2 (z - mu)^T H (z - mu)."""
    return H @ (m - mu), proj(H @ C, structure)


def energy_second_moment_quadratic(H, mu, m, C, structure: str) -> float:
    """E||g_energy(u)||^2 (one sample) for quadratic phi, closed form."""
    H, mu, m, C = (np.asarray(x, dtype=np.float64) for x in (H, mu, m, C))
    A, b = H @ C, H @ (m - mu)
    return float(np.sum(A * A) + b @ b) + projected_outer_moment(A, b, structure)


def entropy_second_moment_quadratic(H, mu, m, C, structure: str) -> float:
    """E||g_ent(u)||^2 = E||g_energy||^2 + 2<grad l, grad h> + ||grad h||^2 for quadratic phi, closed form."""
    H, mu, m, C = (np.asarray(x, dtype=np.float64) for x in (H, mu, m, C))
    _, glC = grad_free_energy_quadratic(H, mu, m, C, structure)
    ghC = -proj(np.linalg.inv(C).T, structure)
    return (
        energy_second_moment_quadratic(H, mu, m, C, structure)
        + 2.0 * float(np.sum(glC * ghC))
        + float(np.sum(ghC * ghC))
    )


def energy_variance_quadratic(H, mu, m, C, structure: str) -> float:
    """E||g_energy - E g_energy||^2 = E||g||^2 - ||grad l||^2 (also the variance of g_ent)."""
    glm, glC = grad_free_energy_quadratic(
        np.asarray(H, float), np.asarray(mu, float), np.asarray(m, float), np.asarray(C, float), structure
    )
    return energy_second_moment_quadratic(H, mu, m, C, structure) - float(glm @ glm + np.sum(glC * glC))


# ---- quadrature for any phi (d <= 3) --------------------------------------------------------------------------------
def energy_samples(model: dict, m, C, U, structure: str, entropy: bool = False):
    """Per-sample (gm, gC) of g_energy (or g_ent) at the rows of U: arrays (S, d) and (S, d, d)."""
    m, C, U = (np.asarray(x, dtype=np.float64) for x in (m, C, U))
    G = grad_phi(model, U @ C.T + m)
    GC = proj(G[:, :, None] * U[:, None, :], structure)
    if entropy:
        GC = GC - proj(np.linalg.inv(C).T, structure)[None]
    return G, GC


def _moment_at_order(model, m, C, structure, order, entropy):
    U, w = hermite_tensor_rule(np.shape(m)[0], order)
    G, GC = energy_samples(model, m, C, U, structure, entropy)
    sq = np.sum(G * G, axis=1) + np.sum(GC * GC, axis=(1, 2))
    return float(w @ sq)


def second_moment_quadrature(
    model: dict, m, C, structure: str, *, entropy: bool = False, order: int = 30, check_order: int | None = None
) -> tuple[float, float]:
    """(E||g||^2, error estimate) by tensor Gauss-Hermite of ``order`` and of ``check_order`` (default order + 16).

    The error estimate is |Q_order - Q_check_order|; for the analytic integrands here the error of the larger rule is
    far below it, so it bounds the error of the returned (larger-order) value.
    """
    k = order + 16 if check_order is None else check_order
    q1 = _moment_at_order(model, m, C, structure, order, entropy)
    q2 = _moment_at_order(model, m, C, structure, k, entropy)
    return q2, abs(q2 - q1)


def mean_quadrature(model: dict, m, C, structure: str, *, order: int = 30, entropy: bool = False):
    """(E gm, E gC) of g_energy (or g_ent) by tensor Gauss-Hermite (d <= 3)."""
    U, w = hermite_tensor_rule(np.shape(m)[0], order)
    G, GC = energy_samples(model, m, C, U, structure, entropy)
    return w @ G, np.tensordot(w, GC, axes=1)


# ---- the bounds -----------------------------------------------------------------------------------------------------
def thm1_bounds(M: float, m, mbar, C) -> tuple[float, float]:
    """Seed 000 Thm 1: ((d+1) M^2 ||m - mbar||^2 + (d+3) M^2 ||C||_F^2,  (d+3) M^2 ||w - wbar||^2)."""
    m, mbar, C = (np.asarray(x, dtype=np.float64) for x in (m, mbar, C))
    d = m.shape[0]
    dm, c2 = float(np.sum((m - mbar) ** 2)), float(np.sum(C * C))
    return (d + 1) * M**2 * dm + (d + 3) * M**2 * c2, (d + 3) * M**2 * (dm + c2)

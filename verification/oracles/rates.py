"""Oracles for the rate theorems of seed 000 §3 (numpy / scipy and the sibling oracles only, never refvi code).

* ``mode(model)``: argmax log p (the wbar = (mode, 0) of Thm 6 and Thm 26): closed form for quadratic models,
  Newton's method on the oracle's -log p for logistic ones.
* ``energy_sample(model, m, C, u, structure)``: g_energy(u) = T*(grad(-log p)(C u + m)) (seed 000 Eq. 6, Lemma 33),
  from :mod:`.hessian_bounds`' gradient, written independently of refvi.
* ``proj(X, structure)``: the projection onto V.
* ``worst_case_recursion(gammas, mu, sigma2, r0)``: r_{t+1} = (1 - gamma_t mu) r_t + 2 sigma^2 gamma_t^2 (Thm 27,
  Eq. 18 taken with equality: the largest sequence the hypothesis allows).
* ``multiplicative_noise_moments(gammas, curvature, a, r0)``: for f(w) = (curvature/2) w^2 on R, W = R, and the
  estimator g = curvature * w * (1 + xi sqrt(a/curvature^2 - 1)), xi = +-1 with probability 1/2 (unbiased,
  E g^2 = a w^2: quadratically bounded with (a, b = 0)), the exact second moments E[w_s w_t] of SGD,
  r_{t+1} = (1 - 2 gamma_t c + gamma_t^2 a) r_t and E[w_s w_t] = prod_{s <= k < t}(1 - gamma_k c) r_s.
  This generic instance meets the hypotheses of Thms 7, 9, 10 exactly and makes their expectations computable
  without Monte Carlo.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles.matrices import proj_V as proj

from . import hessian_bounds as hb
from . import vi_objective as vo


def mode(model) -> np.ndarray:
    """argmin_z -log p(z, x) (unique: the models are strongly convex)."""
    if model["kind"] in ("gaussian", "linear"):
        A, b, _ = vo.quadratic_form(model)
        return np.linalg.solve(A, b)
    d = np.shape(model["X"])[1]
    z = np.zeros(d)
    for _ in range(200):
        g = hb.grad_neg_log_joint(model, z)
        H = hb.hessian_fd(model, z)
        H = 0.5 * (H + H.T)
        step = np.linalg.solve(H, g)
        z = z - step
        if np.linalg.norm(g) < 1e-13 * max(1.0, float(np.linalg.norm(z))):
            break
    return z


def energy_sample(model, m, C, u, structure: str):
    """(gm, gC) = T*(grad(-log p)(C u + m)) = (gz, proj_V(gz u^T))."""
    z = C @ u + m
    if model["kind"] in ("gaussian", "linear"):
        A, b, _ = vo.quadratic_form(model)
        gz = A @ z - b
    else:
        gz = hb.grad_neg_log_joint(model, z)
    return gz, proj(np.outer(gz, u), structure)


def grad_l(model, m, C, structure: str):
    """Exact grad l projected onto V (quadrature for logistic models)."""
    _, gm, gC = vo.free_energy(model, m, C)
    return gm, proj(gC, structure)


def grad_f(model, m, C, structure: str):
    gm, gC = vo.grad_objective(model, m, C)
    return gm, proj(gC, structure)


def worst_case_recursion(gammas, mu: float, sigma2: float, r0: float) -> np.ndarray:
    """r_0..r_T of r_{t+1} = (1 - gamma_t mu) r_t + 2 sigma^2 gamma_t^2."""
    r = np.empty(len(gammas) + 1)
    r[0] = r0
    for t, g in enumerate(gammas):
        r[t + 1] = (1.0 - g * mu) * r[t] + 2.0 * sigma2 * g * g
    return r


def multiplicative_noise_moments(gammas, curvature: float, a: float, r0: float = 1.0):
    """(r, E) with r_t = E w_t^2 and E[s, t] = E[w_s w_t] for t, s = 0..T (see the module docstring)."""
    g = np.asarray(gammas, dtype=np.float64)
    T = g.size
    r = np.empty(T + 1)
    r[0] = r0
    for t in range(T):
        r[t + 1] = r[t] * (1.0 - 2.0 * g[t] * curvature + g[t] ** 2 * a)
    decay = np.concatenate([[1.0], np.cumprod(1.0 - g * curvature)])  # prod_{k < t}(1 - gamma_k c)
    E = np.empty((T + 1, T + 1))
    for s in range(T + 1):
        E[s, s:] = r[s] * decay[s:] / decay[s]
        E[s:, s] = E[s, s:]
    return r, E

"""Reparameterization gradient estimators for the Gaussian family (seed 000 Eqs. 6, 8; §5), batched over U.

Every estimator takes pre-drawn base samples U (S x d, rows u_s ~ N(0, I)) and returns the *mean* over rows of a
per-sample estimate, as ``(gm, gC)`` with gC projected onto V (seed 000 Lemma 15):

* ``energy``  g_energy(u) = T*(-grad log p(C u + m))                         unbiased for grad l   (Eq. 6)
* ``entropy`` g_ent(u)    = g_energy(u) + grad h(w), grad h = (0, -proj_V C^{-T}) unbiased for grad f (Eq. 8)
* ``stl``     T*(-grad log p(z) + grad_z log q_w(z)), z = C u + m, q held fixed  unbiased for grad f (§5)
* ``score``   -log p(z) * grad_w log q_w(z)                                   unbiased for grad l (Eq. 4)

Built-in targets run fused Numba kernels (:mod:`refvi.kernels`); other targets call ``target.grad_logp`` on the
whole batch.  The result is a deterministic function of (target, m, C, U).
"""

from __future__ import annotations

import numpy as np

from refvi._checks import as_samples, as_vector, check_scale, check_structure
from refvi.families.gaussian import proj_V


def _validate(target, m, C, U, structure):
    check_structure(structure)
    m = as_vector(m, "m", target.dim)
    C = check_scale(C, target.dim, structure)
    U = as_samples(U, target.dim)
    return m, C, U


def _energy_raw(target, m, C, U):
    """Mean over rows of (-grad log p(z_s), -grad log p(z_s) u_s^T), before projection onto V."""
    Z = U @ C.T + m
    G = -np.asarray(target.grad_logp(Z), dtype=np.float64).reshape(U.shape)
    if not np.all(np.isfinite(G)):
        raise ValueError("grad_logp returned non-finite values at the sampled points")
    S = U.shape[0]
    return G.mean(axis=0), (G.T @ U) / S


def energy(target, m, C, U, structure: str = "tril"):
    """g_energy averaged over the rows of U (seed 000 Eq. 6); gC projected onto V."""
    m, C, U = _validate(target, m, C, U, structure)
    gm, gC = _energy_raw(target, m, C, U)
    return gm, proj_V(gC, structure)


def entropy(target, m, C, U, structure: str = "sym"):
    """g_ent = g_energy + grad h (seed 000 Eq. 8, Lemma 16.2)."""
    m, C, U = _validate(target, m, C, U, structure)
    gm, gC = _energy_raw(target, m, C, U)
    return gm, proj_V(gC - np.linalg.inv(C).T, structure)


def stl(target, m, C, U, structure: str = "tril"):
    """Sticking the landing: g_energy + T*(grad_z log q(z)) with grad_z log q(C u + m) = -C^{-T} u."""
    m, C, U = _validate(target, m, C, U, structure)
    gm, gC = _energy_raw(target, m, C, U)
    V = np.linalg.solve(C.T, U.T).T           # rows C^{-T} u_s
    S = U.shape[0]
    return gm - V.mean(axis=0), proj_V(gC - (V.T @ U) / S, structure)


def score(target, m, C, U, structure: str = "tril"):
    """Score-function estimator of grad l: mean of -log p(z_s) * (C^{-T} u_s, proj_V(C^{-T}(u_s u_s^T - I)))."""
    m, C, U = _validate(target, m, C, U, structure)
    Z = U @ C.T + m
    f = -np.asarray(target.logp(Z), dtype=np.float64).reshape(U.shape[0])
    if not np.all(np.isfinite(f)):
        raise ValueError("logp returned non-finite values at the sampled points")
    V = np.linalg.solve(C.T, U.T).T
    S = U.shape[0]
    gm = (f[:, None] * V).mean(axis=0)
    CinvT = np.linalg.inv(C).T
    gC = (V.T * f) @ U / S - f.mean() * CinvT
    return gm, proj_V(gC, structure)


ESTIMATORS = {"energy": energy, "entropy": entropy, "stl": stl, "score": score}

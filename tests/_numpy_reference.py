"""Plain-NumPy references the kernels are tested against (not part of refvi: the library keeps one path).

The estimators reuse the library's generic-path pieces (``refvi.estimators._energy_raw_numpy`` / ``_score_numpy``,
what a target without kernels runs) and finish each estimator in NumPy; the prox and projections are Lemma 31,
Lemma 32 and seed 002 Thm 7 written out directly.
"""

from __future__ import annotations

import numpy as np

from refvi import estimators as E
from refvi.families.gaussian import proj_V


def numpy_estimate(kind: str, target, m, C, U, structure: str):
    """The estimator ``kind`` (energy / entropy / stl / score) for any target, bypassing the kernels."""
    m, C, U = E._validate(target, m, C, U, structure)
    if kind == "score":
        return E._score_numpy(target, m, C, U, structure)
    gm, gC = E._energy_raw_numpy(target, m, C, U)
    if kind == "energy":
        return gm, proj_V(gC, structure)
    if kind == "entropy":
        return gm, proj_V(gC - np.linalg.inv(C).T, structure)
    if kind == "stl":
        V = np.linalg.solve(C.T, U.T).T
        return gm - V.mean(axis=0), proj_V(gC - (V.T @ U) / U.shape[0], structure)
    raise ValueError(f"unknown estimator {kind!r}")


def numpy_entropy_prox(C, gamma):
    """Lemma 31, cancellation-free for negative C_ii."""
    out = np.array(C, dtype=np.float64)
    c = np.diag(out).copy()
    r = np.hypot(c, 2.0 * np.sqrt(gamma))
    np.fill_diagonal(out, np.where(c >= 0, 0.5 * (c + r), 2.0 * gamma / (r - np.minimum(c, 0.0))))
    return out


def numpy_project_wm(C, M):
    """Lemma 32: the eigenvalues of symmetric C clipped below at 1/sqrt(M)."""
    lam, Q = np.linalg.eigh(C)
    return (Q * np.maximum(lam, 1.0 / np.sqrt(M))) @ Q.T


def numpy_project_singular_values(C, M):
    """Seed 002 Thm 7: the singular values of C clipped below at 1/sqrt(M)."""
    U, s, Vt = np.linalg.svd(C)
    return (U * np.maximum(s, 1.0 / np.sqrt(M))) @ Vt

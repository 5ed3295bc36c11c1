"""Prox of the neg-entropy and projections onto W_M (seed 000 Lemmas 31, 32; seed 002 Thm 7).

Validation here, arithmetic in :mod:`refvi.kernels.prox` (the plain-NumPy references they are tested against are
``tests/_numpy_reference.py``).
"""

from __future__ import annotations

import numpy as np

from refvi._checks import as_matrix, check_structure, positive_scalar, symmetric
from refvi.kernels import prox as _kp


def entropy_prox(C, gamma: float) -> np.ndarray:
    """prox_{gamma h}(C) for lower-triangular C, h = -sum log C_ii (seed 000 Lemma 31, seed 002 Thm 7).

    Off-diagonal entries are unchanged; C_ii -> (C_ii + sqrt(C_ii^2 + 4 gamma)) / 2, valid for any real C_ii
    (computed as 2 gamma / (sqrt(C_ii^2 + 4 gamma) - C_ii) when C_ii < 0, to avoid cancellation).
    """
    C = as_matrix(C, "C")
    if C.shape[0] != C.shape[1]:
        raise ValueError(f"C must be square, got shape {C.shape}")
    if np.any(np.triu(C, 1) != 0):
        raise ValueError("entropy_prox needs a lower-triangular C (seed 000 Lemma 31 holds on T^d only)")
    gamma = positive_scalar(gamma, "gamma")
    return _kp.entropy_prox(C, gamma)


def project_wm(C, M: float, structure: str = "sym") -> np.ndarray:
    """Euclidean projection of symmetric C onto W_M = {lambda_min(C) >= 1/sqrt(M)} (seed 000 Lemma 32).

    For ``structure="full"`` this is the singular-value clip of seed 002 Thm 7.
    """
    check_structure(structure)
    if structure == "full":
        return project_singular_values(C, M)
    if structure != "sym":
        raise ValueError("project_wm supports structure 'sym' (Lemma 32) and 'full' (seed 002 Thm 7)")
    C = as_matrix(C, "C")
    if C.shape[0] != C.shape[1]:
        raise ValueError(f"C must be square, got shape {C.shape}")
    C = symmetric(C, "C", "for structure='sym'")
    M = positive_scalar(M, "M")
    return _kp.project_wm_sym(C, M)


def project_singular_values(C, M: float) -> np.ndarray:
    """Seed 002 Thm 7: C = U S V^T -> U max(S, 1/sqrt(M)) V^T (a nearest point of W_M for full C)."""
    C = as_matrix(C, "C")
    if C.shape[0] != C.shape[1]:
        raise ValueError(f"C must be square, got shape {C.shape}")
    M = positive_scalar(M, "M")
    return _kp.project_singular(C, M)

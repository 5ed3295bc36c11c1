"""Input checks shared by the example's sub-adapters: bad input gets a ValueError naming the violated condition."""

from __future__ import annotations

import numpy as np


def need(ok, what: str) -> None:
    if not ok:
        raise ValueError(what)


def simplex(alpha, K: int) -> np.ndarray:
    """Mixture weights: K of them, >= 0, summing to one."""
    a = np.asarray(alpha, dtype=np.float64)
    need(
        a.shape == (K,) and np.all(a >= 0) and abs(a.sum() - 1.0) <= 1e-9,
        f"weights must be {K} numbers >= 0 summing to one",
    )
    return a


def refuse_bad_input(m, C, U=None, *, invertible: bool = False) -> None:
    """The protocol's input checks for the estimators, made by the outside-library adapters: JAX and PyTensor do not
    check values inside compiled graphs (NaN in, NaN out; a singular C gives inf), so without them the adapters
    returned NaN where the protocol asks for a refusal (000.claim-bad-input).  ``invertible``: the estimator needs
    C^-1 (the entropy's gradient, STL, the score)."""
    C = np.asarray(C, dtype=np.float64)
    if m is not None:
        m = np.asarray(m, dtype=np.float64)
        if m.ndim != 1 or C.shape != (m.size, m.size):
            raise ValueError(f"m must be (d,) and C (d, d): got {m.shape} and {C.shape}")
        if not np.all(np.isfinite(m)):
            raise ValueError("m must be finite")
    if not np.all(np.isfinite(C)):
        raise ValueError("C must be finite")
    if U is not None:
        U = np.atleast_2d(np.asarray(U, dtype=np.float64))
        if U.ndim != 2 or U.shape[1] != C.shape[0] or U.shape[0] == 0:
            raise ValueError(f"U must be (S, d) with S >= 1 and d = {C.shape[0]}: got {U.shape}")
        if not np.all(np.isfinite(U)):
            raise ValueError("the base samples U must be finite (NaN or inf in U)")
    if invertible:
        triangular = np.array_equal(C, np.tril(C)) or np.array_equal(C, np.triu(C))
        sv = np.linalg.svd(C, compute_uv=False) if C.size else np.zeros(1)
        singular = np.any(np.diag(C) == 0) if triangular else sv[-1] <= sv[0] * C.shape[0] * np.finfo(float).eps
        if singular:
            raise ValueError("C must be invertible (q is degenerate and C^-1 undefined)")


def positive_triangular_scale(arguments, mean_field: str, full_rank: str, positive: str):
    """``supports`` for a library whose Gaussian family is lower-triangular (or diagonal) C with a positive
    diagonal: True, or why the call's ``C`` cannot be represented (``mean_field`` / ``full_rank`` name the family,
    ``positive`` says how the library stores the diagonal)."""
    C = arguments.get("C")
    if C is None:
        return True
    C = np.asarray(C, dtype=np.float64)
    structure = arguments.get("structure", "tril")
    if C.ndim != 2 or C.shape[0] != C.shape[1] or not np.all(np.isfinite(C)):
        return "C must be a finite square matrix"
    if structure == "diag" and np.any(C != np.diag(np.diag(C))):
        return f"{mean_field} represents diagonal C only"
    if np.any(C != np.tril(C)):
        return f"{full_rank} represents lower-triangular C only"
    if not np.all(np.diag(C) > 0):
        return positive
    return True

"""Integer codes for the subspace V of the scale matrix and the projection onto V (seed 000 Lemma 15)."""

from __future__ import annotations

import numpy as np

from refvi.kernels._jit import jit

FULL, TRIL, SYM, DIAG = 0, 1, 2, 3
CODES = {"full": FULL, "tril": TRIL, "sym": SYM, "diag": DIAG}


def structure_code(structure: str) -> int:
    """The int code a kernel takes for ``structure`` in {"full", "tril", "sym", "diag"}."""
    try:
        return CODES[structure]
    except (KeyError, TypeError):
        raise ValueError(f"structure must be one of {tuple(CODES)}, got {structure!r}") from None


@jit
def project_V(A, code):
    """Frobenius projection of the square matrix A onto V (a new array): full = A, tril = tril(A),
    sym = (A + A^T)/2, diag = diag(A)."""
    d = A.shape[0]
    out = np.zeros((d, d))
    if code == FULL:  # loops, not out[:, :] = A (see refvi.kernels.online._copy)
        for i in range(d):
            for j in range(d):
                out[i, j] = A[i, j]
    elif code == TRIL:
        for i in range(d):
            for j in range(i + 1):
                out[i, j] = A[i, j]
    elif code == SYM:
        for i in range(d):
            for j in range(d):
                out[i, j] = 0.5 * (A[i, j] + A[j, i])
    elif code == DIAG:
        for i in range(d):
            out[i, i] = A[i, i]
    else:
        raise ValueError("unknown structure code")
    return out

"""Small matrix helpers shared by the oracles and the statements, written independently of refvi.families.

``proj_V`` is the Frobenius projection onto the subspace V of seed 000 Lemma 15 (works on stacks (..., d, d));
``random_orthogonal`` draws a Haar orthogonal matrix; ``with_singular_values`` builds U diag(s) V^T.
"""

from __future__ import annotations

import numpy as np

STRUCTURES = ("full", "tril", "sym", "diag")


def proj_V(X, structure: str) -> np.ndarray:
    """full: X; tril: lower triangle; sym: (X + X^T)/2; diag: the diagonal (a new array in every case)."""
    X = np.asarray(X, dtype=np.float64)
    if structure == "full":
        return X.copy()
    if structure == "tril":
        return np.tril(X)
    if structure == "sym":
        return 0.5 * (X + np.swapaxes(X, -1, -2))
    if structure == "diag":
        return X * np.eye(X.shape[-1])
    raise ValueError(f"structure must be one of {STRUCTURES}, got {structure!r}")


def mean_and_log_cholesky(p, d: int):
    """(mu, L) from an optimiser's unconstrained vector p = (mu, the lower triangle of L row by row with log diagonal):
    the parameterisation of N(mu, L L^T) the oracles' minimisers search over."""
    L = np.zeros((d, d))
    L[np.tril_indices(d)] = p[d:]
    L[np.diag_indices(d)] = np.exp(np.diag(L))
    return p[:d], L


def random_orthogonal(rng: np.random.Generator, d: int) -> np.ndarray:
    """A Haar-distributed orthogonal d x d matrix (QR of a Gaussian matrix with the sign fix)."""
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


def with_singular_values(rng: np.random.Generator, s) -> np.ndarray:
    """A random d x d matrix U diag(s) V^T with prescribed singular values s (U, V Haar)."""
    s = np.asarray(s, dtype=np.float64)
    d = s.shape[0]
    return (random_orthogonal(rng, d) * s) @ random_orthogonal(rng, d).T

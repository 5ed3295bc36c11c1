"""The dense Gaussian family q_w = N(m, C C^T), w = (m, C), C in a subspace V (seed 000 §2, Lemmas 13-17, 33).

``structure`` names V: "full" (all d x d matrices, M^d), "tril" (lower triangular, T^d), "sym" (symmetric, S^d) or
"diag" (diagonal).  The parameter norm is ||w||^2 = ||m||^2 + ||C||_F^2 over the stored matrix.
"""

from __future__ import annotations

import numpy as np

from refvi._checks import as_samples, as_vector, check_scale, check_structure
from refvi.kernels.structure import project_V, structure_code

LOG_2PI = float(np.log(2.0 * np.pi))


def proj_V(X: np.ndarray, structure: str) -> np.ndarray:
    """Orthogonal (Frobenius) projection of a d x d matrix onto V (seed 000 Lemma 15), as a new array: the kernel
    :func:`refvi.kernels.structure.project_V`."""
    check_structure(structure)
    return project_V(np.ascontiguousarray(X, dtype=np.float64), structure_code(structure))


def transform(m: np.ndarray, C: np.ndarray, U: np.ndarray) -> np.ndarray:
    """T_w(u) = C u + m applied to each row of U (S x d)."""
    return U @ C.T + m


def adjoint(z: np.ndarray, u: np.ndarray, structure: str) -> tuple[np.ndarray, np.ndarray]:
    """T*(z) = (z, proj_V(z u^T)) for T(m, C) = C u + m (seed 000 Lemma 33)."""
    return np.array(z, dtype=np.float64), proj_V(np.outer(z, u), structure)


def neg_entropy(C: np.ndarray, structure: str = "tril") -> float:
    """h(w) = -log det C on the domain W (seed 000 Eq. 2, constant -(d/2)(1 + log 2 pi) dropped; Lemma 14).

    Returns +inf outside W (h is +inf there by definition), never NaN.
    """
    d = np.shape(C)[0]
    C = check_scale(C, d, structure, require_domain=False)
    if structure in ("tril", "diag"):
        diag = np.diag(C)
        return float(-np.sum(np.log(diag))) if np.all(diag > 0) else float("inf")
    if structure == "sym":
        lam = np.linalg.eigvalsh(C)
        return float(-np.sum(np.log(lam))) if lam[0] > 0 else float("inf")
    sign, logdet = np.linalg.slogdet(C)
    return float(-logdet) if sign != 0 else float("inf")


def entropy(C: np.ndarray, structure: str = "tril") -> float:
    """Differential entropy of N(m, C C^T): ``(d/2)(1 + log 2 pi) + log |det C|``."""
    d = np.shape(C)[0]
    check_scale(C, d, structure)
    return 0.5 * d * (1.0 + LOG_2PI) - neg_entropy(C, structure)


def grad_neg_entropy(C: np.ndarray, structure: str = "tril") -> np.ndarray:
    """grad_C h = -proj_V(C^{-T}) (seed 000 Lemma 16.2); grad_m h = 0."""
    d = np.shape(C)[0]
    C = check_scale(C, d, structure)
    if structure in ("tril", "diag"):
        # C^{-T} is upper triangular for lower-triangular C, so its projection onto T^d is diag(1 / C_ii).
        return -np.diag(1.0 / np.diag(C))
    return -proj_V(np.linalg.inv(C).T, structure)


def sample(m, C, rng_or_seed, n: int, structure: str = "tril") -> np.ndarray:
    """Draw n samples z = C u + m with u ~ N(0, I)."""
    m = as_vector(m, "m")
    C = check_scale(C, m.shape[0], structure)
    rng = np.random.default_rng(rng_or_seed)
    U = rng.standard_normal((int(n), m.shape[0]))
    return transform(m, C, U)


def log_density(z, m, C, structure: str = "tril") -> np.ndarray:
    """log N(z | m, C C^T) for each row of z (S x d), or for a single z (d,)."""
    m = as_vector(m, "m")
    d = m.shape[0]
    C = check_scale(C, d, structure)
    single = np.ndim(z) == 1
    Z = as_samples(z, d, "z")
    U = np.linalg.solve(C, (Z - m).T).T
    logdet = float(np.linalg.slogdet(C)[1])
    out = -0.5 * np.sum(U * U, axis=1) - logdet - 0.5 * d * LOG_2PI
    return out[0] if single else out

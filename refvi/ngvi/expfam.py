"""The Gaussian as an exponential family (Wu & Gardner, seed 004, §2.1 and App. A).

Three coordinate systems for q = N(mu, Sigma):

* natural      eta   = (lam, Lam) = (Sigma^{-1} mu, -1/2 Sigma^{-1}),      domain D     = {-Lam PD}     (Eq. 5)
* expectation  omega = (xi, Xi)   = (mu, Sigma + mu mu^T),                 domain Omega = {Xi - xi xi^T PD} (Eq. 6)
* moment       (mu, Sigma).

A(eta) = -1/4 lam^T Lam^{-1} lam - 1/2 logdet(-2 Lam) (Eq. 17), its convex conjugate
A*(omega) = -1/2 logdet(Xi - xi xi^T) - d/2 (Eq. 18 prints it without the constant -d/2, which is irrelevant for
gradients and Bregman divergences), grad A = omega and grad A* = eta (Eq. 4).  Matrix gradients use the Frobenius
pairing <Lam, Xi> = tr(Lam^T Xi) on symmetric matrices.

The Fisher information (Def. 1) needs minimal coordinates: theta = (lam, Lam_ii, Lam_ij for i < j) with sufficient
statistics (z, z_i^2, 2 z_i z_j).  With a full d x d Lam the FIM is singular (antisymmetric directions).
"""

from __future__ import annotations

import numpy as np

from refvi._checks import as_matrix, as_vector

__all__ = [
    "natural_from_moment",
    "moment_from_natural",
    "expectation_from_moment",
    "moment_from_expectation",
    "natural_from_expectation",
    "expectation_from_natural",
    "log_partition",
    "conjugate",
    "bregman_A",
    "bregman_A_star",
    "kl",
    "fisher_minimal",
    "to_minimal",
    "from_minimal",
    "check_natural",
    "check_expectation",
    "check_moment",
    "pair",
]


# ---------------------------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------------------------


def _sym(M: np.ndarray, name: str, rtol: float = 1e-10) -> np.ndarray:
    scale = max(1.0, float(np.max(np.abs(M))))
    if np.max(np.abs(M - M.T)) > rtol * scale:
        raise ValueError(f"{name} must be symmetric (max |{name} - {name}^T| = {np.max(np.abs(M - M.T)):.3g})")
    return 0.5 * (M + M.T)


def _chol_pd(M: np.ndarray, name: str, condition: str) -> np.ndarray:
    try:
        return np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        lam_min = float(np.linalg.eigvalsh(M)[0])
        raise ValueError(
            f"{name} violates {condition} (smallest eigenvalue of the PD-required matrix {lam_min:.3g})"
        ) from None


def _vector_and_symmetric(v, M, vname: str, Mname: str):
    """A length-d vector and a symmetric d x d matrix (float64 copies), with errors naming the mismatch."""
    v = as_vector(v, vname)
    d = v.shape[0]
    M = as_matrix(M, Mname)
    if M.shape[0] == M.shape[1] and M.shape[0] != d:
        raise ValueError(f"{vname} has length {d} but {Mname} is {M.shape[0]} x {M.shape[1]}: they must match")
    return v, _sym(as_matrix(M, Mname, (d, d)), Mname)


def check_moment(mu, Sigma):
    """(mu, Sigma) with Sigma symmetric positive definite; returns float64 copies and the Cholesky factor."""
    mu, Sigma = _vector_and_symmetric(mu, Sigma, "mu", "Sigma")
    return mu, Sigma, _chol_pd(Sigma, "Sigma", "Sigma positive definite")


def check_natural(lam, Lam):
    """eta = (lam, Lam) in D = {-Lam positive definite} (seed 004 Eq. 5); returns copies and chol(-2 Lam)."""
    lam, Lam = _vector_and_symmetric(lam, Lam, "lam", "Lam")
    return lam, Lam, _chol_pd(-2.0 * Lam, "Lam", "the natural-parameter domain Lam negative definite (Eq. 5)")


def check_expectation(xi, Xi):
    """omega = (xi, Xi) in Omega = {Xi - xi xi^T positive definite} (seed 004 Eq. 6)."""
    xi = as_vector(xi, "xi")
    d = xi.shape[0]
    Xi = _sym(as_matrix(Xi, "Xi", (d, d)), "Xi")
    S = Xi - np.outer(xi, xi)
    L = _chol_pd(S, "Xi", "the expectation domain Xi - xi xi^T positive definite (Eq. 6)")
    return xi, Xi, L


def _chol_inv(L: np.ndarray) -> np.ndarray:
    Li = np.linalg.solve(L, np.eye(L.shape[0]))
    M = Li.T @ Li
    return 0.5 * (M + M.T)


# ---------------------------------------------------------------------------------------------------------------
# coordinate maps
# ---------------------------------------------------------------------------------------------------------------


def natural_from_moment(mu, Sigma):
    """(mu, Sigma) -> (lam, Lam) = (Sigma^{-1} mu, -1/2 Sigma^{-1})."""
    mu, Sigma, L = check_moment(mu, Sigma)
    P = _chol_inv(L)
    return P @ mu, -0.5 * P


def moment_from_natural(lam, Lam):
    """(lam, Lam) -> (mu, Sigma) = (-1/2 Lam^{-1} lam, -1/2 Lam^{-1})."""
    lam, Lam, L = check_natural(lam, Lam)
    Sigma = _chol_inv(L)  # (-2 Lam)^{-1}
    return Sigma @ lam, Sigma


def expectation_from_moment(mu, Sigma):
    mu, Sigma, _ = check_moment(mu, Sigma)
    return mu.copy(), Sigma + np.outer(mu, mu)


def moment_from_expectation(xi, Xi):
    xi, Xi, _ = check_expectation(xi, Xi)
    return xi.copy(), Xi - np.outer(xi, xi)


def expectation_from_natural(lam, Lam):
    """grad A(eta) = omega (Eq. 4; App. A.2)."""
    mu, Sigma = moment_from_natural(lam, Lam)
    return mu, Sigma + np.outer(mu, mu)


def natural_from_expectation(xi, Xi):
    """grad A*(omega) = eta (Eq. 4; App. A.2): ((Xi - xi xi^T)^{-1} xi, -1/2 (Xi - xi xi^T)^{-1})."""
    xi, Xi, L = check_expectation(xi, Xi)
    P = _chol_inv(L)
    return P @ xi, -0.5 * P


# ---------------------------------------------------------------------------------------------------------------
# potentials, Bregman divergences and KL
# ---------------------------------------------------------------------------------------------------------------


def pair(a, b) -> float:
    """<(v, M), (w, N)> = v^T w + tr(M^T N)."""
    return float(np.dot(a[0], b[0]) + np.sum(np.asarray(a[1]) * np.asarray(b[1])))


def log_partition(lam, Lam) -> float:
    """A(lam, Lam) = -1/4 lam^T Lam^{-1} lam - 1/2 logdet(-2 Lam) (seed 004 Eq. 17; (2 pi)^{-d/2} lives in h)."""
    lam, Lam, L = check_natural(lam, Lam)
    w = np.linalg.solve(L, lam)  # lam^T (-2 Lam)^{-1} lam = |w|^2
    return float(0.5 * w @ w - np.sum(np.log(np.diag(L))))


def conjugate(xi, Xi, *, printed: bool = False) -> float:
    """A*(xi, Xi) = -1/2 logdet(Xi - xi xi^T) - d/2, the exact convex conjugate of A.

    ``printed=True`` returns the paper's Eq. (18), which omits the constant -d/2 (same gradient and Bregman
    divergence)."""
    xi, Xi, L = check_expectation(xi, Xi)
    val = -float(np.sum(np.log(np.diag(L))))
    return val if printed else val - 0.5 * xi.shape[0]


def bregman_A(eta1, eta2) -> float:
    """D_A(eta1, eta2) = A(eta1) - A(eta2) - <grad A(eta2), eta1 - eta2> (Def. 3)."""
    w2 = expectation_from_natural(*eta2)
    diff = (np.asarray(eta1[0]) - eta2[0], np.asarray(eta1[1]) - eta2[1])
    return log_partition(*eta1) - log_partition(*eta2) - pair(w2, diff)


def bregman_A_star(omega1, omega2) -> float:
    """D_{A*}(omega1, omega2) (Def. 3); equals KL(q1 || q2) by Lemma 4."""
    e2 = natural_from_expectation(*omega2)
    diff = (np.asarray(omega1[0]) - omega2[0], np.asarray(omega1[1]) - omega2[1])
    return conjugate(*omega1) - conjugate(*omega2) - pair(e2, diff)


def kl(mu1, Sigma1, mu2, Sigma2) -> float:
    """KL(N(mu1, Sigma1) || N(mu2, Sigma2)) in closed form (Cholesky, float64)."""
    mu1, Sigma1, L1 = check_moment(mu1, Sigma1)
    mu2, Sigma2, L2 = check_moment(mu2, Sigma2)
    if mu1.shape != mu2.shape:
        raise ValueError(f"the two Gaussians must have the same dimension, got {mu1.shape[0]} and {mu2.shape[0]}")
    d = mu1.shape[0]
    A = np.linalg.solve(L2, L1)
    w = np.linalg.solve(L2, mu2 - mu1)
    val = 0.5 * (np.sum(A * A) + w @ w - d) + float(np.sum(np.log(np.diag(L2))) - np.sum(np.log(np.diag(L1))))
    return float(val)


# ---------------------------------------------------------------------------------------------------------------
# minimal coordinates and the Fisher information (Def. 1)
# ---------------------------------------------------------------------------------------------------------------


def _pairs(d: int):
    return [(i, j) for i in range(d) for j in range(i + 1, d)]


def to_minimal(lam, Lam) -> np.ndarray:
    """theta = (lam, diag(Lam), Lam_ij for i < j); the statistic of Lam_ij (i < j) is 2 z_i z_j."""
    lam, Lam, _ = check_natural(lam, Lam)
    d = lam.shape[0]
    return np.concatenate([lam, np.diag(Lam), [Lam[i, j] for i, j in _pairs(d)]])


def from_minimal(theta, d: int):
    theta = as_vector(theta, "theta", d + d * (d + 1) // 2)
    lam = theta[:d].copy()
    Lam = np.diag(theta[d : 2 * d])
    for k, (i, j) in enumerate(_pairs(d)):
        Lam[i, j] = Lam[j, i] = theta[2 * d + k]
    return lam, Lam


def fisher_minimal(lam, Lam) -> np.ndarray:
    """F(eta) = Cov_q[phi_min(z)] = Hess A in minimal coordinates (Def. 1), from Gaussian moment identities.

    Cov(z_i, z_j z_k) = mu_j S_ik + mu_k S_ij, and Cov(z_i z_j, z_k z_l) = S_ik S_jl + S_il S_jk + mu_i mu_k S_jl
    + mu_i mu_l S_jk + mu_j mu_k S_il + mu_j mu_l S_ik (Isserlis).
    """
    mu, S = moment_from_natural(lam, Lam)
    d = mu.shape[0]
    quad = [(i, i, 1.0) for i in range(d)] + [(i, j, 2.0) for i, j in _pairs(d)]
    k = d + len(quad)
    F = np.zeros((k, k))
    F[:d, :d] = S
    for a, (i, j, ca) in enumerate(quad):
        for r in range(d):
            F[r, d + a] = F[d + a, r] = ca * (mu[i] * S[r, j] + mu[j] * S[r, i])
        for b, (kk, ll, cb) in enumerate(quad):
            c = (
                S[i, kk] * S[j, ll]
                + S[i, ll] * S[j, kk]
                + mu[i] * mu[kk] * S[j, ll]
                + mu[i] * mu[ll] * S[j, kk]
                + mu[j] * mu[kk] * S[i, ll]
                + mu[j] * mu[ll] * S[i, kk]
            )
            F[d + a, d + b] = ca * cb * c
    return F

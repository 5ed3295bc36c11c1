"""Model constants M (smoothness) and mu (strong convexity) from Hessian bound matrices (seed 000 Thm 21,
Cors 22, 23, 25 with errata E000-1, E000-2, E000-5 fixed).

For a GLM with prior N(0, s^2 I) and per-datum curvature theta in [theta_min, theta_max],
-Hess log p lies between Sigma^{-1} + theta_min X^T X and Sigma^{-1} + theta_max X^T X, so
M = lambda_max(I/s^2 + theta_max X^T X) and mu = lambda_min(I/s^2 + theta_min X^T X).

How targets use them (refvi.targets may call these instead of their NumPy code)::

    from refvi.kernels.constants import glm_constants, hierarchical_constants
    mu, M = glm_constants(X, 1/noise**2, 1/noise**2, 1/prior**2)      # LinearRegression (Cor 22)
    mu, M = glm_constants(X, 0.0, 0.25, 1/prior**2)                    # LogisticRegression (Cor 23)
    P, mu, M = hierarchical_constants(X, groups, G, inv(Sigma), inv(Delta))   # Cor 25 (E000-5)
"""

from __future__ import annotations

import numpy as np

from refvi.kernels._jit import jit


@jit
def gram(X):
    """X^T X, symmetric by construction (upper triangle mirrored from the lower)."""
    A = np.dot(X.T, X)
    d = A.shape[0]
    for i in range(d):
        for j in range(i):
            A[j, i] = A[i, j]
    return A


@jit
def eig_bounds(H):
    """(lambda_min, lambda_max) of the symmetric matrix H (only its lower triangle is read)."""
    lam = np.linalg.eigvalsh(H)
    return lam[0], lam[-1]


@jit
def glm_constants(X, theta_min, theta_max, prior_precision):
    """(mu, M) = (lambda_min(p I + theta_min X^T X), lambda_max(p I + theta_max X^T X)), p = prior_precision."""
    A = gram(X)
    d = A.shape[0]
    if theta_min == theta_max:
        H = theta_max * A
        for i in range(d):
            H[i, i] += prior_precision
        return eig_bounds(H)
    Hlo = theta_min * A
    Hhi = theta_max * A
    for i in range(d):
        Hlo[i, i] += prior_precision
        Hhi[i, i] += prior_precision
    return eig_bounds(Hlo)[0], eig_bounds(Hhi)[1]


@jit
def hierarchical_precision(Sigma_inv, Delta_inv, n_groups):
    """Prior precision P of (theta, z_0..z_{G-1}) for theta ~ N(0, Sigma), z_g ~ N(theta, Delta) (E000-5):
    P_tt = Sigma^{-1} + G Delta^{-1}, P_{t g} = P_{g t} = -Delta^{-1}, P_gg = Delta^{-1}."""
    d = Sigma_inv.shape[0]
    D = (n_groups + 1) * d
    P = np.zeros((D, D))
    for i in range(d):  # loops, not slice assignments (see refvi.kernels.online._copy)
        for j in range(d):
            P[i, j] = Sigma_inv[i, j] + n_groups * Delta_inv[i, j]
            for k in range(n_groups):
                a = (k + 1) * d
                P[i, a + j] = -Delta_inv[i, j]
                P[a + i, j] = -Delta_inv[i, j]
                P[a + i, a + j] = Delta_inv[i, j]
    return P


@jit
def hierarchical_constants(X, groups, n_groups, Sigma_inv, Delta_inv):
    """(P, mu, M): mu = lambda_min(P), M = lambda_max(P + blockdiag(0, X_g^T X_g / 4)) (seed 000 Cor 25)."""
    P = hierarchical_precision(Sigma_inv, Delta_inv, n_groups)
    N, d = X.shape
    H = P.copy()
    for n in range(N):
        a = (groups[n] + 1) * d
        for i in range(d):
            xi = 0.25 * X[n, i]
            for j in range(d):
                H[a + i, a + j] += xi * X[n, j]
    mu = eig_bounds(P)[0]
    M = eig_bounds(H)[1]
    return P, mu, M

"""Closed-form Gaussian expected losses of a linear predictor and the Gaussian KL terms (seed 003, §4;
the Gaussian KL with erratum E003-3).

For q = N(m, diag sigma^2) (mean field) or N(m, C C^T) (full covariance, theta = m + C u), <theta, x> ~ N(a, b^2) with
a = <m, x> and b = ||sigma * x|| (resp. ||C^T x||), so every expectation reduces to one dimension.
"""

from __future__ import annotations

import numpy as np

from refvi._checks import as_matrix, as_vector, positive_scalar
from refvi.kernels import online as ko
from refvi.online._stream import as_stream, check_loss, first_bad_row


def expected_loss(loss: str, X, y, m, sigma, H: float = 1.0):
    """bar L_t(m, sigma) for every row of the stream, with the gradients in m and sigma.

    Returns (values (T,), grad_m (T, d), grad_sigma (T, d)).  sigma >= 0 componentwise (sigma = 0 gives the point
    loss and a subgradient)."""
    lid = check_loss(loss)
    m = as_vector(m, "m")
    d = m.shape[0]
    sigma = as_vector(sigma, "sigma", d)
    if np.any(sigma < 0):
        raise ValueError("sigma must be >= 0 componentwise")
    X, y = as_stream(X, y, d, lid)
    k, why = first_bad_row(X, y, lid)
    if k < X.shape[0]:
        raise ValueError(f"row {k}: {why}")
    H = positive_scalar(H, "H")
    T = X.shape[0]
    val, gm, gs = np.empty(T), np.empty((T, d)), np.empty((T, d))
    ko.expected_losses(lid, X, y, m, sigma, H, val, gm, gs)
    return val, gm, gs


def expected_loss_full(loss: str, x, y: float, m, C) -> float:
    """bar L(m, C) = E_{theta = m + C u, u ~ N(0, I)} ell(theta) for one point and a full scale matrix C (Prop. 1/2
    with full covariance): the mean-field kernel applied to the 1-D reduction a = <m, x>, b = ||C^T x||."""
    lid = check_loss(loss)
    if lid == ko.LOSS_QUADRATIC:
        raise ValueError("expected_loss_full supports the hinge, squared and absolute losses")
    m = as_vector(m, "m")
    d = m.shape[0]
    x = as_vector(x, "x", d)
    C = as_matrix(C, "C", (d, d))
    b = float(np.linalg.norm(C.T @ x))
    val, _, _ = expected_loss(loss, np.array([[1.0]]), np.array([float(y)]), np.array([float(m @ x)]), np.array([b]))
    return float(val[0])


def kl_meanfield(m, sigma, mbar, sbar) -> float:
    """KL(N(m, diag sigma^2) || N(mbar, diag sbar^2)) = sum_j [(sigma_j^2 + (m_j - mbar_j)^2) / (2 sbar_j^2)
    + log(sbar_j / sigma_j) - 1/2]."""
    m = as_vector(m, "m")
    d = m.shape[0]
    sigma, mbar, sbar = as_vector(sigma, "sigma", d), as_vector(mbar, "mbar", d), as_vector(sbar, "sbar", d)
    if np.any(sigma <= 0) or np.any(sbar <= 0):
        raise ValueError("sigma and sbar must be > 0 componentwise (the KL is infinite at sigma = 0)")
    return float(np.sum((sigma**2 + (m - mbar) ** 2) / (2 * sbar**2) + np.log(sbar / sigma) - 0.5))


def kl_prior(m, sigma, s: float) -> float:
    """KL(q_mu || pi), pi = N(0, s^2 I): (1/2)[(||m||^2 + ||sigma||^2)/s^2 + sum log(s^2/sigma^2) - d]."""
    m = as_vector(m, "m")
    s = positive_scalar(s, "s")
    return kl_meanfield(m, sigma, np.zeros_like(m), np.full(m.shape[0], s))


def kl_gaussian(m, C, mbar, Cbar) -> float:
    """KL(N(m, C C^T) || N(mbar, Cbar Cbar^T)) = (1/2)[(m - mbar)^T Sbar^{-1} (m - mbar) + tr(Sbar^{-1} S)
    + log det Sbar / det S - d] with S = C C^T.  The paper prints Sbar instead of Sbar^{-1} in the quadratic term
    (erratum E003-3)."""
    m = as_vector(m, "m")
    d = m.shape[0]
    mbar = as_vector(mbar, "mbar", d)
    C, Cbar = as_matrix(C, "C", (d, d)), as_matrix(Cbar, "Cbar", (d, d))
    S, Sbar = C @ C.T, Cbar @ Cbar.T
    sgn, logdet = np.linalg.slogdet(S)
    sgnb, logdetb = np.linalg.slogdet(Sbar)
    if sgn <= 0 or sgnb <= 0:
        raise ValueError("C and Cbar must be invertible (the covariances must be positive definite)")
    diff = m - mbar
    quad = float(diff @ np.linalg.solve(Sbar, diff))
    tr = float(np.trace(np.linalg.solve(Sbar, S)))
    return 0.5 * (quad + tr + logdetb - logdet - d)

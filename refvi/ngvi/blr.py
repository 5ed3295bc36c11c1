"""Bayesian linear regression as a conjugate NGVI problem (Wu & Gardner, seed 004, Example 1 and App. C.1).

Model: z ~ N(mu_p, P), y_i | z ~ N(x_i^T z, sigma2).  The expected log-likelihood is linear in omega = (xi, Xi):
E_q log p(y_i | z) = -1/2 log(2 pi sigma2) - (y_i^2 - 2 y_i x_i^T xi + x_i^T Xi x_i) / (2 sigma2), so its omega-gradient
is (y_i x_i / sigma2, -x_i x_i^T / (2 sigma2)) whatever q is, and the negative ELBO is
l(omega) = -sum_i E_q log p(y_i | z) + KL(q, p) = KL(q, q*) - log p(y) (Lemma 2).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from refvi._checks import as_matrix, as_vector, positive_scalar
from refvi.ngvi import expfam
from refvi.ngvi._model import GaussianPriorModel


@dataclasses.dataclass(frozen=True)
class BLRProblem(GaussianPriorModel):
    """Mini-batch Bayesian linear regression (Example 1).  Build with :func:`blr_problem`."""

    X: np.ndarray
    y: np.ndarray
    sigma2: float
    prior_mean: np.ndarray
    prior_cov: np.ndarray

    # ---- closed forms ------------------------------------------------------------------------------------------
    def posterior_natural(self):
        """eta* = (X^T y / sigma2 + lam_p, -1/2 (P^{-1} + X^T X / sigma2))."""
        lam_p, Lam_p = self.prior_natural
        return self.X.T @ self.y / self.sigma2 + lam_p, Lam_p - 0.5 * (self.X.T @ self.X) / self.sigma2

    def posterior(self):
        """(mu*, Sigma*) of the exact posterior."""
        return expfam.moment_from_natural(*self.posterior_natural())

    def log_evidence(self) -> float:
        """log p(y) = log N(y; X mu_p, X P X^T + sigma2 I)."""
        K = self.X @ self.prior_cov @ self.X.T + self.sigma2 * np.eye(self.n)
        L = np.linalg.cholesky(K)
        w = np.linalg.solve(L, self.y - self.X @ self.prior_mean)
        return float(-0.5 * w @ w - np.sum(np.log(np.diag(L))) - 0.5 * self.n * math.log(2 * math.pi))

    def neg_elbo(self, xi, Xi) -> float:
        """l(omega) = -sum_i E_q log p(y_i | x_i, z) + KL(q, p) (Eq. 1)."""
        xi, Xi, _ = expfam.check_expectation(xi, Xi)
        X, y, s2 = self.X, self.y, self.sigma2
        nll = 0.5 * self.n * math.log(2 * math.pi * s2) + (y @ y - 2 * y @ (X @ xi) + np.sum((X.T @ X) * Xi)) / (2 * s2)
        return float(nll + expfam.kl(xi, Xi - np.outer(xi, xi), self.prior_mean, self.prior_cov))

    def grad_neg_elbo(self, xi, Xi):
        """Exact grad_omega l = -grad_omega E log p + eta - eta_p = eta(omega) - eta*  (App. C.1)."""
        lam, Lam = expfam.natural_from_expectation(xi, Xi)
        lam_s, Lam_s = self.posterior_natural()
        return lam - lam_s, Lam - Lam_s

    # ---- mini-batches (with replacement, Example 1) -----------------------------------------------------------
    def check_batch(self, idx) -> np.ndarray:
        idx = np.asarray(idx)
        if idx.ndim != 1 or idx.size == 0:
            raise ValueError(f"a mini-batch must be a non-empty 1-D array of indices, got shape {idx.shape}")
        if not np.issubdtype(idx.dtype, np.integer):
            raise TypeError(f"mini-batch indices must be integers, got dtype {idx.dtype}")
        if idx.min() < 0 or idx.max() >= self.n:
            raise ValueError(f"mini-batch indices must lie in [0, n) = [0, {self.n})")
        return idx.astype(np.int64)

    def noisy_posterior_natural(self, idx):
        """eta_hat = grad_omega-hat E log p + eta_p with the sum over data replaced by n/m sum over the batch."""
        idx = self.check_batch(idx)
        lam_p, Lam_p = self.prior_natural
        Xb, yb = self.X[idx], self.y[idx]
        c = self.n / (idx.size * self.sigma2)
        return c * (Xb.T @ yb) + lam_p, Lam_p - 0.5 * c * (Xb.T @ Xb)

    def stochastic_grad(self, xi, Xi, idx):
        """Eq. (15): grad-hat l(omega) = eta(omega) - eta_hat(batch)."""
        lam, Lam = expfam.natural_from_expectation(xi, Xi)
        lh, Lh = self.noisy_posterior_natural(idx)
        return lam - lh, Lam - Lh


def blr_problem(X, y, sigma2: float = 1.0, prior_cov=None, prior_mean=None) -> BLRProblem:
    """Validate and build a :class:`BLRProblem` (prior N(prior_mean, prior_cov), default N(0, I))."""
    X = as_matrix(X, "X")
    n, d = X.shape
    if n < 1 or d < 1:
        raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
    y = as_vector(y, "y", n)
    sigma2 = positive_scalar(sigma2, "sigma2")
    P = np.eye(d) if prior_cov is None else as_matrix(prior_cov, "prior_cov", (d, d))
    mp = np.zeros(d) if prior_mean is None else as_vector(prior_mean, "prior_mean", d)
    expfam.check_moment(mp, P)
    return BLRProblem(np.ascontiguousarray(X), y, sigma2, mp, 0.5 * (P + P.T))

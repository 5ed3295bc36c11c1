"""Non-conjugate models for NGVI (Wu & Gardner, seed 004, §3.2, §5, §6.2): logistic and Poisson regression.

Each model has a Gaussian prior N(prior_mean, prior_cov) and per-point log-likelihoods f_i(u) of u = x_i^T z:

* logistic (y in {-1, +1}): f(u) = -softplus(-y u), f' = y sigmoid(-y u), f'' = -sigmoid(u) (1 - sigmoid(u));
* Poisson  (y in {0, 1, ...}): f(u) = y u - exp(u) - log y!, f' = y - exp(u), f'' = -exp(u).

Both are log-concave, so the Price estimator's Xi-block is negative semidefinite (§3.2).  The exact omega-gradient of
E_q log p uses Bonnet/Price with 1-D Gaussian integrals: closed form for Poisson; for logistic the ridge integrals of
:mod:`refvi.targets.ridge`, shared with :class:`refvi.targets.LogisticRegression` (fixed Gauss-Hermite fails at large
per-point variances x_i^T Sigma x_i).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.special import expit, gammaln

from refvi._checks import as_matrix, as_vector, check_labels_pm1
from refvi.ngvi import expfam
from refvi.ngvi._model import GaussianPriorModel
from refvi.targets.ridge import ridge_expectations


@dataclasses.dataclass(frozen=True)
class GLM(GaussianPriorModel):
    """A Bayesian GLM with Gaussian prior: ``kind`` is "logistic" or "poisson".  Build with :func:`logistic_model`
    or :func:`poisson_model`."""

    kind: str
    X: np.ndarray
    y: np.ndarray
    prior_mean: np.ndarray
    prior_cov: np.ndarray

    # ---- per-sample derivatives of log p(y | z) ---------------------------------------------------------------
    def loglik_grad(self, Z, idx=None, scale: float = 1.0):
        """For rows z_s of Z: grad_z log p (S, d) summed over the data (or over the batch ``idx`` times ``scale``)."""
        Z = np.atleast_2d(np.asarray(Z, dtype=np.float64))
        X = self.X if idx is None else self.X[idx]
        y = self.y if idx is None else self.y[idx]
        Ulin = Z @ X.T  # (S, n)
        d1 = y * expit(-y * Ulin) if self.kind == "logistic" else y - np.exp(Ulin)
        return scale * d1 @ X

    def loglik_grad_meanhess(self, Z, idx=None, scale: float = 1.0):
        """(grad_z log p per row (S, d), mean over rows of Hess_z log p (d, d)) without forming S Hessians."""
        Z = np.atleast_2d(np.asarray(Z, dtype=np.float64))
        X = self.X if idx is None else self.X[idx]
        y = self.y if idx is None else self.y[idx]
        Ulin = Z @ X.T
        if self.kind == "logistic":
            d1 = y * expit(-y * Ulin)
            d2 = -(expit(Ulin) * expit(-Ulin)).mean(axis=0)
        else:
            e = np.exp(Ulin)
            d1 = y - e
            d2 = -e.mean(axis=0)
        H = scale * (X.T * d2) @ X
        return scale * d1 @ X, 0.5 * (H + H.T)

    def loglik(self, Z) -> np.ndarray:
        Z = np.atleast_2d(np.asarray(Z, dtype=np.float64))
        U = Z @ self.X.T
        if self.kind == "logistic":
            return -np.sum(np.logaddexp(0.0, -self.y * U), axis=1)
        return np.sum(self.y * U - np.exp(U) - gammaln(self.y + 1.0), axis=1)

    # ---- exact expectations under q = N(mu, Sigma) ------------------------------------------------------------
    def _moments(self, mu, Sigma):
        a = self.X @ mu
        v = np.einsum("ni,ij,nj->n", self.X, Sigma, self.X)
        return a, np.maximum(v, 0.0)

    def expected_loglik_parts(self, mu, Sigma):
        """(E f_i, E f_i', E f_i'') for every data point, u_i ~ N(x_i^T mu, x_i^T Sigma x_i)."""
        a, v = self._moments(mu, Sigma)
        if self.kind == "poisson":
            e = np.exp(a + 0.5 * v)
            return self.y * a - e - gammaln(self.y + 1.0), self.y - e, -e
        # the logistic ridge of refvi.targets.ridge (shared with LogisticRegression.exact_energy): s = y u ~ N(y a, v),
        # f = -softplus(-s), f' = y sigmoid(-s), f'' = -sigmoid'(s)
        sp, sg, ds = ridge_expectations(self.y * a, np.sqrt(v))
        return -sp, self.y * sg, -ds

    def neg_elbo(self, xi, Xi) -> float:
        """l(omega) = -E_q log p(y | z) + KL(q, p) (Eq. 1)."""
        mu, Sigma = expfam.moment_from_expectation(xi, Xi)
        f, _, _ = self.expected_loglik_parts(mu, Sigma)
        return float(-np.sum(f) + expfam.kl(mu, Sigma, self.prior_mean, self.prior_cov))

    def grad_expected_loglik(self, xi, Xi):
        """Exact grad_omega E_q log p = (E g - E[H] mu, E[H] / 2) by Bonnet and Price (Eq. 11 in expectation)."""
        mu, Sigma = expfam.moment_from_expectation(xi, Xi)
        _, f1, f2 = self.expected_loglik_parts(mu, Sigma)
        g = self.X.T @ f1
        H = (self.X * f2[:, None]).T @ self.X
        H = 0.5 * (H + H.T)
        return g - H @ mu, 0.5 * H

    def grad_neg_elbo(self, xi, Xi):
        """grad_omega l = -grad_omega E log p + eta - eta_p (§3.1)."""
        gx, GX = self.grad_expected_loglik(xi, Xi)
        lam, Lam = expfam.natural_from_expectation(xi, Xi)
        lp, Lp = self.prior_natural
        return -gx + lam - lp, -GX + Lam - Lp


def _prior(d, prior_cov, prior_mean):
    P = np.eye(d) if prior_cov is None else as_matrix(prior_cov, "prior_cov", (d, d))
    mp = np.zeros(d) if prior_mean is None else as_vector(prior_mean, "prior_mean", d)
    expfam.check_moment(mp, P)
    return mp, 0.5 * (P + P.T)


def logistic_model(X, y, prior_cov=None, prior_mean=None) -> GLM:
    """Bayesian logistic regression, labels in {-1, +1}, prior N(prior_mean, prior_cov) (default N(0, I))."""
    X = as_matrix(X, "X")
    y = check_labels_pm1(as_vector(y, "y", X.shape[0]))
    return GLM("logistic", np.ascontiguousarray(X), y, *_prior(X.shape[1], prior_cov, prior_mean))


def poisson_model(X, y, prior_cov=None, prior_mean=None) -> GLM:
    """Bayesian Poisson regression with log link (§5), counts y >= 0, prior default N(0, I)."""
    X = as_matrix(X, "X")
    y = as_vector(y, "y", X.shape[0])
    if np.any(y < 0) or np.any(y != np.round(y)):
        raise ValueError("Poisson counts y must be non-negative integers")
    return GLM("poisson", np.ascontiguousarray(X), y, *_prior(X.shape[1], prior_cov, prior_mean))

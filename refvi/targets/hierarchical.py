"""Hierarchical logistic regression (seed 000 Cor 25, with erratum E000-5 fixed).

theta ~ N(0, Sigma), z_g ~ N(theta, Delta) for groups g = 0..G-1, and p(y_n | z_{g(n)}) = sigmoid(y_n x_n^T z_{g(n)}).
The latent vector is (theta, z_0, ..., z_{G-1}) in R^{(G+1) d}.

-Hess log p = P + B(z), where P is the (constant) precision of the Gaussian part,
P_{theta theta} = Sigma^{-1} + G Delta^{-1} (the paper prints -Sigma^{-1} Delta^{-1}: E000-5),
P_{theta z_g} = -Delta^{-1}, P_{z_g z_g} = Delta^{-1}, and 0 <= B(z) <= Bbar = blockdiag(0, X_g^T X_g / 4).
Hence the explicit constants M = lambda_max(P + Bbar) and mu = lambda_min(P) > 0 (the joint Gaussian prior is
proper, so the model is in fact strongly convex, which is more than Cor 25 claims).
"""

from __future__ import annotations

import numpy as np

from refvi._checks import as_matrix, as_vector, check_labels_pm1, positive_scalar
from refvi.kernels.constants import hierarchical_constants
from refvi.targets.base import KernelPlan, Target, spd_eig_bounds

LOG_2PI = float(np.log(2.0 * np.pi))


def _cov(value, d: int, name: str) -> np.ndarray:
    if np.ndim(value) == 0:
        return positive_scalar(value, name) ** 2 * np.eye(d)
    S = as_matrix(value, name, (d, d))
    if not np.array_equal(S, S.T) or spd_eig_bounds(S)[0] <= 0:
        raise ValueError(f"{name} must be a symmetric positive-definite matrix (or a positive scalar scale)")
    return S


class HierarchicalLogisticRegression(Target):
    """``X`` (N, d), ``y`` in {-1, +1}, ``groups`` (N,) integers in 0..G-1 (every group needs no data, but G is
    ``groups.max() + 1`` unless ``n_groups`` is given).  ``prior_scale``/``group_scale`` are scalar scales
    (Sigma = s^2 I) or covariance matrices."""

    name = "hierarchical_logistic_regression"
    convex = True

    def __init__(self, X, y, groups, prior_scale=1.0, group_scale=1.0, n_groups: int | None = None):
        self.X = as_matrix(X, "X").copy()
        self.y = check_labels_pm1(y).copy()
        g = np.asarray(groups)
        if g.shape != (self.X.shape[0],) or self.y.shape[0] != self.X.shape[0]:
            raise ValueError(f"X ({self.X.shape[0]} rows), y ({self.y.shape[0]}) and groups {g.shape} must agree")
        if not np.issubdtype(g.dtype, np.integer) or (g.size and g.min() < 0):
            raise ValueError("groups must be non-negative integers")
        self.groups = g.astype(np.int64)
        G = int(g.max()) + 1 if n_groups is None else int(n_groups)
        if G < 1 or (g.size and g.max() >= G):
            raise ValueError(f"n_groups={G} is inconsistent with groups (max {g.max()})")
        d = self.X.shape[1]
        self.n_groups, self.block = G, d
        self.dim = (G + 1) * d
        self.Sigma = _cov(prior_scale, d, "prior_scale")
        self.Delta = _cov(group_scale, d, "group_scale")
        P, mu, M = hierarchical_constants(self.X, self.groups, G, np.linalg.inv(self.Sigma), np.linalg.inv(self.Delta))
        self.prior_precision = P
        self.strong_convexity, self.smoothness = float(mu), float(M)
        self._const = (
            -0.5 * self.dim * LOG_2PI
            - 0.5 * np.linalg.slogdet(self.Sigma)[1]
            - 0.5 * G * np.linalg.slogdet(self.Delta)[1]
        )

    def _split(self, Z):
        d = self.block
        return Z[:, :d], Z[:, d:].reshape(Z.shape[0], self.n_groups, d)

    def _logits(self, Z):
        _, Zg = self._split(Z)
        return np.einsum("nd,snd->sn", self.X, Zg[:, self.groups, :]) * self.y[None, :]

    def _logp_batch(self, Z):
        T = self._logits(Z)
        quad = np.einsum("si,ij,sj->s", Z, self.prior_precision, Z)
        return self._const - 0.5 * quad - np.sum(np.logaddexp(0.0, -T), axis=1)

    def _grad_batch(self, Z):
        T = self._logits(Z)
        W = self.y[None, :] / (1.0 + np.exp(np.clip(T, -700, 700)))  # y * sigmoid(-t)
        grad = -Z @ self.prior_precision
        d = self.block
        for k in range(self.n_groups):
            idx = self.groups == k
            grad[:, (k + 1) * d : (k + 2) * d] += W[:, idx] @ self.X[idx]
        return grad

    def hess_logp(self, z):
        z = as_vector(z, "z", self.dim)
        T = self._logits(z[None, :])[0]
        D = 1.0 / (2.0 + np.exp(T) + np.exp(-T))
        H = -self.prior_precision.copy()
        d = self.block
        for k in range(self.n_groups):
            idx = self.groups == k
            sl = slice((k + 1) * d, (k + 2) * d)
            XD = self.X[idx] * np.sqrt(D[idx])[:, None]
            H[sl, sl] -= XD.T @ XD
        return H

    def _kernel_plan(self):
        from refvi.kernels import checked, energy, neglogp

        args = (self.X, self.y, self.groups, self.prior_precision)
        return KernelPlan(
            energy=(energy.hierarchical_energy, args),
            energy_checked=(checked.hierarchical_energy_checked, args),
            neglogp=(neglogp.hierarchical_neglogp, args + (self._const,)),
        )

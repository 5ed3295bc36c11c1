"""The cos-plus-quadratic test target of seed 002 (non-convex when ``|alpha| ||b||^2 > beta``).

-log p(z) = alpha cos(b^T z + phi) + (beta/2) ||z - z0||^2.  Its Hessian eigenvalues are beta (on b's orthogonal
complement) and beta - alpha ||b||^2 cos(b^T z + phi), so exactly ``M = beta + |alpha| ||b||^2``, and
``mu = beta - |alpha| ||b||^2`` when that is positive (strongly convex), else the target is non-convex (mu = 0).
"""

from __future__ import annotations

import numpy as np

from refvi._checks import as_vector, positive_scalar
from refvi.targets.base import KernelPlan, Target


class CosineQuadratic(Target):
    name = "cosine_quadratic"

    def __init__(self, alpha: float, b, phi: float = 0.0, beta: float = 1.0, z0=None):
        self.b = as_vector(b, "b")
        self.dim = self.b.shape[0]
        if self.dim < 1:
            raise ValueError("b must have at least one entry (dimension d >= 1)")
        self.alpha = float(as_vector([alpha], "alpha")[0])
        self.phi = float(as_vector([phi], "phi")[0])
        self.beta = positive_scalar(beta, "beta", allow_zero=True)
        self.z0 = np.zeros(self.dim) if z0 is None else as_vector(z0, "z0", self.dim)
        curv = abs(self.alpha) * float(self.b @ self.b)
        self.smoothness = self.beta + curv
        self.strong_convexity = max(0.0, self.beta - curv)
        self.convex = self.beta >= curv

    def _logp_batch(self, Z):
        D = Z - self.z0
        return -self.alpha * np.cos(Z @ self.b + self.phi) - 0.5 * self.beta * np.sum(D * D, axis=1)

    def _grad_batch(self, Z):
        s = np.sin(Z @ self.b + self.phi)
        return self.alpha * s[:, None] * self.b[None, :] - self.beta * (Z - self.z0)

    def hess_logp(self, z):
        z = as_vector(z, "z", self.dim)
        c = np.cos(z @ self.b + self.phi)
        return self.alpha * c * np.outer(self.b, self.b) - self.beta * np.eye(self.dim)

    def _kernel_plan(self):
        from refvi.kernels import checked, energy, neglogp

        args = (self.alpha, self.b, self.phi, self.beta, self.z0)
        return KernelPlan(
            energy=(energy.cosine_energy, args),
            energy_checked=(checked.cosine_energy_checked, args),
            neglogp=(neglogp.cosine_neglogp, args),
        )

"""Gaussian target log p(z) = log N(z | mean, precision^{-1}) (seed 000 §4 "useful exact instances")."""

from __future__ import annotations

import numpy as np

from refvi._checks import as_matrix, as_vector, symmetric
from refvi.targets.base import KernelPlan, Target, quadratic_energy, spd_eig_bounds

LOG_2PI = float(np.log(2.0 * np.pi))


class Gaussian(Target):
    """N(mean, precision^{-1}); M = lambda_max(precision), mu = lambda_min(precision); mode = mean.

    The VI optimum is exact: m* = mean, C* C*^T = precision^{-1}, and f* = (d/2)(1 + log 2 pi) (KL = 0 with the
    entropy constant dropped from h, seed 000 Lemma 14).
    """

    name = "gaussian"
    convex = True

    def __init__(self, mean, precision):
        self.mean = as_vector(mean, "mean").copy()
        d = self.mean.shape[0]
        if d < 1:
            raise ValueError("mean must have at least one entry (dimension d >= 1)")
        self.precision = as_matrix(precision, "precision", (d, d)).copy()
        self.precision = symmetric(self.precision, "precision")
        lo, hi = spd_eig_bounds(self.precision)
        if not lo > 0:
            raise ValueError(f"precision must be positive definite (smallest eigenvalue {lo:.3g})")
        self.dim = d
        self.smoothness = hi
        self.strong_convexity = lo
        self._chol = np.linalg.cholesky(self.precision)
        self._logdet = 2.0 * float(np.sum(np.log(np.diag(self._chol))))

    @property
    def mode(self) -> np.ndarray:
        return self.mean.copy()

    @property
    def covariance(self) -> np.ndarray:
        return np.linalg.inv(self.precision)

    def _logp_batch(self, Z):
        D = Z - self.mean
        q = np.einsum("si,ij,sj->s", D, self.precision, D)
        return -0.5 * q + 0.5 * self._logdet - 0.5 * self.dim * LOG_2PI

    def _grad_batch(self, Z):
        return -(Z - self.mean) @ self.precision

    def hess_logp(self, z):
        as_vector(z, "z", self.dim)  # constant, but only for a z of this target's dimension
        return -self.precision.copy()

    def quadratic_form(self) -> tuple[np.ndarray, np.ndarray, float]:
        """(A, b, c) with -log p(z) = 1/2 z^T A z - b^T z + c (every constant)."""
        A = self.precision
        b = A @ self.mean
        return A, b, 0.5 * self.mean @ b - 0.5 * self._logdet + 0.5 * self.dim * LOG_2PI

    def exact_energy(self, m, C):
        """(l, grad_m l, grad_C l) of l(w) = -E_q log p in closed form (seed 002 §6)."""
        return quadratic_energy(*self.quadratic_form(), *self._variational(m, C))

    def _kernel_plan(self):
        from refvi.kernels import checked, energy, neglogp, optim

        const = 0.5 * np.linalg.slogdet(self.precision)[1] - 0.5 * self.dim * LOG_2PI
        return KernelPlan(
            energy=(energy.gaussian_energy, (self.mean, self.precision)),
            energy_checked=(checked.gaussian_energy_checked, (self.mean, self.precision)),
            neglogp=(neglogp.gaussian_neglogp, (self.mean, self.precision, const)),
            sgd_loop=(optim.GAUSSIAN, self.precision, self.mean, 0.0, 0.0),
        )

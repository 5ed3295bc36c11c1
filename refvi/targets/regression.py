"""Bayesian generalized linear models with a Gaussian prior N(0, prior_scale^2 I) (seed 000 Thm 21, Cor 22, 23).

Constants follow Thm 21 with erratum E000-1 fixed (beta uses theta_max):
-Hess log p lies between Sigma^{-1} + theta_min X^T X and Sigma^{-1} + theta_max X^T X, so
M = lambda_max(Sigma^{-1} + theta_max X^T X) and mu = lambda_min(Sigma^{-1} + theta_min X^T X).

* linear regression (Cor 22 with E000-2 fixed): theta_min = theta_max = 1 / noise_scale^2;
* logistic regression (Cor 23): theta_min = 0, theta_max = 1/4, so mu = 1 / prior_scale^2.
"""

from __future__ import annotations

import numpy as np

from refvi._checks import as_matrix, as_vector, check_labels_pm1, positive_scalar
from refvi.kernels.constants import glm_constants
from refvi.targets.base import KernelPlan, Target, quadratic_energy
from refvi.targets.ridge import ridge_expectations

LOG_2PI = float(np.log(2.0 * np.pi))


def _design(X, y) -> tuple[np.ndarray, np.ndarray]:
    X = as_matrix(X, "X")
    y = as_vector(y, "y")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} entries")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
    with np.errstate(over="ignore"):
        gram_finite = bool(np.isfinite(np.sum(X * X)))
    if not gram_finite:
        raise ValueError("X is too large: X^T X overflows float64 (rescale the features)")
    return X.copy(), y.copy()  # the constants (M, mu, precision) depend on X: never alias the caller's array


class LinearRegression(Target):
    """y_n ~ N(x_n^T z, noise_scale^2), z ~ N(0, prior_scale^2 I).  The posterior is Gaussian and exact."""

    name = "linear_regression"
    convex = True

    def __init__(self, X, y, noise_scale: float = 1.0, prior_scale: float = 1.0):
        self.X, self.y = _design(X, y)
        self.noise_scale = positive_scalar(noise_scale, "noise_scale")
        self.prior_scale = positive_scalar(prior_scale, "prior_scale")
        N, d = self.X.shape
        self.dim = d
        self.precision = self.X.T @ self.X / self.noise_scale**2 + np.eye(d) / self.prior_scale**2
        theta = 1.0 / self.noise_scale**2  # Cor 22 (E000-2): phi'' = 1 / sigma^2
        mu, M = glm_constants(self.X, theta, theta, 1.0 / self.prior_scale**2)
        self.strong_convexity, self.smoothness = float(mu), float(M)
        self._const = -0.5 * N * (LOG_2PI + 2 * np.log(self.noise_scale)) - 0.5 * d * (
            LOG_2PI + 2 * np.log(self.prior_scale)
        )

    @property
    def posterior_mean(self) -> np.ndarray:
        return np.linalg.solve(self.precision, self.X.T @ self.y / self.noise_scale**2)

    @property
    def posterior_cov(self) -> np.ndarray:
        return np.linalg.inv(self.precision)

    @property
    def mode(self) -> np.ndarray:
        return self.posterior_mean

    def log_evidence(self) -> float:
        """log p(x): with h = -log det C (constant dropped), f* = -log p(x) + (d/2)(1 + log 2 pi)."""
        mu = self.posterior_mean
        _, logdet = np.linalg.slogdet(self.precision)
        return float(self.logp(mu) + 0.5 * self.dim * LOG_2PI - 0.5 * logdet)

    def _logp_batch(self, Z):
        R = self.y[None, :] - Z @ self.X.T
        return (
            self._const
            - 0.5 * np.sum(R * R, axis=1) / self.noise_scale**2
            - 0.5 * np.sum(Z * Z, axis=1) / self.prior_scale**2
        )

    def _grad_batch(self, Z):
        R = self.y[None, :] - Z @ self.X.T
        return R @ self.X / self.noise_scale**2 - Z / self.prior_scale**2

    def hess_logp(self, z):
        as_vector(z, "z", self.dim)  # constant, but only for a z of this target's dimension
        return -self.precision.copy()

    def quadratic_form(self) -> tuple[np.ndarray, np.ndarray, float]:
        """(A, b, c) with -log p(z) = 1/2 z^T A z - b^T z + c (every constant)."""
        b = self.X.T @ self.y / self.noise_scale**2
        return self.precision, b, self.y @ self.y / (2 * self.noise_scale**2) - self._const

    def exact_energy(self, m, C):
        """(l, grad_m l, grad_C l) of l(w) = -E_q log p in closed form (seed 002 §6)."""
        return quadratic_energy(*self.quadratic_form(), *self._variational(m, C))

    def _kernel_plan(self):
        from refvi.kernels import checked, energy, neglogp, optim

        args = (self.X, self.y, self.noise_scale**-2, self.prior_scale**-2)
        return KernelPlan(
            energy=(energy.linear_energy, args),
            energy_checked=(checked.linear_energy_checked, args),
            neglogp=(neglogp.linear_neglogp, args + (self._const,)),
            sgd_loop=(optim.LINEAR, self.X, self.y, self.noise_scale**-2, self.prior_scale**-2),
        )


class LogisticRegression(Target):
    """p(y_n = +-1 | z) = sigmoid(y_n x_n^T z), z ~ N(0, prior_scale^2 I), labels y in {-1, +1}."""

    name = "logistic_regression"
    convex = True
    ridge_likelihood = "logistic"  # E_q log p reduces to 1-D Gaussian integrals along y_n x_n (refvi.targets.ridge)

    def __init__(self, X, y, prior_scale: float = 1.0):
        self.X, _ = _design(X, y)
        self.y = check_labels_pm1(y).copy()
        self.prior_scale = positive_scalar(prior_scale, "prior_scale")
        N, d = self.X.shape
        self.dim = d
        mu, M = glm_constants(self.X, 0.0, 0.25, 1.0 / self.prior_scale**2)  # Cor 23: 0 < phi'' <= 1/4
        self.strong_convexity, self.smoothness = float(mu), float(M)
        self._const = -0.5 * d * (LOG_2PI + 2 * np.log(self.prior_scale))
        self._mode: np.ndarray | None = None

    @property
    def mode(self) -> np.ndarray:
        """The MAP estimate, by Newton's method with backtracking (deterministic; gradient norm < 1e-13 scale).
        Once the predicted increase of log p (the Newton decrement g^T H^-1 g) is below 1e-10 (1 + abs(log p)), float64
        cannot resolve the Armijo test, which would then halve a good step to nothing: the full step is taken."""
        if self._mode is None:
            z = np.zeros(self.dim)
            for _ in range(100):
                g = self.grad_logp(z)
                H = self.hess_logp(z)
                step = np.linalg.solve(H, -g)
                t, f0, dec = 1.0, self.logp(z), g @ step
                if dec > 1e-10 * (1.0 + abs(f0)):
                    while self.logp(z + t * step) < f0 + 1e-4 * t * dec and t > 1e-10:
                        t *= 0.5
                z = z + t * step
                if np.linalg.norm(g) <= 1e-13 * max(1.0, np.abs(self.X).sum()):
                    break
            self._mode = z
        return self._mode.copy()

    def _logp_batch(self, Z):
        T = (Z @ self.X.T) * self.y[None, :]
        return self._const - np.sum(np.logaddexp(0.0, -T), axis=1) - 0.5 * np.sum(Z * Z, axis=1) / self.prior_scale**2

    def _grad_batch(self, Z):
        T = (Z @ self.X.T) * self.y[None, :]
        W = self.y[None, :] * _sigmoid(-T)
        return W @ self.X - Z / self.prior_scale**2

    def hess_logp(self, z):
        z = as_vector(z, "z", self.dim)
        t = self.X @ z
        D = _sigmoid(t) * _sigmoid(-t)
        XD = self.X * np.sqrt(D)[:, None]
        return -(XD.T @ XD) - np.eye(self.dim) / self.prior_scale**2  # X^T D X as a Gram product: exactly symmetric

    def exact_energy(self, m, C):
        """(l, grad_m l, grad_C l) of l(w) = -E_q log p by the ridge reduction (seed 002 §6): E softplus(-y x^T z) =
        E softplus(-s), s ~ N(a, beta^2), a = y x^T m, beta = ||C^T x||; gradients by Stein's lemma,
        grad_m = m/s^2 - X^T (y E sigmoid(-s)), grad_C = C/s^2 + X^T diag(E sigmoid'(s)) X C."""
        m, C = self._variational(m, C)
        ip = self.prior_scale**-2
        V = self.X @ C
        sp, sg, ds = ridge_expectations(self.y * (self.X @ m), np.sqrt(np.sum(V * V, axis=1)))
        l = -self._const + 0.5 * ip * (m @ m + np.sum(C * C)) + float(np.sum(sp))
        return float(l), ip * m - self.X.T @ (self.y * sg), ip * C + (self.X.T * ds) @ V

    def _kernel_plan(self):
        from refvi.kernels import checked, energy, neglogp, optim

        args = (self.X, self.y, self.prior_scale**-2)
        return KernelPlan(
            energy=(energy.logistic_energy, args),
            energy_checked=(checked.logistic_energy_checked, args),
            neglogp=(neglogp.logistic_neglogp, args + (self._const,)),
            sgd_loop=(optim.LOGISTIC, self.X, self.y, self.prior_scale**-2, 0.0),
        )


def _sigmoid(t):
    return np.where(t >= 0, 1.0 / (1.0 + np.exp(-np.abs(t))), np.exp(-np.abs(t)) / (1.0 + np.exp(-np.abs(t))))

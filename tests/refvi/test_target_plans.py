"""A target carries its own kernels and exact energy (``Target.kernels()``, ``exact_energy``): a new target defined in
one module, with no edit anywhere in refvi, runs the compiled estimator path, the exact solver and ``fit``
(ARCHITECTURE.md, "A built-in target"); and a subclass that changes ``logp`` never inherits its parent's kernels."""

import numba
import numpy as np
import pytest

import refvi
from refvi import estimators as E
from refvi.optim import exact, fastpath
from refvi.targets import Gaussian, LogisticRegression
from refvi.targets.base import KernelPlan, Target, quadratic_energy

LOG_2PI = float(np.log(2 * np.pi))


@numba.njit(cache=False)
def iso_energy(m, C, U, a, z0):
    S, d = U.shape
    gm, gC = np.zeros(d), np.zeros((d, d))
    for s in range(S):
        g = a * (C @ U[s] + m - z0)
        gm += g
        gC += np.outer(g, U[s])
    return gm / S, gC / S


class IsoGaussian(Target):
    """N(z0, I/a), defined entirely here: density, kernels, exact energy."""

    name = "iso_gaussian"
    convex = True

    def __init__(self, a, z0):
        self.a, self.z0 = float(a), np.asarray(z0, dtype=np.float64).copy()
        self.dim = self.z0.shape[0]
        self.smoothness = self.strong_convexity = self.a

    def _logp_batch(self, Z):
        return -0.5 * self.a * np.sum((Z - self.z0) ** 2, axis=1) + 0.5 * self.dim * (np.log(self.a) - LOG_2PI)

    def _grad_batch(self, Z):
        return -self.a * (Z - self.z0)

    def quadratic_form(self):
        A = self.a * np.eye(self.dim)
        return A, self.a * self.z0, 0.5 * self.a * self.z0 @ self.z0 - 0.5 * self.dim * (np.log(self.a) - LOG_2PI)

    def exact_energy(self, m, C):
        return quadratic_energy(*self.quadratic_form(), m, C)

    def _kernel_plan(self):
        return KernelPlan(energy=(iso_energy, (self.a, self.z0)))


def test_a_target_defined_in_one_module_runs_its_kernel_the_exact_solver_and_fit():
    t, ref = IsoGaussian(2.5, [1.0, -2.0, 0.5]), Gaussian([1.0, -2.0, 0.5], 2.5 * np.eye(3))
    rng = np.random.default_rng(0)
    m, C, U = rng.standard_normal(3), np.tril(rng.standard_normal((3, 3))) + 2 * np.eye(3), rng.standard_normal((7, 3))
    # its kernel, and the fused loop of any energy kernel (no sgd_loop code of its own)
    assert E._energy_kernel(t)[0] is iso_energy and fastpath.kernel_plan(t) is None
    assert fastpath.energy_plan(t)[0] is iso_energy and fastpath.has_fast_path(t, "energy")
    for est in ("energy", "entropy", "stl", "score"):
        for a, b in zip(E.ESTIMATORS[est](t, m, C, U, "tril"), E.ESTIMATORS[est](ref, m, C, U, "tril")):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    for a, b in zip(exact.energy(t, m, C), exact.energy(ref, m, C)):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)
    ms, Cs, fs = exact.solve(t)
    np.testing.assert_allclose(ms, t.z0, rtol=1e-13)
    np.testing.assert_allclose(Cs, np.eye(3) / np.sqrt(2.5), rtol=1e-13)
    r = refvi.fit(t, "gd-prox", steps=30)
    np.testing.assert_allclose(r.m, t.z0, atol=1e-10)
    assert r.trace_objective is not None and abs(r.trace_objective[-1] - fs) <= 1e-10     # the exact objective trace


def test_a_subclass_that_changes_logp_takes_the_generic_path():
    class Tempered(LogisticRegression):
        def _logp_batch(self, Z):
            return 0.5 * super()._logp_batch(Z)

        def _grad_batch(self, Z):
            return 0.5 * super()._grad_batch(Z)

    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((12, 2)), np.where(rng.random(12) < 0.5, -1.0, 1.0)
    t = Tempered(X, y)
    assert t.kernels() == KernelPlan() and not exact.supports(t) and E._checked_energy_plan(t) is None
    m, C, U = np.zeros(2), np.eye(2), rng.standard_normal((5, 2))
    gm, _ = E.energy(t, m, C, U)
    gm_parent, _ = E.energy(LogisticRegression(X, y), m, C, U)
    np.testing.assert_allclose(gm, 0.5 * gm_parent, rtol=1e-12)          # the subclass's own gradient, not the kernel's
    with pytest.raises(TypeError, match="no exact"):
        exact.solve(t)


def test_the_plan_is_built_once_per_instance():
    t = Gaussian(np.zeros(2), np.eye(2))
    assert t.kernels() is t.kernels()
    assert Gaussian(np.zeros(2), np.eye(2)).kernels() is not t.kernels()


def test_the_exact_objective_takes_the_absolute_determinant():
    """f(w) = l(w) - log|det C| (seed 000 Eq. 15) for any invertible C: a negative determinant (a negative diagonal
    entry) gives the same f as its sign flipped (q is the same Gaussian), and only a singular C gives +inf."""
    from refvi.targets import Gaussian

    t = Gaussian(np.array([0.5, -1.0]), np.array([[2.0, 0.3], [0.3, 1.0]]))
    m, C = np.array([0.2, 0.1]), np.array([[1.2, 0.0], [0.4, 0.8]])
    flipped = C * np.array([-1.0, 1.0])  # the first column negated: det < 0, C C^T unchanged
    assert np.linalg.det(flipped) < 0
    assert exact.objective(t, m, flipped) == pytest.approx(exact.objective(t, m, C), rel=1e-14)
    assert exact.objective(t, m, np.array([[1.0, 0.0], [0.5, 0.0]])) == np.inf

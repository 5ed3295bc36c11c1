"""The target interface shared by all log-densities (seed 000 §2, seed 002 §3).

A target is an unnormalized (or normalized) log-density log p(z, x) over z in R^d with

* ``logp(z)`` / ``grad_logp(z)`` for one point (d,) or a batch (S, d), ``hess_logp(z)`` for one point where cheap;
* ``smoothness`` M: -M I <= Hess log p <= M I (seed 000 Def. 19), or ``None`` when unknown;
* ``strong_convexity`` mu >= 0: -Hess log p >= mu I (Def. 20); 0 when only convex or non-convex;
* ``convex``: whether -log p is convex; ``mode``: the maximizer of log p where known (else ``None``).

A target also carries how it runs fast: ``kernels()`` returns its :class:`KernelPlan` (the compiled Numba kernels of
:mod:`refvi.kernels` for its energy gradient, -log p and the whole SGD loop, with their extra arguments), and a target
with a closed-form energy defines ``exact_energy(m, C)`` (``quadratic_form()`` for quadratic -log p).  The estimators,
``fit`` and the exact solver ask the target; they hold no list of target types.  Adding a target is its own module.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from refvi._checks import as_matrix, as_samples, as_vector


@dataclasses.dataclass(frozen=True)
class KernelPlan:
    """A target's compiled kernels, each ``(kernel, extra args)``; ``None`` runs that part on the generic NumPy path.

    * ``energy``: ``kernel(m, C, U, *args) -> (gm, gC)``, the mean over rows of (-grad log p(z), -grad log p(z) u^T)
      (:mod:`refvi.kernels.energy`);
    * ``energy_checked``: the fused validate-and-compute kernel of the public estimator
      (:mod:`refvi.kernels.checked`): ``kernel(m, C, U, d, structure code, *args) -> (status, gm, gC)``;
    * ``neglogp``: ``kernel(Z, *args)``, -log p(z) on the rows of Z with every constant (:mod:`refvi.kernels.neglogp`);
    * ``sgd_loop``: ``(target code, P2, P1, s1, s2)`` of the whole-loop kernel :func:`refvi.kernels.optim.sgd_loop`;
    * ``loop``: a cached whole-loop kernel with fixed argument types, ``kernel(method, estimator, structure code, m,
      C, U, gammas, weights, acc_m, acc_C, M, *args)`` (:func:`refvi.kernels.fused.callable_loop`), run instead of
      :func:`refvi.kernels.fused.energy_loop` around ``energy``, which is compiled in each process.
    """

    energy: tuple | None = None
    energy_checked: tuple | None = None
    neglogp: tuple | None = None
    sgd_loop: tuple | None = None
    loop: tuple | None = None


_NO_PLAN = KernelPlan()
_PLAN_ATTR = "_refvi_kernel_plan"


class Target:
    """Base class: subclasses implement ``_logp_batch`` and ``_grad_batch`` on (S, d) arrays."""

    dim: int
    smoothness: float | None = None
    strong_convexity: float = 0.0
    convex: bool = False
    name: str = "target"

    @property
    def mode(self) -> np.ndarray | None:
        return None

    def logp(self, z):
        Z, single = self._batch(z)
        out = self._logp_batch(Z)
        return float(out[0]) if single else out

    def grad_logp(self, z):
        Z, single = self._batch(z)
        out = self._grad_batch(Z)
        return out[0] if single else out

    def hess_logp(self, z) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} has no Hessian")

    def _variational(self, m, C) -> tuple[np.ndarray, np.ndarray]:
        """(m, C) of q = N(m, C C^T) for this target: a finite vector of length dim and a finite dim x dim matrix
        (any C: the exact energy is defined for every one, singular included)."""
        return as_vector(m, "m", self.dim), as_matrix(C, "C", (self.dim, self.dim))

    def kernels(self) -> KernelPlan:
        """This target's compiled kernels, built once per instance (targets copy their data and never change).

        Only a class that itself defines ``_kernel_plan`` gets kernels: a subclass that changes ``logp`` but not the
        plan falls back to the generic path instead of silently running its parent's kernels."""
        plan = self.__dict__.get(_PLAN_ATTR)
        if plan is None:
            build = type(self).__dict__.get("_kernel_plan")
            plan = self.__dict__[_PLAN_ATTR] = _NO_PLAN if build is None else (build(self) or _NO_PLAN)
        return plan

    def has_exact_energy(self) -> bool:
        """Whether this exact class defines ``exact_energy`` (a closed-form l(w) and its gradient)."""
        return "exact_energy" in type(self).__dict__

    def _batch(self, z) -> tuple[np.ndarray, bool]:
        single = np.ndim(z) == 1
        return as_samples(z, self.dim, "z"), single

    def _logp_batch(self, Z: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _grad_batch(self, Z: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        M = "None" if self.smoothness is None else f"{self.smoothness:.4g}"
        return f"{type(self).__name__}(dim={self.dim}, M={M}, mu={self.strong_convexity:.4g})"


def spd_eig_bounds(H: np.ndarray) -> tuple[float, float]:
    """(lambda_min, lambda_max) of a symmetric matrix."""
    lam = np.linalg.eigvalsh(0.5 * (H + H.T))
    return float(lam[0]), float(lam[-1])


def quadratic_energy(A: np.ndarray, b: np.ndarray, c: float, m, C):
    """(l, grad_m l, grad_C l) for -log p(z) = 1/2 z^T A z - b^T z + c and q = N(m, C C^T) (seed 002 §6):
    l = 1/2 m^T A m + 1/2 tr(C^T A C) - b^T m + c, grad_m = A m - b, grad_C = A C (full matrix)."""
    m = np.asarray(m, dtype=np.float64)
    AC = A @ np.asarray(C, dtype=np.float64)
    return float(0.5 * m @ A @ m + 0.5 * np.sum(C * AC) - b @ m + c), A @ m - b, AC

"""The target interface shared by all log-densities (seed 000 §2, seed 002 §3).

A target is an unnormalized (or normalized) log-density log p(z, x) over z in R^d with

* ``logp(z)`` / ``grad_logp(z)`` for one point (d,) or a batch (S, d), ``hess_logp(z)`` for one point where cheap;
* ``smoothness`` M: -M I <= Hess log p <= M I (seed 000 Def. 19), or ``None`` when unknown;
* ``strong_convexity`` mu >= 0: -Hess log p >= mu I (Def. 20); 0 when only convex or non-convex;
* ``convex``: whether -log p is convex; ``mode``: the maximizer of log p where known (else ``None``).
"""

from __future__ import annotations

import numpy as np

from refvi._checks import as_samples


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

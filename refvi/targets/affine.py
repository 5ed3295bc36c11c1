"""A target seen in an affine frame z = z0 + L x (the frame change of :mod:`refvi.optim.frame`).

For a target p(z) on R^d, an invertible L and a shift z0, the framed target is p_x(x) = p(z0 + L x) (no Jacobian:
it is the constant log|det L|).  Everything seed 000 needs transforms exactly:

* grad log p_x(x) = L^T grad log p(z), -Hess log p_x(x) = L^T (-Hess log p(z)) L, so the constants of the framed
  target are M' = sup lambda_max(L^T H L) and mu' = inf lambda_min(L^T H L) (H = -Hess log p);
* q_x = N(m', C' C'^T) is pushed to q = N(z0 + L m', L C' C'^T L^T), and the VI objectives (seed 000's
  f = l + h, entropy constant dropped) satisfy f(z0 + L m', L C') = f_x(m', C') - log|det L|, so the optimum of one
  maps to the optimum of the other; with L lower triangular with positive diagonal, L C' is lower triangular with
  positive diagonal whenever C' is, so the triangular family is mapped onto itself (Prox-SGD's V = T^d).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from refvi._checks import as_matrix, as_vector, positive_scalar
from refvi.targets.base import KernelPlan, Target


class AffineTarget(Target):
    """``base`` seen in the frame z = z0 + L x.  ``smoothness`` / ``strong_convexity`` are the constants *of the
    frame* (M', mu'): pass them when known or estimated (see :func:`refvi.optim.frame.find_frame`)."""

    name = "affine"

    def __init__(
        self,
        base: Target,
        z0,
        L,
        *,
        smoothness: float | None = None,
        strong_convexity: float = 0.0,
        convex: bool | None = None,
    ):
        if not isinstance(base, Target):
            raise TypeError(f"base must be a refvi Target, got {type(base).__name__}")
        d = base.dim
        self.base, self.dim = base, d
        self.z0 = as_vector(z0, "z0", d).copy()
        self.L = as_matrix(L, "L", (d, d)).copy()
        sign, logdet = np.linalg.slogdet(self.L)
        if sign == 0 or not np.isfinite(logdet) or np.linalg.cond(self.L) > 1e14:
            raise ValueError("the frame matrix L must be invertible (well-conditioned enough to map back)")
        self.log_det_L = float(logdet)
        self.lower = bool(np.all(np.triu(self.L, 1) == 0) and np.all(np.diag(self.L) > 0))
        self.smoothness = None if smoothness is None else positive_scalar(smoothness, "smoothness")
        self.strong_convexity = positive_scalar(strong_convexity, "strong_convexity", allow_zero=True)
        self.convex = bool(base.convex if convex is None else convex) or self.strong_convexity > 0

    # ---- the frame map --------------------------------------------------------------------------------------
    def to_original(self, X) -> np.ndarray:
        """z = z0 + L x for a point (d,) or rows (S, d)."""
        X = np.asarray(X, dtype=np.float64)
        return X @ self.L.T + self.z0

    def params_to_original(self, m, C):
        """(z0 + L m', L C'): the pushforward of N(m', C' C'^T) is N(z0 + L m', (L C')(L C')^T)."""
        return self.z0 + self.L @ m, self.L @ C

    def params_to_frame(self, m, C):
        """(L^{-1}(m - z0), L^{-1} C): the inverse of :meth:`params_to_original`."""
        return np.linalg.solve(self.L, m - self.z0), np.linalg.solve(self.L, C)

    def _kernel_plan(self):
        """The base target's compiled energy and -log p kernels seen through the frame
        (:mod:`refvi.kernels.composed`), so a framed fit runs the fused loop whenever the base target has kernels."""
        from refvi.kernels import composed, fused
        from refvi.kernels.energy import callable_energy
        from refvi.kernels.neglogp import callable_neglogp

        base = self.base.kernels()
        z0, L = self.z0, np.ascontiguousarray(self.L)
        energy: tuple[Any, tuple] | None  # (kernel, its extra arguments): kernels of different arities
        loop = None
        if base.energy is None:
            energy = None
        elif base.energy[0] is callable_energy:  # one numba grad_logp of one point: rows straight through the frame
            energy = (composed.affine_callable_energy, (z0, L) + tuple(base.energy[1]))
            loop = (fused.callable_loop, energy[1])
        elif base.energy[0] is composed.batch_energy:  # a numba grad_batch, by address: a cached kernel
            energy = (composed.affine_batch_energy, (z0, L) + tuple(base.energy[1]))
        elif base.energy[0] in composed.FRAMED_ENERGY:  # a built-in target's kernel: its cached framed kernel
            energy = (composed.FRAMED_ENERGY[base.energy[0]], (z0, L, tuple(base.energy[1])))
        else:
            energy = (composed.affine_energy, (z0, L) + (base.energy[0], base.energy[1]))
        neglogp: tuple[Any, tuple] | None
        if base.neglogp is None:
            neglogp = None
        elif base.neglogp[0] is callable_neglogp:  # one numba logp of one point, by address: a cached kernel
            neglogp = (composed.affine_callable_neglogp, (z0, L) + tuple(base.neglogp[1]))
        elif base.neglogp[0] is composed.batch_neglogp:  # a numba logp_batch, by address
            neglogp = (composed.affine_batch_neglogp, (z0, L) + tuple(base.neglogp[1]))
        elif base.neglogp[0] in composed.FRAMED_NEGLOGP:  # a built-in target's kernel: its cached framed kernel
            neglogp = (composed.FRAMED_NEGLOGP[base.neglogp[0]], (z0, L, tuple(base.neglogp[1])))
        else:
            neglogp = (composed.affine_neglogp, (z0, L, base.neglogp[0], base.neglogp[1]))
        return KernelPlan(energy=energy, neglogp=neglogp, loop=loop)  # all None: the generic path, as no plan

    # ---- density ----------------------------------------------------------------------------------------------
    def _logp_batch(self, X):
        return np.asarray(self.base.logp(X @ self.L.T + self.z0), dtype=np.float64)

    def _grad_batch(self, X):
        return np.asarray(self.base.grad_logp(X @ self.L.T + self.z0), dtype=np.float64) @ self.L

    def hess_logp(self, x) -> np.ndarray:
        H = self.base.hess_logp(self.to_original(as_vector(x, "x", self.dim)))
        return self.L.T @ H @ self.L

    def __repr__(self) -> str:
        M = "None" if self.smoothness is None else f"{self.smoothness:.4g}"
        return f"AffineTarget({self.base!r}, M'={M}, mu'={self.strong_convexity:.4g})"

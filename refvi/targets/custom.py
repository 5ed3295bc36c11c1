"""A target built from any user-supplied log-density and gradient (plain Python or Numba-compiled)."""

from __future__ import annotations

import numpy as np

from refvi._checks import NonFiniteError, as_vector, positive_scalar
from refvi.targets.base import KernelPlan, Target


class CallableTarget(Target):
    """Wrap ``logp(z) -> float`` and ``grad_logp(z) -> (d,)`` for a single point z of shape (d,).

    ``smoothness`` (M) and ``strong_convexity`` (mu) are what you know about -log p; schedules that need M
    refuse a target without it.  Functions compiled with ``numba.njit`` are called from refvi's Numba kernels
    directly (no Python call per sample).  Non-finite values returned by your functions raise ``ValueError``.
    """

    name = "callable"

    def __init__(self, logp, grad_logp, dim: int, *, smoothness: float | None = None,
                 strong_convexity: float = 0.0, convex: bool = False, hess_logp=None, mode=None):
        if not callable(logp) or not callable(grad_logp):
            raise TypeError("logp and grad_logp must be callables taking z of shape (dim,)")
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
            raise ValueError(f"dim must be a positive integer, got {dim!r}")
        self.dim = int(dim)
        self.logp_fn, self.grad_logp_fn, self._h = logp, grad_logp, hess_logp
        self.smoothness = None if smoothness is None else positive_scalar(smoothness, "smoothness")
        self.strong_convexity = positive_scalar(strong_convexity, "strong_convexity", allow_zero=True)
        if self.smoothness is not None and self.strong_convexity > self.smoothness:
            raise ValueError(f"strong_convexity (mu = {self.strong_convexity:g}) cannot exceed smoothness "
                             f"(M = {self.smoothness:g}): mu <= M for any -log p")
        self.convex = bool(convex or self.strong_convexity > 0)
        self._mode = None if mode is None else as_vector(mode, "mode", self.dim).copy()
        self.is_numba = _is_numba(logp) and _is_numba(grad_logp)

    @property
    def mode(self):
        return None if self._mode is None else self._mode.copy()

    def _kernel_plan(self):
        """numba-compiled functions are called from the kernels directly; plain Python ones run the NumPy path."""
        if not self.is_numba:
            return None
        from refvi.kernels import energy, neglogp
        return KernelPlan(energy=(energy.callable_energy, (self.grad_logp_fn,)),
                          neglogp=(neglogp.callable_neglogp, (self.logp_fn,)))

    def _logp_batch(self, Z):
        out = np.array([_real_number(self.logp_fn(z)) for z in Z])
        if not np.all(np.isfinite(out)):
            raise NonFiniteError("user logp returned a non-finite value")
        return out

    def _grad_batch(self, Z):
        out = np.empty_like(Z)
        for s, z in enumerate(Z):
            g = np.asarray(self.grad_logp_fn(z), dtype=np.float64)
            if g.shape != (self.dim,):
                raise ValueError(f"user grad_logp must return shape ({self.dim},), got {g.shape}")
            out[s] = g
        if not np.all(np.isfinite(out)):
            raise NonFiniteError("user grad_logp returned a non-finite value")
        return out

    def hess_logp(self, z):
        if self._h is None:
            raise NotImplementedError("no hess_logp was supplied")
        return np.asarray(self._h(np.asarray(z, dtype=np.float64)), dtype=np.float64)


def _real_number(v) -> float:
    """The user's logp value as a float, or a clear error (an array, a string, None...)."""
    a = np.asarray(v) if not isinstance(v, (str, bytes)) else None
    if a is None or a.dtype == object or a.size != 1 or not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        shape = "" if a is None or a.dtype == object else f" of shape {a.shape}"
        raise ValueError(f"user logp must return one real number for a point z of shape (dim,), got "
                         f"{type(v).__name__}{shape}")
    return float(a.reshape(()))


def _is_numba(fn) -> bool:
    try:
        from numba.core.registry import CPUDispatcher
    except Exception:  # pragma: no cover
        return False
    return isinstance(fn, CPUDispatcher)

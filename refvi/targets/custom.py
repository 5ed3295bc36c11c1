"""A target built from any user-supplied log-density and gradient (plain Python or Numba-compiled)."""

from __future__ import annotations

import numpy as np

from refvi._checks import NonFiniteError, as_vector, positive_scalar
from refvi.targets.base import KernelPlan, Target


class CallableTarget(Target):
    """A target from your own log density and gradient: ``logp(z) -> float`` and ``grad_logp(z) -> (d,)`` for one
    point z of shape (d,), or batched, ``logp_batch(Z) -> (S,)`` and ``grad_batch(Z) -> (S, d)`` for the rows of Z
    (S, d), called once per step for all S samples (a vectorized NumPy density, a JAX ``jit(vmap(grad(logp)))``).

    ``smoothness`` (M) and ``strong_convexity`` (mu) are what you know about -log p; schedules that need M
    refuse a target without it.  Functions compiled with ``numba.njit`` (per point or batched) are called from
    refvi's Numba kernels directly: ``refvi.fit`` runs its whole loop in one compiled call
    (:mod:`refvi.kernels.fused`).  Per-point ones reach the kernels as the address of their compiled code for a
    float64 vector (:mod:`refvi.kernels.userfn`), so those kernels are cached on disk and a new model compiles only
    its own two functions (``compile_seconds`` adds up how long that took).  Python functions run one call per
    step.  Non-finite values returned by your functions raise ``ValueError`` (or end a run as divergence at that
    step).
    """

    name = "callable"

    def __init__(
        self,
        logp=None,
        grad_logp=None,
        dim: int | None = None,
        *,
        logp_batch=None,
        grad_batch=None,
        smoothness: float | None = None,
        strong_convexity: float = 0.0,
        convex: bool = False,
        hess_logp=None,
        mode=None,
    ):
        if (logp is None and logp_batch is None) or (grad_logp is None and grad_batch is None):
            raise TypeError(
                "give the log density and its gradient: logp and grad_logp (one point z of shape (dim,)) "
                "or logp_batch and grad_batch (rows of Z, shape (S, dim))"
            )
        for fn, what in (
            (logp, "logp"),
            (grad_logp, "grad_logp"),
            (logp_batch, "logp_batch"),
            (grad_batch, "grad_batch"),
        ):
            if fn is not None and not callable(fn):
                shape = "Z of shape (S, dim)" if what.endswith("batch") else "z of shape (dim,)"
                raise TypeError(f"{what} must be a callable taking {shape}, got {type(fn).__name__}")
        if dim is None or isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
            raise ValueError(f"dim must be a positive integer, got {dim!r}")
        self.dim = int(dim)
        self.logp_fn, self.grad_logp_fn, self._h = logp, grad_logp, hess_logp
        self.logp_batch_fn, self.grad_batch_fn = logp_batch, grad_batch
        self.smoothness = None if smoothness is None else positive_scalar(smoothness, "smoothness")
        self.strong_convexity = positive_scalar(strong_convexity, "strong_convexity", allow_zero=True)
        if self.smoothness is not None and self.strong_convexity > self.smoothness:
            raise ValueError(
                f"strong_convexity (mu = {self.strong_convexity:g}) cannot exceed smoothness "
                f"(M = {self.smoothness:g}): mu <= M for any -log p"
            )
        self.convex = bool(convex or self.strong_convexity > 0)
        self._mode = None if mode is None else as_vector(mode, "mode", self.dim).copy()
        # the function each side uses (batched when given) and whether it is numba-compiled
        self._lp = (logp_batch, True) if logp_batch is not None else (logp, False)
        self._gr = (grad_batch, True) if grad_batch is not None else (grad_logp, False)
        self.is_numba = _is_numba(self._lp[0]) and _is_numba(self._gr[0])
        self.compile_seconds = 0.0  # seconds spent compiling the user's numba functions for refvi's kernels
        self._owners: list = []  # the dispatchers whose compiled code the kernels call by address

    @property
    def mode(self):
        return None if self._mode is None else self._mode.copy()

    def _kernel_plan(self):
        """numba-compiled functions are called from the kernels by the address of their compiled code (per point or
        batched, :func:`refvi.kernels.userfn.address`, compiled here); plain Python ones run the NumPy path."""
        if not self.is_numba:
            return None
        from refvi.kernels import composed, energy, fused, neglogp

        grad, batched = self._gr
        loop = None
        if batched:
            en = (composed.batch_energy, (self._address(grad, "grad_batch"),))
        else:
            args = (self._address(grad, "grad"),)
            en = (energy.callable_energy, args)
            loop = (fused.callable_loop, (np.empty(0), np.empty((0, 0))) + args)
        lp, batched = self._lp
        if batched:
            nl = (composed.batch_neglogp, (self._address(lp, "logp_batch"),))
        else:
            nl = (neglogp.callable_neglogp, (self._address(lp, "logp"),))
        return KernelPlan(energy=en, neglogp=nl, loop=loop)

    def _address(self, fn, kind):
        from refvi.kernels import userfn

        addr, owner, compiled, seconds = userfn.address(fn, kind)
        self._owners.append(owner)
        if compiled:
            self.compile_seconds += seconds
        return addr

    def _logp_batch(self, Z):
        fn, batched = self._lp
        if batched:
            out = np.asarray(fn(Z))
            if out.shape != (Z.shape[0],) or not np.issubdtype(out.dtype, np.number) or np.iscomplexobj(out):
                raise ValueError(
                    f"user logp_batch must return {Z.shape[0]} real numbers for Z of shape {Z.shape}, "
                    f"got {type(out).__name__} of shape {out.shape}"
                )
            out = out.astype(np.float64)
        else:
            out = np.array([_real_number(fn(z)) for z in Z])
        if not np.all(np.isfinite(out)):
            raise NonFiniteError("user logp returned a non-finite value")
        return out

    def _grad_batch(self, Z):
        fn, batched = self._gr
        if batched:
            out = np.asarray(fn(Z), dtype=np.float64)
            if out.shape != Z.shape:
                raise ValueError(
                    f"user grad_batch must return shape {Z.shape} for Z of shape {Z.shape}, got {out.shape}"
                )
        elif self.is_numba and Z.shape[0] > 1:  # every row in one compiled call (the frame search's Hessians)
            from refvi.kernels import _entry, energy

            args = self.kernels().energy[1]  # type: ignore[index]  # (a numba target always has an energy plan)
            out = _entry.call(energy.callable_grad_rows, (np.ascontiguousarray(Z),), args)
        else:
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
        raise ValueError(
            f"user logp must return one real number for a point z of shape (dim,), got {type(v).__name__}{shape}"
        )
    return float(a.reshape(()))


def _is_numba(fn) -> bool:
    try:
        from numba.core.registry import CPUDispatcher
    except Exception:  # pragma: no cover
        return False
    return isinstance(fn, CPUDispatcher)

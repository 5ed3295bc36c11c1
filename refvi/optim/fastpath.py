"""Dispatch of an SGD run to a whole-loop Numba kernel or to the generic loop.

Two compiled loops: targets whose kernel plan has an ``sgd_loop`` entry (built in: Gaussian, LinearRegression and
LogisticRegression) run :func:`refvi.kernels.optim.sgd_loop`; every other target whose plan has an ``energy`` kernel
(the posteriordb models, CosineQuadratic, HierarchicalLogisticRegression, CallableTargets around ``numba.njit``
functions, and the affine frames of all of these) runs the loop of :func:`refvi.kernels.fused.energy_loop`, the same
loop with the energy kernel passed as a first-class function, or, when the plan has a ``loop`` entry (a
``CallableTarget`` of per-point ``numba.njit`` functions and its affine frame), that entry's loop,
:func:`refvi.kernels.fused.callable_loop`, cached on disk.  Both cover the energy, entropy and STL estimators.  A
target whose gradient is Python code (NumPy or JAX callables, batched or not) runs a Python loop with one gradient
call and one compiled call per step (``_python_gradient_loop``).  ``fast=False`` and the score estimator run the
generic loop, one validated estimator call per step (:mod:`refvi.estimators`, :mod:`refvi.prox`).  All compute the
same update from the same pre-drawn base samples; the fused loop and the generic loop agree bit for bit
(``tests/refvi/test_fused_loop.py``).  In a lower-triangular frame, Prox-SGD with the energy estimator and triangular
C runs :func:`refvi.kernels.framed.framed_prox_loop` instead (built-in targets and per-point numba
``CallableTarget``s, :func:`framed_plan`): the same step with only its O(S d^2) arithmetic, in another order, which
agrees to about 1e-12 relative (``tests/kernels/test_framed_loop.py``).
"""

from __future__ import annotations

import numpy as np

from refvi import estimators as _est
from refvi import prox as _prox
from refvi._checks import NonFiniteError
from refvi.kernels import _entry
from refvi.kernels import framed as _kfr
from refvi.kernels import fused as _kf
from refvi.kernels import optim as _ko
from refvi.kernels.structure import structure_code
from refvi.targets.base import Target

_EST_CODES = {"energy": _ko.ENERGY, "entropy": _ko.ENTROPY, "stl": _ko.STL}
_METHOD_CODES = {"prox": _ko.PROX, "proj": _ko.PROJ}


class DivergenceError(ValueError):
    """A step produced a non-finite iterate; carries the step index and the last finite state."""

    def __init__(self, step: int, m: np.ndarray, C: np.ndarray, method: str, reason: str | None = None):
        self.step, self.m, self.C = step, m, C
        if reason is not None:
            super().__init__(
                f"{method} diverged by step {step}: {reason}. State: m = "
                f"{np.array2string(m, precision=4)}, C diagonal = {np.array2string(np.diag(C), precision=4)}"
            )
            return
        super().__init__(
            f"{method} diverged at step {step}: the update from w^{step} is not finite (step size too "
            f"large for this target?). Last finite state w^{step}: m = {np.array2string(m, precision=4)}, "
            f"C diagonal = {np.array2string(np.diag(C), precision=4)}"
        )


def kernel_plan(target):
    """(target code, P2, P1, s1, s2) for the kernel loop (the target's ``KernelPlan.sgd_loop``), or None when the
    target has no fused loop."""
    return target.kernels().sgd_loop if isinstance(target, Target) else None


def energy_plan(target):
    """(energy kernel, extra args) for :func:`refvi.kernels.fused.energy_loop`, or None (no compiled energy)."""
    return target.kernels().energy if isinstance(target, Target) else None


def has_fast_path(target, estimator: str) -> bool:
    """Whether a run with ``estimator`` takes one of the compiled whole-loop kernels."""
    return estimator in _EST_CODES and (kernel_plan(target) is not None or energy_plan(target) is not None)


def generic_step(method, target, estimator, structure, m, C, U, gamma, M):
    """One step through the public, validating API (the generic path)."""
    gm, gC = _est.ESTIMATORS[estimator](target, m, C, U, structure)
    m_new, Y = m - gamma * gm, C - gamma * gC
    if not (np.all(np.isfinite(m_new)) and np.all(np.isfinite(Y))):
        return m_new, Y
    if method == "prox":
        return m_new, _prox.entropy_prox(Y, gamma)
    if structure == "sym":
        return m_new, _prox.project_wm(0.5 * (Y + Y.T), M, "sym")
    return m_new, _prox.project_singular_values(Y, M)


def framed_plan(target, method, estimator, structure):
    """(z0, L, target code, P2, P1, s1, s2, grad) for :func:`refvi.kernels.framed.framed_prox_loop`: Prox-SGD with
    the energy estimator and lower-triangular C on a built-in target (one with a whole-loop code) or a
    ``CallableTarget`` of a per-point numba gradient (code ``USER``, ``grad`` its address), seen through a
    lower-triangular frame (the Laplace frame of ``refvi.fit``); None otherwise."""
    from refvi.kernels.energy import callable_energy
    from refvi.targets.affine import AffineTarget

    if not (method == "prox" and estimator == "energy" and structure == "tril" and isinstance(target, AffineTarget)):
        return None
    if not target.lower:
        return None
    z0, L = target.z0, np.ascontiguousarray(target.L)
    base = kernel_plan(target.base)
    if base is not None:
        code, P2, P1, s1, s2 = base
        return (z0, L, code, P2, P1, float(s1), float(s2), 0)
    energy = energy_plan(target.base)
    if energy is not None and energy[0] is callable_energy:  # the user's gradient of one point, by address
        no_data = (np.empty((0, 0)), np.empty(0), 0.0, 0.0)  # pragma: no mutate (the USER branch reads no data slot)
        return (z0, L, _kfr.USER, *no_data, int(energy[1][0]))
    return None


def run(method, target, estimator, structure, m, C, U, gammas, weights, acc_m, acc_C, M=0.0, fast=True) -> int:
    """Run len(gammas) steps in place on (m, C); accumulate weights[t+1] w^{t+1}.  Returns -1 or the failing step."""
    framed = framed_plan(target, method, estimator, structure) if fast else None
    if framed is not None:
        if not all(a.flags.c_contiguous and a.dtype == np.float64 for a in (m, C, U, acc_m, acc_C)):
            raise ValueError("fastpath.run: m, C, U and the averages must be C-contiguous float64 arrays")
        z0, L, code, P2, P1, s1, s2, grad = framed
        return int(_kfr.framed_prox_loop(code, m, C, U, gammas, weights, acc_m, acc_C, z0, L, P2, P1, s1, s2, grad))
    plan = kernel_plan(target) if fast and estimator in _EST_CODES else None
    if plan is not None:
        code, P2, P1, s1, s2 = plan
        return int(
            _ko.sgd_loop(
                _METHOD_CODES[method],
                code,
                _EST_CODES[estimator],
                structure_code(structure),
                m,
                C,
                U,
                gammas,
                weights,
                acc_m,
                acc_C,
                float(M),
                P2,
                P1,
                float(s1),
                float(s2),
            )
        )
    energy = energy_plan(target) if fast and estimator in _EST_CODES else None
    if energy is not None:
        if not all(a.flags.c_contiguous and a.dtype == np.float64 for a in (m, C, U, acc_m, acc_C)):  # STEP_SIGNATURE
            raise ValueError("fastpath.run: m, C, U and the averages must be C-contiguous float64 arrays")
        head: tuple = (_METHOD_CODES[method], _EST_CODES[estimator], structure_code(structure))
        head += (m, C, U, gammas, weights, acc_m, acc_C, float(M))
        loop = target.kernels().loop
        if loop is not None:  # a cached loop with fixed argument types (the user's functions by address)
            return int(_entry.call(loop[0], head, loop[1]))
        return int(_entry.call(_kf.energy_loop(), head, energy))
    if fast and estimator in _EST_CODES:
        return _python_gradient_loop(method, target, estimator, structure, m, C, U, gammas, weights, acc_m, acc_C, M)
    for t in range(gammas.shape[0]):
        try:
            m_new, C_new = generic_step(method, target, estimator, structure, m, C, U[t], gammas[t], M)
        except NonFiniteError:  # overflow at a finite iterate: the run diverged here (bad input propagates)
            return t
        if not (np.all(np.isfinite(m_new)) and np.all(np.isfinite(C_new))):
            return t
        m[:], C[:] = m_new, C_new
        acc_m += weights[t + 1] * m
        acc_C += weights[t + 1] * C
    return -1


def _python_gradient_loop(method, target, estimator, structure, m, C, U, gammas, weights, acc_m, acc_C, M):
    """The loop for a target whose gradient is Python code (NumPy, JAX, a batched callable): per step one call of
    ``target.grad_logp`` on all S points (the generic estimator's own raw-gradient code) and one compiled call for
    the rest of the step (:func:`refvi.kernels.fused.step_from_raw`): the generic path's arithmetic, bit for bit,
    without its per-step validation."""
    head = (_METHOD_CODES[method], _EST_CODES[estimator], structure_code(structure), m, C)
    step = None
    for t in range(gammas.shape[0]):
        Ut = U[t]
        try:
            gm, gC = _est._energy_raw_numpy(target, m, C, Ut)
        except NonFiniteError:  # overflow at a finite iterate: the run diverged here (bad input propagates)
            return t
        # (every argument is a float64 C-contiguous array or a Python number: typed once, on the first step)
        args = head + (
            Ut,
            np.ascontiguousarray(gm),
            np.ascontiguousarray(gC),
            float(gammas[t]),
            float(M),
            float(weights[t + 1]),
            acc_m,
            acc_C,
        )
        if step is None:
            step, ok = _entry.resolve(_kf.step_from_raw, args, ())
        else:
            ok = step(*args)
        if not ok:
            return t
    return -1

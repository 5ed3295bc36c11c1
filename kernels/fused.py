"""The whole Prox-SGD / Proj-SGD loop (seed 000 Defs. 5, 8) for ANY compiled energy kernel, in one Numba call.

:func:`refvi.kernels.optim.sgd_loop` knows three targets by code.  The loop of :func:`energy_loop` takes the target's
energy kernel itself as a first-class function, ``energy(m, C, U_t, *args) -> (gm, gC_raw)`` (the ``energy`` entry of
a :class:`~refvi.targets.base.KernelPlan`: built-in targets, posteriordb models, affine frames of them, and
``CallableTarget``s around ``numba.njit`` functions), and runs every step inside the compiled call.

Each step is exactly the generic path's (:func:`refvi.optim.fastpath.generic_step`) on the same base samples, with
the same kernels in the same order, so the two agree bit for bit:

1. the raw gradient must be finite (else the loop stops at t, as the generic path's ``NonFiniteError``);
   (gm, gC) = the estimator tail (energy / entropy / STL, :mod:`refvi.kernels.estimators`) of the raw gradient;
2. m' = m - gamma gm, Y = C - gamma gC; if any entry is not finite the loop stops and returns the step index t
   (m, C keep the last finite state w^t: the divergence the generic loop reports);
3. C' = prox_{gamma h}(Y) (Lemma 31) or the projection onto W_M (Lemma 32, seed 002 Thm 7);
4. the averages accumulate weights[t + 1] w^{t+1}.

The loop is compiled once per energy kernel and argument types in each process (Numba cannot cache a function
specialised on a function argument).  Steps 1-4 are ``step_from_raw``, which the loop calls through a pointer, as the
C callback :func:`step_callback` (cached on disk, fixed signature ``STEP_SIGNATURE``): so compiling the loop for a new
target compiles the loop and that target's energy only, not the prox and projections again (about 1 s instead of 4 s
for a posteriordb model's framed energy); per step the two loops take the same time.  ``step_from_raw`` is also what
:func:`refvi.optim.fastpath.run` calls per step for targets whose gradient is Python code (a batched NumPy or JAX
function): one call of the user's function and one compiled call per step.

A ``CallableTarget`` of per-point ``numba.njit`` functions, and its affine frame, run :func:`callable_loop`
instead: the same loop with the target's energy kernel (:func:`refvi.kernels.energy.callable_energy` or
:func:`refvi.kernels.composed.affine_callable_energy`) called directly and the user's gradient passed as the address
of its compiled code (:mod:`refvi.kernels.userfn`), so the loop is compiled once and cached on disk, and a new user
model compiles only the user's two functions.
"""

from __future__ import annotations

import functools

import numba
from numba import types

from refvi.kernels import composed as _composed  # also its warning filter: first-class function types
from refvi.kernels._jit import jit, jit_nocache
from refvi.kernels.energy import callable_energy
from refvi.kernels.optim import _all_finite, accept, descend, regularize, tail


@jit
def step_from_raw(method, estimator, code, m, C, U, gm_raw, gC_raw, gamma, M, w, acc_m, acc_C):
    """Steps 1-4 of the module docstring from the raw energy gradient of base samples U; False (state unchanged)
    when a step is not finite."""
    if not _all_finite(gm_raw, gC_raw):  # the generic path's NonFiniteError on the raw gradient
        return False
    gm, gC = tail(estimator, code, gm_raw, gC_raw, C, U)
    m_new, Y = descend(m, C, gm, gC, gamma)
    if not _all_finite(m_new, Y):
        return False
    C_new = regularize(method, code, Y, gamma, M)
    if not _all_finite(m_new, C_new):
        return False
    accept(m, C, m_new, C_new, w, acc_m, acc_C)
    return True


_VEC = types.Array(types.float64, 1, "C")
_MAT = types.Array(types.float64, 2, "C")
# step_from_raw(method, estimator, code, m, C, U_t, gm_raw, gC_raw, gamma, M, w, acc_m, acc_C) -> accepted
STEP_SIGNATURE = types.boolean(
    types.int64, types.int64, types.int64, _VEC, _MAT, _MAT, _VEC, _MAT, types.float64, types.float64, types.float64,
    _VEC, _MAT,
)  # fmt: skip


def _step(method, estimator, code, m, C, U, gm_raw, gC_raw, gamma, M, w, acc_m, acc_C):
    # the cfunc's own Python function: Numba keys a disk cache by the function's name, apart from step_from_raw's
    return step_from_raw(method, estimator, code, m, C, U, gm_raw, gC_raw, gamma, M, w, acc_m, acc_C)


@functools.cache
def step_callback():
    """:func:`step_from_raw` compiled as a C callback of ``STEP_SIGNATURE`` (a Numba ``cfunc``, cached on disk; made
    on first use, so importing refvi does not load it): the step :func:`energy_loop` calls."""
    return numba.cfunc(STEP_SIGNATURE, cache=True, error_model="numpy")(_step)


@functools.cache
def energy_loop():
    """The fused loop ``loop(method, estimator, code, m, C, U, gammas, weights, acc_m, acc_C, M, energy, args)``: run
    len(gammas) steps in place with the energy kernel ``energy(m, C, U[t], *args)``; returns -1 or the index of the
    first step whose update is not finite (see the module docstring).  The arrays are C-contiguous float64
    (``STEP_SIGNATURE``).  Made on first use around :func:`step_callback`, whose address is then a constant of the
    compiled loop (as an argument, the callback would be converted to its address on every call, about 5 us)."""
    step = step_callback()

    @jit_nocache
    def loop(method, estimator, code, m, C, U, gammas, weights, acc_m, acc_C, M, energy, args):
        T = gammas.shape[0]
        for t in range(T):
            gm_raw, gC_raw = energy(m, C, U[t], *args)
            if not step(
                method, estimator, code, m, C, U[t], gm_raw, gC_raw, gammas[t], M, weights[t + 1], acc_m, acc_C
            ):
                return t
        return -1

    return loop


@jit
def callable_loop(method, estimator, code, m, C, U, gammas, weights, acc_m, acc_C, M, z0, L, grad):
    """:func:`energy_loop`'s loop for a ``CallableTarget`` whose ``grad_logp(z)`` is numba-compiled, at the address
    ``grad`` (:func:`refvi.kernels.userfn.address`): the energy of each step is
    :func:`refvi.kernels.energy.callable_energy`, or, in the affine frame z = z0 + L x (``L`` of shape (d, d); an
    empty ``L`` means no frame), :func:`refvi.kernels.composed.affine_callable_energy`; then steps 1-4 of the module
    docstring (:func:`step_from_raw`).  Returns -1 or the index of the first step whose update is not finite."""
    framed = L.shape[0] > 0
    for t in range(gammas.shape[0]):
        if framed:
            gm_raw, gC_raw = _composed.affine_callable_energy(m, C, U[t], z0, L, grad)
        else:
            gm_raw, gC_raw = callable_energy(m, C, U[t], grad)
        if not step_from_raw(
            method, estimator, code, m, C, U[t], gm_raw, gC_raw, gammas[t], M, weights[t + 1], acc_m, acc_C
        ):
            return t
    return -1

"""A user's ``numba.njit`` functions as fixed-signature pointers, so the kernels that call them are cached once.

A kernel that takes a compiled function as an argument is specialised on that function's type, and Numba cannot
cache such a specialisation: every process would compile the kernels of a ``CallableTarget`` (its energy, -log p, the
frame's versions of both and the whole SGD loop) again for the user's functions.  Here a user's function reaches a
kernel as an integer, the address of its compiled code for one fixed signature:

* ``logp(z) -> float64`` and ``grad_logp(z) -> float64[::1]`` for z a C-contiguous float64 vector
  (``LOGP``, ``GRAD``);
* ``logp_batch(Z) -> float64[::1]`` and ``grad_batch(Z) -> float64[:, ::1]`` for Z a C-contiguous float64 matrix of
  points in rows (``LOGP_BATCH``, ``GRAD_BATCH``);

:func:`address` compiles the user's function for that argument type (the compilation a call
``logp(np.zeros(d))`` does; nothing else of the user's is compiled) and returns the address of its Numba entry
point; inside a kernel, ``logp_function`` / ``grad_function`` (``logp_batch_function`` / ``grad_batch_function``)
turn the address back into a first-class function of that signature, called with Numba's own calling convention
(a user function that raises still raises).
The kernels taking such addresses (:func:`refvi.kernels.energy.callable_energy`, ...) have only arrays and integers
as arguments, so they are compiled once and cached on disk like every other kernel.

A user function whose return type for that argument is not the fixed one (a float32 gradient, an integer log
density, a non-contiguous array) is called through a small adapter, compiled in each process, that converts its
value to float64 as the kernels did before (``float(logp(z))``, ``np.asarray(grad_logp(z), dtype=np.float64)``; a
batched function's values as ``np.asarray(..., dtype=np.float64)``, their shapes checked by the kernels).
"""

from __future__ import annotations

import time

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_VEC = types.Array(types.float64, 1, "C")
_MAT = types.Array(types.float64, 2, "C")
#: the fixed signatures of a user's per-point functions
LOGP = types.float64(_VEC)
GRAD = _VEC(_VEC)
#: and of its batched ones (points in the rows of Z)
LOGP_BATCH = _VEC(_MAT)
GRAD_BATCH = _MAT(_MAT)
_SIGNATURES = {"logp": LOGP, "grad": GRAD, "logp_batch": LOGP_BATCH, "grad_batch": GRAD_BATCH}


def _from_address(fntype):
    """An intrinsic ``(address) -> fntype``: the first-class function whose Numba entry point is at ``address``."""

    @intrinsic
    def make(typingctx, addr):
        if not isinstance(addr, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            voidptr = context.get_value_type(types.voidptr)
            fn = cgutils.create_struct_proxy(fntype)(context, builder)
            fn.c_addr = voidptr(None)
            fn.py_addr = voidptr(None)
            fn.jit_addr = builder.inttoptr(args[0], voidptr)
            return fn._getvalue()

        return fntype(addr), codegen

    return make


logp_function = _from_address(types.FunctionType(LOGP))
grad_function = _from_address(types.FunctionType(GRAD))
logp_batch_function = _from_address(types.FunctionType(LOGP_BATCH))
grad_batch_function = _from_address(types.FunctionType(GRAD_BATCH))


def _adapter(fn, kind):
    """A per-process wrapper of ``fn`` with the fixed return type of ``kind``, converting as the kernels did."""
    if kind == "logp":

        @numba.njit(error_model="numpy")
        def logp(z):
            return np.float64(float(fn(z)))  # float() of a float32 stays float32 in Numba

        return logp

    if kind in ("logp_batch", "grad_batch"):

        @numba.njit(error_model="numpy")
        def batch(Z):  # the shape is checked by the kernel that calls it (composed.batch_energy / batch_neglogp)
            return np.ascontiguousarray(np.asarray(fn(Z), dtype=np.float64))

        return batch

    @numba.njit(error_model="numpy")
    def grad(z):
        g = np.asarray(fn(z), dtype=np.float64)
        if g.ndim != 1:
            raise ValueError("user grad_logp must return an array of shape (dim,)")
        return np.ascontiguousarray(g)

    return grad


def address(fn, kind: str):
    """``(address, owner, compiled, seconds)`` for the user's ``numba.njit`` function ``fn`` of ``kind`` ("logp",
    "grad", "logp_batch" or "grad_batch"): the entry point of its compilation for a C-contiguous float64 vector (a
    matrix for the batched kinds; or of an adapter's, when its
    return type is not the fixed one), the dispatcher that owns that code (the caller keeps it alive as long as it
    uses the address), whether this call compiled anything, and the seconds it took."""
    sig = _SIGNATURES[kind]
    t0 = time.perf_counter()
    before = len(fn.overloads)
    cres = fn.get_compile_result(sig)
    compiled = len(fn.overloads) != before
    target = fn
    if cres.signature.return_type != sig.return_type:
        target = _adapter(fn, kind)
        cres = target.get_compile_result(sig)
        compiled = True
        if cres.signature.return_type != sig.return_type:  # pragma: no cover - the adapters convert every value
            raise TypeError(f"the user's {kind} function cannot be called as {sig}")
    addr = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
    if not isinstance(addr, int) or addr <= 0:  # pragma: no cover - Numba always exports the entry point
        raise RuntimeError(f"no entry point for the user's {kind} function")
    return addr, target, compiled, time.perf_counter() - t0

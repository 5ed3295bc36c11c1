"""Calling a kernel that takes functions and tuples of arrays without Numba's per-call typing.

A Numba dispatcher types every argument on every call; for a tuple holding arrays and other compiled functions (the
``args`` of a :class:`~refvi.targets.base.KernelPlan` entry, e.g. an affine frame around a posteriordb model) that
costs about a millisecond, more than a 100-step chunk of the fused loop.  :func:`call` types such a call once, then
calls the compiled specialization's entry point directly.  The cache key is the kernel, the identity of the plan's
argument tuple (kept alive by the cache) and a cheap description of the other arguments (array dtype, ndim and
contiguity, scalar type), so a call with other types still goes through the dispatcher.
"""

from __future__ import annotations

import numpy as np

_ENTRIES: dict = {}
_MAX = 256


def _describe(a):
    if type(a) is np.ndarray:
        return (a.dtype.char, a.ndim, a.flags.c_contiguous)
    return type(a)


def call(kernel, args: tuple, plan_args: tuple):
    """``kernel(*args, *plan_args)`` (``plan_args``: the plan's extra arguments, passed unchanged)."""
    key = (kernel, id(plan_args), tuple(_describe(a) for a in args))
    hit = _ENTRIES.get(key)
    if hit is not None and hit[0] is plan_args:
        return hit[1](*args, *plan_args)
    out = kernel(*args, *plan_args)
    full = tuple(args) + tuple(plan_args)
    sig = tuple(kernel.typeof_pyval(a) for a in full)
    overload = kernel.overloads.get(sig)
    if overload is not None:
        if len(_ENTRIES) >= _MAX:
            _ENTRIES.clear()
        _ENTRIES[key] = (plan_args, overload.entry_point)
    return out


def resolve(kernel, args: tuple, plan_args: tuple):
    """The callable that :func:`call` would use for arguments of these types: the compiled entry point (after one
    call through the dispatcher, whose result is returned too) or the dispatcher.  For loops that call a kernel
    many times with arguments of fixed types: ``(fn, first result)``."""
    out = call(kernel, args, plan_args)
    hit = _ENTRIES.get((kernel, id(plan_args), tuple(_describe(a) for a in args)))
    return (hit[1] if hit is not None and hit[0] is plan_args else kernel), out

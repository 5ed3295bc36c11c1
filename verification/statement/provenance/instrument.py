"""Statements see a NumPy and a math whose results keep marks (:class:`MarkingNumpy`, :class:`MarkingMath`), arrays
they fill collect them (:class:`Collector`, :func:`instrument`), and the oracles pass marks through: what an oracle
computes from a reported value is reported (:func:`pass_marks_through`)."""

from __future__ import annotations

import functools
import inspect
import math
from typing import Any

import numpy as np

from refvi.verification.statement.provenance.marks import _UNMARKED, EMPTY, Reported, marks_of, plain, rows_of, tag

# ------------------------------------------------------------------------------------------------------------------
# statements see a NumPy and a math whose results keep marks, and arrays they fill collect them
# ------------------------------------------------------------------------------------------------------------------


class Collector(Reported):
    """An array a statement created (``np.empty``, ``np.zeros``, ...): what is assigned into it marks it, row by
    row, so ``kl = np.empty(R); kl[r] = kl_of(reported[r])`` keeps what each ``kl[r]`` was computed from."""

    def __setitem__(self, key, value):
        found = marks_of(value) | marks_of(key)  # e[reported_index] = 1 depends on the index too
        if found:
            self.marks = self.marks | found
            if self.ndim >= 1:
                rows = list(self.rows) if self.rows is not None else [EMPTY] * self.shape[0]
                first = key[0] if isinstance(key, tuple) and key else key
                if isinstance(first, int | np.integer):
                    span: Any = [int(first)]
                elif isinstance(first, slice):
                    span = range(*first.indices(len(rows)))
                else:
                    span = range(len(rows))
                for i in span:
                    rows[i] = rows[i] | found
                self.rows = tuple(rows)
        super().__setitem__(plain(key), plain(value))


def _keeping(original):
    def converter(obj, *args, **kwargs):
        if type(obj) in _UNMARKED or _INSIDE_ORACLE:
            return original(obj, *args, **kwargs)
        found = marks_of(obj)
        if not found:
            return original(obj, *args, **kwargs)
        out = tag(original(plain(obj), *args, **kwargs), found)
        rows = rows_of(obj)
        if isinstance(out, Reported) and rows is not None and out.ndim >= 1 and out.shape[0] == len(rows):
            out.rows = rows
        return out

    return functools.wraps(original)(converter)


def _collecting(original):
    def constructor(*args, **kwargs):
        out = original(*plain(args), **plain(kwargs)).view(Collector)
        out.marks = marks_of(args) | marks_of(kwargs)
        return out

    return functools.wraps(original)(constructor)


class MarkingNumpy:
    """What ``np`` is inside the statement modules (:func:`instrument`): NumPy itself, except that ``asarray``,
    ``array``, ``ascontiguousarray`` and ``asfortranarray`` keep the marks (and rows) of what they convert, lists of
    marked values included, and ``empty`` / ``zeros`` / ``ones`` / ``full`` (and their ``_like``) make
    :class:`Collector` arrays.  The implementation and the oracles see NumPy unchanged."""

    KEEP = ("asarray", "array", "ascontiguousarray", "asfortranarray")
    COLLECT = ("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like")

    def __init__(self):
        for name in self.KEEP:
            setattr(self, name, _keeping(getattr(np, name)))
        for name in self.COLLECT:
            setattr(self, name, _collecting(getattr(np, name)))

    def __getattr__(self, attr):
        value = getattr(np, attr)
        setattr(self, attr, value)  # looked up once
        return value

    def __repr__(self):
        return "<numpy, keeping the marks of reported values>"


class MarkingMath:
    """What ``math`` is inside the statement modules: ``math``'s functions on plain values, their results marked
    with their arguments' marks (``math.sqrt(reported)`` is reported)."""

    def __getattr__(self, attr):
        value = getattr(math, attr)
        if callable(value):
            value = _passing(value)
        setattr(self, attr, value)  # looked up once
        return value

    def __repr__(self):
        return "<math, keeping the marks of reported values>"


def instrument(package) -> None:
    """Give every module of ``package`` (the statements) a :class:`MarkingNumpy` as its ``np`` and a
    :class:`MarkingMath` as its ``math`` (idempotent)."""
    import importlib
    import pkgutil

    marking, marking_math = MarkingNumpy(), MarkingMath()
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        module = importlib.import_module(info.name)
        if getattr(module, "np", None) is np:
            module.np = marking  # type: ignore[attr-defined]
        if getattr(module, "math", None) is math:
            module.math = marking_math  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------------------------------------------
# oracles pass marks through: what an oracle computes from a reported value is reported
# ------------------------------------------------------------------------------------------------------------------


#: > 0 while an oracle runs: its arguments were stripped of marks at its entry, so the calls it makes (to other
#: oracles, to a statement's integrand) skip the bookkeeping
_INSIDE_ORACLE = 0


def _passing(fn):
    """``fn`` receiving plain values, its result marked with the union of its arguments' marks (a callable
    argument's marks are those of what it captured)."""
    if getattr(fn, "_passes_marks", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        global _INSIDE_ORACLE
        if _INSIDE_ORACLE:
            return fn(*args, **kwargs)
        found = marks_of(args)
        if kwargs:
            found = found | marks_of(kwargs)
        _INSIDE_ORACLE += 1
        try:
            out = fn(*plain(args), **plain(kwargs)) if found else fn(*args, **kwargs)
        finally:
            _INSIDE_ORACLE -= 1
        return tag(out, found)

    wrapper._passes_marks = True  # type: ignore[attr-defined]
    return wrapper


def _pass_through_class(cls) -> None:
    for attr, member in list(vars(cls).items()):
        if attr.startswith("__") and attr != "__call__":
            continue
        if isinstance(member, staticmethod):
            setattr(cls, attr, staticmethod(_passing(member.__func__)))
        elif isinstance(member, property):
            setattr(cls, attr, property(_passing(member.fget) if member.fget else None, member.fset, member.fdel))
        elif inspect.isfunction(member):
            setattr(cls, attr, _passing(member))
        elif isinstance(member, functools.cached_property):
            member.func = _passing(member.func)


def pass_marks_through(package) -> None:
    """Wrap every function and method defined in the modules of ``package`` (the oracles) so that what they compute
    from a reported value is marked as reported (idempotent).  The oracles themselves import nothing of refvi."""
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        module = importlib.import_module(info.name)
        if getattr(module, "_passes_marks", False):
            continue
        for name, obj in list(vars(module).items()):
            if getattr(obj, "__module__", None) != module.__name__ or name.startswith("__"):
                continue
            if inspect.isclass(obj):
                _pass_through_class(obj)
            elif callable(obj):
                setattr(module, name, _passing(obj))
        module._passes_marks = True  # type: ignore[attr-defined]


def derived(fn):
    """Decorate a statement's own oracle-side helper (a recomputation): it receives plain values and its result is
    marked with every argument's marks (what it was computed from).  The helper then runs at NumPy's speed, and
    nothing it computes can hide a dependence on a reported value."""
    return _passing(fn)

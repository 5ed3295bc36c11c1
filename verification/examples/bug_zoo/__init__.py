"""A public zoo of planted bugs: variants of the example adapter that the certificate must catch (``--self-test``).

Each :class:`Mutant` is the plain-NumPy example implementation (:mod:`..numpy_adapter`) with one realistic bug in one
protocol method (a wrong factor, an off-by-one, a dropped term, a sign, a missing projection), written as a wrapper
or a variant, so nothing of refvi's own source is edited.  ``python -m refvi.verification --self-test`` runs the
suite against each and reports which statements catch it; a mutant that no statement catches is a hole in the
certificate.  One module per paper (``core`` for seeds 000/002, ``boosting``, ``online``, ``ngvi``).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

#: mutant id -> Mutant
ZOO: dict[str, Mutant] = {}


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One planted bug: ``method`` is the dotted protocol method it corrupts; ``make(original, base)`` returns the
    buggy replacement for that method, given the correct bound method and the base implementation object."""

    id: str
    seed: str
    method: str
    bug: str
    make: Callable[[Callable, Any], Callable]
    #: statements to run first under ``--self-test --first-catch`` (where the bug is known to show, when the others
    #: that call the method are costly); a speed hint only: every statement that calls the method still runs if these
    #: do not catch it, and the verdict does not depend on the order
    try_first: tuple[str, ...] = ()
    #: the implementation the bug is planted in when none is given: "numpy" (the plain-NumPy example) or "refvi" (for
    #: a method of refvi's own features the example does not offer, e.g. ``fit_as_user``; still a wrapper around the
    #: adapter's method: refvi's source is never edited)
    on: str = "numpy"

    def build(self, base=None):
        """The example implementation (or ``base``) with this bug planted.  The method is overridden on a copy of its
        owner, so the owner's other methods that call it (an optimizer calling its estimator) see the bug too."""
        if base is None and self.on == "refvi":
            from refvi.verification.protocol.refvi_impl import RefviImplementation

            base = RefviImplementation()
        if base is None:
            from refvi.verification.examples.numpy_adapter import NumpyImplementation

            base = NumpyImplementation()
        planted = _override(base, self.method.split("."), self)
        planted.name = f"{getattr(base, 'name', 'impl')}+{self.id}"
        return planted


def mutant(id: str, seed: str, method: str, bug: str, try_first: tuple[str, ...] = (), on: str = "numpy"):
    """Register ``make(original, owner) -> buggy method`` as a mutant of the dotted protocol ``method``
    (``try_first``: see :attr:`Mutant.try_first`; ``on``: see :attr:`Mutant.on`)."""

    def deco(make):
        if id in ZOO:
            raise ValueError(f"mutant {id} registered twice")
        if on not in ("numpy", "refvi"):
            raise ValueError(f"mutant {id}: on must be 'numpy' or 'refvi', got {on!r}")
        ZOO[id] = Mutant(id, seed, method, bug, make, tuple(try_first), on)
        return make

    return deco


def corrupts(id: str, seed: str, method: str, bug: str):
    """Register a mutant that corrupts the method's correct output: ``corrupt(out, **arguments)`` receives the
    original result and the call's arguments by name (defaults filled in) and returns the wrong result."""

    def deco(corrupt):
        def make(orig, owner):
            signature = inspect.signature(orig)

            def buggy(*args, **kwargs):
                call = signature.bind(*args, **kwargs)
                call.apply_defaults()
                return corrupt(orig(*args, **kwargs), **call.arguments)

            return buggy

        mutant(id, seed, method, bug)(make)
        return corrupt

    return deco


def substitutes(id: str, seed: str, method: str, bug: str, argument: str, right, wrong) -> None:
    """Register a mutant that runs the correct method with ``argument`` = ``wrong`` whenever it is called with
    ``right`` (a rule, a theorem or a step named for another one)."""

    def make(orig, owner):
        signature = inspect.signature(orig)

        def buggy(*args, **kwargs):
            call = signature.bind(*args, **kwargs)
            call.apply_defaults()
            if call.arguments[argument] == right:
                call.arguments[argument] = wrong
            return orig(*call.args, **call.kwargs)

        return buggy

    mutant(id, seed, method, bug)(make)


def _override(owner, path: list[str], m: Mutant):
    clone = copy.copy(owner)
    head = path[0]
    if len(path) > 1:
        setattr(clone, head, _override(getattr(owner, head), path[1:], m))
        return clone
    made = m.make(getattr(owner, head), owner)
    # a bug in code two methods share (a learner's update behind both run and run_adversarial) returns a dict
    # {method name: replacement}, the protocol method first
    buggy = made if isinstance(made, dict) else {head: made}

    def bound(fn):
        def method(self, *args, **kwargs):
            return fn(*args, **kwargs)

        return method

    clone.__class__ = type(
        f"{type(owner).__name__}_{m.id.replace('-', '_')}",
        (type(owner),),
        {name: bound(fn) for name, fn in buggy.items()},
    )
    return clone


def load_zoo() -> dict[str, Mutant]:
    """Import every zoo module (each registers its mutants)."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return ZOO

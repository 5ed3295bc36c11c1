"""refvi: a verified, fast reference implementation of black-box variational inference theory.

The entry point is :func:`fit` (its result :class:`FitResult`, with :class:`FitConfig` and :class:`FitTrace`; a
diverging run raises :class:`DivergenceError`, a run that ends worse than it started warns with
:class:`ConvergenceWarning`).  Subpackages: :mod:`refvi.targets`, :mod:`refvi.families`, :mod:`refvi.estimators`,
:mod:`refvi.prox`, :mod:`refvi.kernels` (Numba), :mod:`refvi.verification` (oracles, statements, errata, runner).

The names above and the subpackages load on first use, so ``import refvi`` (and the pytest plugin refvi installs,
which every pytest run in the environment loads) does not import Numba and SciPy until they are needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

#: the public names and the module each is defined in
_PUBLIC = {
    "fit": "refvi.optim.fit",
    "FitResult": "refvi.optim.fit",
    "FitConfig": "refvi.optim.fit",
    "FitTrace": "refvi.optim.fit",
    "ConvergenceWarning": "refvi.optim.fit",
    "DivergenceError": "refvi.optim.fastpath",
}
__all__ = ["fit", "FitResult", "FitConfig", "FitTrace", "DivergenceError", "ConvergenceWarning", "__version__"]

if TYPE_CHECKING:
    from refvi.optim.fastpath import DivergenceError
    from refvi.optim.fit import ConvergenceWarning, FitConfig, FitResult, FitTrace, fit


def __getattr__(name: str):
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
    elif not name.startswith("__"):
        try:  # a subpackage (refvi.targets, refvi.kernels, ...), as after a plain ``import refvi`` before
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module 'refvi' has no attribute {name!r}") from None
    else:
        raise AttributeError(f"module 'refvi' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))

"""refvi: a verified, fast reference implementation of black-box variational inference theory.

The entry point is :func:`fit` (its result :class:`FitResult`, with :class:`FitConfig` and :class:`FitTrace`; a
diverging run raises :class:`DivergenceError`, a run that ends worse than it started warns with
:class:`ConvergenceWarning`).  Subpackages: :mod:`refvi.targets`, :mod:`refvi.families`, :mod:`refvi.estimators`,
:mod:`refvi.prox`, :mod:`refvi.kernels` (Numba), :mod:`refvi.verification` (oracles, statements, errata, runner).
"""

__version__ = "0.1.0"

from refvi.optim.fastpath import DivergenceError  # noqa: E402
from refvi.optim.fit import ConvergenceWarning, FitConfig, FitResult, FitTrace, fit  # noqa: E402

__all__ = ["fit", "FitResult", "FitConfig", "FitTrace", "DivergenceError", "ConvergenceWarning", "__version__"]

"""refvi.optim: BBVI optimizers with provable rates (seed 000 Prox-SGD / Proj-SGD, seed 002 gradient descent).

Modules: :mod:`~refvi.optim.schedules` (step-size rules), :mod:`~refvi.optim.averaging` (theta-weighted and tail
averages), :mod:`~refvi.optim.prox_sgd`, :mod:`~refvi.optim.proj_sgd` (runs on pre-drawn base samples),
:mod:`~refvi.optim.gradient_descent` (seed 002, exact gradients), :mod:`~refvi.optim.exact` (exact energy of the
built-in targets), :mod:`~refvi.optim.fastpath` (Numba whole-loop dispatch) and :mod:`~refvi.optim.fit` (``refvi.fit``).
"""

from refvi.optim.averaging import average_weights
from refvi.optim.fastpath import DivergenceError
from refvi.optim.fit import ConvergenceWarning, FitConfig, FitResult, FitTrace, fit
from refvi.optim.gradient_descent import GDResult, gradient_descent
from refvi.optim.proj_sgd import proj_sgd
from refvi.optim.prox_sgd import prox_sgd
from refvi.optim.schedules import noise_constants, step_sizes

__all__ = [
    "fit",
    "FitResult",
    "FitConfig",
    "FitTrace",
    "ConvergenceWarning",
    "prox_sgd",
    "proj_sgd",
    "gradient_descent",
    "GDResult",
    "step_sizes",
    "average_weights",
    "noise_constants",
    "DivergenceError",
]

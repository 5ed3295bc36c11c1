"""Pareto-smoothed importance sampling by ArviZ (``arviz.psislw``): the oracle of refvi's fit diagnostics.

ArviZ's implementation of Vehtari, Simpson, Gelman, Yao & Gabry (2024, JMLR 25(72)), written outside refvi; refvi
computes the same quantities in NumPy (:mod:`refvi.optim.diagnostics`) so that a fit does not import ArviZ.  ArviZ
comes with the ``peers`` extra (PyMC needs it); :func:`available` says whether it can be imported.
"""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np


def available() -> bool:
    return importlib.util.find_spec("arviz") is not None


def psis(log_weights) -> tuple[np.ndarray, float]:
    """(normalized smoothed log weights, k-hat) of raw log importance weights, by ``arviz.psislw`` with relative
    efficiency 1 (independent draws)."""
    import arviz as az

    lw = np.array(log_weights, dtype=np.float64).ravel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ArviZ warns when k-hat is large: that is what is being measured
        slw, k = az.psislw(lw, reff=1.0)
    return np.asarray(slw, dtype=np.float64), float(k)

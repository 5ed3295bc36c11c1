"""Input checks shared by the example's sub-adapters: bad input gets a ValueError naming the violated condition."""

from __future__ import annotations

import numpy as np


def need(ok, what: str) -> None:
    if not ok:
        raise ValueError(what)


def simplex(alpha, K: int) -> np.ndarray:
    """Mixture weights: K of them, >= 0, summing to one."""
    a = np.asarray(alpha, dtype=np.float64)
    need(
        a.shape == (K,) and np.all(a >= 0) and abs(a.sum() - 1.0) <= 1e-9,
        f"weights must be {K} numbers >= 0 summing to one",
    )
    return a

"""Iterate averages: the theta-weighted averages of seed 000 Thm 7 and Thm 10, tail (Polyak-Ruppert) and uniform.

``average_weights(kind, T, ...)`` returns T + 1 non-negative weights over the iterates w^0, ..., w^T (normalized to
sum 1), so an optimizer only accumulates sum_t weight_t w^t.

* ``"last"``    the last iterate w^T.
* ``"tail"``    uniform over the last k = max(1, ceil(f T)) iterates w^{T-k+1}, ..., w^T, f = ``tail_fraction`` (default
                1/2; f T within 1e-9 of an integer counts as that integer: 7 % of 100 steps is 7 iterates, although
                0.07 * 100 = 7.000000000000001 in floating point).
* ``"uniform"`` uniform over w^1, ..., w^T.
* ``"theta7"``  Thm 7 (Prox-SGD): theta^{t+1} on w^t, t = 1..T, theta = 1/(1 + 2 a gamma^2).
* ``"theta10"`` Thm 10 (Proj-SGD): theta^{t+1} on w^t, t = 0..T-1, theta = 1/(1 + a gamma^2).

The theta weights DEcrease geometrically: with gamma = 1/M and a = 2(d+3)M^2, theta = 1/(4d + 13), so the Thm 7
average is essentially w^1.  The theorems bound that average; it is not a practical default (``refvi.fit`` uses
"tail" by default and says so).
"""

from __future__ import annotations

import math

import numpy as np

from refvi._checks import positive_scalar
from refvi.optim.schedules import check_steps

KINDS = ("last", "tail", "uniform", "theta7", "theta10")


def theta(kind: str, a: float, gamma: float) -> float:
    """theta of Thm 7 (1/(1 + 2 a gamma^2)) or Thm 10 (1/(1 + a gamma^2))."""
    a, gamma = positive_scalar(a, "a"), positive_scalar(gamma, "gamma")
    return 1.0 / (1.0 + (2.0 if kind == "theta7" else 1.0) * a * gamma * gamma)


def tail_length(fraction: float, T: int) -> int:
    """k = max(1, ceil(fraction T)), with fraction T within 1e-9 (relative) of an integer taken as that integer."""
    x = fraction * T
    r = round(x)
    return max(1, int(r) if abs(x - r) <= 1e-9 * max(1.0, x) else math.ceil(x))


def average_weights(
    kind: str, T: int, *, a: float | None = None, gamma: float | None = None, tail_fraction: float = 0.5
) -> np.ndarray:
    """Normalized weights (T + 1,) over w^0..w^T for the average ``kind``."""
    T = check_steps(T)
    w = np.zeros(T + 1)
    if kind == "last":
        w[T] = 1.0
    elif kind == "tail":
        f = positive_scalar(tail_fraction, "tail_fraction")
        if f > 1:
            raise ValueError(f"tail_fraction must be in (0, 1], got {f}")
        k = tail_length(f, T)
        w[T - k + 1 :] = 1.0
    elif kind == "uniform":
        w[1:] = 1.0
    elif kind in ("theta7", "theta10"):
        if a is None or gamma is None:
            raise ValueError(f"the {kind} average needs the noise constant a and the constant step gamma")
        th = theta(kind, a, gamma)
        # theta^{t+1} up to the common factor theta^2 (t = 1..T) or theta (t = 0..T-1): the average is unchanged
        e = np.arange(T, dtype=np.float64)
        if kind == "theta7":
            w[1:] = th**e
        else:
            w[:T] = th**e
    else:
        raise ValueError(f"unknown average {kind!r}; choose one of {KINDS}")
    return w / w.sum()

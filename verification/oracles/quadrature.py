"""Gaussian quadrature oracles (numpy / scipy only, never refvi).

* ``hermite_rule(n)``: probabilists' Gauss-Hermite rule for E_{t ~ N(0,1)}, weights summing to 1;
  exact for polynomials of degree <= 2n - 1.
* ``ridge_expectation(phi, a, b, n)``: E_t phi(a + b t) by that rule, vectorized over arrays a, b.
* ``ridge_expectation_adaptive(phi, a, b)``: the same by scipy.integrate.quad in the variable s = a + b t
  (an independent road: different nodes, different variable, error control by QUADPACK).
* ``gaussian_expectation(func, m, C, order)``: E_{u ~ N(0, I_d)} func(C u + m, u) by the tensor-product rule, d <= 3.
* ``degree3_cubature(d)``: 2d equal-weight points +-sqrt(d) e_i, exact for every polynomial of degree <= 3
  (all odd moments vanish by symmetry; E u_i u_j = (1/2d) * 2 * d * delta_ij = delta_ij).
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy import integrate


def hermite_rule(n: int):
    """(nodes, weights) of the n-point probabilists' Gauss-Hermite rule normalized to a probability (sum = 1)."""
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    t, w = hermegauss(int(n))
    return t, w / w.sum()


def ridge_expectation(phi, a, b, n: int = 100):
    """E_{t ~ N(0,1)} phi(a + b t), elementwise over broadcast arrays a, b; phi must accept arrays."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = np.broadcast_arrays(a, b)
    t, w = hermite_rule(n)
    vals = np.asarray(phi(a[..., None] + b[..., None] * t), dtype=np.float64)
    return vals @ w


def _ridge_adaptive_one(phi, a, b):
    if b == 0.0:
        return float(phi(a))
    sd = abs(b)
    norm = 1.0 / (sd * np.sqrt(2.0 * np.pi))
    dens = lambda s: float(phi(s)) * norm * np.exp(-0.5 * ((s - a) / sd) ** 2)  # noqa: E731
    lo, hi = a - 40.0 * sd, a + 40.0 * sd
    # cuts: the Gaussian's centre and shoulders, and a geometric ladder around s = 0 where the typical phi
    # (softplus, sigmoid, kinks) has its feature of width ~1 -- QUADPACK misses it inside a panel of width ~sd
    pts = [a + k * sd for k in (-8, -4, -1, 0, 1, 4, 8)] + [sg * 10.0**k for sg in (-1, 1) for k in range(-1, 8)]
    cuts = sorted({lo, hi} | {c for c in [0.0, *pts] if lo < c < hi})
    total = 0.0
    for x0, x1 in zip(cuts[:-1], cuts[1:], strict=True):
        val, _ = integrate.quad(dens, x0, x1, epsabs=1e-300, epsrel=1e-12, limit=500)
        total += val
    return total


def ridge_expectation_adaptive(phi, a, b):
    """E_{t ~ N(0,1)} phi(a + b t) by adaptive quadrature over s = a + b t, cut at a + k|b| and at 0, +-10^k."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = np.broadcast_arrays(a, b)
    out = np.empty(a.shape)
    for idx in np.ndindex(a.shape):
        out[idx] = _ridge_adaptive_one(phi, float(a[idx]), float(b[idx]))
    return out if out.ndim else float(out)


def gaussian_expectation(func, m, C, order: int = 20):
    """E_{u ~ N(0, I_d)} func(C u + m, u) by the tensor Gauss-Hermite rule with ``order`` nodes per axis, d <= 3.

    Exact when func(C u + m, u) is a polynomial of degree <= 2*order - 1 in each coordinate of u.
    ``func`` returns a scalar or an array of any fixed shape.
    """
    m = np.asarray(m, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    d = m.shape[0]
    if C.shape != (d, d):
        raise ValueError(f"C must have shape ({d}, {d}), got {C.shape}")
    if d > 3:
        raise ValueError(f"the tensor rule is limited to d <= 3 (got d = {d})")
    t, w = hermite_rule(order)
    total = None
    for idx in itertools.product(range(order), repeat=d):
        u = t[list(idx)]
        wt = float(np.prod(w[list(idx)]))
        val = wt * np.asarray(func(C @ u + m, u), dtype=np.float64)
        total = val if total is None else total + val
    return total


def tensor_rule(d: int, order: int):
    """The tensor Gauss-Hermite rule as (U, weights): rows of U are nodes in R^d, weights sum to 1."""
    t, w = hermite_rule(order)
    grids = np.meshgrid(*([t] * d), indexing="ij")
    wgrids = np.meshgrid(*([w] * d), indexing="ij")
    U = np.stack([g.ravel() for g in grids], axis=1)
    W = np.prod(np.stack([g.ravel() for g in wgrids], axis=1), axis=1)
    return U, W


def degree3_cubature(d: int):
    """(U, w): 2d equal-weight points +-sqrt(d) e_i, exact for E over N(0, I_d) of polynomials of degree <= 3."""
    if int(d) != d or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    d = int(d)
    E = np.sqrt(d) * np.eye(d)
    U = np.vstack([E, -E])
    return U, np.full(2 * d, 1.0 / (2 * d))

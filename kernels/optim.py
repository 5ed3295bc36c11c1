"""Whole-loop Numba kernels for Prox-SGD (seed 000 Def. 5) and Proj-SGD (Def. 8) on the built-in targets.

``sgd_loop`` runs T steps with no Python work per step.  It composes the foundation's kernels: the energy gradient
of the target (:mod:`refvi.kernels.energy`), the estimator tails (:mod:`refvi.kernels.estimators`), the prox of the
entropy and the projections onto W_M (:mod:`refvi.kernels.prox`).

Target codes and their parameter slots (P2 2-D, P1 1-D, s1, s2 scalars):

* GAUSSIAN  P2 = precision, P1 = mean
* LINEAR    P2 = X, P1 = y, s1 = 1/noise^2, s2 = 1/prior^2
* LOGISTIC  P2 = X, P1 = y, s1 = 1/prior^2

Method codes: PROX (w <- prox_{gamma h}(w - gamma g), h = -sum log C_ii, C lower triangular or diagonal) and PROJ
(w <- proj_{W_M}(w - gamma g): eigenvalue clip for symmetric C, singular-value clip for full C).
Estimator codes: ENERGY, ENTROPY, STL (seed 000 Eqs. 6, 8 and §5).

The base samples are pre-drawn: U has shape (T, S, d) and step t uses U[t], so the loop is a deterministic function
of its inputs (same seed, bit-identical result) and the NumPy reference can replay it.  m and C are updated in place;
``acc_m`` / ``acc_C`` accumulate sum_t weights[t + 1] w^{t+1}.  The return value is -1 when all steps are finite, or
the index t of the first step whose result is not finite; m and C then hold the last finite state w^t.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.kernels._jit import jit
from refvi.kernels.energy import gaussian_energy, linear_energy, logistic_energy
from refvi.kernels.estimators import finish_energy, finish_entropy, finish_stl
from refvi.kernels.prox import entropy_prox, project_singular, project_wm_sym
from refvi.kernels.structure import SYM

GAUSSIAN, LINEAR, LOGISTIC = 0, 1, 2
PROX, PROJ = 0, 1
ENERGY, ENTROPY, STL = 0, 1, 2


@jit
def energy_raw(target, m, C, U, P2, P1, s1, s2):
    """Mean raw energy gradient (gm, gC before projection onto V) for a built-in target code."""
    if target == GAUSSIAN:
        return gaussian_energy(m, C, U, P1, P2)
    if target == LINEAR:
        return linear_energy(m, C, U, P2, P1, s1, s2)
    return logistic_energy(m, C, U, P2, P1, s1)


@jit
def tail(estimator, code, gm, gC, C, U):
    """The estimator from the raw energy gradient (gm, gC): (gm, gC) projected onto V."""
    if estimator == ENERGY:
        return finish_energy(gm, gC, code)
    if estimator == ENTROPY:
        return finish_entropy(gm, gC, C, code)
    return finish_stl(gm, gC, C, U, code)


@jit
def estimate(target, estimator, code, m, C, U, P2, P1, s1, s2):
    """One gradient estimate (gm, gC projected onto V)."""
    gm, gC = energy_raw(target, m, C, U, P2, P1, s1, s2)
    return tail(estimator, code, gm, gC, C, U)


@jit
def _all_finite(m, C):
    d = m.shape[0]
    for i in range(d):
        if not math.isfinite(m[i]):
            return False
        for j in range(d):
            if not math.isfinite(C[i, j]):
                return False
    return True


@jit
def descend(m, C, gm, gC, gamma):
    """(m - gamma gm, C - gamma gC) as new arrays (elementwise, the same rounding as NumPy's expressions)."""
    d = m.shape[0]
    m_new = np.empty(d)
    Y = np.empty((d, d))
    for i in range(d):
        m_new[i] = m[i] - gamma * gm[i]
        for j in range(d):
            Y[i, j] = C[i, j] - gamma * gC[i, j]
    return m_new, Y


@jit
def regularize(method, code, Y, gamma, M):
    """Prox of the entropy (PROX) or the projection onto W_M (PROJ: eigenvalue clip for sym, singular-value clip)."""
    if method == PROX:
        return entropy_prox(Y, gamma)
    if code == SYM:
        return project_wm_sym(Y, M)
    return project_singular(Y, M)


@jit
def accept(m, C, m_new, C_new, w, acc_m, acc_C):
    """w^{t+1} becomes the state; the averages gain weight w times it."""
    d = m.shape[0]
    for i in range(d):
        m[i] = m_new[i]
        acc_m[i] += w * m_new[i]
        for j in range(d):
            C[i, j] = C_new[i, j]
            acc_C[i, j] += w * C_new[i, j]


@jit
def sgd_step(method, target, estimator, code, m, C, U, gamma, M, P2, P1, s1, s2):
    """One Prox-SGD / Proj-SGD step from (m, C); returns the new (m, C) as new arrays."""
    gm, gC = estimate(target, estimator, code, m, C, U, P2, P1, s1, s2)
    m_new, Y = descend(m, C, gm, gC, gamma)
    return m_new, regularize(method, code, Y, gamma, M)


@jit
def sgd_loop(method, target, estimator, code, m, C, U, gammas, weights, acc_m, acc_C, M, P2, P1, s1, s2):
    """Run len(gammas) steps in place (see the module docstring); returns -1 or the first non-finite step."""
    T = gammas.shape[0]
    for t in range(T):
        m_new, C_new = sgd_step(method, target, estimator, code, m, C, U[t], gammas[t], M, P2, P1, s1, s2)
        if not _all_finite(m_new, C_new):
            return t
        accept(m, C, m_new, C_new, weights[t + 1], acc_m, acc_C)
    return -1

"""Shared helpers, instances and constants of the smoothness statements.

Seed 002 (Domke, "Provable smoothness guarantees for BBVI"): solution bounds and the entropy term.

Statements: Thm 3 (solution bounds), Cor 16 (non-standardized bases), Thm 5 (h is M-smooth on W_M), Lemma 15
(rank-one singular perturbation), Lemma 17 (inverse difference bound), Thm 7 (prox and projection operators), and
three corrected claims of the main text (logistic constants, convexity of h, convexity of W_M).

Errata (each defined beside the statement it corrects): E002-1 (Thm 3(ii) proof invalid, P1), E002-2 (logistic c, P7),
E002-3 (h not convex over full C, P2), E002-4 (W_M not convex, P3),
E002-5 (prox remark "Delta C_ii ~ lambda", P6), E002-6 (spurious square in the proof of Thm 5, P13),
E002-7 (sign of h(w') - h(w) in the proof of Lemma 15, P13).

The algorithms under test are reached only through ``ctx.impl`` (targets handed over as plain ``TargetSpec``
records); optima of logistic models come from the independent oracle :mod:`refvi.verification.oracles.vi_objective`,
quadratic optima from closed forms computed here from raw arrays.  The constants c, M of every bound come from
:func:`~refvi.verification.oracles.hessian_bounds.model_constants`; only the logistic-constants claim asks the
implementation for its own.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st
from scipy import optimize

from refvi.verification.oracles.matrices import random_orthogonal
from refvi.verification.statement import scalar

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


# ------------------------------------------------------------------------------------------------------------------
# helpers (pure NumPy; unit-tested in tests/verification/statements/test_smoothness_002_solution.py)
# ------------------------------------------------------------------------------------------------------------------


def neg_log_abs_det(C) -> float:
    """h(C) = -log|det C| (seed 002 §3.1, entropy constant of s dropped); +inf for singular C."""
    sign, logdet = np.linalg.slogdet(np.asarray(C, dtype=np.float64))
    return math.inf if sign == 0 else scalar(-logdet)


def moment_points(d: int, mean=None, cov_factor=None) -> np.ndarray:
    """2d equal-weight points u_k = mean + L v_k, v_k = +-sqrt(d) e_i: their plain mean reproduces the base's first
    two moments (E u = mean, E u u^T = mean mean^T + L L^T) and all odd central moments of order 3 vanish.

    So the mean over these rows of any per-sample quantity that is a polynomial of degree <= 2 in u (the energy
    gradient of a quadratic target is one) equals its exact expectation under ANY base with those two moments.
    """
    V = math.sqrt(d) * np.vstack([np.eye(d), -np.eye(d)])
    L = np.eye(d) if cov_factor is None else np.asarray(cov_factor, dtype=np.float64)
    mu = np.zeros(d) if mean is None else np.asarray(mean, dtype=np.float64)
    return V @ L.T + mu


def random_spd(rng: np.random.Generator, d: int, lo: float, hi: float) -> np.ndarray:
    """A random SPD matrix with eigenvalues drawn log-uniformly in [lo, hi] (both end points attained when d >= 2)."""
    lam = np.exp(rng.uniform(np.log(lo), np.log(hi), size=d))
    if d >= 2:
        lam[0], lam[1] = lo, hi
    Q = random_orthogonal(rng, d)
    A = (Q * lam) @ Q.T
    return 0.5 * (A + A.T)


def minimize_free_energy(energy_fn, d: int, m0, C0, gtol: float = 1e-11):
    """Locally minimize F(m, C) = l(m, C) - log|det C| over full C by BFGS from (m0, C0); returns (m, C, |grad F|)."""

    def split(x):
        return x[:d], x[d:].reshape(d, d)

    def fun(x):
        m, C = split(x)
        sign, logdet = np.linalg.slogdet(C)
        if sign == 0:
            return math.inf, np.zeros_like(x)
        l, gm, gC = energy_fn(m, C)
        return l - logdet, np.concatenate([gm, (gC - np.linalg.inv(C).T).ravel()])

    x0 = np.concatenate([np.asarray(m0, float), np.asarray(C0, float).ravel()])
    res = optimize.minimize(fun, x0, jac=True, method="BFGS", options={"gtol": gtol, "maxiter": 5000})
    m, C = split(res.x)
    return m, C, scalar(np.linalg.norm(fun(res.x)[1]))

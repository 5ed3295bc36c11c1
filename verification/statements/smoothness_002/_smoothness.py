"""Shared helpers, instances and constants of the smoothness statements.

Seed 002 (Domke, "Provable smoothness guarantees for BBVI"): Thms 1, 2, 4, Lemmas 11-14, Examples 8-10.

The gradients under test come from ``ctx.impl.energy`` with U = the atoms of a discrete base (the mean over all
atoms, replicated for rational probabilities, is the exact expectation) or U = the nodes of a quadrature rule for a
continuous base (weights applied here, nodes with equal weights batched into one call).  The independent closed forms
come from :mod:`refvi.verification.oracles.charfun` (characteristic functions, O1 / O3) and
:mod:`refvi.verification.oracles.discrete` (exact sums), and SymPy for the symbolic identities.

Tolerances: discrete sums are exact up to rounding (~1e-15 relative); the quadrature rules reproduce the base's
characteristic function and its derivative to < 1e-14 for |k| <= 6 (tests/verification/test_oracles_002.py), and
instances keep |k_j| = |(C^T b)_j| <= 6.  Inequalities are therefore asserted with rtol = 1e-9 and implementation-vs-
oracle agreement with rtol = 1e-10, atol = 1e-11.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from refvi.verification.oracles import charfun as cf
from refvi.verification.oracles import discrete as ds
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar

SOURCE = "Domke (seed 002)"


RTOL_INEQ = 1e-9  # exact / quadrature gradients: errors ~1e-13, far below this margin


ATOL_INEQ = 1e-11


# ---- instance generation ---------------------------------------------------------------------------------------
def _draw_C(rng, d, structure, lo=0.2, hi=1.5):
    """A scale matrix in the domain of ``structure`` with singular values (or diagonal) in [lo, hi]."""
    s = rng.uniform(lo, hi, d)
    if structure == "diag":
        return np.diag(s)
    if structure == "tril":
        L = np.tril(rng.uniform(-0.5, 0.5, (d, d)), -1)
        return L + np.diag(s)
    Q1 = np.linalg.qr(rng.standard_normal((d, d)))[0]
    if structure == "sym":
        S = (Q1 * s) @ Q1.T
        return 0.5 * (S + S.T)
    Q2 = np.linalg.qr(rng.standard_normal((d, d)))[0]
    return (Q1 * s) @ Q2.T


def _pair(rng, d, structure, near) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Two parameter points w = (m, C), v = (m', C') in the domain; ``near`` puts v at relative distance ~0.05."""
    m, C = rng.uniform(-1.5, 1.5, d), _draw_C(rng, d, structure)
    if near:
        m2 = m + 0.05 * rng.uniform(-1, 1, d)
        C2 = C + 0.05 * _draw_C(rng, d, structure, -1.0, 1.0)
        if structure == "sym":
            C2 = 0.5 * (C2 + C2.T)
        ok = np.linalg.svd(C2, compute_uv=False)[-1] > 0.05 and (
            structure not in ("tril", "diag") or np.all(np.diag(C2) > 0)
        )
        if structure == "sym":
            ok = ok and np.linalg.eigvalsh(C2)[0] > 0
        if ok:
            return (m, C), (m2, C2)
    return (m, C), (rng.uniform(-1.5, 1.5, d), _draw_C(rng, d, structure))


def _cos_params(rng, d, convex: bool | None = None, kmax: float = 6.0):
    """alpha, b, phi, beta, z0 of the cos + quadratic target; ``convex=True`` forces beta > |alpha| ||b||^2."""
    b = rng.uniform(-1.0, 1.0, d)
    b *= min(1.0, kmax / (1.5 * math.sqrt(d) * np.abs(b).sum() + 1e-300))  # keeps 1.5 sqrt(d) ||b||_1 <= kmax
    alpha = rng.uniform(-3.0, 3.0)
    curv = abs(alpha) * scalar(b @ b)
    if convex is True:
        beta = curv + rng.uniform(0.05, 2.0)
    elif convex is False:
        beta = rng.uniform(0.0, 0.9) * curv
    else:
        beta = rng.uniform(0.0, 2.0)
    return alpha, b, rng.uniform(-math.pi, math.pi), beta, rng.uniform(-1.0, 1.0, d)


def _norm_w(m, C):
    return math.sqrt(scalar(m @ m) + scalar(np.sum(C * C)))


# ---- gradients through the implementation -----------------------------------------------------------------------
def _impl_grad_atoms(ctx, target, m, C, U, structure="full"):
    gm, gC = ctx.impl.energy(target, m, C, U, structure)
    return np.asarray(gm, dtype=np.float64), np.asarray(gC, dtype=np.float64)


def _impl_grad_rule(ctx, target, m, C, U, w, structure="full"):
    """sum_i w_i g(u_i) from implementation calls, batching nodes that share a (bit-identical) weight."""
    gm, gC = np.zeros(m.shape[0]), np.zeros((m.shape[0], m.shape[0]))
    vals, inv = np.unique(w, return_inverse=True)
    for j, wv in enumerate(vals):
        rows = U[inv == j]
        a, B = _impl_grad_atoms(ctx, target, m, C, rows, structure)
        gm += wv * rows.shape[0] * a
        gC += wv * rows.shape[0] * B
    return gm, gC


def _smooth_check(ctx, gw, gv, w, v, M, label):
    lhs = math.sqrt(scalar(np.sum((gw[0] - gv[0]) ** 2)) + scalar(np.sum((gw[1] - gv[1]) ** 2)))
    rhs = M * _norm_w(w[0] - v[0], w[1] - v[1])
    ctx.bound(lhs, rhs, rtol=RTOL_INEQ, atol=ATOL_INEQ, label=label)  # gradients exact to ~1e-13 (module docstring)
    return lhs / rhs


def _sc_check(ctx, gw, gv, w, v, c, label):
    lhs = scalar(np.sum((gw[0] - gv[0]) * (w[0] - v[0])) + np.sum((gw[1] - gv[1]) * (w[1] - v[1])))
    rhs = c * _norm_w(w[0] - v[0], w[1] - v[1]) ** 2
    ctx.geq(lhs, rhs, rtol=RTOL_INEQ, atol=ATOL_INEQ, label=label)


_INST = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 2**32 - 1),
        "near": st.booleans(),
        "structure": st.sampled_from(("full", "tril", "diag", "sym")),
    }
)


def _shifted_top_ratio(ctx, a, mu0):
    """||grad l(w + t D) - grad l(w)|| / ||t D|| along the top eigen-direction of S_2 (x) I, base N(mu0, I),
    via the implementation with Gauss-Hermite nodes shifted by mu0 (exact for quadratic f)."""
    d = mu0.shape[0]
    x, wq = ds.quadrature_rule_1d("gaussian")
    U, W = ds.tensor_rule(x, wq, d)
    U = U + mu0
    target = specs.gaussian(np.zeros(d), a * np.eye(d))
    q = np.linalg.eigh(cf.second_moment_matrix(mu0, np.eye(d)))[1][:, -1]
    dm, dC = np.zeros(d), np.zeros((d, d))
    dm[1], dC[1] = q[0], q[1:]
    m, C = np.array([0.2, 0.1]), np.array([[1.1, 0.3], [0.0, 0.8]])
    g1 = _impl_grad_rule(ctx, target, m, C, U, W)
    g2 = _impl_grad_rule(ctx, target, m + 0.5 * dm, C + 0.5 * dC, U, W)
    num = math.sqrt(scalar(np.sum((g2[0] - g1[0]) ** 2) + np.sum((g2[1] - g1[1]) ** 2)))
    return num / (0.5 * _norm_w(dm, dC))


def _t_atoms(nu, d):
    """Rademacher atoms scaled by sqrt(nu/(nu-2)): mean 0 and covariance nu/(nu-2) I, the first two moments of the
    shape-I multivariate t_nu.  For quadratic f, l depends on the base only through these (Thm 4, Eq. 17)."""
    return math.sqrt(nu / (nu - 2.0)) * ds.rademacher_atoms(d)[0]


def _t_shape_ratio(ctx, a, nu):
    d = 2
    target = specs.gaussian(np.array([0.5, -1.0]), a * np.eye(d))
    U = _t_atoms(nu, d)
    m, C = np.array([0.1, 0.4]), np.array([[0.9, -0.2], [0.3, 1.2]])
    dC = np.array([[0.0, 0.7], [-0.4, 0.1]])
    g1 = _impl_grad_atoms(ctx, target, m, C, U)
    g2 = _impl_grad_atoms(ctx, target, m, C + dC, U)
    num = math.sqrt(scalar(np.sum((g2[0] - g1[0]) ** 2) + np.sum((g2[1] - g1[1]) ** 2)))
    return num / _norm_w(np.zeros(d), dC)


def _sym_moments(d):
    import sympy as sp

    mu = sp.Matrix(d, 1, lambda i, _: sp.Symbol(f"mu{i}"))
    Sig = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"S{min(i, j)}{max(i, j)}"))
    return mu, Sig

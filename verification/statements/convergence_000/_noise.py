"""Shared helpers, instances and constants of the convergence statements.

Seed 000 (Domke, Garrigos & Gower) — gradient noise: Thm 1, Thm 2, Thm 3, Def 4, Thm 26 (E000-3), §5 STL claim.

Exact oracles only (:mod:`refvi.verification.oracles.gradient_moments`, :mod:`.vi_objective`): Isserlis closed forms
for quadratic targets, tensor Gauss-Hermite (with a two-order error estimate) for logistic / cosine targets in d <=
2. The implementation under test enters through ``ctx.impl``: its *per-sample* estimates g(u) are taken at the
quadrature nodes (one call per node, U = u[None, :]), checked pointwise against the oracle's g(u), and summed with
the quadrature weights, so the expectation that is bounded is the implementation's own.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles.matrices import random_orthogonal as _orth
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar

# Gauss-Hermite orders (rule used on the implementation, check rule of the oracle) per non-quadratic model kind:
# sigmoid has poles at +-i pi, so logistic needs more nodes than the entire cos integrands.
MAX_REFINE = 3  # at most three refinements (orders grow by the first difference, doubled each time)


ORDERS = {("logistic", 1): (80, 120), ("logistic", 2): (32, 56), ("cosine", 1): (40, 64), ("cosine", 2): (24, 40)}


# ---- instances ------------------------------------------------------------------------------------------------------
def scale_with_singular_values(rng, svals, structure):
    """A C in V (and in the domain W) whose singular values are exactly ``svals`` (diag: the values themselves)."""
    s = np.asarray(svals, dtype=np.float64)
    d = s.shape[0]
    if structure == "diag":
        return np.diag(s)
    Q = _orth(rng, d)
    if structure == "sym":
        S = (Q * s) @ Q.T
        return 0.5 * (S + S.T)
    Sigma = (Q * s**2) @ Q.T
    Lc = np.linalg.cholesky(0.5 * (Sigma + Sigma.T))  # L L^T = Sigma: singular values of L are s
    if structure == "tril":
        return Lc
    return Lc @ _orth(rng, d)  # full


def random_spd(rng, d, lo=0.3, hi=3.0):
    Q = _orth(rng, d)
    return (Q * rng.uniform(lo, hi, d)) @ Q.T


def make_model(kind, rng, d):
    """The oracle model dict for one of gaussian / linear / logistic / cosine (hand ``specs.from_model(model)`` to the
    implementation)."""
    if kind == "gaussian":
        mean, Pr = rng.uniform(-2, 2, d), random_spd(rng, d)
        return {"kind": "gaussian", "mean": mean, "precision": 0.5 * (Pr + Pr.T)}
    if kind == "linear":
        X, y = rng.standard_normal((12, d)) * 0.6, rng.standard_normal(12)
        sn, sp = scalar(rng.uniform(0.7, 1.5)), scalar(rng.uniform(0.7, 2.0))
        return {"kind": "linear", "X": X, "y": y, "noise_scale": sn, "prior_scale": sp}
    if kind == "logistic":
        X = rng.standard_normal((10, d)) * 0.3
        y = np.where(rng.uniform(size=10) < 0.5, -1.0, 1.0)
        return {"kind": "logistic", "X": X, "y": y, "prior_scale": scalar(rng.uniform(0.8, 2.0))}
    if kind == "cosine":
        b = rng.standard_normal(d)
        b *= rng.uniform(0.2, 0.3) / np.linalg.norm(b)  # ||b|| <= 0.3 keeps the rule converged at order 24
        alpha, phi, beta = scalar(rng.uniform(-20, 20)), scalar(rng.uniform(0, 2 * np.pi)), scalar(rng.uniform(0.3, 1))
        return {"kind": "cosine", "alpha": alpha, "b": b, "phi": phi, "beta": beta, "z0": rng.uniform(-1, 1, d)}
    if kind == "cosine-fixed":  # the E000-3 instance (see COSINE_THM3_DL)
        return {"kind": "cosine", "alpha": 0.01, "b": np.ones(d), "phi": 0.0, "beta": 1e-4, "z0": 0.5 * np.ones(d)}
    raise ValueError(kind)


def make_target(kind, rng, d):
    """(target spec handed to the implementation, oracle model dict)."""
    model = make_model(kind, rng, d)
    return specs.from_model(model), model


def _wellconditioned(dmax, structures, kinds):
    """Hypothesis strategy: (kind, d, structure, seed, singular values in [0.1, 3], |m_i| <= 3)."""
    from hypothesis import strategies as st

    @st.composite
    def instances(draw):
        kind = draw(st.sampled_from(kinds))
        d = draw(st.integers(1, dmax))
        structure = draw(st.sampled_from(structures))
        seed = draw(st.integers(0, 2**31 - 1))
        sv = draw(st.lists(st.floats(0.1, 3.0), min_size=d, max_size=d))
        m = draw(st.lists(st.floats(-3.0, 3.0), min_size=d, max_size=d))
        return kind, d, structure, seed, tuple(sv), tuple(m)

    return instances()


def _instance(inst):
    kind, d, structure, seed, sv, m = inst
    rng = np.random.default_rng(seed)
    target, model = make_target(kind, rng, d)
    C = scale_with_singular_values(rng, sv, structure)
    return target, model, np.asarray(m, dtype=np.float64), C, structure


# ---- the implementation's per-sample estimates ----------------------------------------------------------------------
def impl_samples(ctx, target, m, C, U, structure, which="energy"):
    """Per-sample (gm, gC) from ctx.impl.<which> called with one base sample at a time."""
    fn = getattr(ctx.impl, which)
    G = np.empty((U.shape[0], U.shape[1]))
    GC = np.empty((U.shape[0], U.shape[1], U.shape[1]))
    for i in range(U.shape[0]):
        gm, gC = fn(target, m, C, U[i : i + 1], structure)
        G[i], GC[i] = gm, gC
    return G, GC


def refined_orders(kind, d, estimate, accept):
    """Gauss-Hermite orders (rule, check) for a model kind, refined (at most MAX_REFINE times, the order step doubling)
    until ``accept(estimate(rule, check))``; returns (rule, check, estimate) of the last pair tried."""
    order, check = ORDERS[kind, d]
    for _ in range(MAX_REFINE + 1):
        result = estimate(order, check)
        if accept(result):
            break
        order, check = check, check + 2 * (check - order)
    return order, check, result

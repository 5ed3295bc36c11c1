"""The exact solver and the exact energy on degenerate data (unkind instances of seed 000 §7's regression models).

* X^T y = 0 (y orthogonal to every column of X): the linear model's optimal mean is exactly 0 (m* = A^-1 X^T y /
  noise^2), a right-hand side of zero that a solver normalising by it, or starting a relative tolerance from it,
  gets wrong;
* a column of X that is all zero: that coordinate's posterior is its prior N(0, s^2), uncoupled from the rest;
* duplicated rows, and fewer rows than coordinates (X^T X singular: only the prior makes the precision definite);
* the same designs for the logistic model (y = +-1), whose optimum has no closed form (the oracle's Newton solver),
  and the duplicated rows with one label per distinct row (separable data: only the prior keeps the optimum finite;
  an undamped fixed point of the stationarity conditions cycles there instead of converging).

For each, ``exact_optimum`` ("tril" and "sym") against :func:`..oracles.vi_objective.solve` (closed form; Newton for
logistic to a gradient norm 1e-9): f* to 1e-9, m* to 1e-9 absolute where it is exactly 0 (else 1e-6), C* C*^T to
1e-6, C* in V, and stationary (the oracle's projected gradient of f at (m*, C*) below 1e-8 relative:
:func:`..oracles.vi_objective.stationarity`); and ``exact_energy`` at a point against the oracle's closed form (1e-9
relative).

Statements: 000.claim-degenerate-data.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles import vi_objective as vo
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar, statement


def _designs(rng, d):
    """Named degenerate designs X (N, d) and responses y for the linear model."""
    X = rng.standard_normal((2 * d + 1, d)) * np.exp(rng.uniform(-1, 1, d))
    y = rng.standard_normal(X.shape[0]) * 2.0 + 3.0
    Q, _ = np.linalg.qr(X)
    y_perp = y - Q @ (Q.T @ y)  # X^T y_perp = 0
    zero_col = X.copy()
    zero_col[:, d // 2] = 0.0
    dup = np.vstack([X[:2], X[:2], X[:2]])
    return {
        "X^T y = 0": (X, y_perp),
        "a zero column": (zero_col, y),
        "duplicated rows": (dup, np.tile(y[:2], 3)),
        "fewer rows than coordinates": (X[: max(1, d - 2)], y[: max(1, d - 2)]),
    }


def _check(ctx, model, what, exact_zero_mean=False):
    target = specs.from_model(model)
    d = np.asarray(model["X"]).shape[1]
    for structure in ("tril", "sym"):
        m, C, f = ctx.impl.exact_optimum(target, structure)
        mo, Co, fo = vo.solve(model, structure)
        label = f"{what}, {structure}"
        ctx.close(scalar(f), fo, rtol=1e-9, atol=1e-9, label=f"{label}: f*")
        m, C = np.asarray(m, dtype=np.float64), np.asarray(C, dtype=np.float64)
        if exact_zero_mean:  # A m* = X^T y / noise^2 = 0: m* = 0 up to the rounding of X^T y (1e-15 |X| |y|)
            ctx.close(m, np.zeros(d), atol=1e-9, label=f"{label}: m* = 0 exactly (X^T y = 0)")
        ctx.close(m, mo, rtol=1e-6, atol=1e-6, label=f"{label}: m*")
        ctx.close(C @ C.T, Co @ Co.T, rtol=1e-6, atol=1e-6, label=f"{label}: C* C*^T")
        # no second solver needed: the projected gradient of f at (m*, C*) (the oracle's closed form) is ~ 0
        ctx.leq(vo.stationarity(model, m, C, structure), 1e-8, label=f"{label}: ||proj_V grad f(m*, C*)|| ~ 0")
        if structure == "sym":
            ok = bool(np.allclose(C, C.T, rtol=0, atol=1e-12 * np.abs(C).max()))
            ctx.true(
                ok and np.linalg.eigvalsh(0.5 * (C + C.T))[0] > 0, label=f"{label}: C* symmetric positive definite"
            )
        else:
            ctx.true(not np.any(np.triu(C, 1)) and bool(np.all(np.diag(C) > 0)), label=f"{label}: C* tril, C_ii > 0")
    rng = np.random.default_rng(d)
    m, C = rng.standard_normal(d), np.tril(rng.standard_normal((d, d)), -1) + np.diag(rng.uniform(0.5, 1.5, d))
    l, gm, gC = ctx.impl.exact_energy(target, m, C)
    lo, gmo, gCo = vo.free_energy(model, m, C)
    ctx.close(scalar(l), lo, rtol=1e-9, atol=1e-9 * (1 + abs(lo)), label=f"{what}: l at a point")
    gs = 1.0 + scalar(np.abs(np.concatenate([gmo, gCo.ravel()])).max())
    ctx.close(np.asarray(gm, dtype=np.float64), gmo, rtol=1e-9, atol=1e-9 * gs, label=f"{what}: grad_m l")
    ctx.close(np.asarray(gC, dtype=np.float64), gCo, rtol=1e-9, atol=1e-9 * gs, label=f"{what}: grad_C l")


@statement("000.claim-degenerate-data")
def claim_degenerate_data(ctx):
    def run(inst):
        d, seed = inst
        rng = np.random.default_rng(seed)
        for name, (X, y) in _designs(rng, d).items():
            sn, sp = scalar(rng.uniform(0.3, 2.0)), scalar(rng.uniform(0.5, 3.0))
            lin = {"kind": "linear", "X": X, "y": y, "noise_scale": sn, "prior_scale": sp}
            _check(ctx, lin, f"linear, d = {d}, {name}", exact_zero_mean=name == "X^T y = 0")
            if name != "X^T y = 0":
                pm = np.where(y >= np.median(y), 1.0, -1.0)
                if name == "duplicated rows":  # each distinct row with both labels: not separable
                    pm = np.array([1.0, 1.0, -1.0, -1.0, 1.0, -1.0])
                    # and with one label per distinct row: separable, only the prior keeps the optimum finite
                    sep = {"kind": "logistic", "X": X, "y": np.tile([-1.0, 1.0], 3), "prior_scale": sp}
                    _check(ctx, sep, f"logistic, d = {d}, duplicated rows, separable")
                _check(ctx, {"kind": "logistic", "X": X, "y": pm, "prior_scale": sp}, f"logistic, d = {d}, {name}")

    for inst in ((1, 1), (3, 2), (5, 3)):
        ctx.instance(run, inst)

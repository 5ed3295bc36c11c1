"""Domke, *Provable smoothness guarantees for black-box variational inference* (seed 002): the exact energy of the
experiments (§6), through the implementation's ``exact_energy``.

The deterministic gradient descent of §5.3 and Figs 1-3 runs on l(w) = -E_q log p(z, x) in closed form: a quadratic
for Gaussian targets and linear regression, the ridge reduction E softplus(-y x^T z) = g(y x^T m, ||C^T x||) for
logistic regression (guide O4).  The oracle is :func:`refvi.verification.oracles.vi_objective.free_energy`
(closed forms; logistic ridges by Gauss-Hermite / graded Gauss-Legendre, 1e-15 relative against QUADPACK).  Values
are compared absolutely, every constant of the log joint included, so a dropped log-determinant or 2 pi shows.

Statements: 002.claim-exact-energy (with the optimum ``exact_optimum`` of f = l + h), 002.claim-gd-own-gradient
(gradient descent run on the implementation's own exact gradient, ``gradient_descent_exact``).
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles import vi_objective as vo
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.smoothness_002._descent import largest_step, replay
from refvi.verification.strategies import RNG, rng_of

KINDS = ("gaussian", "linear", "logistic")


def _instance(rng):
    """(model, m, C): d = 1..4, N = 1..12, non-unit noise and prior scales, C lower-triangular, full or zero (logistic:
    the point-mass ridge), scaled from 1e-3 to 20 (ridges from nearly a point to wide)."""
    kind = KINDS[int(rng.integers(0, 3))]
    d, N = int(rng.integers(1, 5)), int(rng.integers(1, 13))
    X = rng.standard_normal((N, d))
    if kind == "gaussian":
        B = rng.standard_normal((d, d))
        model = {"kind": kind, "mean": rng.standard_normal(d), "precision": B @ B.T + 0.3 * np.eye(d)}
    elif kind == "linear":
        model = {
            "kind": kind,
            "X": X,
            "y": rng.standard_normal(N),
            "noise_scale": scalar(rng.uniform(0.3, 2.5)),
            "prior_scale": scalar(rng.uniform(0.4, 3.0)),
        }
    else:
        model = {
            "kind": kind,
            "X": X,
            "y": np.where(rng.random(N) < 0.5, -1.0, 1.0),
            "prior_scale": scalar(rng.uniform(0.4, 3.0)),
        }
    shape = int(rng.integers(0, 3))
    scale = 10.0 ** scalar(rng.uniform(-3.0, 1.3))
    C = rng.standard_normal((d, d)) * scale
    C = np.tril(C) if shape == 0 else (C if shape == 1 or kind != "logistic" else 0.0 * C)
    m = rng.standard_normal(d) * scalar(rng.uniform(0.0, 3.0))
    return model, m, C


@statement("002.claim-exact-energy")
def claim_exact_energy(ctx):
    def check(source):
        model, m, C = _instance(rng_of(source))
        target = specs.from_model(model)
        l, gm, gC = ctx.impl.exact_energy(target, m, C)
        lo, gmo, gCo = vo.free_energy(model, m, C)
        what = f"{model['kind']}, d = {m.size}, ||C|| = {np.linalg.norm(C):.3g}"
        # both sides are sums of O(N) accurately integrated terms: 1e-10 relative, absolute to the terms' size
        scale = 1.0 + abs(lo)
        ctx.close(scalar(l), lo, rtol=1e-10, atol=1e-10 * scale, label=f"{what}: l")
        gscale = 1.0 + scalar(np.abs(np.concatenate([gmo, gCo.ravel()])).max())
        ctx.close(np.asarray(gm, float), gmo, rtol=1e-9, atol=1e-9 * gscale, label=f"{what}: grad_m l")
        ctx.close(np.asarray(gC, float), gCo, rtol=1e-9, atol=1e-9 * gscale, label=f"{what}: grad_C l (full matrix)")

    ctx.forall(RNG, check, fixed=list(range(12)), max_examples=max(30, ctx.profile.max_examples))

    # the optimum of f = l + h (h = -log|det C|) against the oracle's solver (closed form; Newton for logistic,
    # gradient norm <= 1e-9): f* to 1e-9, the optimal covariance C* C*^T and mean to 1e-6, and stationarity
    def optimum(source):
        rng = rng_of(source)
        model, _, _ = _instance(rng)
        structure = ("tril", "sym")[int(rng.integers(0, 2))]
        m, C, f = ctx.impl.exact_optimum(specs.from_model(model), structure)
        mo, Co, fo = vo.solve(model, "tril")
        what = f"{model['kind']}, d = {mo.size}, {structure}: the VI optimum"
        ctx.close(scalar(f), fo, rtol=1e-9, atol=1e-9, label=f"{what}: f*")
        C = np.asarray(C, dtype=np.float64)
        ctx.close(np.asarray(m, dtype=np.float64), mo, rtol=1e-6, atol=1e-6, label=f"{what}: m*")
        ctx.close(C @ C.T, Co @ Co.T, rtol=1e-6, atol=1e-6, label=f"{what}: C* C*^T")
        # stationary, which needs no second solver: the projected gradient of f at (m*, C*), from the oracle's
        # closed-form gradient, is at rounding level (an optimum found to 1e-6 leaves it ~1e-7 on degenerate data)
        ctx.leq(vo.stationarity(model, m, C, structure), 1e-8, label=f"{what}: ||proj_V grad f(m*, C*)|| ~ 0")
        # C* in V: the Cholesky factor (positive diagonal) or the symmetric positive-definite root
        if structure == "sym":
            in_V = bool(
                np.allclose(C, C.T, rtol=0, atol=1e-12 * np.abs(C).max()) and np.linalg.eigvalsh(0.5 * (C + C.T))[0] > 0
            )
            ctx.true(in_V, label=f"{what}: C* in V (symmetric positive definite)")
        else:
            ctx.true(
                not np.any(np.triu(C, 1)) and bool(np.all(np.diag(C) > 0)),
                label=f"{what}: C* in V (lower triangular, positive diagonal)",
            )

    ctx.forall(RNG, optimum, fixed=list(range(6)), max_examples=max(10, ctx.profile.max_examples // 3))


@statement("002.claim-gd-own-gradient")
def claim_gd_own_gradient(ctx):
    # Thm 6's default step from the oracle's M, 6 steps of a contraction: the gradients' 1e-9 agreement carries over
    def descent(source):
        rng = rng_of(source)
        model, m0, _ = _instance(rng)
        target, M, d = specs.from_model(model), _smoothness(model), m0.size
        for method, C0 in (
            ("prox", np.tril(rng.standard_normal((d, d))) + 2.0 * np.eye(d)),
            ("projected", rng.standard_normal((d, d)) + 2.0 * np.eye(d)),
        ):
            what = f"{model['kind']}, d = {d}, {method} GD"
            own = ctx.impl.gradient_descent_exact(target, m0, C0, None, 6, method, M)
            # the trajectory with the implementation's own exact gradient, replayed with the oracle's
            replay(
                ctx,
                _oracle_gradient(model),
                own[0],
                own[1],
                m0,
                C0,
                None,
                method,
                M,
                f"{what}, own gradient",
                rtol=1e-9,
            )
            ref = ctx.impl.gradient_descent(_oracle_gradient(model), m0, C0, None, 6, method, M)
            replay(ctx, _oracle_gradient(model), ref[0], ref[1], m0, C0, None, method, M, f"{what}, oracle's gradient")
            _close_trajectories(ctx, own, ref, lambda x: f"{what}: {x} trajectory, own exact gradient == oracle's")
            # the same descent through the end-to-end driver (fit's "gd-*" methods, from (0, I), the default step)
            run = ctx.impl.fit(target, f"gd-{method}", steps=6, average="last")
            replay(
                ctx,
                _oracle_gradient(model),
                run.ms,
                run.Cs,
                np.zeros(d),
                np.eye(d),
                None,
                method,
                M,
                f"{what}: fit('gd-{method}') from (0, I)",
                rtol=1e-9,
            )
            ref = ctx.impl.gradient_descent(_oracle_gradient(model), np.zeros(d), np.eye(d), None, 6, method, M)
            _close_trajectories(
                ctx,
                (run.ms, run.Cs),
                ref,
                lambda x: f"{what}: fit('gd-{method}') {x} trajectory == the oracle's descent",
            )
            ctx.close(
                np.asarray(run.m, float),
                np.asarray(ref[0][-1], float),
                rtol=1e-8,
                atol=1e-8,
                label=f"{what}: fit('gd-{method}') returns the last iterate",
            )
            ms, Cs = np.asarray(run.ms, float), np.asarray(run.Cs, float)
            ctx.close(run.C, Cs[-1], rtol=1e-14, atol=1e-14, label=f"{what}: fit('gd-{method}') returns C^K")
            ctx.close(run.m_last, ms[-1], rtol=1e-14, atol=1e-14, label=f"{what}: fit('gd-{method}') m_last = m^K")
            ctx.close(run.C_last, Cs[-1], rtol=1e-14, atol=1e-14, label=f"{what}: fit('gd-{method}') C_last = C^K")
            ctx.close(
                run.step_sizes,
                np.full(6, largest_step(method, M)),
                rtol=1e-12,
                label=f"{what}: fit('gd-{method}') steps are Thm 6's largest",
            )
            if getattr(run, "objective", None) is not None:  # exact for the gd-* methods: F = l - log|det C|
                F = np.array([vo.objective(model, m, C) for m, C in zip(ms, Cs, strict=True)])
                # two quadratures of the logistic energy agree to ~1e-9 relative (the gradients above)
                ctx.close(run.objective, F, rtol=1e-8, atol=1e-8, label=f"{what}: fit('gd-{method}') objective = F")

    ctx.forall(RNG, descent, fixed=list(range(3)), max_examples=max(6, ctx.profile.max_examples // 5))


def _close_trajectories(ctx, got, ref, label):
    """``got`` == ``ref``, two (m, C) trajectories, entry by entry (absolute tolerance relative to ref's largest
    entry); ``label(x)`` names the check for x = "m", "C"."""
    for x, a, b in zip(("m", "C"), got, ref, strict=True):
        b = np.asarray(b, float)
        ctx.close(np.asarray(a, float), b, rtol=1e-8, atol=1e-8 * (1.0 + scalar(np.abs(b).max())), label=label(x))


def _oracle_gradient(model):
    def grad_l(m, C):
        _, gm, gC = vo.free_energy(model, m, C)
        return gm, gC

    return grad_l


def _smoothness(model):
    """M = lambda_max of the energy's Hessian bound: A (gaussian), X^T X / sigma^2 + I / s^2 (linear), X^T X / 4 +
    I / s^2 (logistic; 1/4 bounds the logistic curvature)."""
    if model["kind"] == "gaussian":
        H = model["precision"]
    else:
        X = model["X"]
        scale = model["noise_scale"] ** 2 if model["kind"] == "linear" else 4.0
        H = X.T @ X / scale + np.eye(X.shape[1]) / model["prior_scale"] ** 2
    return scalar(np.linalg.eigvalsh(H)[-1])

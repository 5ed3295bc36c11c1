"""Domke, Garrigos & Gower, *Provable convergence guarantees for black-box variational inference* (seed 000): quadratic
noise bounds of the gradient estimators (Thms 1-3, 26).

Statements: 000.thm1, 000.thm2, 000.thm3, 000.thm26; errata: E000-3.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.errata import erratum
from refvi.verification.oracles import gradient_moments as gmo
from refvi.verification.oracles import hessian_bounds as hb
from refvi.verification.oracles import vi_objective as vio
from refvi.verification.oracles.matrices import random_orthogonal as _orth
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.convergence_000._noise import (
    _instance,
    _wellconditioned,
    impl_samples,
    refined_orders,
    scale_with_singular_values,
)

RT_ROUND = 1e-11  # rounding: sums of <= 1e4 float64 terms of comparable size, relative


QUAD_OK = 1e-7  # a quadrature value is used only when its two-order error estimate is below this, relative


def oracle_M(model) -> float:
    """The smoothness constant of the bounds: the oracle's, never the implementation's (seed 000 Thm 21 - Cor 25)."""
    return hb.model_constants(model)[1]


def _sq(G, GC):
    return np.sum(G * G, axis=1) + np.sum(GC * GC, axis=(1, 2))


def impl_second_moment(ctx, target, model, m, C, structure, order, entropy=False):
    """sum_k w_k ||g_impl(u_k)||^2 over the tensor Gauss-Hermite nodes, after a pointwise check against the oracle."""
    U, w = gmo.hermite_tensor_rule(m.shape[0], order)
    G, GC = impl_samples(ctx, target, m, C, U, structure, "entropy" if entropy else "energy")
    Go, GCo = gmo.energy_samples(model, m, C, U, structure, entropy)
    scale = 1.0 + np.max(np.abs(Go)) + np.max(np.abs(GCo))
    # pointwise agreement of two float64 evaluations of the same formula: rounding only
    ctx.close(
        np.concatenate([G.ravel(), GC.ravel()]),
        np.concatenate([Go.ravel(), GCo.ravel()]),
        atol=1e-10 * scale,
        label="per-sample g(u): implementation vs oracle at the nodes",
    )
    return scalar(w @ _sq(G, GC))


def exact_second_moment(ctx, target, model, m, C, structure, entropy=False):
    """E||g||^2 of the implementation's estimator, with its certified accuracy: (value, atol)."""
    d = m.shape[0]
    if model["kind"] in ("gaussian", "linear"):
        H, mu = gmo.quadratic_form(model)
        exact = (gmo.entropy_second_moment_quadratic if entropy else gmo.energy_second_moment_quadratic)(
            H, mu, m, C, structure
        )
        if 3**d <= 250:  # ||g(u)||^2 has degree 4 in u: the order-3 tensor rule (degree 5) is exact
            val = impl_second_moment(ctx, target, model, m, C, structure, 3, entropy)
            ctx.close(val, exact, rtol=RT_ROUND, label="E||g||^2: implementation on exact rule vs Isserlis")
        else:  # large d: pointwise check at random base samples, expectation from the closed form
            U = ctx.rng("pointwise").standard_normal((8, d))
            G, GC = impl_samples(ctx, target, m, C, U, structure, "entropy" if entropy else "energy")
            Go, GCo = gmo.energy_samples(model, m, C, U, structure, entropy)
            ctx.close(
                np.concatenate([G.ravel(), GC.ravel()]),
                np.concatenate([Go.ravel(), GCo.ravel()]),
                atol=1e-10 * (1 + np.max(np.abs(GCo))),
                label="per-sample g(u): implementation vs oracle",
            )
        return exact, RT_ROUND * abs(exact)
    order, _, (q, est) = refined_orders(
        model["kind"],
        m.shape[0],
        lambda o, c: gmo.second_moment_quadrature(model, m, C, structure, entropy=entropy, order=o, check_order=c),
        lambda r: r[1] <= QUAD_OK * r[0],
    )
    ctx.bound(est, QUAD_OK * q, label="Gauss-Hermite converged (|Q_order - Q_check| small)")
    val = impl_second_moment(ctx, target, model, m, C, structure, order, entropy)
    # the implementation's sum on the low-order nodes differs from the check-order value by <= est (+ rounding)
    ctx.close(val, q, atol=2 * est + RT_ROUND * q, label="E||g||^2: implementation (order) vs oracle (check order)")
    return q, 2 * est + RT_ROUND * q


def stationary(model):
    """A maximizer of log p: convex targets: the unique mode; cosine: the best of the local minima of -log p."""
    if model["kind"] != "cosine":
        return gmo.stationary_point(model)
    b, z0 = np.asarray(model["b"]), np.asarray(model["z0"])
    period = 2 * np.pi / scalar(b @ b)
    best, fbest = None, np.inf
    for k in range(-12, 13):
        x = gmo.stationary_point(model, z0 + k * 0.5 * period * b)
        fx = gmo.phi_value(model, x)
        if fx < fbest - 1e-12:
            best, fbest = x, fx
    return best


def _sigma_min(C):
    return scalar(np.linalg.svd(C, compute_uv=False)[-1])


def _exact_moment_and_bounds(ctx, inst):
    """E||g_energy||^2 at the instance by exact quadrature (with its tolerance) and the oracle's two Thm 1 bounds:
    ``model, m, structure, (E, tol), (b1, b2)``."""
    target, model, m, C, structure = _instance(inst)
    moment = exact_second_moment(ctx, target, model, m, C, structure)
    return model, m, structure, moment, gmo.thm1_bounds(oracle_M(model), m, stationary(model), C)


# ---- 000.thm1 -------------------------------------------------------------------------------------------------------
@statement("000.thm1")
def thm1(ctx):
    def check(inst):
        model, m, structure, (E, tol), (b1, b2) = _exact_moment_and_bounds(ctx, inst)
        ctx.bound(E, b1, atol=tol, label=f"{model['kind']} d={m.shape[0]} {structure}: E||g||^2 <= first bound")
        ctx.bound(b1, b2, rtol=1e-15, label="first bound <= (d+3) M^2 ||w - wbar||^2")

    ctx.forall(
        _wellconditioned(4, ("full", "tril", "sym", "diag"), ("gaussian", "linear")),
        check,
        fixed=[
            ("gaussian", 3, "full", 1, (0.1, 1.0, 3.0), (3.0, -3.0, 0.0)),
            ("linear", 5, "tril", 2, (0.5,) * 5, (1.0,) * 5),
        ],
    )
    ctx.forall(
        _wellconditioned(2, ("full", "tril", "sym"), ("logistic", "cosine")),
        check,
        fixed=[("cosine", 2, "sym", 3, (2.5, 0.3), (0.5, -1.0)), ("logistic", 2, "tril", 4, (3.0, 0.1), (-3.0, 3.0))],
        max_examples=max(4, ctx.profile.max_examples // 4),
    )

    # Sharpness: phi = (M/2)||z - mbar||^2 with V = all matrices attains the first bound with equality.
    rng = ctx.rng("sharp")

    def sharp(d):
        Mv = scalar(rng.uniform(0.5, 3))
        mbar, m = rng.uniform(-2, 2, d), rng.uniform(-3, 3, d)
        C = scale_with_singular_values(rng, rng.uniform(0.1, 3, d), "full")
        model = {"kind": "gaussian", "mean": mbar, "precision": Mv * np.eye(d)}
        target = specs.from_model(model)
        E, _ = exact_second_moment(ctx, target, model, m, C, "full")
        b1, _ = gmo.thm1_bounds(oracle_M(model), m, mbar, C)
        ctx.close(E, b1, rtol=1e-12, label=f"sharpness d={d}: E||g||^2 == (d+1)M^2||dm||^2 + (d+3)M^2||C||^2")
        # each constant separately: m = mbar isolates (d+3), and a tiny C isolates (d+1)
        E0, _ = exact_second_moment(ctx, target, model, mbar, C, "full")
        ctx.close(
            E0, (d + 3) * Mv**2 * scalar(np.sum(C * C)), rtol=1e-12, label="m = mbar: E||g||^2 == (d+3)M^2||C||^2"
        )
        eps = 1e-4 * np.eye(d)
        E1, _ = exact_second_moment(ctx, target, model, m, eps, "full")
        ctx.close(
            E1 - (d + 3) * Mv**2 * scalar(np.sum(eps * eps)),
            (d + 1) * Mv**2 * scalar(np.sum((m - mbar) ** 2)),
            rtol=1e-10,
            label="C = 1e-4 I: E||g||^2 - (d+3)M^2||C||^2 == (d+1)M^2||m - mbar||^2",
        )
        ctx.count(2)

    for d in (1, 2, 3, 4):  # V = all matrices (full C): skipped for an implementation without it
        ctx.instance(sharp, d)


# ---- 000.thm2 -------------------------------------------------------------------------------------------------------
@statement("000.thm2")
def thm2(ctx):
    def check(inst):
        model, m, structure, (E, tol), (_, b2) = _exact_moment_and_bounds(ctx, inst)
        ctx.bound(
            E,
            b2,
            atol=tol,
            label=f"{model['kind']} d={m.shape[0]} {structure}: E||g_energy||^2 <= (d+3)M^2||w-wbar||^2",
        )

    ctx.forall(
        _wellconditioned(2, ("full", "tril", "sym"), ("logistic", "cosine")),
        check,
        fixed=[
            ("cosine", 1, "tril", 5, (3.0,), (3.0,)),
            ("cosine", 2, "tril", 6, (0.1, 0.1), (0.0, 0.0)),
            ("logistic", 1, "full", 7, (0.1,), (-3.0,)),
        ],
        max_examples=max(4, ctx.profile.max_examples // 3),
    )
    ctx.forall(
        _wellconditioned(8, ("full", "tril", "sym", "diag"), ("gaussian", "linear")),
        check,
        fixed=[("linear", 8, "tril", 8, (3.0,) * 8, (3.0,) * 8)],
        max_examples=max(4, ctx.profile.max_examples // 2),
    )


def _bound_case(inst):
    """A drawn instance with what the bounds of Thm 3 and Thm 26 are stated in: (target, model, m, C, structure, d,
    the oracle's smoothness constant M, the target's stationary point mbar)."""
    target, model, m, C, structure = _instance(inst)
    return target, model, m, C, structure, m.shape[0], oracle_M(model), stationary(model)


# ---- 000.thm3 -------------------------------------------------------------------------------------------------------
@statement("000.thm3")
def thm3(ctx):
    def check(inst):
        target, model, m, C, structure, d, M, mbar = _bound_case(inst)
        E, tol = exact_second_moment(ctx, target, model, m, C, structure, entropy=True)
        _, b2 = gmo.thm1_bounds(M, m, mbar, C)
        gh = ctx.impl.grad_neg_entropy(C, structure)
        for L in (1.0 / _sigma_min(C) ** 2, 4.0 / _sigma_min(C) ** 2):  # the smallest L with w in W_L, and a larger
            ctx.bound(scalar(np.sum(gh * gh)), d * L, rtol=1e-12, label="||grad h||^2 <= dL on W_L")
            ctx.bound(
                E,
                2 * b2 + 2 * d * L,
                atol=tol,
                label=f"{model['kind']} d={d} {structure}: E||g_ent||^2 <= 2(d+3)M^2||w-wbar||^2 + 2dL",
            )

    # ||grad h||^2 <= dL is attained: V = full, C = L^{-1/2} Q with Q orthogonal gives ||C^{-T}||_F^2 = dL exactly
    rng = ctx.rng("h-sharp")
    for d in (1, 2, 3, 5):
        L = scalar(rng.uniform(0.2, 5))
        gh = ctx.impl.grad_neg_entropy(_orth(rng, d) / np.sqrt(L), "full")
        ctx.close(scalar(np.sum(gh * gh)), d * L, rtol=1e-12, label="||grad h||^2 == dL for C = L^{-1/2} Q")
        ctx.count()

    ctx.forall(
        _wellconditioned(4, ("full", "tril", "sym", "diag"), ("gaussian", "linear")),
        check,
        fixed=[("gaussian", 2, "sym", 9, (0.1, 0.1), (0.0, 0.0))],
        max_examples=max(4, ctx.profile.max_examples // 2),
    )
    ctx.forall(
        _wellconditioned(2, ("full", "tril", "sym"), ("logistic", "cosine")),
        check,
        fixed=[COSINE_THM3_DL],
        max_examples=max(3, ctx.profile.max_examples // 5),
    )


# ---- 000.thm26 and erratum E000-3 -----------------------------------------------------------------------------------
# A w on which the *intermediate* step "E||g_ent||^2 <= 2(d+3)M^2||w - wbar||^2 + dL" (Thm 3 with dL) is false:
# -log p = 0.01 cos(z) + (1e-4/2)(z - 0.5)^2 in d = 1 (M = 0.0101, mbar ~ 3.115), w = (m, c) = (0.3, 0.8), L = 1/c^2:
# q sits on the concave bump around z = 0, so <grad l, grad h> > 0 while M is small next to L (found by a search).
COSINE_THM3_DL = ("cosine-fixed", 1, "tril", 0, (0.8,), (0.3,))


@statement("000.thm26")
def thm26(ctx):
    def check(inst):
        target, model, m, C, structure, d, M, mbar = _bound_case(inst)
        ms, Cs, _ = vio.solve(model, structure)
        dist = scalar(np.sum((m - ms) ** 2) + np.sum((C - Cs) ** 2))
        dstar = scalar(np.sum((ms - mbar) ** 2) + np.sum(Cs**2))
        L = 1.0 / _sigma_min(C) ** 2
        E, tol = exact_second_moment(ctx, target, model, m, C, structure)
        ctx.bound(
            E,
            2 * (d + 3) * M**2 * dist + 2 * (d + 3) * M**2 * dstar,
            atol=tol,
            label=f"{model['kind']} {structure}: g_energy (a, b) = (2(d+3)M^2, 2(d+3)M^2||w*-wbar||^2)",
        )
        # the implementation's table (the constants its step rules use) against the corrected one
        for est, k, extra in (("energy", 2.0, 0.0), ("entropy", 4.0, 2 * d * L)):
            a_i, b_i = ctx.impl.noise_constants(est, d, M, dstar, L)
            ctx.close(
                [a_i, b_i],
                [k * (d + 3) * M**2, k * (d + 3) * M**2 * dstar + extra],
                rtol=1e-12,
                label=f"impl (a, b) of {est} == Thm 26 table (corrected, E000-3)",
            )
        E, tol = exact_second_moment(ctx, target, model, m, C, structure, entropy=True)
        ctx.bound(
            E,
            4 * (d + 3) * M**2 * dist + 4 * (d + 3) * M**2 * dstar + 2 * d * L,
            atol=tol,
            label=f"{model['kind']} {structure}: g_ent (a, b) = (4(d+3)M^2, 4(d+3)M^2||w*-wbar||^2 + 2dL)",
        )
        if structure in ("full", "sym"):
            # convex target and V = full/sym: <grad l, grad h> = -tr E[Hess phi] <= 0, so even the printed b holds
            ctx.bound(
                E,
                4 * (d + 3) * M**2 * dist + 4 * (d + 3) * M**2 * dstar + d * L,
                atol=tol,
                label=f"{model['kind']} {structure}: printed b (dL) holds in the convex full/sym sub-case",
            )

    ctx.forall(
        _wellconditioned(4, ("full", "tril", "sym"), ("gaussian", "linear")),
        check,
        max_examples=max(4, ctx.profile.max_examples // 2),
    )
    ctx.forall(
        _wellconditioned(2, ("tril", "sym"), ("logistic",)), check, max_examples=max(3, ctx.profile.max_examples // 5)
    )


@erratum("E000-3")
def e000_3(ctx):
    # (1) the algebra of the proof, exactly.  With x = w - w*, y = w* - wbar, the proof's chain is
    #     Thm 3:  E||g_ent||^2 <= 2(d+3)M^2||x + y||^2 + 2dL
    #     Young:  2||x + y||^2 = 4||x||^2 + 4||y||^2 - 2||x - y||^2     (an identity; the last term is dropped)
    # so it proves a||x||^2 + [4(d+3)M^2||y||^2 + 2dL]: the additive 2dL passes through unchanged, and the printed
    # b is smaller than what is proved by exactly dL > 0.
    rng = ctx.rng("algebra")
    for k in range(6):
        d = 1 + k % 3
        M, L = scalar(rng.uniform(0.5, 3)), scalar(rng.uniform(0.5, 3))
        x, y = rng.standard_normal(d + d * d), rng.standard_normal(d + d * d)
        thm3 = 2 * (d + 3) * M**2 * scalar((x + y) @ (x + y)) + 2 * d * L
        proved = 4 * (d + 3) * M**2 * scalar(x @ x) + 4 * (d + 3) * M**2 * scalar(y @ y) + 2 * d * L
        ctx.close(
            thm3,
            proved - 2 * (d + 3) * M**2 * scalar((x - y) @ (x - y)),
            rtol=1e-13,
            label="Thm 3 bound == a||x||^2 + b_corrected - 2(d+3)M^2||x - y||^2 (identity)",
        )
        b_printed = 4 * (d + 3) * M**2 * scalar(y @ y) + d * L
        ctx.close(
            proved - (4 * (d + 3) * M**2 * scalar(x @ x) + b_printed),
            d * L,
            rtol=1e-12,
            label="what the proof gives minus the printed bound == dL > 0",
        )
        ctx.count()
    d = 1
    # (2) the step 'Thm 3 with dL instead of 2dL' fails on a concrete instance.
    target, model, m, C, structure = _instance(COSINE_THM3_DL)
    M = oracle_M(model)
    mbar = stationary(model)
    L = 1.0 / _sigma_min(C) ** 2
    E, tol = exact_second_moment(ctx, target, model, m, C, structure, entropy=True)
    _, b2 = gmo.thm1_bounds(M, m, mbar, C)
    ctx.geq(E, 2 * b2 + d * L + 100 * tol, label="printed-route step fails: E||g_ent||^2 > 2(d+3)M^2||w-wbar||^2 + dL")
    # (3) the proof's first step E||g_ent||^2 <= 2 E||g_energy||^2 + 2||grad h||^2 cannot carry 1*||grad h||^2 either
    En, tol_n = exact_second_moment(ctx, target, model, m, C, structure)
    gh = ctx.impl.grad_neg_entropy(C, structure)
    ctx.geq(
        E,
        2 * En + scalar(np.sum(gh * gh)) + 100 * (tol + tol_n),
        label="E||g_ent||^2 > 2 E||g_energy||^2 + ||grad h||^2 on the same instance",
    )
    ctx.count()

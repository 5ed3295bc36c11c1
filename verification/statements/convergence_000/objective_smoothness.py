"""Domke, Garrigos & Gower, *Provable convergence guarantees for black-box variational inference* (seed 000): smoothness
and convexity of the energy and entropy over the families (Lemmas 13-18): §7.2, smoothness and convexity of l and
h, and the minimizers in W_M (Lemmas 16-18).

Statements: 000.lemma16, 000.lemma17, 000.lemma18; errata: E000-6 (Lemmas 13-15: objective_structure.py).
"""

from __future__ import annotations

import numpy as np

from refvi.verification.errata import erratum
from refvi.verification.oracles import vi_objective as vo
from refvi.verification.oracles.matrices import proj_V as proj
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.convergence_000._structure import (
    STRUCTS,
    basis,
    constants,
    inner,
    linear_case,
    logistic_instance,
    quadratic_instance,
    random_in_W,
    real_data_instance,
    regression_case,
    same_function,
    seeds,
    sigma_min,
)


# ================================================================================= §7.2: smoothness, convexity
def _logdet_abs(C) -> float:
    return scalar(np.linalg.slogdet(C)[1])


@statement("000.lemma16")
def lemma16(ctx):
    def smooth_l(inst):
        d, _, seed = inst
        rng, kind, model, target = regression_case(inst)
        if seed % 5 == 0:
            same_function(ctx, model, target, rng, kind)
        M = constants(model)[1]
        for _ in range(3):
            m1, m2 = rng.standard_normal(d), rng.standard_normal(d)
            C1, C2 = rng.standard_normal((d, d)), rng.standard_normal((d, d))
            if rng.random() < 0.5:  # nearby pairs probe the local Lipschitz ratio
                m2, C2 = m1 + 1e-3 * (m2 - m1), C1 + 1e-3 * (C2 - C1)
            _, g1m, g1C = vo.free_energy(model, m1, C1)
            _, g2m, g2C = vo.free_energy(model, m2, C2)
            lhs = np.sqrt(np.sum((g1m - g2m) ** 2) + np.sum((g1C - g2C) ** 2))
            rhs = M * np.sqrt(np.sum((m1 - m2) ** 2) + np.sum((C1 - C2) ** 2))
            # oracle gradients accurate to ~1e-13 relative: 1e-9 relative + 1e-11 absolute on a difference
            ctx.bound(
                lhs, rhs, rtol=1e-9, atol=1e-11, label=f"16.1 ||grad l(w) - grad l(w')|| <= M ||w - w'|| ({kind})"
            )

    def tight_linear(inst):
        d, rng, model, target = linear_case(inst)
        A = vo.quadratic_form(model)[0]
        lam, Q = np.linalg.eigh(A)
        m, C = rng.standard_normal(d), rng.standard_normal((d, d))
        dC = np.outer(Q[:, -1], rng.standard_normal(d))
        _, g1m, g1C = vo.free_energy(model, m, C)
        _, g2m, g2C = vo.free_energy(model, m, C + dC)
        ratio = np.sqrt(np.sum((g1m - g2m) ** 2) + np.sum((g1C - g2C) ** 2)) / np.linalg.norm(dC)
        ctx.close(ratio, constants(model)[1], rtol=1e-10, label="16.1 M attained along the top eigenvector")

    def grad_h(inst):
        d, _, seed = inst
        rng = np.random.default_rng(seed)
        for structure in STRUCTS:
            C = random_in_W(rng, d, structure, smin=0.5)
            G = np.asarray(ctx.impl.grad_neg_entropy(C, structure))
            ctx.close(proj(G, structure), G, atol=0.0, label=f"16.2 grad h lies in V ({structure})")
            h = 1e-5
            Gfd = np.zeros((d, d))
            for E in basis(d, structure):
                Gfd += -(_logdet_abs(C + h * E) - _logdet_abs(C - h * E)) / (2 * h) * E
            # central differences of -log|det C| with sigma_min(C) >= 0.5: truncation h^2 ||C^-1||^3 / 3 <= 3e-10,
            # rounding 1e-16 |log det| / h <= 1e-10
            ctx.close(G, Gfd, atol=1e-8, label=f"16.2 grad h = -proj_V C^(-T) vs finite differences ({structure})")

    def smooth_h(inst):
        d, _, seed = inst
        rng = np.random.default_rng(seed)
        M = scalar(10 ** rng.uniform(-1, 1.5))
        t = 1 / np.sqrt(M)
        for structure in STRUCTS:
            C1 = random_in_W(rng, d, structure, smin=t)
            C2 = (
                random_in_W(rng, d, structure, smin=t)
                if rng.random() < 0.5
                else C1 + 1e-3 * proj(rng.standard_normal((d, d)), structure)
            )
            if sigma_min(C2) < t:
                C2 = C2 * (t / sigma_min(C2)) * (1 + 1e-9)
            G1 = np.asarray(ctx.impl.grad_neg_entropy(C1, structure))
            G2 = np.asarray(ctx.impl.grad_neg_entropy(C2, structure))
            # inverses of matrices with sigma_min >= t carry rounding ~1e-15 |G|; C2 may equal C1 up to rounding
            ctx.bound(
                np.linalg.norm(G1 - G2),
                M * np.linalg.norm(C1 - C2),
                rtol=1e-10,
                atol=1e-14 * (np.abs(G1).max() + np.abs(G2).max()),
                label=f"16.3 ||grad h(C) - grad h(C')|| <= M ||C - C'|| on W_M ({structure})",
            )

    half = max(6, ctx.profile.max_examples // 2)
    ctx.forall(seeds(3, 6), smooth_l, fixed=[(2, 4, 70), (3, 5, 71)], max_examples=half)
    ctx.forall(seeds(3, 6), tight_linear, fixed=[(2, 3, 72)], max_examples=max(3, ctx.profile.max_examples // 4))
    ctx.forall(seeds(3), grad_h, fixed=[(1, 1, 73), (3, 1, 74)])
    ctx.forall(seeds(3), smooth_h, fixed=[(1, 1, 75), (3, 1, 76)])
    # 16.3 is tight: at C = I / sqrt(M) and C' = C (1 + eps) the ratio is M / (1 + eps)
    for M in (0.5, 4.0):
        C1 = np.eye(2) / np.sqrt(M)
        C2 = C1 * (1 + 1e-6)
        for structure in STRUCTS:
            r = np.linalg.norm(
                np.asarray(ctx.impl.grad_neg_entropy(C1, structure))
                - np.asarray(ctx.impl.grad_neg_entropy(C2, structure))
            ) / np.linalg.norm(C1 - C2)
            ctx.close(r, M / (1 + 1e-6), rtol=1e-8, label="16.3 constant M attained at the boundary of W_M")
            # and the hypothesis C in W_M is needed: at C = I / (2 sqrt(M)) the local ratio is 4 M
            C3 = 0.5 * C1
            G3 = np.asarray(ctx.impl.grad_neg_entropy(C3, structure))
            G4 = np.asarray(ctx.impl.grad_neg_entropy(C3 * (1 + 1e-6), structure))
            r3 = np.linalg.norm(G3 - G4) / np.linalg.norm(1e-6 * C3)
            ctx.geq(r3, 3.9 * M, label="16.3 fails outside W_M (ratio 4M at sigma_min = 1/(2 sqrt M))")
            ctx.count()


@statement("000.lemma17")
def lemma17(ctx):
    def convex_l(inst):
        d, _, seed = inst
        rng, kind, model, target = regression_case(inst)
        mu = constants(model)[0]
        ctx.geq(mu, 0.0, label="mu >= 0")
        for _ in range(3):
            m1, m2 = rng.standard_normal(d), rng.standard_normal(d)
            C1, C2 = rng.standard_normal((d, d)), rng.standard_normal((d, d))
            l1 = vo.free_energy(model, m1, C1)[0]
            l2 = vo.free_energy(model, m2, C2)[0]
            lm = vo.free_energy(model, 0.5 * (m1 + m2), 0.5 * (C1 + C2))[0]
            dist2 = np.sum((m1 - m2) ** 2) + np.sum((C1 - C2) ** 2)
            # mu-strong convexity at the midpoint: l(mid) <= (l1 + l2)/2 - (mu/8)||w1 - w2||^2 (equality for the
            # quadratic part along the bottom eigenvector); oracle values accurate to 1e-13 relative
            ctx.bound(
                lm,
                0.5 * (l1 + l2) - mu / 8 * dist2,
                atol=1e-11 * (1 + abs(l1) + abs(l2)),
                label=f"17.1 l mu-strongly convex, midpoint ({kind})",
            )

    def sym_part(inst):
        d, _, seed = inst
        rng = np.random.default_rng(seed)
        M = scalar(10 ** rng.uniform(-1, 1.5))
        t = 1 / np.sqrt(M)
        C1, C2 = random_in_W(rng, d, "sym", smin=t), random_in_W(rng, d, "sym", smin=t)
        a = scalar(rng.uniform())
        Cm = (1 - a) * C1 + a * C2
        l1, l2, lm = (np.linalg.eigvalsh(X)[0] for X in (C1, C2, Cm))
        # lambda_min is concave on S^d (the proof of 17.2); eigvalsh accurate to 1e-14 relative
        ctx.geq(lm, (1 - a) * l1 + a * l2, atol=1e-12 * (1 + np.abs(Cm).max()), label="17.2 lambda_min concave")
        ctx.geq(lm, t, atol=1e-12 * (1 + np.abs(Cm).max()), label="17.2 W_M convex (sym)")
        ctx.close(sigma_min(C1), l1, rtol=1e-12, label="17.2 sigma_min = lambda_min on W (sym)")
        # h = -log det convex on S^d_{++}: midpoint and monotone gradient (through the implementation)
        h1, h2, hm = (-np.linalg.slogdet(X)[1] for X in (C1, C2, 0.5 * (C1 + C2)))
        ctx.bound(hm, 0.5 * (h1 + h2), atol=1e-12 * (1 + abs(h1) + abs(h2)), label="17.2 h convex (sym), midpoint")
        G1, G2 = np.asarray(ctx.impl.grad_neg_entropy(C1, "sym")), np.asarray(ctx.impl.grad_neg_entropy(C2, "sym"))
        ctx.geq(
            inner(G1 - G2, C1 - C2),
            0.0,
            atol=1e-12 * (1 + np.abs(G1).max() + np.abs(G2).max()) * (1 + np.abs(C1 - C2).max()),
            label="17.2 grad h monotone (sym)",
        )

    def tril_part(inst):
        d, _, seed = inst
        rng = np.random.default_rng(seed)
        C1, C2 = random_in_W(rng, d, "tril", smin=0.05), random_in_W(rng, d, "tril", smin=0.05)
        a = scalar(rng.uniform())
        Cm = (1 - a) * C1 + a * C2
        ctx.true(bool(np.all(np.diag(Cm) > 0)), label="17.3 W = positive-diagonal T^d is convex")
        # h(C) = -sum log C_ii: the log-determinant of a triangular matrix is the sum over its diagonal
        for X in (C1, C2, Cm):
            ctx.close(
                -np.linalg.slogdet(X)[1],
                -np.sum(np.log(np.diag(X))),
                rtol=1e-12,
                atol=1e-12,
                label="17.3 -log det C = -sum log C_ii on T^d",
            )
            ctx.close(
                np.sort(np.linalg.eigvals(X).real),
                np.sort(np.diag(X)),
                rtol=1e-9,
                atol=1e-12,
                label="17.3 eigenvalues of triangular C = its diagonal",
            )
        h1, h2, hm = (-np.sum(np.log(np.diag(X))) for X in (C1, C2, 0.5 * (C1 + C2)))
        ctx.bound(hm, 0.5 * (h1 + h2), atol=1e-13 * (1 + abs(h1) + abs(h2)), label="17.3 h convex (tril), midpoint")
        G1, G2 = np.asarray(ctx.impl.grad_neg_entropy(C1, "tril")), np.asarray(ctx.impl.grad_neg_entropy(C2, "tril"))
        ctx.geq(
            inner(G1 - G2, C1 - C2),
            0.0,
            atol=1e-12 * (1 + np.abs(G1).max() + np.abs(G2).max()),
            label="17.3 grad h monotone (tril)",
        )

    half = max(6, ctx.profile.max_examples // 2)
    ctx.forall(seeds(3, 6), convex_l, fixed=[(2, 4, 80), (3, 2, 81)], max_examples=half)
    ctx.forall(seeds(4), sym_part, fixed=[(1, 1, 82), (3, 1, 83)])
    ctx.forall(seeds(4), tril_part, fixed=[(1, 1, 84), (3, 1, 85)])


@erratum("E000-6")
def e000_6(ctx):
    C = np.array([[1.0, 0.0], [3.0, 1.0]])
    x = np.array([1.0, -1.0])
    ctx.true(bool(np.all(np.diag(C) > 0)), label="C has a positive diagonal (in refvi's W)")
    ctx.bound(scalar(x @ C @ x), -1.0, label="x^T C x = -1 < 0: C is not positive definite as a quadratic form")
    ctx.bound(
        scalar(np.linalg.eigvalsh(0.5 * (C + C.T))[0]), -0.49, label="lambda_min of the symmetric part = -1/2 < 0"
    )
    # the leading principal minors (what 'Sylvester' tests) are all positive nonetheless
    ctx.true(C[0, 0] > 0 and np.linalg.det(C) > 0, label="leading principal minors 1, 1 > 0")
    ctx.count()


@statement("000.lemma18")
def lemma18(ctx):
    def check_solution(model, target, structure, label, tight=False):
        M = constants(model)[1]
        m, C, f = vo.solve(model, structure)
        gm, gC = vo.grad_objective(model, m, C)
        # the oracle's optimum: closed form, or Newton to ||grad|| <= 1e-9
        ctx.bound(np.sqrt(gm @ gm + np.sum(proj(gC, structure) ** 2)), 0.0, atol=1e-8, label=f"{label}: w* stationary")
        s = sigma_min(C)
        if tight:
            # Gaussian target: C* C*^T = H^{-1}, so sigma_min(C*) = 1/sqrt(lambda_max(H)) = 1/sqrt(M) exactly
            ctx.close(s, 1 / np.sqrt(M), rtol=1e-10, label=f"{label}: sigma_min(C*) = 1/sqrt(M) (bound attained)")
        ctx.geq(s, 1 / np.sqrt(M), rtol=1e-9, label=f"{label}: sigma_min(C*) >= 1/sqrt(M) ({structure})")
        if structure == "sym":
            Cs = 0.5 * (C + C.T)
            # Proj-SGD's projection leaves the optimum where it is (up to eigen-decomposition rounding)
            ctx.close(
                ctx.impl.project_wm(Cs, M, "sym"),
                Cs,
                atol=1e-12 * (1 + np.abs(Cs).max()),
                label=f"{label}: proj_W_M(w*) = w*",
            )

    def check(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        kind = ("linear", "gaussian")[seed % 2]
        model, target = quadratic_instance(rng, kind, d, N)
        for structure in ("tril", "sym", "full"):
            check_solution(model, target, structure, kind, tight=(kind == "gaussian"))

    ctx.forall(seeds(3, 6), check, fixed=[(1, 1, 90), (3, 5, 91)])
    rng = ctx.rng("logistic")
    for d, N in ((1, 2), (2, 5), (3, 4), (3, 10)):
        model, target = logistic_instance(rng, N, d)
        same_function(ctx, model, target, rng, "logistic")
        for structure in ("tril", "sym"):
            check_solution(model, target, structure, "logistic")
        ctx.count()
    model, target = real_data_instance("diabetes")
    for structure in ("tril", "sym"):
        check_solution(model, target, structure, "diabetes")
        ctx.count()

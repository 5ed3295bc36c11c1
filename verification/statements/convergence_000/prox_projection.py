"""Domke, Garrigos & Gower, *Provable convergence guarantees for black-box variational inference* (seed 000): the prox
of the entropy and the projections onto W_M (Lemmas 29, 31-33).

Statements: 000.lemma29, 000.lemma31, 000.lemma32, 000.lemma33.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles import vi_objective as vo
from refvi.verification.oracles.matrices import proj_V as proj
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.convergence_000._structure import (
    STRUCTS,
    grad_h,
    inner,
    linear_instance,
    logistic_instance,
    project_wm,
    prox_h,
    random_in_W,
    seeds,
)


def _with_step(inst, lo, hi):
    """(d, N, rng, gamma) of a :func:`seeds` instance (d, N, seed): the generator of its seed and its first draw, a
    step gamma log-uniform on [10^lo, 10^hi]."""
    d, N, seed = inst
    rng = np.random.default_rng(seed)
    return d, N, rng, scalar(10 ** rng.uniform(lo, hi))


# ================================================================================================ §9-10: prox etc.
@statement("000.lemma29")
def lemma29(ctx):
    def nonexpansive(inst):
        d, _, seed = inst
        rng = np.random.default_rng(seed)
        # prox_{gamma h} is defined on all of T^d (any sign of the diagonal), Lemma 31
        C1 = np.tril(rng.standard_normal((d, d)) * rng.uniform(0.1, 3))
        C2 = np.tril(rng.standard_normal((d, d)) * rng.uniform(0.1, 3))
        gamma = scalar(10 ** rng.uniform(-3, 1))
        P1, P2 = prox_h(ctx, C1, gamma), prox_h(ctx, C2, gamma)
        # a few roundings in the square root: 1e-12 relative
        ctx.bound(
            np.linalg.norm(P1 - P2),
            np.linalg.norm(C1 - C2),
            rtol=1e-12,
            atol=1e-14,
            label="Lemma 29.1 ||prox C1 - prox C2|| <= ||C1 - C2||",
        )

    def subgradient(inst):
        d, _, rng, gamma = _with_step(inst, -3, 1)
        # (<=) pick v in W, set C = v + gamma * grad h(v) (h is differentiable on W, so dh(v) = {grad h(v)})
        v = random_in_W(rng, d, "tril", smin=0.05)
        C = v + gamma * grad_h(ctx, v, "tril")
        ctx.close(
            ctx.impl.entropy_prox(C, gamma),
            v,
            rtol=1e-10,
            atol=1e-12,
            label="Lemma 29.3 (<=): (C - v)/gamma = grad h(v) implies prox(C) = v",
        )
        # (=>) v = prox(C) for an arbitrary triangular C satisfies (C - v)/gamma in dh(v) = {grad h(v)}
        C = np.tril(rng.standard_normal((d, d)) * 2)
        v = prox_h(ctx, C, gamma)
        ctx.true(bool(np.all(np.diag(v) > 0)), label="prox output lies in W (positive diagonal)")
        # both sides O(1/v_ii); v_ii >= sqrt(gamma) - |c|... rounding only: 1e-9 relative covers gamma down to 1e-3
        ctx.close(
            (C - v) / gamma,
            grad_h(ctx, v, "tril"),
            rtol=1e-9,
            atol=1e-9,
            label="Lemma 29.3 (=>): (C - prox C)/gamma = grad h(prox C)",
        )

    def fixed_point(inst):
        d, N, rng, gamma = _with_step(inst, -2, 0.5)
        model, _ = linear_instance(rng, N, d)
        m_star, C_star, _ = vo.solve(model, "tril")
        _, gm, gC = vo.free_energy(model, m_star, C_star)
        # prox acts on m as the identity, so the m-part of the fixed point reads m* = m* - gamma grad_m l(w*)
        A, b, _ = vo.quadratic_form(model)
        # closed form m* = A^{-1} b: residual A m* - b is rounding, ~1e-15 cond(A) (|A| |m*| + |b|)
        ctx.close(
            gm,
            np.zeros(d),
            atol=1e-12 * np.linalg.cond(A) * (np.abs(A).max() * np.abs(m_star).max() + np.abs(b).max() + 1),
            label="grad_m l(w*) = 0 (closed-form optimum)",
        )
        ctx.close(
            ctx.impl.entropy_prox(C_star - gamma * proj(gC, "tril"), gamma),
            C_star,
            rtol=1e-9,
            atol=1e-11,
            label="Lemma 29.2 w* = prox_{gamma h}(w* - gamma grad l(w*)), linear regression",
        )

    ctx.forall(seeds(), nonexpansive, fixed=[(1, 1, 0), (3, 1, 1)])
    ctx.forall(seeds(), subgradient, fixed=[(1, 1, 2), (3, 1, 3)])
    ctx.forall(seeds(), fixed_point, fixed=[(2, 3, 4)], max_examples=max(5, ctx.profile.max_examples // 2))

    # logistic regression: w* from the deterministic quadrature solver (gradient norm <= 1e-9)
    rng = ctx.rng("logistic")
    for d, N in ((2, 5), (3, 8)):
        model, _ = logistic_instance(rng, N, d)
        m_star, C_star, _ = vo.solve(model, "tril")
        _, gm, gC = vo.free_energy(model, m_star, C_star)
        for gamma in (0.01, 0.3):
            # fixed-point residual <= gamma * ||grad f(w*)|| <= gamma * 1e-9 (solver tolerance); 1e-8 leaves room
            ctx.close(
                ctx.impl.entropy_prox(C_star - gamma * proj(gC, "tril"), gamma),
                C_star,
                atol=1e-8,
                label="Lemma 29.2 fixed point, logistic regression",
            )
            ctx.count()


@statement("000.lemma31")
def lemma31(ctx):
    import mpmath
    import sympy as sp

    from refvi.verification.oracles.symbolic import C_SYM, GAMMA_SYM, prox_scalar_solution

    # symbolic: SymPy solves the stationarity of -log x + (x - c)^2/(2 gamma) on x > 0 and finds one root
    root = prox_scalar_solution()
    printed = (C_SYM + sp.sqrt(C_SYM**2 + 4 * GAMMA_SYM)) / 2
    ctx.true(sp.simplify(root - printed) == 0, label="SymPy positive root == (c + sqrt(c^2 + 4 gamma))/2")
    x = sp.Symbol("x", positive=True)
    obj = -sp.log(x) + (x - C_SYM) ** 2 / (2 * GAMMA_SYM)
    # strictly convex on x > 0 (second derivative 1/x^2 + 1/gamma > 0), so the stationary point is the argmin
    ctx.true(
        sp.simplify(sp.diff(obj, x, 2) - (1 / x**2 + 1 / GAMMA_SYM)) == 0,
        label="second derivative = 1/x^2 + 1/gamma > 0",
    )
    ctx.count()

    def check(inst):
        d, _, seed = inst
        rng = np.random.default_rng(seed)
        C = np.tril(rng.standard_normal((d, d)) * 10 ** rng.uniform(-2, 2))
        gamma = scalar(10 ** rng.uniform(-4, 2))
        P = np.asarray(ctx.impl.entropy_prox(C, gamma))
        ctx.true(
            np.array_equal(P - np.diag(np.diag(P)), C - np.diag(np.diag(C))),
            label="off-diagonal entries unchanged (exactly)",
        )
        p, c = np.diag(P), np.diag(C)
        ctx.true(bool(np.all(p > 0)), label="prox diagonal > 0")
        # optimality condition of Eq. (34): p^2 - c p - gamma = 0, i.e. -1/p + (p - c)/gamma = 0; residual scaled
        # by p^2 + |c| p + gamma is a few ulps (we allow 1e-12 relative)
        resid = np.abs(p * p - c * p - gamma) / (p * p + np.abs(c) * p + gamma)
        ctx.leq(scalar(resid.max()), 0.0, atol=1e-12, label="stationarity p^2 - c p - gamma = 0")
        # and against the SymPy closed form, evaluated with 30 digits
        f = sp.lambdify((C_SYM, GAMMA_SYM), root, "mpmath")
        with mpmath.workdps(30):
            ref = np.array([scalar(f(mpmath.mpf(scalar(ci)), mpmath.mpf(gamma))) for ci in c])
        # a correctly rounded formula is within a few ulps of the 30-digit root for every sign and size of c
        # (for c < 0 use 2 gamma / (sqrt(c^2 + 4 gamma) - c); the textbook form cancels when c^2 >> gamma)
        ctx.close(p, ref, rtol=1e-13, atol=0.0, label="prox diagonal vs SymPy root (30 digits)")

    ctx.forall(seeds(), check, fixed=[(1, 1, 10), (3, 1, 11)])
    # the named hard instance: c = -100, gamma = 1e-4 (exact prox 9.99999900000002e-07...)
    P = np.asarray(ctx.impl.entropy_prox(np.array([[-100.0]]), 1e-4))
    with mpmath.workdps(40):
        ref = scalar((mpmath.mpf(-100) + mpmath.sqrt(mpmath.mpf(10000) + 4 * mpmath.mpf("1e-4"))) / 2)
    ctx.close(P[0, 0], ref, rtol=1e-13, label="prox at c = -100, gamma = 1e-4 (cancellation-prone)")
    ctx.count()
    # the ends of float64: the root is finite (and normal) where 2 gamma, c + r or r - c overflow (the printed form
    # cancels 600 digits at c = -1e296: evaluated with 800)
    for c, gamma in ((-1e296, 1e308), (-1.7e308, 1e300), (1.7e308, 1e308), (-1e200, 1e300)):
        P = np.asarray(ctx.impl.entropy_prox(np.array([[c]]), gamma))
        with mpmath.workdps(800):
            ref = scalar((mpmath.mpf(c) + mpmath.sqrt(mpmath.mpf(c) ** 2 + 4 * mpmath.mpf(gamma))) / 2)
        ctx.close(P[0, 0], ref, rtol=1e-13, label=f"prox at c = {c:g}, gamma = {gamma:g} (overflow-prone)")
        ctx.count()


@statement("000.lemma32")
def lemma32(ctx):
    from scipy.optimize import minimize

    def make(rng, d):
        A = rng.standard_normal((d, d)) * rng.uniform(0.2, 2)
        C = 0.5 * (A + A.T)
        M = scalar(10 ** rng.uniform(-1, 1.5))
        return C, M

    def check(inst):
        d, _, seed = inst
        rng = np.random.default_rng(seed)
        C, M = make(rng, d)
        t = 1.0 / np.sqrt(M)
        P = project_wm(ctx, C, M)
        ctx.close(P, P.T, atol=1e-13 * (1 + np.abs(C).max()), label="projection is symmetric")
        # eigen-decomposition rounding: 1e-12 relative to the spectrum scale
        scale = 1 + np.abs(C).max() + t
        ctx.geq(np.linalg.eigvalsh(0.5 * (P + P.T))[0], t, atol=1e-12 * scale, label="output in W_M")
        Ps = 0.5 * (P + P.T)
        ctx.close(ctx.impl.project_wm(Ps, M, "sym"), Ps, atol=1e-12 * scale, label="idempotent: proj(proj C) = proj C")
        # variational inequality <C - P, D - P> <= 0 for every D in W_M (characterizes the projection)
        for _ in range(5):
            D = random_in_W(rng, d, "sym", smin=t)
            ctx.bound(inner(C - P, D - P), 0.0, atol=1e-11 * scale**2, label="<C - P(C), D - P(C)> <= 0, D in W_M")
        # C already in W_M is left alone
        D = random_in_W(rng, d, "sym", smin=t)
        ctx.close(
            ctx.impl.project_wm(D, M, "sym"), D, atol=1e-12 * (1 + np.abs(D).max()), label="proj(D) = D for D in W_M"
        )

    def generic_solver(inst):
        _, _, seed = inst
        rng = np.random.default_rng(seed)
        C, M = make(rng, 2)
        t = 1.0 / np.sqrt(M)

        # generic road: every X in W_M is t I + L L^T (L lower triangular, 3 free parameters), so minimize
        # ||t I + L L^T - C||_F^2 over L with BFGS from several starts (feasible by construction; with a full-rank
        # factor every local minimum of this Burer-Monteiro form is global)
        def obj(p):
            L = np.array([[p[0], 0.0], [p[1], p[2]]])
            return scalar(np.sum((t * np.eye(2) + L @ L.T - C) ** 2))

        best = None
        for x0 in ([1.0, 0.0, 1.0], [0.3, -0.5, 0.7], list(rng.standard_normal(3))):
            res = minimize(obj, x0, method="BFGS", options={"gtol": 1e-12, "maxiter": 2000})
            if best is None or res.fun < best.fun:
                best = res
        assert best is not None  # three starts ran
        L = np.array([[best.x[0], 0.0], [best.x[1], best.x[2]]])
        X = t * np.eye(2) + L @ L.T
        P = np.asarray(ctx.impl.project_wm(C, M, "sym"))
        # BFGS on the factor converges like sqrt near a rank-deficient L (a clipped eigenvalue): ~1e-6 in X
        ctx.close(P, X, atol=1e-5 * (1 + np.abs(C).max()), label="Lemma 32 formula vs generic solver, d = 2")
        # X is feasible exactly, so the projection can be no farther from C (rounding only)
        ctx.bound(
            inner(P - C, P - C), best.fun, rtol=1e-12, atol=1e-14, label="||P(C) - C||^2 <= generic solver's objective"
        )

    ctx.forall(seeds(), check, fixed=[(1, 1, 20), (3, 1, 21)])
    ctx.forall(seeds(), generic_solver, fixed=[(2, 1, 22)], max_examples=max(4, ctx.profile.max_examples // 2))


@statement("000.lemma33")
def lemma33(ctx):
    import sympy as sp

    # symbolic: for every V and symbolic z, u, m, C in V: <T*(z), (m, C)> = <z, C u + m>
    d = 3
    z = sp.Matrix(sp.symbols("z0:3", real=True))
    u = sp.Matrix(sp.symbols("u0:3", real=True))
    m = sp.Matrix(sp.symbols("m0:3", real=True))
    for structure in STRUCTS:

        def entry(i, j, structure=structure):
            if structure == "sym":
                return sp.Symbol(f"c{min(i, j)}{max(i, j)}")
            keep = structure == "full" or (structure == "tril" and i >= j) or i == j
            return sp.Symbol(f"c{i}{j}") if keep else sp.Integer(0)

        Cs = sp.Matrix(d, d, entry)
        Z = z * u.T
        if structure == "tril":
            PZ = sp.Matrix(d, d, lambda i, j: Z[i, j] if i >= j else 0)
        elif structure == "sym":
            PZ = (Z + Z.T) / 2
        elif structure == "diag":
            PZ = sp.Matrix(d, d, lambda i, j: Z[i, j] if i == j else 0)
        else:
            PZ = Z
        lhs = (z.T * m)[0] + sum(PZ[i, j] * Cs[i, j] for i in range(d) for j in range(d))
        rhs = (z.T * (Cs * u + m))[0]
        ctx.true(sp.expand(lhs - rhs) == 0, label=f"symbolic adjoint identity, V = {structure}")
        ctx.count()

    # through the implementation: a target with constant -grad log p = zeta makes the single-sample energy
    # estimator return exactly T*(zeta) at u (Eq. 6); check it is in V and satisfies the adjoint identity

    def check(inst):
        dd, _, seed = inst
        rng = np.random.default_rng(seed)
        zeta = rng.standard_normal(dd)
        target = specs.from_callables(lambda x: -scalar(zeta @ x), lambda x: -zeta, dd)
        uu = rng.standard_normal(dd)
        for structure in STRUCTS:
            m0, C0 = rng.standard_normal(dd), random_in_W(rng, dd, structure)
            gm, gC = ctx.impl.energy(target, m0, C0, uu[None, :], structure)
            gC = np.asarray(gC)
            ctx.close(proj(gC, structure), gC, atol=0.0, label=f"T*(z) has its C-part in V = {structure}")
            for _ in range(3):
                mw, Cw = rng.standard_normal(dd), proj(rng.standard_normal((dd, dd)), structure)
                lhs = scalar(np.dot(gm, mw)) + inner(gC, Cw)
                rhs = scalar(zeta @ (Cw @ uu + mw))
                # sums of d^2 products: rounding 1e-13 relative to the sum of |terms|
                ctx.close(
                    lhs,
                    rhs,
                    atol=1e-13
                    * (1 + np.abs(zeta).sum() * (np.abs(Cw).sum() + np.abs(mw).sum()) * (1 + np.abs(uu).max())),
                    label=f"<T*(z), w> = <z, T(w)>, V = {structure}",
                )

    ctx.forall(seeds(4), check, fixed=[(1, 1, 30), (3, 1, 31)])

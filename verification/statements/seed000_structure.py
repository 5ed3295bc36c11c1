"""Seed 000 (Domke, Garrigos & Gower), structural results: restriction to V (Lemmas 13-15), smoothness and convexity
of the VI objective (Lemmas 16-18), the model constants of §7.3 (Thm 21 - Cor 25, errata E000-1, E000-2, E000-5,
E000-6) and the prox / projection / adjoint computations of §9-10 (Lemmas 29, 31, 32, 33).

Oracles: :mod:`..oracles.vi_objective` (exact l, grad l and the VI optimum), :mod:`..oracles.hessian_bounds`
(-log p, its gradient and Hessian by finite differences / SymPy, written independently of refvi),
:mod:`..oracles.quadrature` (degree-3 cubature), SymPy for the symbolic identities.  The implementation is reached
only through ``ctx.impl`` and receives targets as plain :class:`~refvi.verification.protocol.targets.TargetSpec`
records built from the oracle model.  Every bound takes M and mu from the oracle
(:func:`..oracles.hessian_bounds.model_constants`); only the constant statements (Thm 21, Cor 22, Cor 23, Thm 24,
Cor 25) ask ``ctx.impl`` for its M and mu, and compare them with the tight values where the bound is attained.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from refvi.verification.errata import erratum
from refvi.verification.oracles import hessian_bounds as hb
from refvi.verification.oracles import vi_objective as vo
from refvi.verification.oracles.quadrature import degree3_cubature
from refvi.verification.statement import statement
from refvi.verification.oracles.matrices import proj_V as proj
from refvi.verification.oracles.matrices import random_orthogonal
from refvi.verification.protocol import datasets
from refvi.verification.protocol import targets as specs

SRC = "Domke, Garrigos & Gower (seed 000)"
STRUCTS = ("full", "tril", "sym", "diag")


# ------------------------------------------------------------------------------------------------ matrix helpers
def basis(d: int, structure: str) -> list[np.ndarray]:
    """An orthonormal (Frobenius) basis of V."""
    out = []
    for i in range(d):
        for j in range(d):
            E = np.zeros((d, d))
            if structure == "full" or (structure == "tril" and i >= j) or (structure == "diag" and i == j):
                E[i, j] = 1.0
            elif structure == "sym" and i >= j:
                E[i, j] = E[j, i] = 1.0 if i == j else 1.0 / np.sqrt(2.0)
            else:
                continue
            out.append(E)
    return out


def random_in_W(rng: np.random.Generator, d: int, structure: str, smin: float = 0.3) -> np.ndarray:
    """A random C in V with sigma_min(C) >= smin (so C is in W, and in W_M for smin >= 1/sqrt(M)).

    tril / diag: positive diagonal; sym: positive definite; full: any invertible matrix (its determinant may be
    negative).  C is rescaled (which keeps it in V) until sigma_min(C) >= smin.
    """
    A = rng.standard_normal((d, d))
    if structure == "sym":
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        lam = smin + rng.exponential(1.0, d)
        C = (Q * lam) @ Q.T
        return 0.5 * (C + C.T)
    C = proj(A, structure)
    if structure in ("tril", "diag"):
        C[np.diag_indices(d)] = np.abs(np.diag(C)) + 0.2
    s = np.linalg.svd(C, compute_uv=False)[-1]
    if s < smin:
        C = C * (smin / s) * (1.0 + 1e-9)
    return C


def inner(A, B) -> float:
    return float(np.sum(np.asarray(A) * np.asarray(B)))


def sigma_min(C) -> float:
    return float(np.linalg.svd(C, compute_uv=False)[-1])


# ------------------------------------------------------------------------------------------------ model instances
def linear_instance(rng, N: int, d: int):
    """(oracle model dict, target spec) for Bayesian linear regression with random data and scales."""
    X = rng.standard_normal((N, d))
    y = rng.standard_normal(N)
    sn, s = float(rng.uniform(0.3, 2.0)), float(rng.uniform(0.5, 2.0))
    model = {"kind": "linear", "X": X, "y": y, "noise_scale": sn, "prior_scale": s}
    return model, specs.from_model(model)


def logistic_instance(rng, N: int, d: int):
    X = rng.standard_normal((N, d))
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    s = float(rng.uniform(0.5, 2.0))
    model = {"kind": "logistic", "X": X, "y": y, "prior_scale": s}
    return model, specs.from_model(model)


def gaussian_instance(rng, d: int):
    B = rng.standard_normal((d, d))
    P = B @ B.T + 0.5 * np.eye(d)
    P = 0.5 * (P + P.T)
    mu = rng.standard_normal(d)
    model = {"kind": "gaussian", "mean": mu, "precision": P}
    return model, specs.from_model(model)


def hierarchical_instance(rng, N: int, d: int, G: int):
    X = rng.standard_normal((N, d))
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    groups = rng.integers(0, G, N)
    B1, B2 = rng.standard_normal((d, d)), rng.standard_normal((d, d))
    Sigma = B1 @ B1.T + 0.5 * np.eye(d)
    Delta = B2 @ B2.T + 0.3 * np.eye(d)
    Sigma, Delta = 0.5 * (Sigma + Sigma.T), 0.5 * (Delta + Delta.T)
    model = {"kind": "hierarchical_logistic", "X": X, "y": y, "groups": groups, "n_groups": G,
             "Sigma": Sigma, "Delta": Delta}
    return model, specs.from_model(model)


def real_data_instance(name: str):
    """(oracle model, target spec) for a bundled data set: logistic for classification, linear for regression."""
    model = datasets.model_for(name)
    return model, specs.from_model(model, name)


def constants(model) -> tuple[float, float]:
    """(mu, M) of the model from the oracle: what every bound uses (never the implementation's values)."""
    return hb.model_constants(model)


def impl_constants_match(ctx, model, target, label, mu_tight=True):
    """The constant statements' check: the implementation's M equals the oracle's tight M (attained by the Hessian
    for every kind used here), and its mu equals the tight mu (``mu_tight``) or is a valid one in [0, mu]."""
    mu_o, M_o = constants(model)
    # the same extreme eigenvalue computed by two codes: rounding only
    ctx.close(ctx.impl.smoothness(target), M_o, rtol=1e-10, label=f"{label}: impl M == tight M (oracle)")
    mu = ctx.impl.strong_convexity(target)
    if mu_tight:
        ctx.close(mu, mu_o, rtol=1e-10, atol=1e-14, label=f"{label}: impl mu == tight mu (oracle)")
    else:
        ctx.geq(mu, 0.0, label=f"{label}: impl mu >= 0")
        ctx.bound(mu, mu_o, rtol=1e-10, atol=1e-14, label=f"{label}: impl mu <= tight mu (oracle), a valid bound")


def same_function(ctx, model, target, rng, label):
    """Evidence that the spec handed to the implementation is the oracle's model (values and gradients agree)."""
    dim = target.dim
    for z in (np.zeros(dim), rng.standard_normal(dim), 3.0 * rng.standard_normal(dim)):
        v = hb.neg_log_joint(model, z)
        # both sides are closed-form sums of O(N) terms: agreement to 1e-12 relative (rounding only)
        ctx.close(-target.logp(z), v, rtol=1e-12, atol=1e-12, label=f"{label}: -log p oracle vs spec")
        ctx.close(-np.asarray(target.grad_logp(z)), hb.grad_neg_log_joint(model, z), rtol=1e-11, atol=1e-11,
                  label=f"{label}: grad -log p oracle vs spec")


def seeds(dmax: int = 3, nmax: int = 6):
    """Hypothesis strategy of (d, N, seed); arrays are drawn from a numpy generator seeded by ``seed``."""
    return st.tuples(st.integers(1, dmax), st.integers(1, nmax), st.integers(0, 2**32 - 1))


# ================================================================================================ §9-10: prox etc.
@statement("000.lemma29", title="prox of the neg-entropy: non-expansive, fixed point at w*, subgradient "
           "characterization", source=f"{SRC}, Lemma 29 (1)-(3), with h of Lemma 17.3 on T^d", kind="exact",
           uses=("entropy_prox", "grad_neg_entropy"))
def lemma29(ctx):
    impl = ctx.impl

    def nonexpansive(inst):
        d, _, seed = inst
        rng = np.random.default_rng(seed)
        # prox_{gamma h} is defined on all of T^d (any sign of the diagonal), Lemma 31
        C1 = np.tril(rng.standard_normal((d, d)) * rng.uniform(0.1, 3))
        C2 = np.tril(rng.standard_normal((d, d)) * rng.uniform(0.1, 3))
        gamma = float(10 ** rng.uniform(-3, 1))
        P1, P2 = impl.entropy_prox(C1, gamma), impl.entropy_prox(C2, gamma)
        # a few roundings in the square root: 1e-12 relative
        ctx.bound(np.linalg.norm(P1 - P2), np.linalg.norm(C1 - C2), rtol=1e-12, atol=1e-14,
                label="Lemma 29.1 ||prox C1 - prox C2|| <= ||C1 - C2||")

    def subgradient(inst):
        d, _, seed = inst
        rng = np.random.default_rng(seed)
        gamma = float(10 ** rng.uniform(-3, 1))
        # (<=) pick v in W, set C = v + gamma * grad h(v) (h is differentiable on W, so dh(v) = {grad h(v)})
        v = random_in_W(rng, d, "tril", smin=0.05)
        C = v + gamma * np.asarray(impl.grad_neg_entropy(v, "tril"))
        ctx.close(impl.entropy_prox(C, gamma), v, rtol=1e-10, atol=1e-12,
                  label="Lemma 29.3 (<=): (C - v)/gamma = grad h(v) implies prox(C) = v")
        # (=>) v = prox(C) for an arbitrary triangular C satisfies (C - v)/gamma in dh(v) = {grad h(v)}
        C = np.tril(rng.standard_normal((d, d)) * 2)
        v = impl.entropy_prox(C, gamma)
        ctx.true(bool(np.all(np.diag(v) > 0)), label="prox output lies in W (positive diagonal)")
        # both sides O(1/v_ii); v_ii >= sqrt(gamma) - |c|... rounding only: 1e-9 relative covers gamma down to 1e-3
        ctx.close((C - v) / gamma, impl.grad_neg_entropy(v, "tril"), rtol=1e-9, atol=1e-9,
                  label="Lemma 29.3 (=>): (C - prox C)/gamma = grad h(prox C)")

    def fixed_point(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        gamma = float(10 ** rng.uniform(-2, 0.5))
        model, _ = linear_instance(rng, N, d)
        m_star, C_star, _ = vo.solve(model, "tril")
        _, gm, gC = vo.free_energy(model, m_star, C_star)
        # prox acts on m as the identity, so the m-part of the fixed point reads m* = m* - gamma grad_m l(w*)
        A, b, _ = vo.quadratic_form(model)
        # closed form m* = A^{-1} b: residual A m* - b is rounding, ~1e-15 cond(A) (|A| |m*| + |b|)
        ctx.close(gm, np.zeros(d), atol=1e-12 * np.linalg.cond(A) * (np.abs(A).max() * np.abs(m_star).max()
                                                                     + np.abs(b).max() + 1),
                  label="grad_m l(w*) = 0 (closed-form optimum)")
        ctx.close(impl.entropy_prox(C_star - gamma * proj(gC, "tril"), gamma), C_star, rtol=1e-9, atol=1e-11,
                  label="Lemma 29.2 w* = prox_{gamma h}(w* - gamma grad l(w*)), linear regression")

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
            ctx.close(impl.entropy_prox(C_star - gamma * proj(gC, "tril"), gamma), C_star, atol=1e-8,
                      label="Lemma 29.2 fixed point, logistic regression")
            ctx.count()


@statement("000.lemma31", title="prox of the neg-entropy on T^d: diagonal C_ii -> (C_ii + sqrt(C_ii^2 + 4 gamma))/2, "
           "off-diagonal unchanged", source=f"{SRC}, Lemma 31, Eq. (34)", kind="symbolic", uses=("entropy_prox",))
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
    ctx.true(sp.simplify(sp.diff(obj, x, 2) - (1 / x**2 + 1 / GAMMA_SYM)) == 0,
             label="second derivative = 1/x^2 + 1/gamma > 0")
    ctx.count()

    impl = ctx.impl

    def check(inst):
        d, _, seed = inst
        rng = np.random.default_rng(seed)
        C = np.tril(rng.standard_normal((d, d)) * 10 ** rng.uniform(-2, 2))
        gamma = float(10 ** rng.uniform(-4, 2))
        P = np.asarray(impl.entropy_prox(C, gamma))
        ctx.true(np.array_equal(P - np.diag(np.diag(P)), C - np.diag(np.diag(C))),
                 label="off-diagonal entries unchanged (exactly)")
        p, c = np.diag(P), np.diag(C)
        ctx.true(bool(np.all(p > 0)), label="prox diagonal > 0")
        # optimality condition of Eq. (34): p^2 - c p - gamma = 0, i.e. -1/p + (p - c)/gamma = 0; residual scaled
        # by p^2 + |c| p + gamma is a few ulps (we allow 1e-12 relative)
        resid = np.abs(p * p - c * p - gamma) / (p * p + np.abs(c) * p + gamma)
        ctx.bound(float(resid.max()), 0.0, atol=1e-12, label="stationarity p^2 - c p - gamma = 0")
        # and against the SymPy closed form, evaluated with 30 digits
        f = sp.lambdify((C_SYM, GAMMA_SYM), root, "mpmath")
        with mpmath.workdps(30):
            ref = np.array([float(f(mpmath.mpf(float(ci)), mpmath.mpf(gamma))) for ci in c])
        # a correctly rounded formula is within a few ulps of the 30-digit root for every sign and size of c
        # (for c < 0 use 2 gamma / (sqrt(c^2 + 4 gamma) - c); the textbook form cancels when c^2 >> gamma)
        ctx.close(p, ref, rtol=1e-13, atol=0.0, label="prox diagonal vs SymPy root (30 digits)")

    ctx.forall(seeds(), check, fixed=[(1, 1, 10), (3, 1, 11)])
    # the named hard instance: c = -100, gamma = 1e-4 (exact prox 9.99999900000002e-07...)
    P = np.asarray(impl.entropy_prox(np.array([[-100.0]]), 1e-4))
    with mpmath.workdps(40):
        ref = float((mpmath.mpf(-100) + mpmath.sqrt(mpmath.mpf(10000) + 4 * mpmath.mpf("1e-4"))) / 2)
    ctx.close(P[0, 0], ref, rtol=1e-13, label="prox at c = -100, gamma = 1e-4 (cancellation-prone)")
    ctx.count()


@statement("000.lemma32", title="projection onto W_M for symmetric C clips eigenvalues at 1/sqrt(M)",
           source=f"{SRC}, Lemma 32", kind="exact", uses=("project_wm",))
def lemma32(ctx):
    from scipy.optimize import minimize

    impl = ctx.impl

    def make(rng, d):
        A = rng.standard_normal((d, d)) * rng.uniform(0.2, 2)
        C = 0.5 * (A + A.T)
        M = float(10 ** rng.uniform(-1, 1.5))
        return C, M

    def check(inst):
        d, _, seed = inst
        rng = np.random.default_rng(seed)
        C, M = make(rng, d)
        t = 1.0 / np.sqrt(M)
        P = np.asarray(impl.project_wm(C, M, "sym"))
        ctx.close(P, P.T, atol=1e-13 * (1 + np.abs(C).max()), label="projection is symmetric")
        # eigen-decomposition rounding: 1e-12 relative to the spectrum scale
        scale = 1 + np.abs(C).max() + t
        ctx.geq(np.linalg.eigvalsh(0.5 * (P + P.T))[0], t, atol=1e-12 * scale, label="output in W_M")
        Ps = 0.5 * (P + P.T)
        ctx.close(impl.project_wm(Ps, M, "sym"), Ps, atol=1e-12 * scale, label="idempotent: proj(proj C) = proj C")
        # variational inequality <C - P, D - P> <= 0 for every D in W_M (characterizes the projection)
        for _ in range(5):
            D = random_in_W(rng, d, "sym", smin=t)
            ctx.bound(inner(C - P, D - P), 0.0, atol=1e-11 * scale**2, label="<C - P(C), D - P(C)> <= 0, D in W_M")
        # C already in W_M is left alone
        D = random_in_W(rng, d, "sym", smin=t)
        ctx.close(impl.project_wm(D, M, "sym"), D, atol=1e-12 * (1 + np.abs(D).max()),
                  label="proj(D) = D for D in W_M")

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
            return float(np.sum((t * np.eye(2) + L @ L.T - C) ** 2))

        best = None
        for x0 in ([1.0, 0.0, 1.0], [0.3, -0.5, 0.7], list(rng.standard_normal(3))):
            res = minimize(obj, x0, method="BFGS", options={"gtol": 1e-12, "maxiter": 2000})
            if best is None or res.fun < best.fun:
                best = res
        L = np.array([[best.x[0], 0.0], [best.x[1], best.x[2]]])
        X = t * np.eye(2) + L @ L.T
        P = np.asarray(impl.project_wm(C, M, "sym"))
        # BFGS on the factor converges like sqrt near a rank-deficient L (a clipped eigenvalue): ~1e-6 in X
        ctx.close(P, X, atol=1e-5 * (1 + np.abs(C).max()), label="Lemma 32 formula vs generic solver, d = 2")
        # X is feasible exactly, so the projection can be no farther from C (rounding only)
        ctx.bound(inner(P - C, P - C), best.fun, rtol=1e-12, atol=1e-14,
                label="||P(C) - C||^2 <= generic solver's objective")

    ctx.forall(seeds(), check, fixed=[(1, 1, 20), (3, 1, 21)])
    ctx.forall(seeds(), generic_solver, fixed=[(2, 1, 22)], max_examples=max(4, ctx.profile.max_examples // 2))


@statement("000.lemma33", title="adjoint of T(m, C) = C u + m is T*(z) = (z, proj_V(z u^T))",
           source=f"{SRC}, Lemma 33 (used in Eq. 6)", kind="exact", uses=("energy",))
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
    impl = ctx.impl

    def check(inst):
        dd, _, seed = inst
        rng = np.random.default_rng(seed)
        zeta = rng.standard_normal(dd)
        target = specs.from_callables(lambda x: -float(zeta @ x), lambda x: -zeta, dd)
        uu = rng.standard_normal(dd)
        for structure in STRUCTS:
            m0, C0 = rng.standard_normal(dd), random_in_W(rng, dd, structure)
            gm, gC = impl.energy(target, m0, C0, uu[None, :], structure)
            gC = np.asarray(gC)
            ctx.close(proj(gC, structure), gC, atol=0.0, label=f"T*(z) has its C-part in V = {structure}")
            for _ in range(3):
                mw, Cw = rng.standard_normal(dd), proj(rng.standard_normal((dd, dd)), structure)
                lhs = float(np.dot(gm, mw)) + inner(gC, Cw)
                rhs = float(zeta @ (Cw @ uu + mw))
                # sums of d^2 products: rounding 1e-13 relative to the sum of |terms|
                ctx.close(lhs, rhs, atol=1e-13 * (1 + np.abs(zeta).sum() * (np.abs(Cw).sum() + np.abs(mw).sum())
                                                  * (1 + np.abs(uu).max())),
                          label=f"<T*(z), w> = <z, T(w)>, V = {structure}")

    ctx.forall(seeds(4), check, fixed=[(1, 1, 30), (3, 1, 31)])


# ======================================================================================== §7.1: restriction to V
def _cubature_energy(ctx, target, m, C, structure):
    """impl.energy averaged over the degree-3 equal-weight cubature: the EXACT expectation E g_energy = grad l_V for
    targets whose gradient is affine (Gaussian, linear regression), since each sample is a degree <= 2 polynomial."""
    U, w = degree3_cubature(target.dim)
    return ctx.impl.energy(target, m, C, U, structure)


def _quadratic_instance(rng, kind, d, N):
    return gaussian_instance(rng, d) if kind == "gaussian" else linear_instance(rng, N, d)


@statement("000.lemma13", title="restricting C to symmetric or triangular factors keeps the VI optimum (same "
           "distribution, same value)", source=f"{SRC}, Lemma 13", kind="exact", uses=("entropy",))
def lemma13(ctx):
    def check(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        model, target = _quadratic_instance(rng, "linear" if seed % 2 else "gaussian", d, N)
        m_t, L, f_t = vo.solve(model, "tril")
        m_s, S, f_s = vo.solve(model, "sym")
        # a minimizer over M^d: any C with C C^T = Sigma*, e.g. L Q for a random orthogonal Q
        Cbar = L @ random_orthogonal(rng, d)
        f_bar = vo.objective(model, m_t, Cbar)
        gm, gC = vo.grad_objective(model, m_t, Cbar)
        scale = 1 + np.abs(vo.quadratic_form(model)[0]).max()
        # closed forms: rounding only (1e-10 relative to the model scale)
        ctx.close(np.concatenate([gm, gC.ravel()]), 0.0 * np.concatenate([gm, gC.ravel()]), atol=1e-9 * scale,
                  label="w_bar = (m*, L Q) is stationary over R^d x M^d")
        # Lemma 13's construction: Cholesky factor of Cbar Cbar^T (triangular) and its square root (symmetric)
        Sig = Cbar @ Cbar.T
        Ct = np.linalg.cholesky(Sig)
        lam, Q = np.linalg.eigh(Sig)
        Cs = (Q * np.sqrt(lam)) @ Q.T
        Cs = 0.5 * (Cs + Cs.T)
        ctx.true(bool(np.all(np.diag(Ct) > 0)) and np.array_equal(Ct, np.tril(Ct)), label="C* triangular, in W")
        ctx.true(bool(np.linalg.eigvalsh(0.5 * (Cs + Cs.T))[0] > 0), label="C* symmetric positive definite")
        for name, Cv, fv in (("tril", Ct, f_t), ("sym", Cs, f_s)):
            ctx.close(Cv @ Cv.T, Sig, rtol=1e-10, atol=1e-12, label=f"q_(m*, C*) = q_w_bar ({name})")
            ctx.close(vo.objective(model, m_t, Cv), f_bar, rtol=1e-11, atol=1e-11,
                      label=f"f(w*) = f(w_bar) ({name})")
            ctx.close(fv, f_bar, rtol=1e-11, atol=1e-11, label=f"min over R^d x {name} = min over M^d")
            # the implementation's entropy-regularized gradient estimator vanishes at w* (exact with cubature)
            U, _ = degree3_cubature(d)
            gm_i, gC_i = ctx.impl.entropy(target, m_t, Cv, U, name)
            ctx.close(np.concatenate([np.ravel(gm_i), np.ravel(gC_i)]), np.zeros(d + d * d), atol=1e-9 * scale,
                      label=f"impl grad f = 0 at the restricted optimum ({name})")
        # Lemma 13 needs a subspace rich enough to hold a factor of every covariance: the diagonal (mean-field)
        # optimum is worse whenever the posterior covariance is not diagonal
        _, _, f_d = vo.solve(model, "diag")
        Sinv = vo.quadratic_form(model)[0]
        if d > 1 and np.abs(Sinv - np.diag(np.diag(Sinv))).max() > 1e-3:
            ctx.geq(f_d, f_t, rtol=1e-12, label="mean-field optimum >= full optimum")
            ctx.true(f_d > f_t + 1e-12 * abs(f_t), label="diag V loses (strictly) on a correlated posterior")
        # and the restricted optimum is a minimum: random feasible points are not better
        for structure in ("tril", "sym"):
            C = random_in_W(rng, d, structure, smin=0.05)
            ctx.geq(vo.objective(model, rng.standard_normal(d), C), f_t, rtol=1e-12, label="f(w) >= f*")

    ctx.forall(seeds(3, 5), check, fixed=[(1, 1, 40), (3, 4, 41)])

    # logistic regression: the triangular and the symmetric optima are the same distribution with the same value,
    # and the triangular optimum is stationary over all of M^d (no better full-matrix factor exists)
    rng = ctx.rng("logistic")
    for d, N in ((1, 3), (2, 6), (3, 7)):
        model, _ = logistic_instance(rng, N, d)
        m_t, L, f_t = vo.solve(model, "tril")
        m_s, S, f_s = vo.solve(model, "sym")
        # solver: ||grad|| <= 1e-9 so f is within ~1e-17 of f*, parameters within ~1e-9 / lambda_min(Hess f)
        ctx.close(f_t, f_s, rtol=1e-12, atol=1e-12, label="logistic: min over T^d = min over S^d")
        ctx.close(L @ L.T, S @ S.T, atol=1e-7, label="logistic: same optimal covariance")
        gm, gC = vo.grad_objective(model, m_t, L)
        ctx.bound(np.sqrt(gm @ gm + np.sum(gC * gC)), 0.0, atol=1e-7,
                label="logistic: triangular optimum stationary over R^d x M^d")
        ctx.count()


@statement("000.lemma14", title="KL(q_w || p(.|x)) = l(w) + h(w) + log p(x) - (d/2)(1 + log 2 pi) on W",
           source=f"{SRC}, Lemma 14", kind="exact", uses=())
def lemma14(ctx):
    from scipy.stats import multivariate_normal

    def check(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        model, _ = linear_instance(rng, N, d)
        X, y, sn, s = model["X"], model["y"], model["noise_scale"], model["prior_scale"]
        # the posterior and the evidence from the Gaussian marginal y ~ N(0, sn^2 I + s^2 X X^T) (scipy)
        P = X.T @ X / sn**2 + np.eye(d) / s**2
        Sig_p = np.linalg.inv(P)
        mu_p = Sig_p @ X.T @ y / sn**2
        log_px = multivariate_normal(np.zeros(N), sn**2 * np.eye(N) + s**2 * X @ X.T).logpdf(y)
        for structure in ("tril", "sym", "full"):
            m = rng.standard_normal(d)
            C = random_in_W(rng, d, structure, smin=0.1)
            S = C @ C.T
            diff = mu_p - m
            kl = 0.5 * (np.trace(P @ S) + diff @ P @ diff - d + np.linalg.slogdet(Sig_p)[1]
                        - np.linalg.slogdet(S)[1])
            rhs = vo.objective(model, m, C) + log_px - 0.5 * d * (1 + np.log(2 * np.pi))
            # closed forms on both sides; terms up to ~1e3, rounding 1e-11 relative
            ctx.close(kl, rhs, rtol=1e-10, atol=1e-10 * (1 + abs(log_px)), label=f"KL = f + const ({structure})")
        # at the optimum the KL is zero
        m_s, C_s, f_s = vo.solve(model, "tril")
        ctx.close(f_s + log_px - 0.5 * d * (1 + np.log(2 * np.pi)), 0.0, atol=1e-10 * (1 + abs(log_px)),
                  label="KL(q_w* || posterior) = 0")

    ctx.forall(seeds(3, 6), check, fixed=[(1, 1, 50), (3, 5, 51)])


@statement("000.lemma15", title="restriction to V: grad phi_V = proj_V(grad phi), norm not larger, smoothness "
           "inherited", source=f"{SRC}, Lemma 15 (1)-(3)", kind="exact", uses=("energy",))
def lemma15(ctx):
    def grad_V_by_fd(model, m, C, structure, h):
        """sum_k (d/dt) l(m, C + t E_k) E_k over an orthonormal basis {E_k} of V, by central differences."""
        G = np.zeros_like(C)
        for E in basis(C.shape[0], structure):
            G += (vo.free_energy(model, m, C + h * E)[0] - vo.free_energy(model, m, C - h * E)[0]) / (2 * h) * E
        return G

    def check(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        kind = ("linear", "logistic", "gaussian")[seed % 3]
        if kind == "logistic":
            model, target = logistic_instance(rng, N, d)
        else:
            model, target = _quadratic_instance(rng, kind, d, N)
        M = constants(model)[1]
        for structure in STRUCTS:
            m, C = rng.standard_normal(d), random_in_W(rng, d, structure, smin=0.2)
            l0, gm, gC = vo.free_energy(model, m, C)
            # 15.2: the gradient of the restriction, assembled from directional derivatives along V, is proj_V(gC).
            # quadratic l: central differences exact up to rounding (1e-16 |l| / h); logistic: quadrature 1e-13
            # relative plus h^2 |l'''| / 6 with h = 1e-4 -> 1e-6 absolute covers both
            G = grad_V_by_fd(model, m, C, structure, 1e-4)
            ctx.close(G, proj(gC, structure), atol=1e-6 * (1 + abs(l0)),
                      label=f"15.2 grad l_V = proj_V grad l ({kind}, {structure})")
            ctx.bound(np.linalg.norm(proj(gC, structure)), np.linalg.norm(gC), rtol=1e-15,
                    label="15.2 ||grad phi_V|| <= ||grad phi||")
            if kind != "logistic":
                # the implementation's estimator, averaged over an exact cubature, is the gradient of the restriction
                gm_i, gC_i = _cubature_energy(ctx, target, m, C, structure)
                scale = 1 + np.abs(gC).max() + np.abs(gm).max()
                ctx.close(np.asarray(gC_i), proj(gC, structure), atol=1e-11 * scale,
                          label=f"impl E g_energy = proj_V grad l ({structure})")
                ctx.close(np.asarray(gm_i), gm, atol=1e-11 * scale, label="impl E g_energy, m-part")
            # 15.3: restricted gradients are at least as Lipschitz as the full ones, which are M-Lipschitz (16.1)
            m2, C2 = rng.standard_normal(d), random_in_W(rng, d, structure, smin=0.2)
            _, gm2, gC2 = vo.free_energy(model, m2, C2)
            dV = np.sqrt(np.sum((gm - gm2) ** 2) + np.sum(proj(gC - gC2, structure) ** 2))
            dF = np.sqrt(np.sum((gm - gm2) ** 2) + np.sum((gC - gC2) ** 2))
            dw = np.sqrt(np.sum((m - m2) ** 2) + np.sum((C - C2) ** 2))
            ctx.bound(dV, dF, rtol=1e-14, label="15.3 ||grad phi_V(w) - grad phi_V(w')|| <= full difference")
            ctx.bound(dF, M * dw, rtol=1e-9, label="15.3 full difference <= M ||w - w'||")
            # 15.1: convexity survives restriction (midpoint inequality on V)
            lm = vo.free_energy(model, 0.5 * (m + m2), 0.5 * (C + C2))[0]
            l2 = vo.free_energy(model, m2, C2)[0]
            ctx.bound(lm, 0.5 * (l0 + l2), atol=1e-11 * (1 + abs(l0) + abs(l2)), label="15.1 midpoint convexity on V")

    ctx.forall(seeds(3, 5), check, fixed=[(2, 3, 60), (3, 4, 61), (2, 4, 62)],
               max_examples=max(6, ctx.profile.max_examples // 2))


# ================================================================================= §7.2: smoothness, convexity
def _logdet_abs(C) -> float:
    return float(np.linalg.slogdet(C)[1])


@statement("000.lemma16", title="l is M-smooth; grad h = (0, -proj_V C^{-T}); h is M-smooth on W_M",
           source=f"{SRC}, Lemma 16 (1)-(3)", kind="exact", uses=("grad_neg_entropy",))
def lemma16(ctx):
    impl = ctx.impl

    def smooth_l(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        kind = ("logistic", "linear")[seed % 2]
        model, target = (logistic_instance if kind == "logistic" else linear_instance)(rng, N, d)
        if seed % 5 == 0:
            same_function(ctx, model, target, rng, kind)
        M = constants(model)[1]
        for _ in range(3):
            m1, m2 = rng.standard_normal(d), rng.standard_normal(d)
            C1, C2 = rng.standard_normal((d, d)), rng.standard_normal((d, d))
            if rng.random() < 0.5:        # nearby pairs probe the local Lipschitz ratio
                m2, C2 = m1 + 1e-3 * (m2 - m1), C1 + 1e-3 * (C2 - C1)
            _, g1m, g1C = vo.free_energy(model, m1, C1)
            _, g2m, g2C = vo.free_energy(model, m2, C2)
            lhs = np.sqrt(np.sum((g1m - g2m) ** 2) + np.sum((g1C - g2C) ** 2))
            rhs = M * np.sqrt(np.sum((m1 - m2) ** 2) + np.sum((C1 - C2) ** 2))
            # oracle gradients accurate to ~1e-13 relative: 1e-9 relative + 1e-11 absolute on a difference
            ctx.bound(lhs, rhs, rtol=1e-9, atol=1e-11, label=f"16.1 ||grad l(w) - grad l(w')|| <= M ||w - w'|| ({kind})")

    def tight_linear(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        model, target = linear_instance(rng, N, d)
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
            G = np.asarray(impl.grad_neg_entropy(C, structure))
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
        M = float(10 ** rng.uniform(-1, 1.5))
        t = 1 / np.sqrt(M)
        for structure in STRUCTS:
            C1 = random_in_W(rng, d, structure, smin=t)
            C2 = random_in_W(rng, d, structure, smin=t) if rng.random() < 0.5 else \
                C1 + 1e-3 * proj(rng.standard_normal((d, d)), structure)
            if sigma_min(C2) < t:
                C2 = C2 * (t / sigma_min(C2)) * (1 + 1e-9)
            G1, G2 = np.asarray(impl.grad_neg_entropy(C1, structure)), np.asarray(impl.grad_neg_entropy(C2, structure))
            # inverses of matrices with sigma_min >= t carry rounding ~1e-15 |G|; C2 may equal C1 up to rounding
            ctx.bound(np.linalg.norm(G1 - G2), M * np.linalg.norm(C1 - C2), rtol=1e-10,
                    atol=1e-14 * (np.abs(G1).max() + np.abs(G2).max()),
                    label=f"16.3 ||grad h(C) - grad h(C')|| <= M ||C - C'|| on W_M ({structure})")

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
            r = np.linalg.norm(np.asarray(impl.grad_neg_entropy(C1, structure)) -
                               np.asarray(impl.grad_neg_entropy(C2, structure))) / np.linalg.norm(C1 - C2)
            ctx.close(r, M / (1 + 1e-6), rtol=1e-8, label="16.3 constant M attained at the boundary of W_M")
            # and the hypothesis C in W_M is needed: at C = I / (2 sqrt(M)) the local ratio is 4 M
            C3 = 0.5 * C1
            G3 = np.asarray(impl.grad_neg_entropy(C3, structure))
            G4 = np.asarray(impl.grad_neg_entropy(C3 * (1 + 1e-6), structure))
            r3 = np.linalg.norm(G3 - G4) / np.linalg.norm(1e-6 * C3)
            ctx.geq(r3, 3.9 * M, label="16.3 fails outside W_M (ratio 4M at sigma_min = 1/(2 sqrt M))")
            ctx.count()


@statement("000.lemma17", title="l convex (mu-strongly); h, W, W_M convex for S^d; h, W convex for T^d",
           source=f"{SRC}, Lemma 17 (1)-(3)", kind="exact", erratum="E000-6",
           uses=("grad_neg_entropy",))
def lemma17(ctx):
    impl = ctx.impl

    def convex_l(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        kind = ("logistic", "linear")[seed % 2]
        model, target = (logistic_instance if kind == "logistic" else linear_instance)(rng, N, d)
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
            ctx.bound(lm, 0.5 * (l1 + l2) - mu / 8 * dist2, atol=1e-11 * (1 + abs(l1) + abs(l2)),
                    label=f"17.1 l mu-strongly convex, midpoint ({kind})")

    def sym_part(inst):
        d, _, seed = inst
        rng = np.random.default_rng(seed)
        M = float(10 ** rng.uniform(-1, 1.5))
        t = 1 / np.sqrt(M)
        C1, C2 = random_in_W(rng, d, "sym", smin=t), random_in_W(rng, d, "sym", smin=t)
        a = float(rng.uniform())
        Cm = (1 - a) * C1 + a * C2
        l1, l2, lm = (np.linalg.eigvalsh(X)[0] for X in (C1, C2, Cm))
        # lambda_min is concave on S^d (the proof of 17.2); eigvalsh accurate to 1e-14 relative
        ctx.geq(lm, (1 - a) * l1 + a * l2, atol=1e-12 * (1 + np.abs(Cm).max()), label="17.2 lambda_min concave")
        ctx.geq(lm, t, atol=1e-12 * (1 + np.abs(Cm).max()), label="17.2 W_M convex (sym)")
        ctx.close(sigma_min(C1), l1, rtol=1e-12, label="17.2 sigma_min = lambda_min on W (sym)")
        # h = -log det convex on S^d_{++}: midpoint and monotone gradient (through the implementation)
        h1, h2, hm = (-np.linalg.slogdet(X)[1] for X in (C1, C2, 0.5 * (C1 + C2)))
        ctx.bound(hm, 0.5 * (h1 + h2), atol=1e-12 * (1 + abs(h1) + abs(h2)), label="17.2 h convex (sym), midpoint")
        G1, G2 = np.asarray(impl.grad_neg_entropy(C1, "sym")), np.asarray(impl.grad_neg_entropy(C2, "sym"))
        ctx.geq(inner(G1 - G2, C1 - C2), 0.0, atol=1e-12 * (1 + np.abs(G1).max() + np.abs(G2).max()) *
                (1 + np.abs(C1 - C2).max()), label="17.2 grad h monotone (sym)")

    def tril_part(inst):
        d, _, seed = inst
        rng = np.random.default_rng(seed)
        C1, C2 = random_in_W(rng, d, "tril", smin=0.05), random_in_W(rng, d, "tril", smin=0.05)
        a = float(rng.uniform())
        Cm = (1 - a) * C1 + a * C2
        ctx.true(bool(np.all(np.diag(Cm) > 0)), label="17.3 W = positive-diagonal T^d is convex")
        # h(C) = -sum log C_ii: the log-determinant of a triangular matrix is the sum over its diagonal
        for X in (C1, C2, Cm):
            ctx.close(-np.linalg.slogdet(X)[1], -np.sum(np.log(np.diag(X))), rtol=1e-12, atol=1e-12,
                      label="17.3 -log det C = -sum log C_ii on T^d")
            ctx.close(np.sort(np.linalg.eigvals(X).real), np.sort(np.diag(X)), rtol=1e-9, atol=1e-12,
                      label="17.3 eigenvalues of triangular C = its diagonal")
        h1, h2, hm = (-np.sum(np.log(np.diag(X))) for X in (C1, C2, 0.5 * (C1 + C2)))
        ctx.bound(hm, 0.5 * (h1 + h2), atol=1e-13 * (1 + abs(h1) + abs(h2)), label="17.3 h convex (tril), midpoint")
        G1, G2 = np.asarray(impl.grad_neg_entropy(C1, "tril")), np.asarray(impl.grad_neg_entropy(C2, "tril"))
        ctx.geq(inner(G1 - G2, C1 - C2), 0.0, atol=1e-12 * (1 + np.abs(G1).max() + np.abs(G2).max()),
                label="17.3 grad h monotone (tril)")

    half = max(6, ctx.profile.max_examples // 2)
    ctx.forall(seeds(3, 6), convex_l, fixed=[(2, 4, 80), (3, 2, 81)], max_examples=half)
    ctx.forall(seeds(4), sym_part, fixed=[(1, 1, 82), (3, 1, 83)])
    ctx.forall(seeds(4), tril_part, fixed=[(1, 1, 84), (3, 1, 85)])


@erratum("E000-6", where="Lemma 17.3 and its proof (W for V = T^d), §7.1 definition of W",
         printed="W = {C in T^d : C > 0} equals the triangular matrices with positive diagonal 'by Sylvester's "
                 "criterion'",
         corrected="Sylvester's criterion applies to symmetric matrices only.  With C > 0 read as x^T C x > 0 for all "
                   "x != 0, the positive-diagonal set is strictly larger; Lemma 17.3 and everything after it (h, the "
                   "prox of Lemma 31) hold for W := {C in T^d : C_ii > 0} (all eigenvalues positive), which is "
                   "what refvi uses.",
         instance="d = 2, C = [[1, 0], [3, 1]]: positive diagonal, but x = (1, -1) gives x^T C x = -1 < 0")
def e000_6(ctx):
    C = np.array([[1.0, 0.0], [3.0, 1.0]])
    x = np.array([1.0, -1.0])
    ctx.true(bool(np.all(np.diag(C) > 0)), label="C has a positive diagonal (in refvi's W)")
    ctx.bound(float(x @ C @ x), -1.0, label="x^T C x = -1 < 0: C is not positive definite as a quadratic form")
    ctx.bound(float(np.linalg.eigvalsh(0.5 * (C + C.T))[0]), -0.49, label="lambda_min of the symmetric part = -1/2 < 0")
    # the leading principal minors (what 'Sylvester' tests) are all positive nonetheless
    ctx.true(C[0, 0] > 0 and np.linalg.det(C) > 0, label="leading principal minors 1, 1 > 0")
    ctx.count()


@statement("000.lemma18", title="every minimizer of f lies in W_M: sigma_min(C*) >= 1/sqrt(M)",
           source=f"{SRC}, Lemma 18 (with Domke 2020 Thm 7)", kind="exact", uses=("project_wm",))
def lemma18(ctx):
    impl = ctx.impl

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
            ctx.close(impl.project_wm(Cs, M, "sym"), Cs, atol=1e-12 * (1 + np.abs(Cs).max()),
                      label=f"{label}: proj_W_M(w*) = w*")

    def check(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        kind = ("linear", "gaussian")[seed % 2]
        model, target = _quadratic_instance(rng, kind, d, N)
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


# ======================================================================================= §7.3: model constants
def _eig_range(H) -> tuple[float, float]:
    lam = np.linalg.eigvalsh(0.5 * (H + H.T))
    return float(lam[0]), float(lam[-1])


def _test_points(rng, dim, n=4):
    """z = 0 (where every logistic curvature is 1/4), moderate and far points."""
    return [np.zeros(dim)] + [rng.standard_normal(dim) * r for r in (0.5, 2.0, 8.0)][: n - 1]


def _hessian_within(ctx, model, target, rng, label, n_points=4):
    """Oracle Hessians (finite differences of the oracle gradient) at several points lie in [mu, M], the oracle's
    constants (:func:`constants`).  Returns the extreme eigenvalues seen."""
    mu, M = constants(model)
    lo_seen, hi_seen = np.inf, -np.inf
    for z in _test_points(rng, target.dim, n_points):
        H = hb.hessian_fd(model, z)
        lo, hi = _eig_range(H)
        lo_seen, hi_seen = min(lo_seen, lo), max(hi_seen, hi)
        # finite-difference Hessian accurate to ~1e-9 absolute for these O(1)..O(10) models (hb.hessian_fd doc)
        tol = 1e-7 * (1 + M)
        ctx.bound(hi, M, atol=tol, label=f"{label}: lambda_max(-Hess log p) <= M")
        ctx.geq(lo, mu, atol=tol, label=f"{label}: lambda_min(-Hess log p) >= mu")
        ctx.bound(np.linalg.norm(H, 2), M, atol=tol, label=f"{label}: ||Hess log p||_2 <= M (Def. 19)")
    return lo_seen, hi_seen


def _cos_glm(r: float, c: float):
    """phi(a, b) = r a^2 / 2 + c cos(a - b): phi'' = r - c cos(a - b) in [r - |c|, r + |c|] (non-convex if |c| > r)."""
    def phi(a, b):
        return 0.5 * r * a * a + c * np.cos(a - b), r * a - c * np.sin(a - b), r - c * np.cos(a - b)
    return phi


@statement("000.thm21", title="generic GLM: eigenvalues of -Hess log p lie in [lambda_min(S^-1 + theta_min AA^T), "
           "lambda_max(S^-1 + theta_max AA^T)]", source=f"{SRC}, Thm 21", kind="exact", erratum="E000-1",
           uses=("smoothness", "strong_convexity"))
def thm21(ctx):
    def generic(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((N, d))
        y = rng.standard_normal(N)
        B = rng.standard_normal((d, d))
        Si = B @ B.T + 0.2 * np.eye(d)
        r, c = float(rng.uniform(0, 1)), float(rng.uniform(-2, 2))
        phi = _cos_glm(r, c)
        model = {"kind": "glm", "X": X, "y": y, "Sigma_inv": Si, "phi": phi}
        mu, beta = hb.glm_curvature_interval(X, Si, r - abs(c), r + abs(c))
        M = max(abs(mu), abs(beta))
        for _ in range(4):
            z = rng.standard_normal(d) * 3
            H = hb.hessian_fd(model, z)
            # the proof's identity -Hess log p = S^-1 + sum phi'' a a^T (FD error ~1e-9)
            ctx.close(H, hb.glm_hessian(X, y, Si, phi, z), atol=1e-7 * (1 + M), label="Hessian identity of the proof")
            lo, hi = _eig_range(H)
            ctx.geq(lo, mu, atol=1e-7 * (1 + M), label="lambda_min >= mu")
            ctx.bound(hi, beta, atol=1e-7 * (1 + M), label="lambda_max <= beta (theta_max)")
            ctx.bound(np.linalg.norm(H, 2), M, atol=1e-7 * (1 + M), label="Thm 21.1: ||Hess|| <= max(|mu|, |beta|)")

    def refvi_models(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        for make, name in ((linear_instance, "linear"), (logistic_instance, "logistic")):
            model, target = make(rng, N, d)
            same_function(ctx, model, target, rng, name)
            _hessian_within(ctx, model, target, rng, name)
            impl_constants_match(ctx, model, target, name)      # both tight: linear (Cor 22), logistic (Cor 23)

    ctx.forall(seeds(3, 6), generic, fixed=[(1, 1, 100), (2, 3, 101)])
    ctx.forall(seeds(3, 6), refvi_models, fixed=[(2, 4, 102)], max_examples=max(6, ctx.profile.max_examples // 2))


@erratum("E000-1", where="Thm 21, definition of beta",
         printed="beta = lambda_max(Sigma^-1 + theta_min A A^T), M = max(|mu|, |beta|)",
         corrected="beta = lambda_max(Sigma^-1 + theta_max A A^T) (what the proof derives)",
         instance="logistic regression, d = 1, one data point a = 1, x = +1, Sigma = 1: theta_min = 0 gives printed "
                  "M = 1, but -d^2/dz^2 log p(0) = 1 + 1/4 = 5/4")
def e000_1(ctx):
    model = {"kind": "logistic", "X": np.array([[1.0]]), "y": np.array([1.0]), "prior_scale": 1.0}
    theta_min = 0.0                                  # inf of sigma(t) sigma(-t) over t
    mu_p = 1.0 + theta_min * 1.0
    beta_p = 1.0 + theta_min * 1.0
    M_printed = max(abs(mu_p), abs(beta_p))
    H = hb.hessian_sympy(model, np.zeros(1))[0, 0]     # exact (SymPy): 1 + 1/4
    ctx.close(H, 1.25, rtol=1e-14, label="-Hess log p at z = 0 is 5/4 (SymPy)")
    ctx.geq(H, M_printed + 0.2, label="true curvature exceeds the printed M = 1")
    # so -log p is not M_printed-smooth: the gradient's Lipschitz ratio near 0 exceeds 1
    g = lambda t: hb.grad_neg_log_joint(model, np.array([t]))[0]  # noqa: E731
    ctx.geq((g(1e-3) - g(-1e-3)) / 2e-3, M_printed + 0.2, label="gradient Lipschitz ratio at 0 > printed M")
    ctx.count()


@statement("000.cor22", title="linear regression: mu, M = lambda_min, lambda_max(Sigma^-1 + A A^T / sigma^2)",
           source=f"{SRC}, Cor 22 (and Table 2)", kind="exact", erratum="E000-2",
           uses=("smoothness", "strong_convexity"))
def cor22(ctx):
    impl = ctx.impl

    def check(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        model, target = linear_instance(rng, N, d)
        same_function(ctx, model, target, rng, "linear")
        X, sn, s = model["X"], model["noise_scale"], model["prior_scale"]
        lo_c, hi_c = _eig_range(np.eye(d) / s**2 + X.T @ X / sn**2)       # corrected constants, computed here
        lo, hi = _hessian_within(ctx, model, target, rng, "linear")
        # the Hessian is constant, so both bounds are attained: they equal the extreme eigenvalues
        ctx.close(impl.smoothness(target), hi_c, rtol=1e-12, label="impl M = lambda_max(S^-1 + AA^T/sigma^2)")
        ctx.close(impl.strong_convexity(target), lo_c, rtol=1e-10, atol=1e-14,
                  label="impl mu = lambda_min(S^-1 + AA^T/sigma^2)")
        ctx.close(hi, hi_c, rtol=1e-8, label="M attained (FD Hessian)")
        ctx.close(lo, lo_c, rtol=1e-7, atol=1e-8, label="mu attained (FD Hessian)")
        # Table 2 (Sigma = I): 1 + sigma_max(A)^2 / sigma^2, with A = X^T (columns a_n)
        sv = np.linalg.svd(X, compute_uv=False)
        ctx.close(hi_c, 1 / s**2 + sv[0] ** 2 / sn**2, rtol=1e-12, label="Table 2 form of M (prior scale s)")

    ctx.forall(seeds(3, 6), check, fixed=[(1, 1, 110), (3, 6, 111)])
    # a tiny instance with SymPy's exact Hessian
    rng = ctx.rng("sympy")
    model, target = linear_instance(rng, 3, 2)
    H = hb.hessian_sympy(model, rng.standard_normal(2))
    lo, hi = _eig_range(H)
    ctx.close(hi, impl.smoothness(target), rtol=1e-12, label="M vs SymPy Hessian")
    ctx.close(lo, impl.strong_convexity(target), rtol=1e-12, label="mu vs SymPy Hessian")
    ctx.count()
    # real data: diabetes (442 x 11, standardized, intercept), noise and prior scales 1
    model, target = real_data_instance("diabetes")
    same_function(ctx, model, target, ctx.rng("diabetes"), "diabetes")
    lo, hi = _hessian_within(ctx, model, target, ctx.rng("diabetes-points"), "diabetes")
    ctx.close(hi, impl.smoothness(target), rtol=1e-8, label="diabetes: M attained")
    ctx.close(lo, impl.strong_convexity(target), rtol=1e-6, label="diabetes: mu attained")
    ctx.count()


@erratum("E000-2", where="Cor 22 statement",
         printed="mu = lambda_min(Sigma^-1 + A A^T / 4), M = lambda_max(Sigma^-1 + A A^T / 4)",
         corrected="mu = lambda_min(Sigma^-1 + A A^T / sigma^2), M = lambda_max(Sigma^-1 + A A^T / sigma^2) (the "
                   "proof and Table 2)",
         instance="d = 1, one data point a = 1, Sigma = 1: sigma = 1 gives true curvature 2 > printed M = 5/4; "
                  "sigma = 4 gives true curvature 17/16 < printed mu = 5/4")
def e000_2(ctx):
    for sn, what in ((1.0, "M"), (4.0, "mu")):
        model = {"kind": "linear", "X": np.array([[1.0]]), "y": np.array([0.0]), "noise_scale": sn,
                 "prior_scale": 1.0}
        printed = 1.0 + 0.25
        H = hb.hessian_sympy(model, np.array([0.3]))[0, 0]
        ctx.close(H, 1.0 + 1.0 / sn**2, rtol=1e-14, label=f"sigma = {sn}: -Hess log p = 1 + 1/sigma^2 (SymPy)")
        if what == "M":
            ctx.geq(H, printed + 0.5, label="printed M = 5/4 is below the true curvature 2")
        else:
            ctx.bound(H, printed - 0.1, label="printed mu = 5/4 is above the true curvature 17/16")
        ctx.count()


@statement("000.cor23", title="logistic regression: mu = lambda_min(Sigma^-1), M = lambda_max(Sigma^-1 + AA^T/4)",
           source=f"{SRC}, Cor 23 (and Table 2)", kind="exact", uses=("smoothness", "strong_convexity"))
def cor23(ctx):
    import sympy as sp

    impl = ctx.impl
    # the scalar fact of the proof: phi''(a) = sigma(a) sigma(-a) = e^a/(1+e^a)^2 lies in (0, 1/4], max at a = 0
    a = sp.Symbol("a", real=True)
    d2 = sp.diff(sp.log(1 + sp.exp(-a)), a, 2)
    ctx.true(sp.simplify(d2 - sp.exp(a) / (1 + sp.exp(a)) ** 2) == 0, label="phi'' = e^a / (1 + e^a)^2")
    ctx.true(sp.simplify(d2.subs(a, 0) - sp.Rational(1, 4)) == 0, label="phi''(0) = 1/4")
    ctx.true(sp.solve(sp.diff(sp.exp(a) / (1 + sp.exp(a)) ** 2, a), a) == [0], label="unique critical point a = 0")
    ctx.true(sp.limit(d2, a, sp.oo) == 0 and sp.limit(d2, a, -sp.oo) == 0, label="phi'' -> 0 at +-infinity")
    ctx.count()

    def check(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        model, target = logistic_instance(rng, N, d)
        same_function(ctx, model, target, rng, "logistic")
        X, s = model["X"], model["prior_scale"]
        hi_c = _eig_range(np.eye(d) / s**2 + X.T @ X / 4)[1]
        ctx.close(impl.smoothness(target), hi_c, rtol=1e-12, label="impl M = lambda_max(S^-1 + AA^T/4)")
        ctx.close(impl.strong_convexity(target), 1 / s**2, rtol=1e-12, label="impl mu = 1/s^2")
        _hessian_within(ctx, model, target, rng, "logistic")
        # M is attained at z = 0, where every phi'' = 1/4
        ctx.close(_eig_range(hb.hessian_fd(model, np.zeros(d)))[1], impl.smoothness(target), rtol=1e-8,
                  label="M attained at z = 0")

    ctx.forall(seeds(3, 6), check, fixed=[(1, 1, 120), (3, 6, 121)])
    # mu is approached far from the data: X = I (d = 2), z = (t, t): -Hess = I/s^2 + diag(sigma'(t))
    model = {"kind": "logistic", "X": np.eye(2), "y": np.array([1.0, -1.0]), "prior_scale": 1.0}
    target = specs.from_model(model)
    for t in (10.0, 30.0):
        lo = _eig_range(hb.hessian_sympy(model, np.array([t, t])))[0]
        # lambda_min = 1/s^2 + sigma'(t) with 0 < sigma'(t) < e^{-t}
        ctx.geq(lo, impl.strong_convexity(target), rtol=1e-14, label="mu is a lower bound far out")
        ctx.bound(lo - impl.strong_convexity(target), np.exp(-t), label=f"mu approached at z = ({t}, {t})")
        ctx.count()
    # SymPy-exact Hessian on a tiny random instance
    rng = ctx.rng("sympy")
    model, target = logistic_instance(rng, 3, 2)
    for z in (np.zeros(2), rng.standard_normal(2)):
        lo, hi = _eig_range(hb.hessian_sympy(model, z))
        ctx.bound(hi, impl.smoothness(target), rtol=1e-13, label="SymPy Hessian <= M")
        ctx.geq(lo, impl.strong_convexity(target), rtol=1e-13, label="SymPy Hessian >= mu")
        ctx.count()
    # real data: wine (178 x 14) and breast cancer (569 x 31), standardized with intercept, prior scale 1
    for name in ("wine", "breast_cancer"):
        model, target = real_data_instance(name)
        rng = ctx.rng(name)
        same_function(ctx, model, target, rng, name)
        _hessian_within(ctx, model, target, rng, name)
        ctx.close(_eig_range(hb.hessian_fd(model, np.zeros(target.dim)))[1], impl.smoothness(target), rtol=1e-8,
                  label=f"{name}: M attained at z = 0")
        ctx.count()


def _blocks(H, d, G):
    """The (G+1) x (G+1) grid of d x d blocks of a Hessian over (theta, z_0, ..., z_{G-1})."""
    return [[H[i * d:(i + 1) * d, j * d:(j + 1) * d] for j in range(G + 1)] for i in range(G + 1)]


@statement("000.thm24", title="hierarchical model smooth iff the theta-theta, theta-z_i, z_i-z_i Hessian blocks are "
           "uniformly bounded", source=f"{SRC}, Thm 24 (proof steps 2-7)", kind="exact", uses=("energy", "smoothness"))
def thm24(ctx):
    impl = ctx.impl

    def check(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        G = 1 + seed % 3
        d = min(d, 2)
        model, target = hierarchical_instance(rng, N, d, G)
        same_function(ctx, model, target, rng, "hierarchical")
        M = constants(model)[1]          # the oracle's explicit M = lambda_max(P + blockdiag(0, X_g^T X_g / 4))
        for z in _test_points(rng, target.dim):
            H = hb.hessian_fd(model, z)
            B = _blocks(H, d, G)
            norms = np.array([[np.linalg.norm(Bij, 2) for Bij in row] for row in B])
            full = np.linalg.norm(H, 2)
            tol = 1e-7 * (1 + M)
            # (1 <=> 2) smooth iff ||H||_2 bounded; here by the oracle's explicit M
            ctx.bound(full, M, atol=tol, label="||Hess log p||_2 <= M")
            # (2 => 4) every block is a submatrix: ||H_ij||_2 <= ||H||_2
            ctx.bound(float(norms.max()), full, rtol=1e-12, atol=1e-12, label="block norms <= full norm")
            # (4 => 2) ||H||_2 <= (number of block rows) * max block norm
            ctx.bound(full, (G + 1) * float(norms.max()), rtol=1e-12, label="full norm <= (G+1) max block norm")
            # (5-7) z_i-z_j blocks vanish for i != j: z_i interacts only with theta and its own data
            off = [norms[i, j] for i in range(1, G + 1) for j in range(1, G + 1) if i != j]
            ctx.bound(max(off, default=0.0), 0.0, atol=1e-8, label="z_i-z_j blocks are zero (i != j)")
        # the implementation's M: the bound is attained at z = 0 (every logistic curvature 1/4), so it must equal it
        ctx.close(impl.smoothness(target), _eig_range(hb.hessian_fd(model, np.zeros(target.dim)))[1], rtol=1e-8,
                  label="impl M == lambda_max(-Hess log p(0)) (attained)")
        # the implementation's energy estimator on this model, sample by sample (Eq. 6): mean over the rows u of
        # (g, tril(g u^T)), g = grad -log p(C u + m) from the oracle (S = 1 and S = 5; every group's block is used)
        D = target.dim
        m = rng.standard_normal(D)
        C = np.tril(0.3 * rng.standard_normal((D, D)), -1) + np.diag(rng.uniform(0.5, 1.5, D))
        for S in (1, 5):
            U = rng.standard_normal((S, D))
            G_ = np.array([hb.grad_neg_log_joint(model, C @ u + m) for u in U])
            gm, gC = impl.energy(target, m, C, U, "tril")
            scale = 1.0 + float(np.max(np.abs(G_))) * (1.0 + float(np.max(np.abs(U))))
            ctx.close(np.asarray(gm), G_.mean(0), atol=1e-12 * scale, label=f"hierarchical energy, m part (S={S})")
            ctx.close(np.asarray(gC), np.tril(G_.T @ U / S), atol=1e-12 * scale,
                      label=f"hierarchical energy, C part (S={S})")

    ctx.forall(seeds(2, 6), check, fixed=[(1, 2, 130), (2, 5, 131)], max_examples=max(6, ctx.profile.max_examples // 2))


@statement("000.cor25", title="hierarchical logistic regression is convex and smooth; theta-theta block "
           "-(Sigma^-1 + n Delta^-1)", source=f"{SRC}, Cor 25", kind="exact", erratum="E000-5",
           uses=("smoothness", "strong_convexity"))
def cor25(ctx):
    impl = ctx.impl

    def check(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        G = 1 + seed % 3
        d = min(d, 2)
        model, target = hierarchical_instance(rng, N, d, G)
        same_function(ctx, model, target, rng, "hierarchical")
        Si, Di = np.linalg.inv(model["Sigma"]), np.linalg.inv(model["Delta"])
        lo, hi = _hessian_within(ctx, model, target, rng, "hierarchical")
        # Cor 25 claims convexity only: any mu in [0, lambda_min(P)] is valid, M is attained at z = 0 (below)
        impl_constants_match(ctx, model, target, "hierarchical", mu_tight=False)
        for z in _test_points(rng, target.dim, 2):
            B = _blocks(-hb.hessian_fd(model, z), d, G)        # blocks of Hess log p
            ctx.close(B[0][0], -(Si + G * Di), atol=1e-7, label="Hess_theta,theta log p = -(Sigma^-1 + n Delta^-1)")
            for g in range(G):
                ctx.close(B[0][g + 1], Di, atol=1e-7, label="Hess_theta,z_i log p = Delta^-1")
        # M (the implementation's constant) is attained at z = 0, where every logistic curvature equals 1/4
        ctx.close(_eig_range(hb.hessian_fd(model, np.zeros(target.dim)))[1], impl.smoothness(target), rtol=1e-8,
                  label="M attained at z = 0")

    ctx.forall(seeds(2, 6), check, fixed=[(1, 2, 140), (2, 5, 141)], max_examples=max(6, ctx.profile.max_examples // 2))
    # SymPy-exact Hessian on a tiny instance (d = 1, 2 groups, 3 points)
    rng = ctx.rng("sympy")
    model, target = hierarchical_instance(rng, 3, 1, 2)
    for z in (np.zeros(3), rng.standard_normal(3)):
        H = hb.hessian_sympy(model, z)
        lo, hi = _eig_range(H)
        ctx.bound(hi, impl.smoothness(target), rtol=1e-13, label="SymPy Hessian <= M")
        ctx.geq(lo, impl.strong_convexity(target), rtol=1e-13, label="SymPy Hessian >= mu")
        Si, Di = 1 / model["Sigma"][0, 0], 1 / model["Delta"][0, 0]
        ctx.close(-H[0, 0], -(Si + 2 * Di), rtol=1e-13, label="theta-theta entry (SymPy) = -(1/S + 2/D)")
        ctx.count()


@erratum("E000-5", where="Cor 25 proof, first bullet",
         printed="Hess_theta,theta log p(theta, z, x) = -Sigma^-1 Delta^-1",
         corrected="Hess_theta,theta log p = -(Sigma^-1 + n Delta^-1) for n groups (each z_i ~ N(theta, Delta) "
                   "contributes -Delta^-1); still constant, so the corollary's conclusion stands",
         instance="d = 1, one group, one data point x = 1, Sigma = Delta = 1: printed -1, true -2")
def e000_5(ctx):
    model = {"kind": "hierarchical_logistic", "X": np.array([[1.0]]), "y": np.array([1.0]),
             "groups": np.array([0]), "n_groups": 1, "Sigma": np.eye(1), "Delta": np.eye(1)}
    for z in (np.zeros(2), np.array([0.7, -1.3])):
        H = -hb.hessian_sympy(model, z)                      # Hess log p, exact
        printed = -1.0 * 1.0
        ctx.close(H[0, 0], -2.0, rtol=1e-14, label="true theta-theta entry = -2 (SymPy)")
        ctx.geq(abs(H[0, 0] - printed), 0.5, label="printed -Sigma^-1 Delta^-1 = -1 differs")
        ctx.count()
    # with n = 2 groups the gap grows: -(1 + 2) = -3 against the printed -1
    model2 = dict(model, groups=np.array([0]), n_groups=2)
    H2 = -hb.hessian_sympy(model2, np.zeros(3))
    ctx.close(H2[0, 0], -3.0, rtol=1e-14, label="two groups: theta-theta entry = -3")
    ctx.count()

"""Seed 002 (Domke, "Provable smoothness guarantees for BBVI"): Thms 1, 2, 4, Lemmas 11-14, Examples 8-10.

The gradients under test come from ``ctx.impl.energy`` with U = the atoms of a discrete base (the mean over all atoms,
replicated for rational probabilities, is the exact expectation) or U = the nodes of a quadrature rule for a
continuous base (weights applied here, nodes with equal weights batched into one call).  The independent closed
forms come from :mod:`refvi.verification.oracles.charfun` (characteristic functions, O1 / O3) and
:mod:`refvi.verification.oracles.discrete` (exact sums), and SymPy for the symbolic identities.

Tolerances: discrete sums are exact up to rounding (~1e-15 relative); the quadrature rules reproduce the base's
characteristic function and its derivative to < 1e-14 for |k| <= 6 (tests/test_oracles_002.py), and instances keep
|k_j| = |(C^T b)_j| <= 6.  Inequalities are therefore asserted with rtol = 1e-9 and
implementation-vs-oracle agreement with rtol = 1e-10, atol = 1e-11.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from refvi.verification.oracles import charfun as cf
from refvi.verification.oracles import discrete as ds
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import statement
from refvi.verification.oracles.matrices import proj_V as _project

SOURCE = "Domke (seed 002)"
RTOL_INEQ = 1e-9        # exact / quadrature gradients: errors ~1e-13, far below this margin
ATOL_INEQ = 1e-11
RTOL_CLOSE = 1e-10      # implementation gradient vs closed-form oracle
ATOL_CLOSE = 1e-11
QUAD_DMAX = {"gaussian": 2, "uniform": 2, "laplace": 1, "exponential": 1}


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


def _pair(rng, d, structure, near):
    """Two parameter points w = (m, C), v = (m', C') in the domain; ``near`` puts v at relative distance ~0.05."""
    m, C = rng.uniform(-1.5, 1.5, d), _draw_C(rng, d, structure)
    if near:
        m2 = m + 0.05 * rng.uniform(-1, 1, d)
        C2 = C + 0.05 * _draw_C(rng, d, structure, -1.0, 1.0)
        if structure == "sym":
            C2 = 0.5 * (C2 + C2.T)
        ok = np.linalg.svd(C2, compute_uv=False)[-1] > 0.05 and (structure not in ("tril", "diag")
                                                                 or np.all(np.diag(C2) > 0))
        if structure == "sym":
            ok = ok and np.linalg.eigvalsh(C2)[0] > 0
        if ok:
            return (m, C), (m2, C2)
    return (m, C), (rng.uniform(-1.5, 1.5, d), _draw_C(rng, d, structure))


def _cos_params(rng, d, convex: bool | None = None, kmax: float = 6.0):
    """alpha, b, phi, beta, z0 of the cos + quadratic target; ``convex=True`` forces beta > |alpha| ||b||^2."""
    b = rng.uniform(-1.0, 1.0, d)
    b *= min(1.0, kmax / (1.5 * math.sqrt(d) * np.abs(b).sum() + 1e-300))   # keeps 1.5 sqrt(d) ||b||_1 <= kmax
    alpha = rng.uniform(-3.0, 3.0)
    curv = abs(alpha) * float(b @ b)
    if convex is True:
        beta = curv + rng.uniform(0.05, 2.0)
    elif convex is False:
        beta = rng.uniform(0.0, 0.9) * curv
    else:
        beta = rng.uniform(0.0, 2.0)
    return alpha, b, rng.uniform(-math.pi, math.pi), beta, rng.uniform(-1.0, 1.0, d)


def _norm_w(m, C):
    return math.sqrt(float(m @ m) + float(np.sum(C * C)))


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


def _discrete_U(base, d):
    """Rows whose plain mean is the exact expectation: Rademacher atoms, or two-point p = 1/4 atoms replicated."""
    if base == "rademacher":
        return ds.rademacher_atoms(d)[0]
    if base == "two_point_quarter":
        U, w = ds.two_point_atoms(d, 0.25)
        return ds.replicate_rational(U, w, 4 ** d)
    raise ValueError(base)


def _smooth_check(ctx, gw, gv, w, v, M, label):
    lhs = math.sqrt(float(np.sum((gw[0] - gv[0]) ** 2)) + float(np.sum((gw[1] - gv[1]) ** 2)))
    rhs = M * _norm_w(w[0] - v[0], w[1] - v[1])
    ctx.bound(lhs, rhs, rtol=RTOL_INEQ, atol=ATOL_INEQ, label=label)   # gradients exact to ~1e-13 (module docstring)
    return lhs / rhs


def _sc_check(ctx, gw, gv, w, v, c, label):
    lhs = float(np.sum((gw[0] - gv[0]) * (w[0] - v[0])) + np.sum((gw[1] - gv[1]) * (w[1] - v[1])))
    rhs = c * _norm_w(w[0] - v[0], w[1] - v[1]) ** 2
    ctx.geq(lhs, rhs, rtol=RTOL_INEQ, atol=ATOL_INEQ, label=label)


_INST = st.fixed_dictionaries({"seed": st.integers(0, 2 ** 32 - 1), "near": st.booleans(),
                               "structure": st.sampled_from(("full", "tril", "diag", "sym"))})


def _cos_grads(ctx, base, d, params, w, v, structure):
    """Implementation gradients at w and v for the cos target under ``base`` (discrete atoms or quadrature), each
    cross-checked against the closed-form oracle (characteristic function for product bases, exact sums)."""
    alpha, b, phi, beta, z0 = params
    target = specs.cosine(alpha, b, phi, beta, z0)
    out = []
    for m, C in (w, v):
        if base in ("rademacher", "two_point_quarter"):
            g = _impl_grad_atoms(ctx, target, m, C, _discrete_U(base, d), structure)
            if base == "rademacher":
                ref = cf.cos_quadratic("rademacher", alpha, b, phi, beta, z0, m, C)[1:]
            else:
                U, pw = ds.two_point_atoms(d, 0.25)
                ref = ds.cos_quadratic(U, pw, alpha, b, phi, beta, z0, m, C)[1:]
        else:
            x, wq = ds.quadrature_rule_1d(base)
            U, W = ds.tensor_rule(x, wq, d)
            g = _impl_grad_rule(ctx, target, m, C, U, W, structure)
            ref = cf.cos_quadratic(base, alpha, b, phi, beta, z0, m, C)[1:]
        ctx.close(g[0], ref[0], rtol=RTOL_CLOSE, atol=ATOL_CLOSE, label=f"{base}: impl grad_m l == oracle")
        ctx.close(g[1], _project(ref[1], structure), rtol=RTOL_CLOSE, atol=ATOL_CLOSE,
                  label=f"{base}: impl grad_C l == oracle")
        out.append(g)
    return out


IMPL_BASES = ("rademacher", "two_point_quarter", "gaussian", "uniform", "laplace", "exponential")
ORACLE_BASES = (("gaussian", {}), ("uniform", {}), ("laplace", {}), ("exponential", {}), ("rademacher", {}),
                ("student_t", {"nu": 3.0}), ("student_t", {"nu": 5.0, "elliptical": True}),
                ("student_t", {"nu": 2.5, "elliptical": True}))


def _dims(base, dmax_discrete=5):
    return QUAD_DMAX.get(base, dmax_discrete)


# =================================================================================================================
@statement("002.thm1", title="l is convex for any base; c-strongly convex for a standardized base",
           source=f"{SOURCE}, Thm 1 (§2.2, §4.1), Eq. (5)", kind="exact", uses=("energy",))
def thm1(ctx):
    n_ex = max(4, ctx.profile.max_examples // 2)

    # (1) convexity for ANY base: monotone gradient <grad l(w) - grad l(v), w - v> >= 0 for convex f (softplus
    #     ridge), under non-standardized discrete bases: shifted / scaled two-point atoms (exact sums).
    def convex_case(inst):
        rng = np.random.default_rng(inst["seed"])
        d = int(rng.integers(1, 5))
        A, c = rng.normal(size=(3, d)), rng.uniform(0.1, 2.0, 3)
        ridge = specs.from_callables(lambda z: -float(np.logaddexp(0.0, A @ z) @ c),
                                     lambda z: -((0.5 * (1 + np.tanh(0.5 * (A @ z)))) * c) @ A, d)
        U = ds.two_point_atoms(d, 0.5, shift=rng.uniform(-2, 2, d), scale=rng.uniform(0.3, 2.0))[0]
        w, v = _pair(rng, d, inst["structure"], inst["near"])
        gw = _impl_grad_atoms(ctx, ridge, *w, U, inst["structure"])
        gv = _impl_grad_atoms(ctx, ridge, *v, U, inst["structure"])
        ref = ds.softplus_ridge(U, np.full(U.shape[0], 1.0 / U.shape[0]), A, c, *w)
        ctx.close(gw[0], ref[1], rtol=RTOL_CLOSE, atol=ATOL_CLOSE, label="softplus ridge: impl grad_m == sums")
        _sc_check(ctx, gw, gv, w, v, 0.0, "convexity: <grad l(w) - grad l(v), w - v> >= 0 (non-standard base)")

    ctx.forall(_INST, convex_case, max_examples=n_ex)

    # (2) c-strong convexity for standardized bases, cos + quadratic with beta > |alpha| ||b||^2.
    for base in IMPL_BASES:
        def sc_case(inst, base=base):
            rng = np.random.default_rng(inst["seed"])
            d = int(rng.integers(1, _dims(base, 4) + 1))
            params = _cos_params(rng, d, convex=True)
            c = cf.cos_quadratic_constants(params[0], params[1], params[3])[1]
            w, v = _pair(rng, d, inst["structure"], inst["near"])
            gw, gv = _cos_grads(ctx, base, d, params, w, v, inst["structure"])
            _sc_check(ctx, gw, gv, w, v, c, f"{base}: c-strong convexity of l")

        ctx.forall(_INST, sc_case, max_examples=max(3, n_ex // 3))

    # (3) oracle-only, larger d and the Student-t bases.
    rng = ctx.rng("oracle")
    for base, kw in ORACLE_BASES:
        for _ in range(4):
            d = int(rng.integers(1, 5))
            alpha, b, phi, beta, z0 = _cos_params(rng, d, convex=True)
            c = cf.cos_quadratic_constants(alpha, b, beta)[1]
            w, v = _pair(rng, d, "full", bool(rng.integers(2)))
            gw = cf.cos_quadratic(base, alpha, b, phi, beta, z0, *w, **kw)[1:]
            gv = cf.cos_quadratic(base, alpha, b, phi, beta, z0, *v, **kw)[1:]
            _sc_check(ctx, gw, gv, w, v, c, f"{base}{kw}: c-strong convexity (closed form)")
            ctx.count()

    # (4) negative control: the shifted base N(mu0, I) is not standardized; for f = a/2 ||z||^2 the strong-convexity
    #     constant of l is a lambda_min(S_2) < a, reached along the bottom eigenvector of S_2.
    #     (full C: skipped, not failed, for an implementation without it)
    def shifted_control(_):
        a, mu0 = 1.7, np.array([0.8, -0.6])
        d = 2
        x, wq = ds.quadrature_rule_1d("gaussian")
        U, W = ds.tensor_rule(x, wq, d)
        U = U + mu0                                       # Gauss-Hermite is exact for the quadratic integrand
        target = specs.gaussian(np.zeros(d), a * np.eye(d))
        S2 = cf.second_moment_matrix(mu0, np.eye(d))
        lam, Q = np.linalg.eigh(S2)
        q = Q[:, 0]                                       # direction Delta W = e_1 q^T in W = [m C]
        dm, dC = np.zeros(d), np.zeros((d, d))
        dm[0], dC[0] = q[0], q[1:]
        m, C = np.array([0.3, -0.2]), np.array([[1.0, 0.2], [-0.1, 0.9]])
        g1 = _impl_grad_rule(ctx, target, m, C, U, W)
        g2 = _impl_grad_rule(ctx, target, m + dm, C + dC, U, W)
        inner = float(np.sum((g2[0] - g1[0]) * dm) + np.sum((g2[1] - g1[1]) * dC))
        ctx.close(inner, a * lam[0], rtol=1e-12, atol=1e-12, label="shifted base: curvature = a lambda_min(S_2)")
        ctx.bound(inner, a - 0.5, label="negative control: shifted base violates a-strong convexity (|mu0| = 1)")

    ctx.instance(shifted_control)


# =================================================================================================================
@statement("002.thm2", title="l is M-smooth for any standardized base (f M-smooth, not necessarily convex)",
           source=f"{SOURCE}, Thm 2 (§2.2, §4.3), Eqs. (14)-(15)", kind="exact", uses=("energy",))
def thm2(ctx):
    n_ex = max(3, ctx.profile.max_examples // 4)
    worst = {"ratio": 0.0}

    # (1) implementation gradients (exact atoms / quadrature), cos + quadratic including non-convex f.
    for base in IMPL_BASES:
        for convex in (False, None):
            def case(inst, base=base, convex=convex):
                rng = np.random.default_rng(inst["seed"])
                d = int(rng.integers(1, _dims(base) + 1))
                params = _cos_params(rng, d, convex=convex)
                M = cf.cos_quadratic_constants(params[0], params[1], params[3])[0]
                w, v = _pair(rng, d, inst["structure"], inst["near"])
                gw, gv = _cos_grads(ctx, base, d, params, w, v, inst["structure"])
                r = _smooth_check(ctx, gw, gv, w, v, M, f"{base}: ||grad l(w) - grad l(v)|| <= M ||w - v||")
                worst["ratio"] = max(worst["ratio"], r)

            ctx.forall(_INST, case, max_examples=n_ex)

    # (2) other M-smooth targets on discrete bases: log-sum-exp (M = 1/2) and softplus ridges (M <= lmax/4).
    def other_case(inst):
        rng = np.random.default_rng(inst["seed"])
        d = int(rng.integers(1, 6))
        U = _discrete_U("two_point_quarter" if inst["near"] else "rademacher", d)
        w, v = _pair(rng, d, inst["structure"], inst["near"])
        lse = specs.from_callables(lambda z: -float(np.logaddexp.reduce(z)),
                                   lambda z: -np.exp(z - np.logaddexp.reduce(z)), d, smoothness=0.5)
        gw, gv = (_impl_grad_atoms(ctx, lse, *p, U, inst["structure"]) for p in (w, v))
        _smooth_check(ctx, gw, gv, w, v, 0.5, "log-sum-exp (M = 1/2)")
        A, c = rng.normal(size=(3, d)), rng.uniform(0.1, 2.0, 3)
        Mr = float(np.linalg.eigvalsh(A.T @ (c[:, None] * A))[-1]) / 4.0
        ridge = specs.from_callables(lambda z: -float(np.logaddexp(0.0, A @ z) @ c),
                                     lambda z: -((0.5 * (1 + np.tanh(0.5 * (A @ z)))) * c) @ A, d, smoothness=Mr)
        gw, gv = (_impl_grad_atoms(ctx, ridge, *p, U, inst["structure"]) for p in (w, v))
        _smooth_check(ctx, gw, gv, w, v, Mr, "softplus ridge (M = lambda_max(A^T diag(c) A) / 4)")

    ctx.forall(_INST, other_case, max_examples=n_ex)

    # (3) closed forms only (d up to 4, Student-t product and elliptical bases).
    rng = ctx.rng("oracle")
    n_or = 6 * ctx.profile.mc_scale
    for base, kw in ORACLE_BASES:
        for _ in range(n_or):
            d = int(rng.integers(1, 5))
            alpha, b, phi, beta, z0 = _cos_params(rng, d, convex=bool(rng.integers(2)) or None)
            M = cf.cos_quadratic_constants(alpha, b, beta)[0]
            w, v = _pair(rng, d, "full", bool(rng.integers(2)))
            gw = cf.cos_quadratic(base, alpha, b, phi, beta, z0, *w, **kw)[1:]
            gv = cf.cos_quadratic(base, alpha, b, phi, beta, z0, *v, **kw)[1:]
            _smooth_check(ctx, gw, gv, w, v, M, f"{base}{kw}: M-smoothness (closed form)")
            ctx.count()

    # (4) tightness: f = a/2 ||z - z*||^2 gives grad l(w) - grad l(v) = a (w - v) exactly (Thm 4, Eq. 18).
    def tight(base):
        d, a = 3 if base != "gaussian" else 2, 2.3
        rng = ctx.rng(f"tight-{base}")
        target = specs.gaussian(rng.normal(size=d), a * np.eye(d))
        w, v = _pair(rng, d, "full", False)
        if base == "gaussian":
            x, wq = ds.quadrature_rule_1d("gaussian")
            U, W = ds.tensor_rule(x, wq, d)
            gw, gv = (_impl_grad_rule(ctx, target, *p, U, W) for p in (w, v))
        else:
            gw, gv = (_impl_grad_atoms(ctx, target, *p, _discrete_U(base, d)) for p in (w, v))
        ctx.close(np.concatenate([gw[0] - gv[0], (gw[1] - gv[1]).ravel()]),
                  a * np.concatenate([w[0] - v[0], (w[1] - v[1]).ravel()]), rtol=1e-12, atol=1e-12,
                  label=f"{base}: tightness, grad l(w) - grad l(v) = a (w - v)")

    for base in ("rademacher", "two_point_quarter", "gaussian"):      # full C: skipped if not declared
        ctx.instance(tight, base)

    # (5) negative controls (non-standardized bases lose the constant).
    def controls(_):
        a = 1.3
        mu0 = np.array([0.6, 0.8])                           # |mu0| = 1
        L_exact = cf.shifted_gaussian_constants(a, mu0)[0]  # a (3 + sqrt5) / 2
        ratio = _shifted_top_ratio(ctx, a, mu0)
        ctx.close(ratio, L_exact, rtol=1e-12, label="Example 8: ratio along top eigenvector = a lambda_max(S_2)")
        ctx.geq(ratio, a * 1.5, label="negative control: shifted Gaussian exceeds M = a")
        nu = 3.0
        r9 = _t_shape_ratio(ctx, a, nu)
        ctx.close(r9, a * nu / (nu - 2.0), rtol=1e-12, label="Example 9: shape-t ratio reaches a nu/(nu - 2)")
        ctx.geq(r9, 2.0 * a, label="negative control: shape-parameterized t exceeds M = a")

    ctx.instance(controls)


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
    num = math.sqrt(float(np.sum((g2[0] - g1[0]) ** 2) + np.sum((g2[1] - g1[1]) ** 2)))
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
    num = math.sqrt(float(np.sum((g2[0] - g1[0]) ** 2) + np.sum((g2[1] - g1[1]) ** 2)))
    return num / _norm_w(np.zeros(d), dC)


# =================================================================================================================
@statement("002.lemma11", title="<a, b>_s = E_s a(u)^T b(u) is an inner product (modulo s-a.e. equality)",
           source=f"{SOURCE}, Lemma 11 (§8)", kind="exact", uses=())
def lemma11(ctx):
    """On discrete bases the inner product is a finite weighted sum: check symmetry, bilinearity, Cauchy-Schwarz,
    PSD Gram matrices, and <a, a> = 0 exactly when a vanishes on the support."""
    def case(inst):
        rng = np.random.default_rng(inst["seed"])
        d, k = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        p = (0.5, 0.25, 0.1)[inst["seed"] % 3]
        U, w = ds.two_point_atoms(d, p, shift=rng.uniform(-1, 1, d) if inst["near"] else None)
        n = U.shape[0]
        F = rng.normal(size=(5, n, k))                 # five random vector fields, values at the atoms
        G = np.array([[ds.inner(F[i], F[j], w) for j in range(5)] for i in range(5)])
        ctx.close(G, G.T, rtol=1e-15, atol=1e-15, label="symmetry")
        ctx.geq(np.linalg.eigvalsh(G)[0], 0.0, atol=1e-12 * np.abs(G).max(), label="Gram matrix PSD")
        x, y = rng.normal(size=2)
        lhs = ds.inner(x * F[0] + y * F[1], F[2], w)
        ctx.close(lhs, x * G[0, 2] + y * G[1, 2], rtol=1e-12, atol=1e-13, label="bilinearity")
        ctx.bound(G[0, 1] ** 2, G[0, 0] * G[1, 1], rtol=1e-12, label="Cauchy-Schwarz")
        Z = np.zeros((n, k))
        ctx.close(ds.inner(Z, Z, w), 0.0, label="<0, 0> = 0")
        ctx.geq(ds.inner(F[3], F[3], w), 0.0, label="<a, a> >= 0")
        ctx.true(ds.inner(F[3], F[3], w) > 0, label="<a, a> > 0 for a non-zero on the support")

    ctx.forall(_INST, case)


@statement("002.lemma12", title="||grad l(w) - grad l(v)||^2 = sum_i <a_i, grad f o t_w - grad f o t_v>_s^2",
           source=f"{SOURCE}, Lemma 12 (§8)", kind="exact", uses=("energy",))
def lemma12(ctx):
    """grad l from the implementation (exact atoms) equals the coordinates <a_i, grad f o t_w>_s computed from the
    discrete inner product and the hand-derived grad f of the cos + quadratic target; the identity follows."""
    def grad_f(params, Z):
        alpha, b, phi, beta, z0 = params
        return (-alpha * np.sin(Z @ b + phi))[:, None] * b[None, :] + beta * (Z - z0)

    def case(inst):
        rng = np.random.default_rng(inst["seed"])
        d = int(rng.integers(1, 5))
        p = 0.5 if inst["near"] else 0.25
        U, pw = ds.two_point_atoms(d, p)
        Urep = U if p == 0.5 else ds.replicate_rational(U, pw, 4 ** d)
        params = _cos_params(rng, d)
        target = specs.cosine(*params)
        w, v = _pair(rng, d, "full", bool(rng.integers(2)))
        A = ds.basis_functions(U)                       # (atoms, d + d^2, d)
        coords, diffs = [], []
        for m, C in (w, v):
            g = _impl_grad_atoms(ctx, target, m, C, Urep)
            Gf = grad_f(params, U @ C.T + m)
            c = np.array([ds.inner(A[:, i, :], Gf, pw) for i in range(A.shape[1])])
            ctx.close(np.concatenate([g[0], g[1].ravel()]), c, rtol=1e-12, atol=1e-12,
                      label="d l / d w_i == <a_i, grad f o t_w>_s")
            coords.append(np.concatenate([g[0], g[1].ravel()]))
            diffs.append(Gf)
        lhs = float(np.sum((coords[0] - coords[1]) ** 2))
        D = diffs[0] - diffs[1]
        rhs = sum(ds.inner(A[:, i, :], D, pw) ** 2 for i in range(A.shape[1]))
        ctx.close(lhs, rhs, rtol=1e-11, atol=1e-13, label="Lemma 12 identity")

    ctx.forall(_INST, case)


def _sym_moments(d):
    import sympy as sp
    mu = sp.Matrix(d, 1, lambda i, _: sp.Symbol(f"mu{i}"))
    Sig = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"S{min(i, j)}{max(i, j)}"))
    return mu, Sig


@statement("002.lemma13", title="a_i(u) = d t_w(u)/d w_i are orthonormal in <.,.>_s iff s is standardized",
           source=f"{SOURCE}, Lemma 13 (§8)", kind="symbolic", uses=())
def lemma13(ctx):
    import sympy as sp

    # Symbolic: with E u = mu and E u u^T = Sigma + mu mu^T, the Gram matrix is I_d (x) S_2.
    for d in (1, 2, 3):
        mu, Sig = _sym_moments(d)
        E2 = Sig + mu * mu.T
        n = d + d * d
        G = sp.zeros(n, n)

        def Ea(i, j):  # E[a_i(u)^T a_j(u)] from the moment table
            def parts(k):
                if k < d:
                    return k, None            # a_{m_k} = e_k
                r = k - d
                return r // d, r % d          # a_{C_rc} = e_r u_c
            (ri, ci), (rj, cj) = parts(i), parts(j)
            if ri != rj:
                return sp.Integer(0)
            if ci is None and cj is None:
                return sp.Integer(1)
            if ci is None:
                return mu[cj]
            if cj is None:
                return mu[ci]
            return E2[ci, cj]

        for i in range(n):
            for j in range(n):
                G[i, j] = Ea(i, j)
        S2 = sp.Matrix(sp.BlockMatrix([[sp.Matrix([[1]]), mu.T], [mu, E2]]))
        # reorder: group by output index r: (m_r, C_r1..C_rd)
        order = [r if c == -1 else d + r * d + c for r in range(d) for c in range(-1, d)]
        Gp = G.extract(order, order)
        kron = sp.kronecker_product(sp.eye(d), S2)
        ctx.true(sp.simplify(Gp - kron) == sp.zeros(n, n), label=f"d={d}: Gram = I_d (x) S_2 (symbolic)")
        subs = {s: 0 for s in mu}
        subs.update({Sig[i, j]: (1 if i == j else 0) for i in range(d) for j in range(d)})
        ctx.true(G.subs(subs) == sp.eye(n), label=f"d={d}: standardized => Gram = I (symbolic)")
        # "only if": a non-zero mean or non-identity covariance leaves a non-zero off-diagonal / diagonal defect.
        ctx.true(G.subs({**subs, mu[0]: sp.Rational(1, 3)}) != sp.eye(n), label=f"d={d}: mu != 0 breaks it")
        ctx.count()

    # Exact numeric: discrete bases (exact sums), standardized and not.
    rng = ctx.rng("num")
    for p in (0.5, 0.25, 0.1):
        for d in (1, 2, 3):
            shift = rng.uniform(-1, 1, d)
            for sh, sc in ((None, 1.0), (shift, 1.0), (None, 1.7)):
                U, w = ds.two_point_atoms(d, p, shift=sh, scale=sc)
                mu, Sig = ds.moments(U, w)
                G = ds.gram(U, w)
                order = [r if c == -1 else d + r * d + c for r in range(d) for c in range(-1, d)]
                kron = np.kron(np.eye(d), cf.second_moment_matrix(mu, Sig))
                ctx.close(G[np.ix_(order, order)], kron, rtol=1e-13, atol=1e-14, label="Gram = I (x) S_2 (sums)")
                if sh is None and sc == 1.0:
                    ctx.close(G, np.eye(d + d * d), atol=1e-14, label=f"p={p}: orthonormal")
                else:
                    ctx.geq(np.abs(G - np.eye(d + d * d)).max(), 0.1, label="non-standardized: not orthonormal")
                ctx.count()

    # Continuous standardized bases: their first two moments by scipy.stats (an independent description of each law).
    from scipy import stats
    laws = {"gaussian": stats.norm(), "uniform": stats.uniform(-math.sqrt(3), 2 * math.sqrt(3)),
            "laplace": stats.laplace(scale=1 / math.sqrt(2)), "exponential": stats.expon(loc=-1.0),
            "student_t(5)": stats.t(5, scale=math.sqrt(3 / 5))}
    for name, law in laws.items():
        mean, var = (float(x) for x in law.stats(moments="mv"))
        d = 2
        S2 = cf.second_moment_matrix(np.full(d, mean), var * np.eye(d))   # iid coordinates
        ctx.close(np.kron(np.eye(d), S2), np.eye(d * (d + 1)), atol=1e-14, label=f"{name}: Gram = I")
        ctx.count()


@statement("002.lemma14", title="E_s ||t_w(u) - t_v(u)||^2 = ||w - v||^2 for standardized s",
           source=f"{SOURCE}, Lemma 14 (§8)", kind="symbolic", uses=())
def lemma14(ctx):
    import sympy as sp

    # Symbolic: E||dC u + dm||^2 = tr(dW S_2 dW^T), = ||dm||^2 + ||dC||_F^2 when mu = 0, Sigma = I.
    for d in (1, 2, 3):
        mu, Sig = _sym_moments(d)
        dm = sp.Matrix(d, 1, lambda i, _: sp.Symbol(f"dm{i}"))
        dC = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"dC{i}{j}"))
        E2 = Sig + mu * mu.T
        # E (dC u + dm)^T (dC u + dm) = tr(dC E[u u^T] dC^T) + 2 dm^T dC mu + dm^T dm
        lhs = (dC * E2 * dC.T).trace() + 2 * (dm.T * dC * mu)[0] + (dm.T * dm)[0]
        S2 = sp.Matrix(sp.BlockMatrix([[sp.Matrix([[1]]), mu.T], [mu, E2]]))
        dW = dm.row_join(dC)
        ctx.true(sp.expand(lhs - (dW * S2 * dW.T).trace()) == 0, label=f"d={d}: = tr(dW S_2 dW^T)")
        subs = {s: 0 for s in mu}
        subs.update({Sig[i, j]: (1 if i == j else 0) for i in range(d) for j in range(d)})
        ctx.true(sp.expand(lhs.subs(subs) - (dm.T * dm)[0] - sum(x ** 2 for x in dC)) == 0,
                 label=f"d={d}: standardized => ||w - v||^2")
        ctx.count()

    # Exact numeric on discrete bases.
    def case(inst):
        rng = np.random.default_rng(inst["seed"])
        d = int(rng.integers(1, 5))
        p = (0.5, 0.25, 0.1)[inst["seed"] % 3]
        U, w = ds.two_point_atoms(d, p)
        a, b = _pair(rng, d, inst["structure"], inst["near"])
        lhs = ds.mean_sq_distance(U, w, *a, *b)
        ctx.close(lhs, _norm_w(a[0] - b[0], a[1] - b[1]) ** 2, rtol=1e-12, atol=1e-14, label="isometry (sums)")

    ctx.forall(_INST, case)


# =================================================================================================================
@statement("002.thm4", title="Quadratic f: l = a/2(||E z - z*||^2 + tr V z), Eqs. (16)-(18); constants are tight",
           source=f"{SOURCE}, Thm 4 (§4.4, §7), Eqs. (16)-(18)", kind="symbolic", uses=("energy",))
def thm4(ctx):
    import sympy as sp

    a = sp.Symbol("a", positive=True)
    for d in (1, 2, 3):
        # (16) for ANY q: write z = Ez + e with E e = 0, E e e^T = V; expand E ||z - z*||^2 by linearity.
        Ez = sp.Matrix(d, 1, lambda i, _: sp.Symbol(f"Ez{i}"))
        zs = sp.Matrix(d, 1, lambda i, _: sp.Symbol(f"zs{i}"))
        V = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"V{min(i, j)}{max(i, j)}"))
        E_sq = sum((Ez[i] - zs[i]) ** 2 + V[i, i] for i in range(d))   # E (Ez_i + e_i - zs_i)^2, cross term 0
        eq16 = a / 2 * (((Ez - zs).T * (Ez - zs))[0] + V.trace())
        ctx.true(sp.expand(a / 2 * E_sq - eq16) == 0, label=f"d={d}: Eq. (16)")
        # (17): location-scale, E z = C mu + m, V z = C Sigma C^T.
        mu, Sig = _sym_moments(d)
        m = sp.Matrix(d, 1, lambda i, _: sp.Symbol(f"m{i}"))
        C = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"C{i}{j}"))
        E2 = Sig + mu * mu.T
        # direct expansion of E ||C u + m - z*||^2 with the moment table
        r = m - zs
        direct = (C * E2 * C.T).trace() + 2 * (r.T * C * mu)[0] + (r.T * r)[0]
        eq17 = ((C * mu + m - zs).T * (C * mu + m - zs))[0] + (C * Sig * C.T).trace()
        ctx.true(sp.expand(direct - eq17) == 0, label=f"d={d}: Eq. (17)")
        subs = {s: 0 for s in mu}
        subs.update({Sig[i, j]: (1 if i == j else 0) for i in range(d) for j in range(d)})
        eq18 = (r.T * r)[0] + sum(x ** 2 for x in C)
        ctx.true(sp.expand(eq17.subs(subs) - eq18) == 0, label=f"d={d}: Eq. (18) (no trace: typo in print)")
        # tightness: Hessian of a/2 * eq18 in w is a I
        wvars = list(m) + list(C)
        H = sp.hessian(a / 2 * eq18, wvars)
        ctx.true(sp.simplify(H - a * sp.eye(len(wvars))) == sp.zeros(len(wvars)), label=f"d={d}: Hessian = a I")
        ctx.count()

    # Numeric: implementation gradients with exact atoms vs the gradient of Eq. (17) (oracle O1), standardized and
    # non-standardized discrete bases, and l from exact sums vs Eq. (17).
    def case(inst):
        rng = np.random.default_rng(inst["seed"])
        d = int(rng.integers(1, 5))
        av = float(rng.uniform(0.1, 3.0))
        zstar = rng.normal(size=d)
        target = specs.gaussian(zstar, av * np.eye(d))
        sh = rng.uniform(-1, 1, d) if inst["near"] else None
        sc = float(rng.uniform(0.5, 2.0)) if inst["seed"] % 2 else 1.0
        U, pw = ds.two_point_atoms(d, 0.5, shift=sh, scale=sc)
        mu, Sig = ds.moments(U, pw)
        m, C = _pair(rng, d, inst["structure"], False)[0]
        g = _impl_grad_atoms(ctx, target, m, C, U, inst["structure"])
        l17, gm17, gC17 = cf.quadratic(av * np.eye(d), zstar, mu, Sig, m, C)
        ctx.close(g[0], gm17, rtol=1e-12, atol=1e-12, label="impl grad_m l == grad of Eq. (17)")
        ctx.close(g[1], _project(gC17, inst["structure"]), rtol=1e-12, atol=1e-12,
                  label="impl grad_C l == grad of Eq. (17)")
        lsum = ds.quadratic(U, pw, av * np.eye(d), zstar, m, C)[0]
        ctx.close(lsum, l17, rtol=1e-12, atol=1e-13, label="exact sums == Eq. (17)")
        if sh is None and sc == 1.0:
            l18 = av / 2 * (float((m - zstar) @ (m - zstar)) + float(np.sum(C * C)))
            ctx.close(lsum, l18, rtol=1e-12, atol=1e-13, label="standardized: == Eq. (18)")

    ctx.forall(_INST, case)


@statement("002.example8", title="Shifted-mean Gaussian N(mu0 + m, C C^T) is not a-smooth",
           source=f"{SOURCE}, Example 8 (§5.1, §7)", kind="exact", uses=("energy",))
def example8(ctx):
    """Base N(mu0, I) (the print's N(mu0, C) is a typo), f = a/2 ||z - z*||^2.  Implementation gradients with
    Gauss-Hermite nodes shifted by mu0 (exact for quadratic integrands):
    grad_C l = a(C(I + mu0 mu0^T) + (m - z*) mu0^T),
    ||grad_C l(w') - grad_C l(w)||_F^2 = a^2 ||Delta (I + mu0 mu0^T)||_F^2 > a^2 ||Delta||_F^2 when Delta mu0 != 0,
    and the exact smoothness constant a lambda_max(S_2) = a (2 + t^2 + t sqrt(t^2 + 4)) / 2, t = |mu0|."""
    x, wq = ds.quadrature_rule_1d("gaussian")

    def case(inst):
        rng = np.random.default_rng(inst["seed"])
        d = int(rng.integers(1, 3))
        a = float(rng.uniform(0.2, 3.0))
        mu0 = rng.uniform(-2, 2, d)
        zstar = rng.normal(size=d)
        U, W = ds.tensor_rule(x, wq, d)
        U = U + mu0
        target = specs.gaussian(zstar, a * np.eye(d))
        (m, C), _ = _pair(rng, d, "full", False)
        Delta = rng.normal(size=(d, d))
        P = np.eye(d) + np.outer(mu0, mu0)
        g1 = _impl_grad_rule(ctx, target, m, C, U, W)
        g2 = _impl_grad_rule(ctx, target, m, C + Delta, U, W)
        ctx.close(g1[1], a * (C @ P + np.outer(m - zstar, mu0)), rtol=1e-12, atol=1e-12,
                  label="grad_C l = a (C (I + mu0 mu0^T) + (m - z*) mu0^T)")
        lhs = float(np.sum((g2[1] - g1[1]) ** 2))
        ctx.close(lhs, a * a * float(np.sum((Delta @ P) ** 2)), rtol=1e-11, atol=1e-13,
                  label="||grad_C l(w') - grad_C l(w)||^2 = a^2 ||Delta (I + mu0 mu0^T)||^2")
        gap = float(np.sum((Delta @ P) ** 2) - np.sum(Delta ** 2))
        # ||Delta P||^2 - ||Delta||^2 = 2 |Delta mu0|^2 + |Delta mu0|^2 |mu0|^2 (exact algebra)
        Dm = Delta @ mu0
        ctx.close(gap, float(Dm @ Dm) * (2.0 + float(mu0 @ mu0)), rtol=1e-10, atol=1e-12,
                  label="excess = |Delta mu0|^2 (2 + |mu0|^2) > 0")
        ctx.geq(lhs, a * a * float(np.sum(Delta ** 2)) * (1.0 + 1e-6), label="exceeds a^2 ||w' - w||^2")
        ctx.close(a * float(np.linalg.eigvalsh(cf.second_moment_matrix(mu0, np.eye(d)))[-1]),
                  cf.shifted_gaussian_constants(a, mu0)[0], rtol=1e-12, label="L = a lambda_max(S_2) closed form")

    ctx.forall(_INST, case)
    for a, mu0 in ((1.0, np.array([1.0, 0.0])), (2.5, np.array([0.3, -0.4]))):
        r = _shifted_top_ratio(ctx, a, mu0)
        ctx.close(r, cf.shifted_gaussian_constants(a, mu0)[0], rtol=1e-12, label="ratio reaches a lambda_max(S_2)")
        ctx.count()
    ctx.close(cf.shifted_gaussian_constants(1.0, [1.0])[0], (3 + math.sqrt(5)) / 2, rtol=1e-15,
              label="|mu0| = 1: 2.618")
    # The print's "greater than" is only ">=": for Delta mu0 = 0 the two sides are equal (the conclusion, that l is
    # not a-smooth unless mu0 = 0, still follows from any Delta with Delta mu0 != 0, checked above).
    a, mu0 = 1.4, np.array([0.6, -0.8])
    Delta = np.outer([0.7, -1.2], [0.8, 0.6])            # rows orthogonal to mu0
    U, W = ds.tensor_rule(x, wq, 2)
    target = specs.gaussian(np.zeros(2), a * np.eye(2))
    m, C = np.array([0.2, -0.3]), np.array([[1.0, 0.1], [0.2, 0.9]])
    g1 = _impl_grad_rule(ctx, target, m, C, U + mu0, W)
    g2 = _impl_grad_rule(ctx, target, m, C + Delta, U + mu0, W)
    ctx.close(float(np.sum((g2[1] - g1[1]) ** 2)), a * a * float(np.sum(Delta ** 2)), rtol=1e-12,
              label="Delta mu0 = 0: equality, so 'greater' means '>='")


@statement("002.example9", title="Student-t parameterized by its shape: l is a-strongly convex but a nu/(nu-2)-smooth",
           source=f"{SOURCE}, Example 9 (§5.1, §7)", kind="exact", uses=("energy",))
def example9(ctx):
    """q = StudentT_nu(m, S S^T) = LocScale(m, S, t_nu) with t_nu of shape I, covariance nu/(nu-2) I;
    f = a/2||z - z0||^2:
    l = a/2 (nu/(nu-2) ||S||_F^2 + ||m - z0||^2).  Hessian eigenvalues a (d times) and a nu/(nu-2) (d^2 times)."""
    from scipy import stats

    for nu in (2.5, 3.0, 5.0, 30.0):
        var = float(stats.t(nu).var())
        ctx.close(var, nu / (nu - 2.0), rtol=1e-13, label=f"nu={nu}: Var t_nu = nu/(nu-2) (scipy)")
        # the standardized characteristic function has Psi''(0) = -1: rescaling by sqrt(nu/(nu-2)) gives the variance
        # the standardized characteristic function's curvature: -Psi'(kappa)/kappa -> -Psi''(0) = 1 as kappa -> 0
        # (= standardized variance); evaluated at kappa = 1e-3, the gap is O(kappa^min(2, nu-2)).
        # (nu = 2.5 is left out: kappa^0.5 is too coarse to be informative.)
        if nu >= 3.0:
            kap = 1e-3
            g = -cf.charfun("student_t", np.array([kap]), nu=nu, elliptical=True)[1][0].real / kap
            ctx.close(g, 1.0, atol=5.0 * kap ** min(2.0, nu - 2.0), label=f"nu={nu}: -Psi''(0) = 1")
        for d in (1, 2, 3):
            rng = ctx.rng(f"{nu}-{d}")
            a = float(rng.uniform(0.3, 2.0))
            z0 = rng.normal(size=d)
            target = specs.gaussian(z0, a * np.eye(d))
            U = _t_atoms(nu, d)
            m, S = _pair(rng, d, "full", False)[0]
            l9 = a / 2 * (nu / (nu - 2) * float(np.sum(S * S)) + float((m - z0) @ (m - z0)))
            l_o1 = cf.quadratic(a * np.eye(d), z0, np.zeros(d), var * np.eye(d), m, S)[0]
            ctx.close(l_o1, l9, rtol=1e-13, label="Example 9 closed form == O1 with Sigma = Var t_nu")
            # Hessian of l in w by exact differences of implementation gradients (l is quadratic)
            g0 = _impl_grad_atoms(ctx, target, m, S, U)
            n = d + d * d
            H = np.empty((n, n))
            for j in range(n):
                e = np.zeros(n)
                e[j] = 1.0
                g = _impl_grad_atoms(ctx, target, m + e[:d], S + e[d:].reshape(d, d), U)
                H[:, j] = np.concatenate([g[0] - g0[0], (g[1] - g0[1]).ravel()])
            lam = np.sort(np.linalg.eigvalsh(0.5 * (H + H.T)))
            want = np.sort(np.concatenate([np.full(d, a), np.full(d * d, a * nu / (nu - 2))]))
            ctx.close(lam, want, rtol=1e-11, atol=1e-12, label="Hessian eigenvalues {a, a nu/(nu-2)}")
            ctx.geq(lam[-1], a * (1 + 1e-3), label="not a-smooth (condition number nu/(nu-2))")
            ctx.count()
    r = _t_shape_ratio(ctx, 1.3, 3.0)
    ctx.close(r, 1.3 * 3.0, rtol=1e-12, label="gradient-difference ratio reaches a nu/(nu-2)")


@statement("002.example10", title="Standardized Student-t StudentT_nu(m, (nu-2)/nu C C^T): l keeps a and M",
           source=f"{SOURCE}, Example 10 (§7)", kind="exact", uses=("energy",))
def example10(ctx):
    """Elliptical standardized t base u = g sqrt((nu-2)/chi2_nu).  Exact: for quadratic f, l = a/2(||C||^2 + ||m-z0||^2)
    (O1 with the scipy variance); for cos + quadratic f (non-convex allowed), M-smoothness and c-strong convexity of the
    closed form (characteristic function K_{nu/2}).  Implementation link: the mean of implementation gradients over
    t draws matches the closed form (statistical, joint false-alarm <= 1e-6)."""
    from scipy import stats

    rng = ctx.rng("exact")
    for nu in (2.2, 3.0, 5.0, 12.0):
        scale = math.sqrt((nu - 2.0) / nu)
        ctx.close(float(stats.t(nu, scale=scale).var()), 1.0, rtol=1e-13, label=f"nu={nu}: standardized")
        for _ in range(3 * ctx.profile.mc_scale):
            d = int(rng.integers(1, 5))
            a = float(rng.uniform(0.3, 2.0))
            z0 = rng.normal(size=d)
            w, v = _pair(rng, d, "full", bool(rng.integers(2)))
            lw = cf.quadratic(a * np.eye(d), z0, np.zeros(d), np.eye(d), *w)
            ctx.close(lw[0], a / 2 * (float(np.sum(w[1] ** 2)) + float((w[0] - z0) @ (w[0] - z0))), rtol=1e-13,
                      label="quadratic: l = a/2 ||w - w_bar||^2")
            for convex in (True, False):
                alpha, b, phi, beta, zc = _cos_params(rng, d, convex=convex)
                M, c = cf.cos_quadratic_constants(alpha, b, beta)
                gw = cf.cos_quadratic("student_t", alpha, b, phi, beta, zc, *w, nu=nu, elliptical=True)[1:]
                gv = cf.cos_quadratic("student_t", alpha, b, phi, beta, zc, *v, nu=nu, elliptical=True)[1:]
                _smooth_check(ctx, gw, gv, w, v, M, f"t_{nu}: M-smooth")
                if convex:
                    _sc_check(ctx, gw, gv, w, v, c, f"t_{nu}: c-strongly convex")
            ctx.count()

    # Statistical tie to the implementation: batch means of impl.energy over standardized t draws.
    srng = ctx.rng("mc")
    nu, d = 5.0, 2
    alpha, b, phi, beta, zc = _cos_params(srng, d, convex=False)
    target = specs.cosine(alpha, b, phi, beta, zc)
    (m, C), _ = _pair(srng, d, "full", False)
    n_batches, per = 200 * ctx.profile.mc_scale, 50
    draws = []
    for _ in range(n_batches):
        g = srng.standard_normal((per, d))
        U = g * np.sqrt((nu - 2.0) / srng.chisquare(nu, (per, 1)))
        gm, gC = _impl_grad_atoms(ctx, target, m, C, U)
        draws.append(np.concatenate([gm, gC.ravel()]))
    ref = cf.cos_quadratic("student_t", alpha, b, phi, beta, zc, m, C, nu=nu, elliptical=True)
    ctx.mean_close(np.array(draws), np.concatenate([ref[1], ref[2].ravel()]), alpha=1e-6,
                   label="E[impl energy gradient] == closed form (t_5, elliptical)")

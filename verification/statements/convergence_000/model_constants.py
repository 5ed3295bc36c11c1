"""Domke, Garrigos & Gower, *Provable convergence guarantees for black-box variational inference* (seed 000): smoothness
and strong-convexity constants of the models (Thm 21 - Cor 25).

Statements: 000.thm21, 000.cor22, 000.cor23, 000.thm24, 000.cor25; errata: E000-1, E000-2, E000-5.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.errata import erratum
from refvi.verification.oracles import hessian_bounds as hb
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.convergence_000._structure import (
    constants,
    linear_case,
    linear_instance,
    logistic_case,
    logistic_instance,
    real_data_instance,
    same_function,
    seeds,
)


def hierarchical_instance(rng, N: int, d: int, G: int):
    X = rng.standard_normal((N, d))
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    groups = rng.integers(0, G, N)
    B1, B2 = rng.standard_normal((d, d)), rng.standard_normal((d, d))
    Sigma = B1 @ B1.T + 0.5 * np.eye(d)
    Delta = B2 @ B2.T + 0.3 * np.eye(d)
    Sigma, Delta = 0.5 * (Sigma + Sigma.T), 0.5 * (Delta + Delta.T)
    model = {
        "kind": "hierarchical_logistic",
        "X": X,
        "y": y,
        "groups": groups,
        "n_groups": G,
        "Sigma": Sigma,
        "Delta": Delta,
    }
    return model, specs.from_model(model)


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


# ======================================================================================= §7.3: model constants
def _eig_range(H) -> tuple[float, float]:
    lam = np.linalg.eigvalsh(0.5 * (H + H.T))
    return scalar(lam[0]), scalar(lam[-1])


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


@statement("000.thm21")
def thm21(ctx):
    def generic(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((N, d))
        y = rng.standard_normal(N)
        B = rng.standard_normal((d, d))
        Si = B @ B.T + 0.2 * np.eye(d)
        r, c = scalar(rng.uniform(0, 1)), scalar(rng.uniform(-2, 2))
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
            impl_constants_match(ctx, model, target, name)  # both tight: linear (Cor 22), logistic (Cor 23)

    ctx.forall(seeds(3, 6), generic, fixed=[(1, 1, 100), (2, 3, 101)])
    ctx.forall(seeds(3, 6), refvi_models, fixed=[(2, 4, 102)], max_examples=max(6, ctx.profile.max_examples // 2))


@erratum("E000-1")
def e000_1(ctx):
    model = {"kind": "logistic", "X": np.array([[1.0]]), "y": np.array([1.0]), "prior_scale": 1.0}
    theta_min = 0.0  # inf of sigma(t) sigma(-t) over t
    mu_p = 1.0 + theta_min * 1.0
    beta_p = 1.0 + theta_min * 1.0
    M_printed = max(abs(mu_p), abs(beta_p))
    H = hb.hessian_sympy(model, np.zeros(1))[0, 0]  # exact (SymPy): 1 + 1/4
    ctx.close(H, 1.25, rtol=1e-14, label="-Hess log p at z = 0 is 5/4 (SymPy)")
    ctx.geq(H, M_printed + 0.2, label="true curvature exceeds the printed M = 1")
    # so -log p is not M_printed-smooth: the gradient's Lipschitz ratio near 0 exceeds 1
    g = lambda t: hb.grad_neg_log_joint(model, np.array([t]))[0]  # noqa: E731
    ctx.geq((g(1e-3) - g(-1e-3)) / 2e-3, M_printed + 0.2, label="gradient Lipschitz ratio at 0 > printed M")
    ctx.count()


@statement("000.cor22")
def cor22(ctx):
    def check(inst):
        d, rng, model, target = linear_case(inst)
        same_function(ctx, model, target, rng, "linear")
        X, sn, s = model["X"], model["noise_scale"], model["prior_scale"]
        lo_c, hi_c = _eig_range(np.eye(d) / s**2 + X.T @ X / sn**2)  # corrected constants, computed here
        lo, hi = _hessian_within(ctx, model, target, rng, "linear")
        # the Hessian is constant, so both bounds are attained: they equal the extreme eigenvalues
        ctx.close(ctx.impl.smoothness(target), hi_c, rtol=1e-12, label="impl M = lambda_max(S^-1 + AA^T/sigma^2)")
        ctx.close(
            ctx.impl.strong_convexity(target),
            lo_c,
            rtol=1e-10,
            atol=1e-14,
            label="impl mu = lambda_min(S^-1 + AA^T/sigma^2)",
        )
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
    ctx.close(hi, ctx.impl.smoothness(target), rtol=1e-12, label="M vs SymPy Hessian")
    ctx.close(lo, ctx.impl.strong_convexity(target), rtol=1e-12, label="mu vs SymPy Hessian")
    ctx.count()
    # real data: diabetes (442 x 11, standardized, intercept), noise and prior scales 1
    model, target = real_data_instance("diabetes")
    same_function(ctx, model, target, ctx.rng("diabetes"), "diabetes")
    lo, hi = _hessian_within(ctx, model, target, ctx.rng("diabetes-points"), "diabetes")
    ctx.close(hi, ctx.impl.smoothness(target), rtol=1e-8, label="diabetes: M attained")
    ctx.close(lo, ctx.impl.strong_convexity(target), rtol=1e-6, label="diabetes: mu attained")
    ctx.count()


@erratum("E000-2")
def e000_2(ctx):
    for sn, what in ((1.0, "M"), (4.0, "mu")):
        model = {"kind": "linear", "X": np.array([[1.0]]), "y": np.array([0.0]), "noise_scale": sn, "prior_scale": 1.0}
        printed = 1.0 + 0.25
        H = hb.hessian_sympy(model, np.array([0.3]))[0, 0]
        ctx.close(H, 1.0 + 1.0 / sn**2, rtol=1e-14, label=f"sigma = {sn}: -Hess log p = 1 + 1/sigma^2 (SymPy)")
        if what == "M":
            ctx.geq(H, printed + 0.5, label="printed M = 5/4 is below the true curvature 2")
        else:
            ctx.bound(H, printed - 0.1, label="printed mu = 5/4 is above the true curvature 17/16")
        ctx.count()


@statement("000.cor23")
def cor23(ctx):
    import sympy as sp

    # the scalar fact of the proof: phi''(a) = sigma(a) sigma(-a) = e^a/(1+e^a)^2 lies in (0, 1/4], max at a = 0
    a = sp.Symbol("a", real=True)
    d2 = sp.diff(sp.log(1 + sp.exp(-a)), a, 2)
    ctx.true(sp.simplify(d2 - sp.exp(a) / (1 + sp.exp(a)) ** 2) == 0, label="phi'' = e^a / (1 + e^a)^2")
    ctx.true(sp.simplify(d2.subs(a, 0) - sp.Rational(1, 4)) == 0, label="phi''(0) = 1/4")
    ctx.true(sp.solve(sp.diff(sp.exp(a) / (1 + sp.exp(a)) ** 2, a), a) == [0], label="unique critical point a = 0")
    ctx.true(sp.limit(d2, a, sp.oo) == 0 and sp.limit(d2, a, -sp.oo) == 0, label="phi'' -> 0 at +-infinity")
    ctx.count()

    def check(inst):
        d, rng, model, target = logistic_case(inst)
        same_function(ctx, model, target, rng, "logistic")
        X, s = model["X"], model["prior_scale"]
        hi_c = _eig_range(np.eye(d) / s**2 + X.T @ X / 4)[1]
        ctx.close(ctx.impl.smoothness(target), hi_c, rtol=1e-12, label="impl M = lambda_max(S^-1 + AA^T/4)")
        ctx.close(ctx.impl.strong_convexity(target), 1 / s**2, rtol=1e-12, label="impl mu = 1/s^2")
        _hessian_within(ctx, model, target, rng, "logistic")
        # M is attained at z = 0, where every phi'' = 1/4
        ctx.close(
            _eig_range(hb.hessian_fd(model, np.zeros(d)))[1],
            ctx.impl.smoothness(target),
            rtol=1e-8,
            label="M attained at z = 0",
        )

    ctx.forall(seeds(3, 6), check, fixed=[(1, 1, 120), (3, 6, 121)])
    # mu is approached far from the data: X = I (d = 2), z = (t, t): -Hess = I/s^2 + diag(sigma'(t))
    model = {"kind": "logistic", "X": np.eye(2), "y": np.array([1.0, -1.0]), "prior_scale": 1.0}
    target = specs.from_model(model)
    for t in (10.0, 30.0):
        lo = _eig_range(hb.hessian_sympy(model, np.array([t, t])))[0]
        # lambda_min = 1/s^2 + sigma'(t) with 0 < sigma'(t) < e^{-t}
        ctx.geq(lo, ctx.impl.strong_convexity(target), rtol=1e-14, label="mu is a lower bound far out")
        ctx.bound(lo - ctx.impl.strong_convexity(target), np.exp(-t), label=f"mu approached at z = ({t}, {t})")
        ctx.count()
    # SymPy-exact Hessian on a tiny random instance
    rng = ctx.rng("sympy")
    model, target = logistic_instance(rng, 3, 2)
    for z in (np.zeros(2), rng.standard_normal(2)):
        lo, hi = _eig_range(hb.hessian_sympy(model, z))
        ctx.bound(hi, ctx.impl.smoothness(target), rtol=1e-13, label="SymPy Hessian <= M")
        ctx.geq(lo, ctx.impl.strong_convexity(target), rtol=1e-13, label="SymPy Hessian >= mu")
        ctx.count()
    # real data: wine (178 x 14) and breast cancer (569 x 31), standardized with intercept, prior scale 1
    for name in ("wine", "breast_cancer"):
        model, target = real_data_instance(name)
        rng = ctx.rng(name)
        same_function(ctx, model, target, rng, name)
        _hessian_within(ctx, model, target, rng, name)
        ctx.close(
            _eig_range(hb.hessian_fd(model, np.zeros(target.dim)))[1],
            ctx.impl.smoothness(target),
            rtol=1e-8,
            label=f"{name}: M attained at z = 0",
        )
        ctx.count()


def _blocks(H, d, G):
    """The (G+1) x (G+1) grid of d x d blocks of a Hessian over (theta, z_0, ..., z_{G-1})."""
    return [[H[i * d : (i + 1) * d, j * d : (j + 1) * d] for j in range(G + 1)] for i in range(G + 1)]


def _hierarchical(ctx, inst):
    """Instance ``(d, N, seed)`` of Thm 24 / Cor 25: d <= 2 and 1-3 groups; checks first that the target and the
    oracle's model are the same function.  Returns ``rng, d, G, model, target``."""
    d, N, seed = inst
    rng = np.random.default_rng(seed)
    G, d = 1 + seed % 3, min(d, 2)
    model, target = hierarchical_instance(rng, N, d, G)
    same_function(ctx, model, target, rng, "hierarchical")
    return rng, d, G, model, target


@statement("000.thm24")
def thm24(ctx):
    def check(inst):
        rng, d, G, model, target = _hierarchical(ctx, inst)
        M = constants(model)[1]  # the oracle's explicit M = lambda_max(P + blockdiag(0, X_g^T X_g / 4))
        for z in _test_points(rng, target.dim):
            H = hb.hessian_fd(model, z)
            B = _blocks(H, d, G)
            norms = np.array([[np.linalg.norm(Bij, 2) for Bij in row] for row in B])
            full = np.linalg.norm(H, 2)
            tol = 1e-7 * (1 + M)
            # (1 <=> 2) smooth iff ||H||_2 bounded; here by the oracle's explicit M
            ctx.bound(full, M, atol=tol, label="||Hess log p||_2 <= M")
            # (2 => 4) every block is a submatrix: ||H_ij||_2 <= ||H||_2
            ctx.bound(scalar(norms.max()), full, rtol=1e-12, atol=1e-12, label="block norms <= full norm")
            # (4 => 2) ||H||_2 <= (number of block rows) * max block norm
            ctx.bound(full, (G + 1) * scalar(norms.max()), rtol=1e-12, label="full norm <= (G+1) max block norm")
            # (5-7) z_i-z_j blocks vanish for i != j: z_i interacts only with theta and its own data
            off = [norms[i, j] for i in range(1, G + 1) for j in range(1, G + 1) if i != j]
            ctx.bound(max(off, default=0.0), 0.0, atol=1e-8, label="z_i-z_j blocks are zero (i != j)")
        # the implementation's M: the bound is attained at z = 0 (every logistic curvature 1/4), so it must equal it
        ctx.close(
            ctx.impl.smoothness(target),
            _eig_range(hb.hessian_fd(model, np.zeros(target.dim)))[1],
            rtol=1e-8,
            label="impl M == lambda_max(-Hess log p(0)) (attained)",
        )
        # the implementation's energy estimator on this model, sample by sample (Eq. 6): mean over the rows u of
        # (g, tril(g u^T)), g = grad -log p(C u + m) from the oracle (S = 1 and S = 5; every group's block is used)
        D = target.dim
        m = rng.standard_normal(D)
        C = np.tril(0.3 * rng.standard_normal((D, D)), -1) + np.diag(rng.uniform(0.5, 1.5, D))
        for S in (1, 5):
            U = rng.standard_normal((S, D))
            G_ = np.array([hb.grad_neg_log_joint(model, C @ u + m) for u in U])
            gm, gC = ctx.impl.energy(target, m, C, U, "tril")
            scale = 1.0 + scalar(np.max(np.abs(G_))) * (1.0 + scalar(np.max(np.abs(U))))
            ctx.close(np.asarray(gm), G_.mean(0), atol=1e-12 * scale, label=f"hierarchical energy, m part (S={S})")
            ctx.close(
                np.asarray(gC), np.tril(G_.T @ U / S), atol=1e-12 * scale, label=f"hierarchical energy, C part (S={S})"
            )

    ctx.forall(seeds(2, 6), check, fixed=[(1, 2, 130), (2, 5, 131)], max_examples=max(6, ctx.profile.max_examples // 2))


@statement("000.cor25")
def cor25(ctx):
    def check(inst):
        rng, d, G, model, target = _hierarchical(ctx, inst)
        Si, Di = np.linalg.inv(model["Sigma"]), np.linalg.inv(model["Delta"])
        lo, hi = _hessian_within(ctx, model, target, rng, "hierarchical")
        # Cor 25 claims convexity only: any mu in [0, lambda_min(P)] is valid, M is attained at z = 0 (below)
        impl_constants_match(ctx, model, target, "hierarchical", mu_tight=False)
        for z in _test_points(rng, target.dim, 2):
            B = _blocks(-hb.hessian_fd(model, z), d, G)  # blocks of Hess log p
            ctx.close(B[0][0], -(Si + G * Di), atol=1e-7, label="Hess_theta,theta log p = -(Sigma^-1 + n Delta^-1)")
            for g in range(G):
                ctx.close(B[0][g + 1], Di, atol=1e-7, label="Hess_theta,z_i log p = Delta^-1")
        # M (the implementation's constant) is attained at z = 0, where every logistic curvature equals 1/4
        ctx.close(
            _eig_range(hb.hessian_fd(model, np.zeros(target.dim)))[1],
            ctx.impl.smoothness(target),
            rtol=1e-8,
            label="M attained at z = 0",
        )

    ctx.forall(seeds(2, 6), check, fixed=[(1, 2, 140), (2, 5, 141)], max_examples=max(6, ctx.profile.max_examples // 2))
    # SymPy-exact Hessian on a tiny instance (d = 1, 2 groups, 3 points)
    rng = ctx.rng("sympy")
    model, target = hierarchical_instance(rng, 3, 1, 2)
    for z in (np.zeros(3), rng.standard_normal(3)):
        H = hb.hessian_sympy(model, z)
        lo, hi = _eig_range(H)
        ctx.bound(hi, ctx.impl.smoothness(target), rtol=1e-13, label="SymPy Hessian <= M")
        ctx.geq(lo, ctx.impl.strong_convexity(target), rtol=1e-13, label="SymPy Hessian >= mu")
        Si, Di = 1 / model["Sigma"][0, 0], 1 / model["Delta"][0, 0]
        ctx.close(-H[0, 0], -(Si + 2 * Di), rtol=1e-13, label="theta-theta entry (SymPy) = -(1/S + 2/D)")
        ctx.count()


@erratum("E000-5")
def e000_5(ctx):
    model = {
        "kind": "hierarchical_logistic",
        "X": np.array([[1.0]]),
        "y": np.array([1.0]),
        "groups": np.array([0]),
        "n_groups": 1,
        "Sigma": np.eye(1),
        "Delta": np.eye(1),
    }
    for z in (np.zeros(2), np.array([0.7, -1.3])):
        H = -hb.hessian_sympy(model, z)  # Hess log p, exact
        printed = -1.0 * 1.0
        ctx.close(H[0, 0], -2.0, rtol=1e-14, label="true theta-theta entry = -2 (SymPy)")
        ctx.geq(abs(H[0, 0] - printed), 0.5, label="printed -Sigma^-1 Delta^-1 = -1 differs")
        ctx.count()
    # with n = 2 groups the gap grows: -(1 + 2) = -3 against the printed -1
    model2 = dict(model, groups=np.array([0]), n_groups=2)
    H2 = -hb.hessian_sympy(model2, np.zeros(3))
    ctx.close(H2[0, 0], -3.0, rtol=1e-14, label="two groups: theta-theta entry = -3")
    ctx.count()

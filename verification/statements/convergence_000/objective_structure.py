"""Domke, Garrigos & Gower, *Provable convergence guarantees for black-box variational inference* (seed 000): smoothness
and convexity of the energy and entropy over the families (Lemmas 13-18).

Statements: 000.lemma13, 000.lemma14, 000.lemma15, 000.lemma16, 000.lemma17, 000.lemma18; errata: E000-6.
"""

from __future__ import annotations

import numpy as np

from refvi.verification.errata import erratum
from refvi.verification.oracles import vi_objective as vo
from refvi.verification.oracles.matrices import proj_V as proj
from refvi.verification.oracles.matrices import random_orthogonal
from refvi.verification.oracles.quadrature import degree3_cubature
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import statement
from refvi.verification.statements.convergence_000._structure import (
    STRUCTS,
    constants,
    inner,
    linear_case,
    linear_instance,
    logistic_instance,
    random_in_W,
    real_data_instance,
    regression_case,
    same_function,
    seeds,
)


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


def sigma_min(C) -> float:
    return float(np.linalg.svd(C, compute_uv=False)[-1])


def gaussian_instance(rng, d: int):
    B = rng.standard_normal((d, d))
    P = B @ B.T + 0.5 * np.eye(d)
    P = 0.5 * (P + P.T)
    mu = rng.standard_normal(d)
    model = {"kind": "gaussian", "mean": mu, "precision": P}
    return model, specs.from_model(model)


# ======================================================================================== §7.1: restriction to V
def _cubature_energy(ctx, target, m, C, structure):
    """impl.energy averaged over the degree-3 equal-weight cubature: the EXACT expectation E g_energy = grad l_V for
    targets whose gradient is affine (Gaussian, linear regression), since each sample is a degree <= 2 polynomial."""
    U, w = degree3_cubature(target.dim)
    return ctx.impl.energy(target, m, C, U, structure)


def _quadratic_instance(rng, kind, d, N):
    return gaussian_instance(rng, d) if kind == "gaussian" else linear_instance(rng, N, d)


@statement("000.lemma13")
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
        ctx.close(
            np.concatenate([gm, gC.ravel()]),
            0.0 * np.concatenate([gm, gC.ravel()]),
            atol=1e-9 * scale,
            label="w_bar = (m*, L Q) is stationary over R^d x M^d",
        )
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
            ctx.close(vo.objective(model, m_t, Cv), f_bar, rtol=1e-11, atol=1e-11, label=f"f(w*) = f(w_bar) ({name})")
            ctx.close(fv, f_bar, rtol=1e-11, atol=1e-11, label=f"min over R^d x {name} = min over M^d")
            # the implementation's entropy-regularized gradient estimator vanishes at w* (exact with cubature)
            U, _ = degree3_cubature(d)
            gm_i, gC_i = ctx.impl.entropy(target, m_t, Cv, U, name)
            ctx.close(
                np.concatenate([np.ravel(gm_i), np.ravel(gC_i)]),
                np.zeros(d + d * d),
                atol=1e-9 * scale,
                label=f"impl grad f = 0 at the restricted optimum ({name})",
            )
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
        ctx.bound(
            np.sqrt(gm @ gm + np.sum(gC * gC)),
            0.0,
            atol=1e-7,
            label="logistic: triangular optimum stationary over R^d x M^d",
        )
        ctx.count()


@statement("000.lemma14")
def lemma14(ctx):
    from scipy.stats import multivariate_normal

    def check(inst):
        d, rng, model, _ = linear_case(inst)
        X, y, sn, s = model["X"], model["y"], model["noise_scale"], model["prior_scale"]
        # the posterior and the evidence from the Gaussian marginal y ~ N(0, sn^2 I + s^2 X X^T) (scipy)
        P = X.T @ X / sn**2 + np.eye(d) / s**2
        Sig_p = np.linalg.inv(P)
        mu_p = Sig_p @ X.T @ y / sn**2
        N = y.size
        log_px = multivariate_normal(np.zeros(N), sn**2 * np.eye(N) + s**2 * X @ X.T).logpdf(y)
        for structure in ("tril", "sym", "full"):
            m = rng.standard_normal(d)
            C = random_in_W(rng, d, structure, smin=0.1)
            S = C @ C.T
            diff = mu_p - m
            kl = 0.5 * (np.trace(P @ S) + diff @ P @ diff - d + np.linalg.slogdet(Sig_p)[1] - np.linalg.slogdet(S)[1])
            rhs = vo.objective(model, m, C) + log_px - 0.5 * d * (1 + np.log(2 * np.pi))
            # closed forms on both sides; terms up to ~1e3, rounding 1e-11 relative
            ctx.close(kl, rhs, rtol=1e-10, atol=1e-10 * (1 + abs(log_px)), label=f"KL = f + const ({structure})")
            # KL = l - Entropy[q] + log p(x), with the implementation's entropy of N(m, C C^T)
            H = float(ctx.impl.gaussian_entropy(C, structure))
            ctx.close(
                kl,
                vo.free_energy(model, m, C)[0] - H + log_px,
                rtol=1e-10,
                atol=1e-10 * (1 + abs(log_px)),
                label=f"KL = l - Entropy[q] + log p(x), Entropy[q] from the implementation ({structure})",
            )
            # ...and q's own log density, the integrand of -Entropy[q] = E_q log q (scipy, covariance C C^T)
            Z = m + rng.standard_normal((4, d)) @ C.T * 1.5
            ctx.close(
                np.asarray(ctx.impl.gaussian_log_density(m, C, Z, structure), dtype=float),
                multivariate_normal(m, S).logpdf(Z).reshape(-1),
                rtol=1e-10,
                atol=1e-10,
                label=f"log q(z) = log N(z; m, C C^T) ({structure})",
            )
        # at the optimum the KL is zero
        m_s, C_s, f_s = vo.solve(model, "tril")
        ctx.close(
            f_s + log_px - 0.5 * d * (1 + np.log(2 * np.pi)),
            0.0,
            atol=1e-10 * (1 + abs(log_px)),
            label="KL(q_w* || posterior) = 0",
        )

    ctx.forall(seeds(3, 6), check, fixed=[(1, 1, 50), (3, 5, 51)])


@statement("000.lemma15")
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
            ctx.close(
                G,
                proj(gC, structure),
                atol=1e-6 * (1 + abs(l0)),
                label=f"15.2 grad l_V = proj_V grad l ({kind}, {structure})",
            )
            ctx.bound(
                np.linalg.norm(proj(gC, structure)),
                np.linalg.norm(gC),
                rtol=1e-15,
                label="15.2 ||grad phi_V|| <= ||grad phi||",
            )
            if kind != "logistic":
                # the implementation's estimator, averaged over an exact cubature, is the gradient of the restriction
                gm_i, gC_i = _cubature_energy(ctx, target, m, C, structure)
                scale = 1 + np.abs(gC).max() + np.abs(gm).max()
                ctx.close(
                    np.asarray(gC_i),
                    proj(gC, structure),
                    atol=1e-11 * scale,
                    label=f"impl E g_energy = proj_V grad l ({structure})",
                )
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

    ctx.forall(
        seeds(3, 5),
        check,
        fixed=[(2, 3, 60), (3, 4, 61), (2, 4, 62)],
        max_examples=max(6, ctx.profile.max_examples // 2),
    )


# ================================================================================= §7.2: smoothness, convexity
def _logdet_abs(C) -> float:
    return float(np.linalg.slogdet(C)[1])


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
        M = float(10 ** rng.uniform(-1, 1.5))
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
        a = float(rng.uniform())
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
    ctx.bound(float(x @ C @ x), -1.0, label="x^T C x = -1 < 0: C is not positive definite as a quadratic form")
    ctx.bound(float(np.linalg.eigvalsh(0.5 * (C + C.T))[0]), -0.49, label="lambda_min of the symmetric part = -1/2 < 0")
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

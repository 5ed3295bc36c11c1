"""Domke, Garrigos & Gower, *Provable convergence guarantees for black-box variational inference* (seed 000): smoothness
and convexity of the energy and entropy over the families (Lemmas 13-18): §7.1, the restriction to V and the KL
identity (Lemmas 13-15).

Statements: 000.lemma13, 000.lemma14, 000.lemma15 (Lemmas 16-18 and E000-6: objective_smoothness.py).
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles import vi_objective as vo
from refvi.verification.oracles.matrices import proj_V as proj
from refvi.verification.oracles.matrices import random_orthogonal
from refvi.verification.oracles.quadrature import degree3_cubature
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.convergence_000._structure import (
    STRUCTS,
    basis,
    constants,
    linear_case,
    logistic_instance,
    quadratic_instance,
    random_in_W,
    seeds,
)


# ======================================================================================== §7.1: restriction to V
def _cubature_energy(ctx, target, m, C, structure):
    """impl.energy averaged over the degree-3 equal-weight cubature: the EXACT expectation E g_energy = grad l_V for
    targets whose gradient is affine (Gaussian, linear regression), since each sample is a degree <= 2 polynomial."""
    U, w = degree3_cubature(target.dim)
    return ctx.impl.energy(target, m, C, U, structure)


@statement("000.lemma13")
def lemma13(ctx):
    def check(inst):
        d, N, seed = inst
        rng = np.random.default_rng(seed)
        model, target = quadratic_instance(rng, "linear" if seed % 2 else "gaussian", d, N)
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
            H = scalar(ctx.impl.gaussian_entropy(C, structure))
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
            model, target = quadratic_instance(rng, kind, d, N)
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

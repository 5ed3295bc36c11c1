"""Wu & Gardner, *Understanding stochastic natural gradient variational inference* (seed 004): natural-gradient descent,
mirror descent and Theorem 1.

Statements: 004.lemma1, 004.lemma2, 004.example1, 004.def6, 004.thm1, 004.claim-blr-history, 004.remark2; errata:
E004-1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from refvi.verification.errata import erratum
from refvi.verification.oracles import ngvi_expfam as OX
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.ngvi_004._common import minibatch_blr, minimal_theta, natural_of, rand_blr, rand_spd


def moments(eta):
    return OX.moments_from_natural(*eta)


# ------------------------------------------------------------------------------------------------------------------
# §2.2: NGD = MD
# ------------------------------------------------------------------------------------------------------------------


@statement("004.lemma1")
def _lemma1(ctx):
    impl = ctx.adapter("ngvi")

    def check(rng):
        d = int(rng.integers(1, 3))
        X, y, s2, P, mp = rand_blr(rng, d, 4)
        eta0 = natural_of(rng.standard_normal(d), rand_spd(rng, d))
        gammas = rng.uniform(0.05, 1.0, 3)
        e_fim, e_8, w_md = eta0, eta0, impl.expectation_from_natural(*eta0)
        for k, g in enumerate(gammas):
            # (7): explicit Fisher with the gradient in natural coordinates from SymPy (oracle)
            th = minimal_theta(*e_fim)
            gth = OX.blr_grad_theta(th, X, y, s2, P, mp)
            e_fim_new = impl.ngd_step_fim(e_fim, gth, g)
            ctx.close(
                minimal_theta(*e_fim_new),
                OX.fim_ngd_step(th, gth, g),
                rtol=1e-8,
                atol=1e-9,
                label="impl explicit-FIM step == SymPy-Fisher step",
            )
            # (8): gradient in expectation coordinates
            w8 = impl.expectation_from_natural(*e_8)
            e_8 = impl.ngd_step(e_8, impl.blr_grad(X, y, s2, P, mp, *w8), g)
            # (9)/(10): mirror descent
            g_md = impl.blr_grad(X, y, s2, P, mp, *w_md)
            w_prev = w_md
            w_md = impl.md_step(w_md, g_md, g)
            if k == 0:
                # MD argmin found numerically by the oracle (BFGS, gtol 1e-11): agreement ~1e-6
                mu_t, S_t = w_prev[0], w_prev[1] - np.outer(w_prev[0], w_prev[0])
                mu_o, S_o = OX.md_argmin(g_md[0], g_md[1], mu_t, S_t, g)
                ctx.close(
                    np.concatenate([w_md[0], w_md[1].ravel()]),
                    np.concatenate([mu_o, (S_o + np.outer(mu_o, mu_o)).ravel()]),
                    rtol=1e-5,
                    atol=1e-5,
                    label="closed-form MD step (10) == numerical argmin of (9)",
                )
            e_fim = e_fim_new
            a = np.concatenate([e_fim[0], e_fim[1].ravel()])
            b = np.concatenate([e_8[0], e_8[1].ravel()])
            e_md = impl.natural_from_expectation(*w_md)
            c = np.concatenate([e_md[0], e_md[1].ravel()])
            # float64 Fisher solves in d <= 2 with condition numbers < 1e6: 1e-7 relative
            ctx.close(a, b, rtol=1e-7, atol=1e-8, label=f"(7) == (8) after {k + 1} steps")
            ctx.close(c, b, rtol=1e-9, atol=1e-10, label=f"MD == (8) after {k + 1} steps")

    ctx.forall_drawn(check, seeds=[1], max_examples=min(ctx.profile.max_examples, 10))


# ------------------------------------------------------------------------------------------------------------------
# conjugate models: Lemma 2, Example 1, Def. 6
# ------------------------------------------------------------------------------------------------------------------


@statement("004.lemma2")
def _lemma2(ctx):
    impl = ctx.adapter("ngvi")

    def check(rng):
        d, n = int(rng.integers(1, 4)), int(rng.integers(1, 8))
        X, y, s2, P, mp = rand_blr(rng, d, n)
        m1, S1, m2, S2 = rng.standard_normal(d), rand_spd(rng, d), rng.standard_normal(d), rand_spd(rng, d)
        w1, w2 = (m1, S1 + np.outer(m1, m1)), (m2, S2 + np.outer(m2, m2))
        l1, l2 = impl.blr_neg_elbo(X, y, s2, P, mp, *w1), impl.blr_neg_elbo(X, y, s2, P, mp, *w2)
        g2 = impl.blr_grad(X, y, s2, P, mp, *w2)
        gap = l1 - l2 - (g2[0] @ (w1[0] - w2[0]) + np.sum(g2[1] * (w1[1] - w2[1])))
        kl12 = OX.kl_gauss(m1, S1, m2, S2)
        scale = max(1.0, abs(l1), abs(l2))
        ctx.close(gap, kl12, atol=1e-10 * scale * d, label="l(w) - l(w') - <grad l(w'), w - w'> == KL(q, q')")
        mu_s, S_s = OX.blr_posterior(X, y, s2, P, mp)
        ls = impl.blr_neg_elbo(X, y, s2, P, mp, mu_s, S_s + np.outer(mu_s, mu_s))
        lev = OX.blr_log_evidence(X, y, s2, P, mp)
        ctx.close(ls, -lev, atol=1e-9 * max(1.0, abs(ls)), label="l(w*) == -log p(y)")
        ctx.close(
            impl.blr_log_evidence(X, y, s2, P, mp),
            lev,
            atol=1e-9 * max(1.0, abs(lev)),
            label="the implementation's log p(y) (prior mean mp != 0)",
        )
        ctx.close(l1 - ls, OX.kl_gauss(m1, S1, mu_s, S_s), atol=1e-9 * scale, label="l(w) - l* == KL(q, q*)")
        eta1 = impl.ngd_step(natural_of(m1, S1), impl.blr_grad(X, y, s2, P, mp, *w1), 1.0)
        mu1, Sg1 = moments(eta1)
        ctx.close(
            np.concatenate([mu1, Sg1.ravel()]),
            np.concatenate([mu_s, S_s.ravel()]),
            rtol=1e-10,
            atol=1e-10,
            label="one exact NGD step with gamma = 1 lands on q*",
        )

    ctx.forall_drawn(check, seeds=[0])


@statement("004.example1")
def _example1(ctx):
    impl = ctx.adapter("ngvi")

    def check(rng):
        (X, y, s2, P, mp), m, w, (mu, S) = minibatch_blr(rng)
        n, d = X.shape
        gx, gX = np.zeros(d), np.zeros((d, d))
        for combo, p in OX.batches_with_prob(n, m):
            a, b = impl.blr_stochastic_grad(X, y, s2, P, mp, *w, np.array(combo))
            gx, gX = gx + p * a, gX + p * b
            eta_next = impl.natural_update(
                natural_of(mu, S), (natural_of(mu, S)[0] - a, natural_of(mu, S)[1] - b), scalar(rng.uniform(0, 1))
            )
            ctx.true(np.linalg.eigvalsh(eta_next[1])[-1] < 0, label="eta_{t+1} in D for gamma in [0, 1]")
        mu_s, S_s = OX.blr_posterior(X, y, s2, P, mp)
        es, e = natural_of(mu_s, S_s), natural_of(mu, S)  # exact gradient = eta - eta*
        scale = max(1.0, scalar(np.max(np.abs(es[1]))), scalar(np.max(np.abs(es[0]))))
        ctx.close(
            np.concatenate([gx, gX.ravel()]),
            np.concatenate([e[0] - es[0], (e[1] - es[1]).ravel()]),
            atol=1e-10 * scale,
            label="E[grad-hat] == grad l (all n^m batches)",
        )

    ctx.forall_drawn(check, seeds=[0])


@statement("004.def6")
def _def6(ctx):
    """The implementation's exact and mini-batch gradients (Eq. 15) and its NGD step give q_{t+1,*} and q_{t+1} for
    every batch (enumerated with replacement, exact probabilities); its KL gives the symmetrized KL, which must equal
    the oracle's Eq. (12) computed from its definition."""
    impl = ctx.adapter("ngvi")

    def check(rng):
        d, n, m = int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 3))
        X, y, s2, P, mp = rand_blr(rng, d, n)
        eta = natural_of(rng.standard_normal(d), rand_spd(rng, d))
        g = scalar(rng.uniform(0.05, 1.0))
        xi, Xi = _omega(eta)
        q_star = moments(impl.ngd_step(eta, impl.blr_grad(X, y, s2, P, mp, xi, Xi), g))
        v_skl = 0.0
        for combo, p in OX.batches_with_prob(n, m):
            idx = np.asarray(combo, dtype=np.int64)
            q_next = moments(impl.ngd_step(eta, impl.blr_stochastic_grad(X, y, s2, P, mp, xi, Xi, idx), g))
            v_skl += p * (impl.kl(*q_next, *q_star) + impl.kl(*q_star, *q_next)) / g**2
        lam, Lam = eta
        v_or = OX.variance12(lam, Lam, g, X, y, s2, P, mp, m)
        ctx.close(v_skl, v_or, rtol=1e-8, atol=1e-10, label="symmetrized KL / gamma^2 (impl) == Eq. (12) (oracle)")
        ctx.geq(v_skl, 0.0, atol=1e-12, label="(12) >= 0")

    ctx.forall_drawn(check, seeds=[0])


def _omega(eta):
    mu, S = moments(eta)
    return mu, S + np.outer(mu, mu)


# ------------------------------------------------------------------------------------------------------------------
# Theorem 1 (exact enumeration)
# ------------------------------------------------------------------------------------------------------------------

T1CE: dict[str, Any] = dict(
    X=np.array([[1.0], [1.0]]), y=np.array([10.0, -10.0]), s2=1.0, P=np.eye(1), mp=np.zeros(1), m=1
)


def _thm1_instance(ctx, impl, X, y, s2, P, mp, m, T, eta0, label):
    """Enumerate all paths with the oracle; replay each on the implementation; return (E KL, V)."""
    paths, _, V = OX.enumerate_thm1(X, y, s2, P, mp, m, T, *eta0)
    mu_s, S_s = OX.blr_posterior(X, y, s2, P, mp)
    ekl = 0.0
    for k, (path, p, (xb_o, Xb_o)) in enumerate(paths):
        idx = np.array(path, dtype=np.int64).reshape(T + 1, m)
        _, _, xb, Xb = impl.blr_run(X, y, s2, P, mp, idx, init=eta0)
        tol = 1e-9 * max(1.0, scalar(np.max(np.abs(Xb_o))))
        ctx.close(
            np.concatenate([xb, Xb.ravel()]),
            np.concatenate([xb_o, Xb_o.ravel()]),
            rtol=1e-9,
            atol=tol,
            label=f"{label}: omega_bar path replay",
        )
        if k < 3:
            # the implementation's own omega-average of its trajectory (Thm 1's weights) on the first paths
            traj = impl.blr_trajectory(X, y, s2, P, mp, idx, 2.0 / (np.arange(T + 1) + 2.0), init=eta0)
            xa, Xa = impl.omega_average([_omega(e) for e in traj[1:]])
            ctx.close(
                np.concatenate([np.ravel(xa), np.ravel(Xa)]),
                np.concatenate([xb_o, Xb_o.ravel()]),
                rtol=1e-9,
                atol=tol,
                label=f"{label}: omega_average of the trajectory == Thm 1's omega_bar",
            )
        ekl += p * OX.kl_gauss(xb, Xb - np.outer(xb, xb), mu_s, S_s)
    ctx.count(len(paths))
    return ekl, V


@statement("004.thm1")
def _thm1(ctx):
    impl = ctx.adapter("ngvi")

    def bound(V, T):
        return 4 * V / ((T + 1) * (T + 2)) * sum((t + 1) / (t + 2) for t in range(T + 1))

    def run(inst):
        X, y, s2, P, mp, m, T, eta0, label = inst
        ekl, V = _thm1_instance(ctx, impl, X, y, s2, P, mp, m, T, eta0, label)
        ctx.bound(ekl, bound(V, T), rtol=1e-9, label=f"{label}: E KL <= corrected bound")
        ctx.bound(bound(V, T), 4 * V / (T + 2), rtol=1e-12, label="corrected bound <= 4V/(T+2)")

    ce = T1CE
    fixed = [
        (ce["X"], ce["y"], ce["s2"], ce["P"], ce["mp"], 1, T, (np.zeros(1), -0.5 * np.eye(1)), f"T1-CE T={T}")
        for T in (1, 4)
    ]

    def draw(rng):
        d, n, m = int(rng.integers(1, 3)), int(rng.integers(2, 4)), int(rng.integers(1, 3))
        T = int(rng.integers(0, 4))
        while math.comb(n + m - 1, m) ** (T + 1) > 400:
            T -= 1
        X, y, s2, P, mp = rand_blr(rng, d, n)
        y = y * scalar(rng.choice([1.0, 5.0]))
        eta0 = natural_of(rng.standard_normal(d), rand_spd(rng, d))
        run((X, y, s2, P, mp, m, T, eta0, f"random d={d} n={n} m={m} T={T}"))
        # initialization independence (gamma_0 = 1): q_1 does not depend on q_0 for a fixed first batch
        idx = rng.integers(0, n, size=(1, m))
        a = impl.blr_run(X, y, s2, P, mp, idx, init=eta0)
        b = impl.blr_run(X, y, s2, P, mp, idx, init=(np.zeros(d), -0.5 * np.eye(d)))
        ctx.close(
            np.concatenate([a[0], a[1].ravel()]),
            np.concatenate([b[0], b[1].ravel()]),
            rtol=1e-12,
            atol=1e-12,
            label="q_1 independent of q_0",
        )

    for inst in fixed:
        run(inst)
    ctx.forall_drawn(draw, seeds=(), max_examples=min(ctx.profile.max_examples, 8 if ctx.profile.name == "ci" else 60))
    _thm1_large_T(ctx, impl, bound)


def _thm1_large_T(ctx, impl, bound):
    """Thm 1 at horizons where O(1/T) means something (T = 30, 100, 300), statistically: independent mini-batch runs
    of the implementation on T1-CE, KL(q_bar_(T+1), q*) by the oracle, against the corrected bound with V = 400/3
    (on T1-CE, Eq. (12) is 400/3 at every state: checked along a run), and the O(1/T) exponent."""
    ce = T1CE
    X, y, s2, P, mp, m = ce["X"], ce["y"], ce["s2"], ce["P"], ce["mp"], ce["m"]
    eta0 = (np.zeros(1), -0.5 * np.eye(1))
    mu_s, S_s = OX.blr_posterior(X, y, s2, P, mp)
    rng = ctx.rng("thm1/large-T")
    V = 400.0 / 3.0
    idx = rng.integers(0, X.shape[0], size=(8, m))
    for k, (lam, Lam) in enumerate(
        impl.blr_trajectory(X, y, s2, P, mp, idx, 2.0 / (np.arange(8) + 2.0), init=eta0)[:8]
    ):
        ctx.close(
            OX.variance12(lam, Lam, 2.0 / (k + 2.0), X, y, s2, P, mp, m),
            V,
            rtol=1e-9,
            label=f"T1-CE: Eq. (12) = 400/3 at the state of step {k}",
        )
    R = 200 * ctx.profile.mc_scale
    Ts, vals = (30, 100, 300), []
    for T in Ts:
        kl = np.empty(R)
        for r in range(R):
            path = rng.integers(0, X.shape[0], size=(T + 1, m))
            _, _, xb, Xb = impl.blr_run(X, y, s2, P, mp, path, init=eta0)
            kl[r] = OX.kl_gauss(np.asarray(xb), np.asarray(Xb) - np.outer(xb, xb), mu_s, S_s)
        ctx.mean_leq(
            kl, bound(V, T), alpha=1e-6, label=f"T1-CE, T = {T}: E KL(q_bar, q*) <= corrected bound ({R} runs)"
        )
        vals.append(kl)
        ctx.count(R)
    ctx.decay(Ts, vals, -1.0, label="T1-CE: E KL(q_bar_(T+1), q*) = O(1/T)")


@erratum("E004-1")
def _e004_1(ctx):
    impl = ctx.adapter("ngvi")
    ce = T1CE
    for T, expect in [(1, 45.91784389), (2, 35.07430086)]:
        ekl, V = _thm1_instance(
            ctx,
            impl,
            ce["X"],
            ce["y"],
            ce["s2"],
            ce["P"],
            ce["mp"],
            1,
            T,
            (np.zeros(1), -0.5 * np.eye(1)),
            f"T1-CE T={T}",
        )
        ctx.close(V, 400.0 / 3.0, rtol=1e-12, label="V = 400/3 exactly")
        ctx.close(ekl, expect, rtol=1e-8, label="E KL by enumeration")
        ctx.geq(ekl, V / (T + 2) * 1.03, label=f"printed bound V/(T+2) violated at T={T} by > 3%")


@statement("004.claim-blr-history")
def _claim_blr_history(ctx):
    """The diagnostics of Figure 1: KL(q_t || posterior) of the last iterate and of Thm 1's omega average after chosen
    iterations, against the oracle's own run (the step in moment form, explicit inverses), and a run that records
    them ends where the plain run does."""
    impl = ctx.adapter("ngvi")
    rng = ctx.rng("history")
    for d, n, m, T, at in ((2, 6, 2, 9, [1, 4, 9]), (3, 5, 1, 12, [2, 3, 7, 11, 12])):
        X, y, s2, P, mp = rand_blr(rng, d, n)
        idx = rng.integers(0, n, size=(T, m))
        its, kl_last, kl_avg, final = impl.blr_history(X, y, s2, P, mp, idx, at)
        mu_s, S_s = OX.blr_posterior(X, y, s2, P, mp)
        mu, S = np.zeros(d), np.eye(d)
        xb, Xb = mu.copy(), S + np.outer(mu, mu)
        want_last, want_avg = [], []
        for t in range(1, T + 1):
            g = 2.0 / (t + 1.0)  # Thm 1's gamma_(t-1) = 2 / ((t - 1) + 2)
            mu, S = OX.ngd_blr_step_moments(mu, S, X, y, idx[t - 1], s2, P, mp, g)
            xb, Xb = (1 - g) * xb + g * mu, (1 - g) * Xb + g * (S + np.outer(mu, mu))
            if t in at:
                want_last.append(OX.kl_gauss(mu, S, mu_s, S_s))
                want_avg.append(OX.kl_gauss(xb, Xb - np.outer(xb, xb), mu_s, S_s))
        what = f"d = {d}, n = {n}, m = {m}, T = {T}, after {at}"
        ctx.true(np.array_equal(np.asarray(its), at), label=f"{what}: the iterations recorded")
        ctx.close(np.asarray(kl_last, float), want_last, rtol=1e-8, atol=1e-10, label=f"{what}: KL of q_t")
        ctx.close(np.asarray(kl_avg, float), want_avg, rtol=1e-8, atol=1e-10, label=f"{what}: KL of the omega average")
        plain = impl.blr_run(X, y, s2, P, mp, idx)
        ctx.close(
            np.concatenate([np.ravel(v) for v in final]),
            np.concatenate([np.ravel(v) for v in plain]),
            rtol=1e-12,
            atol=1e-12,
            label=f"{what}: the recording run ends where blr_run does",
        )
        ctx.count(len(at))


# ------------------------------------------------------------------------------------------------------------------
# validity (Remark 2) and the estimators of §3.2
# ------------------------------------------------------------------------------------------------------------------


@statement("004.remark2")
def _remark2(ctx):
    impl = ctx.adapter("ngvi")

    def check(rng):
        d = int(rng.integers(1, 5))
        lam, Lam = rng.standard_normal(d), -rand_spd(rng, d, 1e-3, 10.0)
        P = rand_spd(rng, d)
        Lam_p = -0.5 * np.linalg.inv(P)
        k = int(rng.integers(0, d + 1))
        B = rng.standard_normal((d, k))
        G = -(B @ B.T)  # NSD, possibly singular
        g = scalar(rng.choice([0.0, 1.0, rng.uniform(0, 1)]))
        new = impl.natural_update((lam, Lam), (rng.standard_normal(d), G + Lam_p), g)
        top = scalar(np.linalg.eigvalsh(new[1])[-1])
        ctx.true(top < 0.0, label="lambda_max(Lam_{t+1}) < 0 (strict)")
        ctx.bound(top, 0.0, label="lambda_max(Lam_{t+1}) <= 0")

    ctx.forall_drawn(check, seeds=[0])
    # negative direction 1: gamma = 1 and grad_Xi with an eigenvalue > lambda_min(P^-1)/2 -> Lam_{t+1} not < 0
    P = np.diag([1.0, 4.0])
    Lam_p = -0.5 * np.linalg.inv(P)
    G = np.diag([0.0, 0.2])  # 0.2 > lambda_min(P^-1)/2 = 0.125
    would = Lam_p + G
    ctx.true(np.linalg.eigvalsh(would)[-1] > 0, label="the update would leave D")
    _expect_refusal(
        ctx,
        lambda: impl.natural_update((np.zeros(2), -0.5 * np.eye(2)), (np.zeros(2), would), 1.0),
        "refuses gamma = 1 with a non-NSD gradient",
    )
    # negative direction 2: gamma > 1 with Lam_t << Lam_p
    Lam_t = -10.0 * np.eye(2)
    would = (1 - 2.0) * Lam_t + 2.0 * (-0.5 * np.eye(2))
    ctx.true(np.linalg.eigvalsh(would)[-1] > 0, label="gamma = 2 would leave D")
    _expect_refusal(
        ctx,
        lambda: impl.natural_update((np.zeros(2), Lam_t), (np.zeros(2), -0.5 * np.eye(2)), 2.0),
        "refuses gamma = 2",
    )


def _expect_refusal(ctx, fn, label):
    try:
        fn()
    except ValueError:
        ctx.true(True, label=label)
    else:
        ctx.true(False, label=label + " (no ValueError raised)")
    ctx.count()

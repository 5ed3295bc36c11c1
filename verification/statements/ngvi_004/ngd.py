"""Wu & Gardner, *Understanding stochastic natural gradient variational inference* (seed 004): natural-gradient descent,
mirror descent and Theorem 1.

Statements: 004.lemma1, 004.lemma2, 004.example1, 004.def6, 004.remark2 (Theorem 1: :mod:`.thm1`).
"""

from __future__ import annotations

import numpy as np

from refvi.verification.oracles import ngvi_expfam as OX
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.ngvi_004._common import (
    checked_blr_grad,
    checked_omega,
    flat,
    minibatch_blr,
    minimal_theta,
    natural_of,
    rand_blr,
    rand_spd,
)


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
        e_fim, e_8 = eta0, eta0
        w_md = checked_omega(ctx, impl, eta0[0], eta0[1], what="omega_0")
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
            # (8): gradient in expectation coordinates (every map and gradient against the oracle's)
            w8 = checked_omega(ctx, impl, e_8[0], e_8[1], what="(8)")
            e_8 = impl.ngd_step(e_8, checked_blr_grad(ctx, impl, X, y, s2, P, mp, *w8), g)
            # (9)/(10): mirror descent, each step against Eq. (10) by the oracle: omega' = grad A(grad A*(omega) - g)
            g_md = checked_blr_grad(ctx, impl, X, y, s2, P, mp, *w_md)
            w_prev = w_md
            w_md = impl.md_step(w_md, g_md, g)
            lam_t, Lam_t = OX.natural_from_moments(w_prev[0], w_prev[1] - np.outer(w_prev[0], w_prev[0]))
            mu_n, S_n = OX.moments_from_natural(lam_t - g * g_md[0], Lam_t - g * 0.5 * (g_md[1] + g_md[1].T))
            ctx.close(
                flat(w_md[0], w_md[1]),
                flat(mu_n, S_n + np.outer(mu_n, mu_n)),
                rtol=1e-9,
                atol=1e-10 * (1.0 + scalar(np.max(np.abs(S_n))) + scalar(np.max(np.abs(mu_n))) ** 2),
                label="md_step = grad A(grad A*(omega_t) - gamma g) (Eq. 10)",
            )
            if k == 0:
                # MD argmin found numerically by the oracle (BFGS, gtol 1e-11): agreement ~1e-6
                mu_t, S_t = w_prev[0], w_prev[1] - np.outer(w_prev[0], w_prev[0])
                mu_o, S_o = OX.md_argmin(g_md[0], g_md[1], mu_t, S_t, g)
                ctx.close(
                    flat(w_md[0], w_md[1]),
                    flat(mu_o, S_o + np.outer(mu_o, mu_o)),
                    rtol=1e-5,
                    atol=1e-5,
                    label="closed-form MD step (10) == numerical argmin of (9)",
                )
            e_fim = e_fim_new
            a = flat(e_fim[0], e_fim[1])
            b = flat(e_8[0], e_8[1])
            e_md = impl.natural_from_expectation(*w_md)
            c = flat(e_md[0], e_md[1])
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
        eta1 = impl.ngd_step(natural_of(m1, S1), checked_blr_grad(ctx, impl, X, y, s2, P, mp, *w1), 1.0)
        mu1, Sg1 = moments(eta1)
        ctx.close(
            flat(mu1, Sg1),
            flat(mu_s, S_s),
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
            eta, gam = natural_of(mu, S), scalar(rng.uniform(0, 1))
            hat = (eta[0] - a, eta[1] - b)
            eta_next = impl.natural_update(eta, hat, gam)
            for k, name in enumerate(("lam", "Lam")):
                ctx.close(
                    eta_next[k],
                    (1 - gam) * eta[k] + gam * hat[k],
                    rtol=1e-12,
                    atol=1e-12 * (1.0 + scalar(np.max(np.abs(hat[1])))),
                    label=f"natural_update: {name}_(t+1) = (1 - gamma) {name}_t + gamma {name}_hat",
                )
            ctx.true(bool(np.linalg.eigvalsh(eta_next[1])[-1] < 0), label="eta_{t+1} in D for gamma in [0, 1]")
        mu_s, S_s = OX.blr_posterior(X, y, s2, P, mp)
        es, e = natural_of(mu_s, S_s), natural_of(mu, S)  # exact gradient = eta - eta*
        scale = max(1.0, scalar(np.max(np.abs(es[1]))), scalar(np.max(np.abs(es[0]))))
        ctx.close(
            flat(gx, gX),
            flat(e[0] - es[0], e[1] - es[1]),
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

        def stepped(grad):  # the implementation's NGD step (Eq. 8), against eta - gamma grad
            new = impl.ngd_step(eta, grad, g)
            tol = 1e-10 * (1 + scalar(np.abs(eta[1]).max()) + scalar(np.abs(grad[1]).max()))
            for k in range(2):
                ctx.close(new[k], eta[k] - g * grad[k], rtol=1e-9, atol=tol, label="ngd_step = eta - gamma g")
            return moments(new)

        q_star = stepped(checked_blr_grad(ctx, impl, X, y, s2, P, mp, xi, Xi))
        v_skl = 0.0
        for combo, p in OX.batches_with_prob(n, m):
            idx = np.asarray(combo, dtype=np.int64)
            q_next = stepped(checked_blr_grad(ctx, impl, X, y, s2, P, mp, xi, Xi, idx))
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
        hat = (rng.standard_normal(d), G + Lam_p)
        new = impl.natural_update((lam, Lam), hat, g)
        for k, name in enumerate(("lam", "Lam")):
            ctx.close(
                new[k],
                (1 - g) * (lam, Lam)[k] + g * hat[k],
                rtol=1e-12,
                atol=1e-12 * (1.0 + scalar(np.abs(Lam).max()) + scalar(np.abs(hat[1]).max())),
                label=f"natural_update: {name}_(t+1) = (1 - gamma) {name}_t + gamma {name}_hat",
            )
        top = scalar(np.linalg.eigvalsh(new[1])[-1])
        ctx.true(top < 0.0, label="lambda_max(Lam_{t+1}) < 0 (strict)")
        # the proof's bound (Weyl): lambda_max((1 - g) Lam + g (G + Lam_p)) <= (1 - g) lambda_max(Lam) + g
        # lambda_max(Lam_p) < 0, since G is NSD: attained at g in {0, 1} with G = 0 (k = 0)
        weyl = (1 - g) * scalar(np.linalg.eigvalsh(Lam)[-1]) + g * scalar(np.linalg.eigvalsh(Lam_p)[-1])
        ctx.bound(
            top,
            weyl,
            rtol=1e-10,
            label="lambda_max(Lam_{t+1}) <= (1 - gamma) lambda_max(Lam_t) + gamma lambda_max(Lam_p)",
        )

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

"""Wu & Gardner, *Understanding stochastic natural gradient variational inference* (seed 004): the SGD baseline of
the experiments (§6, App. F), replayed step by step on the same batches and base samples.

The baseline is projected SGD on the negative ELBO in (m, C), C lower triangular, with the KL to the prior
differentiated in closed form (grad_m = P^{-1}(m - mp), grad_C = tril(P^{-1} C) - diag(1/C_ii)) and diag(C) clamped
at 1e-10 after each step.  The replay below recomputes every gradient sample by sample and data point by data point;
runs from (0, I) also record Figures 1-2's diagnostics (KL to the BLR posterior, the GLMs' exact negative ELBO) after
a random set of iterations, checked at the replay's iterates.

Statements: 004.claim-sgd-baseline-replay.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from refvi.verification.oracles import ngvi_expfam as OX
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.ngvi_004._common import (
    GLM_ELBO_RTOL,
    check_history,
    glm_neg_elbo,
    rand_blr,
    rand_spd,
    recorded_iterations,
)


def _kl_step(m, C, step, gm, gC, Pinv, mp):
    gm = gm + Pinv @ (m - mp)
    gC = gC + np.tril(Pinv @ C)
    for i in range(len(m)):
        gC[i, i] -= 1.0 / C[i, i]
    m, C = m - step * gm, C - step * gC
    for i in range(len(m)):
        C[i, i] = max(C[i, i], 1e-10)
    return m, C


def _blr_replay(X, y, s2, P, mp, indices, steps, m, C) -> list[tuple[np.ndarray, np.ndarray]]:
    """The iterates (m_t, C_t), t = 1..T."""
    n, Pinv = X.shape[0], np.linalg.inv(P)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    for rows, step in zip(indices, steps, strict=True):
        c = n / (len(rows) * s2)
        gm, G = np.zeros_like(m), np.zeros_like(C)
        for i in rows:
            gm -= c * (y[i] - X[i] @ m) * X[i]
            G += c * np.outer(X[i], X[i])
        m, C = _kl_step(m, C, step, gm, np.tril(G @ C), Pinv, mp)
        out.append((m, C))
    return out


def _glm_replay(kind, X, y, steps, U, estimator, batches, m, C):
    """The iterates (m_t, C_t), t = 1..T."""
    n, d = X.shape
    out = []
    for t, step in enumerate(steps):
        rows = range(n) if batches is None else batches[t]
        c = n / len(rows)
        gm, gC, Hbar = np.zeros(d), np.zeros((d, d)), np.zeros((d, d))
        for u in U[t]:
            z = m + C @ u
            g = np.zeros(d)
            for i in rows:
                a = scalar(X[i] @ z)
                d1, d2 = (
                    (y[i] * expit(-y[i] * a), -expit(a) * expit(-a))
                    if kind == "logistic"
                    else (y[i] - np.exp(a), -np.exp(a))
                )
                g += c * d1 * X[i]
                Hbar += c * d2 * np.outer(X[i], X[i]) / len(U[t])
            gm -= g / len(U[t])
            gC -= np.outer(g, u) / len(U[t])
        gC = np.tril(gC) if estimator == "reparam" else -np.tril(Hbar @ C)
        m, C = _kl_step(m, C, step, gm, gC, np.eye(d), np.zeros(d))
        out.append((m, C))
    return out


@statement("004.claim-sgd-baseline-replay")
def _claim_sgd_baseline_replay(ctx):
    impl = ctx.adapter("ngvi")

    def compare(lam_lam, m, C, what):
        want = OX.natural_from_moments(m, C @ C.T)
        for k, (got, ref) in enumerate(zip(lam_lam, want, strict=True)):
            ref = np.asarray(ref, float)
            ctx.close(
                np.asarray(got, float),
                ref,
                rtol=1e-9,
                atol=1e-9 * (1.0 + scalar(np.abs(ref).max())),
                label=f"{what}: {('lam', 'Lam')[k]}_T",
            )

    def check(rng, glm=None):
        """One drawn instance; ``glm`` = (kind, estimator) forces a GLM run from (0, I), which records Figure 2's
        diagnostics."""
        d, n, T = int(rng.integers(1, 4)), int(rng.integers(1, 10)), int(rng.integers(1, 6))
        init = None
        if rng.random() < 0.5 and glm is None:
            init = (rng.standard_normal(d), np.linalg.cholesky(rand_spd(rng, d, 0.3, 2.0)))
        m0, C0 = (np.zeros(d), np.eye(d)) if init is None else (init[0].copy(), init[1].copy())
        if rng.random() < 0.5 and glm is None:
            X, y, s2, P, mp = rand_blr(rng, d, n)
            idx = rng.integers(0, n, size=(T, int(rng.integers(1, 5))))
            c = n / (idx.shape[1] * s2)
            L = c * scalar(np.linalg.eigvalsh(X.T @ X)[-1]) + 1.0 / scalar(np.linalg.eigvalsh(P)[0]) + 1.0
            steps = rng.uniform(0.01, 0.2, T) / L
            states = _blr_replay(X, y, s2, P, mp, idx, steps, m0, C0)
            what = f"BLR d = {d}, n = {n}, T = {T}"
            compare(impl.blr_sgd(X, y, s2, P, mp, idx, steps, init), *states[-1], what)
            if init is None:  # Figure 1's SGD curve: KL(q_t || posterior) after some iterations
                at = recorded_iterations(rng, T)
                post = OX.blr_posterior(X, y, s2, P, mp)
                got = impl.blr_sgd_history(X, y, s2, P, mp, idx, steps, at)
                check_history(
                    ctx, got, at, [OX.kl_gauss(m, C @ C.T, *post) for m, C in (states[t - 1] for t in at)], what
                )
                compare(got[2], *states[-1], f"{what}, recording run")
            return
        kind = ("logistic", "poisson")[int(rng.integers(0, 2))]
        estimator = ("reparam", "price")[int(rng.integers(0, 2))]
        kind, estimator = (kind, estimator) if glm is None else glm
        X = rng.standard_normal((n, d)) * (0.4 if kind == "poisson" else 1.0)
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0) if kind == "logistic" else np.floor(3.0 * rng.random(n))
        U = rng.standard_normal((T, int(rng.integers(1, 4)), d))
        batch = int(rng.integers(0, 4))
        batches = rng.integers(0, n, size=(T, batch)) if batch else None
        c = n / (batch or n)
        steps = rng.uniform(0.01, 0.1, T) / (1.0 + c * scalar(np.sum(X * X)) * (1.0 + scalar(y.max(initial=0.0))))
        states = _glm_replay(kind, X, y, steps, U, estimator, batches, m0, C0)
        m, C = states[-1]
        if not (np.all(np.isfinite(C)) and np.diag(C).min() > 1e-3):
            return  # a run the steps do not keep well inside the domain: not an instance of the claim
        what = f"{kind}, {estimator}, d = {d}, n = {n}, T = {T}, batch {batch or 'all'}"
        compare(impl.glm_sgd(kind, X, y, steps, U, estimator, batches, init), m, C, what)
        if init is None:  # Figure 2's SGD curves: l(q_t) after some iterations
            at = recorded_iterations(rng, T)
            got = impl.glm_sgd_history(kind, X, y, steps, U, at, estimator, batches)
            check_history(
                ctx,
                got,
                at,
                [glm_neg_elbo(kind, X, y, mt, Ct @ Ct.T) for mt, Ct in (states[t - 1] for t in at)],
                what,
                rtol=GLM_ELBO_RTOL,
            )
            compare(got[2], m, C, f"{what}, recording run")

    ctx.forall_drawn(check, seeds=list(range(8)), max_examples=max(16, ctx.profile.max_examples // 2))
    # Figure 2's SGD curves on every model and estimator, whatever the draws above reached
    for kind in ("logistic", "poisson"):
        for estimator in ("reparam", "price"):
            ctx.instance(lambda rng, g=(kind, estimator): check(rng, glm=g), ctx.rng(f"glm-history/{kind}/{estimator}"))

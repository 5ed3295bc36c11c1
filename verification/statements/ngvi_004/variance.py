"""Wu & Gardner, *Understanding stochastic natural gradient variational inference* (seed 004): the variance bound of
Lemma 3 and its building blocks (App. C).

Statements: 004.lemma3, 004.lemma5, 004.lemma6, 004.lemma7, 004.lemma8, 004.lemma9, 004.cor1, 004.cor2, 004.lemma10,
004.lemma11; errata: E004-3.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from refvi.verification.errata import erratum
from refvi.verification.oracles import ngvi_expfam as OX
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.ngvi_004._common import (
    check_trajectory,
    checked_blr_grad,
    checked_omega,
    minibatch_blr,
    natural_of,
    rand_blr,
    rand_spd,
)

# ------------------------------------------------------------------------------------------------------------------
# Lemma 3 and its building blocks (App. C)
# ------------------------------------------------------------------------------------------------------------------


def _constants(X, y, P, s2):
    nu = max(1.0, scalar(np.linalg.eigvalsh(P)[-1]))
    yx = y[:, None] * X
    b = scalar(np.max(np.linalg.norm(yx, axis=1)))
    s1 = scalar(np.mean(np.sum((yx - yx.mean(0)) ** 2, axis=1)))
    XX = np.einsum("ni,nj->nij", X, X)
    s2_ = scalar(np.mean(np.sum((XX - XX.mean(0)) ** 2, axis=(1, 2))))
    return nu, b, s1, s2_


def _lemma3_instance(rng, small_sigma=True):
    d, n, m = int(rng.integers(1, 3)), int(rng.integers(2, 5)), int(rng.integers(1, 3))
    s2 = scalar(rng.choice([1.0, rng.uniform(0.2, 0.9) if small_sigma else 1.0, rng.uniform(1.0, 3.0)]))
    X, y, _, P, mp = rand_blr(rng, d, n, zero_mean=True, sigma2=s2, big_prior=True)
    T = 5
    idx = rng.integers(0, n, size=(T, m))
    steps = rng.uniform(0.0, 1.0, T)
    steps[0] = scalar(rng.choice([1.0, steps[0]]))
    return X, y, s2, P, mp, m, idx, steps


def _trajectory_case(impl, rng):
    """A drawn BLR instance of Lemma 3 (T = 5 mini-batch NGD steps), its constants nu, b (raw: b / sigma^2 is the
    corrected one, E004-3), the full-batch natural parameters (ls, Ls) of q* and the implementation's states."""
    X, y, s2, P, mp, m, idx, steps = _lemma3_instance(rng)
    nu, b, s1, s2d = _constants(X, y, P, s2)
    lam_p, Lam_p = natural_of(mp, P)
    return SimpleNamespace(
        X=X,
        y=y,
        s2=s2,
        P=P,
        mp=mp,
        m=m,
        idx=idx,
        steps=steps,
        n=X.shape[0],
        nu=nu,
        b=b,
        s1=s1,
        s2d=s2d,
        lam_p=lam_p,
        Lam_p=Lam_p,
        ls=X.T @ y / s2 + lam_p,
        Ls=Lam_p - 0.5 * X.T @ X / s2,
        states=impl.blr_trajectory(X, y, s2, P, mp, idx, steps),
    )


def forall_trajectories(ctx, check, seeds=(0,)):
    """Run ``check(impl, case)`` on drawn :func:`_trajectory_case` s of the NGVI protocol under test ``impl``, first
    on the fixed generator seeds ``seeds``; every reported trajectory is replayed by the oracle first (induction), so
    the lemmas' bounds use checked states only."""
    impl = ctx.adapter("ngvi")

    def run(rng):
        c = _trajectory_case(impl, rng)
        check_trajectory(ctx, c.states, c.X, c.y, c.s2, c.P, c.mp, c.idx, c.steps, what="Lemma 3's NGD run")
        check(impl, c)

    ctx.forall_drawn(run, seeds=list(seeds))


@statement("004.lemma3")
def _lemma3(ctx):
    def check(impl, c):
        X, y, s2, P, mp, m, n, nu, s1, s2d = c.X, c.y, c.s2, c.P, c.mp, c.m, c.n, c.nu, c.s1, c.s2d
        b = c.b / s2
        V2 = (
            (nu * s1 + 0.5 * nu**2 * s2d + 2 * nu**2 * b * math.sqrt(s1 * s2d) * n + nu**3 * b**2 * s2d * n**2)
            * n**2
            / (s2**2 * m)
        )
        ctx.close(
            scalar(impl.blr_lemma3_bound(X, y, s2, P, mp, m)),
            V2,
            rtol=1e-12,
            label=f"the implementation's V_2 = Eq. (16) with b / sigma^2 (sigma^2 = {s2:.3g})",
        )
        for eta, g in zip(c.states, list(c.steps) + [0.5], strict=True):
            if g <= 0:
                continue
            lam, Lam = eta
            v = OX.variance12(lam, Lam, g, X, y, s2, P, mp, m)
            ctx.close(
                scalar(impl.blr_variance(X, y, s2, P, mp, eta, g, m)),
                v,
                rtol=1e-9,
                atol=1e-12 * (1 + V2),
                label="the implementation's Eq. (12) = the oracle's (exact over the batches)",
            )
            ctx.bound(v, V2, rtol=1e-9, label="(12) <= V_2 (corrected b)")

    # fixed: sigma^2 = 1 (printed and corrected b agree), sigma^2 < 1 and > 1 (they differ by 1/sigma^2)
    forall_trajectories(ctx, check, seeds=(0, 1, 2, 3, 4, 5))


@statement("004.lemma5")
def _lemma5(ctx):
    def check(impl, c):
        for eta in c.states:
            ctx.bound(
                np.linalg.eigvalsh(eta[1])[-1], -1.0 / (2 * c.nu), atol=1e-12, label="lambda_max(Lam_t) <= -1/(2 nu)"
            )

    forall_trajectories(ctx, check)


@statement("004.lemma6")
def _lemma6(ctx):
    def check(rng):
        d = int(rng.integers(1, 5))
        nu = scalar(rng.uniform(1.0, 5.0))
        L1 = -(rand_spd(rng, d, 0.01, 3.0) + np.eye(d) / (2 * nu))
        L2 = -(rand_spd(rng, d, 0.01, 3.0) + np.eye(d) / (2 * nu))
        lhs = np.linalg.norm(np.linalg.inv(L1) - np.linalg.inv(L2))
        ctx.bound(lhs, 4 * nu**2 * np.linalg.norm(L1 - L2), rtol=1e-10, label="Lemma 6")

    ctx.forall_drawn(check, seeds=[0])
    nu, eps = 2.0, 1e-7  # tightness at the cap: the ratio -> 4 nu^2
    L2 = -np.eye(2) / (2 * nu)
    L1 = L2 - eps * np.eye(2)
    r = np.linalg.norm(np.linalg.inv(L1) - np.linalg.inv(L2)) / np.linalg.norm(L1 - L2)
    ctx.close(r, 4 * nu**2, rtol=1e-5, label="ratio -> 4 nu^2 at the cap")
    ctx.count()


@statement("004.lemma7")
@statement("004.lemma8")
def _lemma78(ctx):
    """Lemmas 7 and 8: the variance of the lam- and of the Xi-block of the mini-batch gradient, one enumeration."""
    which = {"004.lemma7": 0, "004.lemma8": 1}[ctx.statement_id]
    impl = ctx.adapter("ngvi")

    def check(rng):
        (X, y, s2, P, mp), m, w, _ = minibatch_blr(rng)
        n = X.shape[0]
        g = checked_blr_grad(ctx, impl, X, y, s2, P, mp, *w)  # both blocks against the oracle (the other lemma's too)
        tot = 0.0
        for combo, p in OX.batches_with_prob(n, m):
            gh = checked_blr_grad(ctx, impl, X, y, s2, P, mp, w[0], w[1], np.array(combo))
            tot += p * scalar(np.sum((gh[which] - g[which]) ** 2))
        _, _, s1, s2d = _constants(X, y, P, s2)
        ref = n**2 * s1 / (m * s2**2) if which == 0 else n**2 * s2d / (4 * m * s2**2)
        ctx.close(tot, ref, rtol=1e-9, atol=1e-10, label="exact enumeration == formula")

    ctx.forall_drawn(check, seeds=[0])


@statement("004.lemma9")
def _lemma9(ctx):
    def check(impl, c):
        n, steps = c.n, c.steps
        rho = np.zeros(n)
        yx = (c.y[:, None] * c.X) / c.s2
        for t, eta in enumerate(c.states):
            ctx.close(eta[0], rho @ yx, rtol=1e-10, atol=1e-10, label="lam_t == sum rho_i y_i x_i / sigma^2")
            ctx.true(bool(np.all(rho >= 0)) and rho.sum() <= n * (1 + 1e-12), label="rho >= 0, sum rho <= n")
            if t < len(steps):
                g = steps[t]
                rho_star = (1 - g) * rho + g * np.ones(n)
                ctx.true(rho_star.sum() <= n * (1 + 1e-12), label="lam_{t+1,*} in C_sigma")
                rho = (1 - g) * rho + g * (n / c.m) * np.bincount(c.idx[t], minlength=n)

    forall_trajectories(ctx, check)


@statement("004.cor1")
@statement("004.cor2")
def _cor12(ctx):
    """Corollaries 1 and 2: the bound on ||lam|| and on ||xi|| along the trajectory, one replay."""
    which = {"004.cor1": 1, "004.cor2": 2}[ctx.statement_id]

    def check(impl, c):
        bound = c.b * c.n / c.s2 * (c.nu if which == 2 else 1.0)
        for t, eta in enumerate(c.states):
            states = [eta]
            if t < len(c.steps):
                g = c.steps[t]
                states.append(((1 - g) * eta[0] + g * c.ls, (1 - g) * eta[1] + g * c.Ls))
            for e in states:
                v = e[0] if which == 1 else checked_omega(ctx, impl, *e)[0]
                ctx.bound(np.linalg.norm(v), bound, rtol=1e-10, label=f"Cor. {which}")

    forall_trajectories(ctx, check)


@statement("004.lemma10")
@statement("004.lemma11")
def _lemma1011(ctx):
    """Lemmas 10 and 11: one replay of the trajectory, each lemma's bound by id."""
    which = {"004.lemma10": 10, "004.lemma11": 11}[ctx.statement_id]

    def check(impl, c):
        n, nu, b, ls, Ls = c.n, c.nu, c.b / c.s2, c.ls, c.Ls
        for eta, g in zip(c.states, c.steps, strict=False):  # eta_0..T, gamma_1..T: eta_T has no step
            if g <= 0:
                continue
            w_star = checked_omega(ctx, impl, (1 - g) * eta[0] + g * ls, (1 - g) * eta[1] + g * Ls)
            for combo, _ in OX.batches_with_prob(n, c.m):
                lh, Lh = _eta_hat_raw(c.X, c.y, c.s2, c.lam_p, c.Lam_p, combo)
                w = checked_omega(ctx, impl, (1 - g) * eta[0] + g * lh, (1 - g) * eta[1] + g * Lh)
                dxi, dXi = np.linalg.norm(ls - lh), np.linalg.norm(Ls - Lh)  # ||grad-hat - grad|| blocks
                if which == 10:
                    lhs = np.linalg.norm(w_star[0] - w[0])
                    rhs = g * nu * dxi + 2 * g * nu**2 * b * n * dXi
                else:
                    lhs = np.linalg.norm(w_star[1] - w[1])
                    rhs = 2 * g * nu**2 * b * n * dxi + (2 * g * nu**2 + 4 * g * nu**3 * b**2 * n**2) * dXi
                ctx.bound(lhs, rhs, rtol=1e-9, atol=1e-12, label=f"Lemma {which}")

    forall_trajectories(ctx, check)


def _eta_hat_raw(X, y, s2, lam_p, Lam_p, combo):
    Xb, yb = X[list(combo)], y[list(combo)]
    c = X.shape[0] / (len(combo) * s2)
    return c * Xb.T @ yb + lam_p, Lam_p - 0.5 * c * Xb.T @ Xb


@erratum("E004-3")
def _e004_3(ctx):
    impl = ctx.adapter("ngvi")
    X, y, P, mp = np.array([[1.0]]), np.array([1.0]), np.eye(1), np.zeros(1)
    traj = impl.blr_trajectory(X, y, 0.5, P, mp, [np.array([0])], [1.0])
    check_trajectory(ctx, traj, X, y, 0.5, P, mp, [np.array([0])], [1.0], what="one step, sigma2 = 1/2")
    lam1 = scalar(traj[1][0][0])
    ctx.close(lam1, 2.0, rtol=1e-14, label="lam_1 = y x n / sigma^2 = 2")
    ctx.geq(abs(lam1), 1.0 * 1.5, label="printed Cor. 1 bound b n = 1 violated (lam_1 = 2)")
    ctx.true(abs(lam1) > 1.0, label="lam_1 outside the printed C = {rho y x : 0 <= rho <= 1}")
    # Corollary 2 as printed: x = 0.1, y = 1, sigma2 = 0.01 -> xi_1 = (10) / (1 + 1) = 5 > nu b n = 0.1
    traj = impl.blr_trajectory(np.array([[0.1]]), y, 0.01, P, mp, [np.array([0])], [1.0])
    check_trajectory(ctx, traj, np.array([[0.1]]), y, 0.01, P, mp, [np.array([0])], [1.0], what="sigma2 = 0.01")
    xi1 = scalar(checked_omega(ctx, impl, *traj[1])[0][0])
    ctx.close(xi1, 5.0, rtol=1e-12, label="xi_1 = 5")
    ctx.geq(xi1, 10 * 0.1, label="printed Cor. 2 bound nu b n = 0.1 violated (xi_1 = 5)")
    # Lemma 3's printed V_2 (b, not b / sigma^2) itself fails, by 82x: d = 1, n = 2, m = 1, P = 1, sigma2 = 0.01,
    # x = (0.1, 0.05), y = (1, 2), at q_0 = N(0, 1) with gamma_0 = 1, Eq. (12) = 25.0625 (exact over the 2 batches)
    X, y, s2, m = np.array([[0.1], [0.05]]), np.array([1.0, 2.0]), 0.01, 1
    nu, b, s1, s2d = _constants(X, y, P, s2)
    n = X.shape[0]

    def v2(bb):
        return (
            (nu * s1 + 0.5 * nu**2 * s2d + 2 * nu**2 * bb * math.sqrt(s1 * s2d) * n + nu**3 * bb**2 * s2d * n**2)
            * n**2
            / (s2**2 * m)
        )

    eta0 = (np.zeros(1), -0.5 * np.eye(1))
    v = OX.variance12(*eta0, 1.0, X, y, s2, P, mp, m)
    ctx.close(v, 25.0625, rtol=1e-12, label="Eq. (12) at q_0 = N(0, 1), gamma_0 = 1 (oracle, exact) = 25.0625")
    ctx.close(
        scalar(impl.blr_variance(X, y, s2, P, mp, eta0, 1.0, m)),
        v,
        rtol=1e-9,
        label="the implementation's Eq. (12) agrees",
    )
    ctx.close(v2(b), 0.30375, rtol=1e-12, label="printed V_2 (b = max ||y_i x_i||) = 0.30375")
    ctx.geq(v, 80 * v2(b), label="printed Lemma 3 fails: Eq. (12) = 25.06 > 80 x printed V_2 = 0.304 (82x)")
    ctx.bound(v, v2(b / s2), label="the corrected V_2 = 225.3 (b / sigma^2) holds")

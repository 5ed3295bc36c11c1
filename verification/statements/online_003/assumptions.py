"""Chérief-Abdellatif, Alquier & Khan, *A generalization bound for online variational inference* (seed 003): Props 1, 2
and Assumptions 4.1-4.3.

Statements: 003.prop1, 003.prop2, 003.assumption1, 003.assumption2, 003.assumption3.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from hypothesis import strategies as st

from refvi.verification.oracles import online_comparators as oc
from refvi.verification.oracles import online_quadrature as oq
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.online_003._common import HINGE_LIP, _floats, _lower_tri, forall_online

# ------------------------------------------------------------------------------------------------------------------
# Prop. 1, Prop. 2, Assumptions 4.1-4.3 (mean field)
# ------------------------------------------------------------------------------------------------------------------


@st.composite
def point_pairs(draw, max_d=3):
    """A data point (x, y) and two mean-field parameters mu_1, mu_2 = (m, sigma) (sigma in [1e-3, 3])."""
    d = draw(st.integers(1, max_d))
    vec = lambda lo, hi: np.array(draw(st.lists(_floats(lo, hi), min_size=d, max_size=d)))
    x = vec(-3, 3)
    x[np.abs(x) < 1e-3] = 0.0  # features are 0 or of magnitude >= 1e-3 (keeps b = ||sigma x|| >= 1e-6)
    if not np.any(x):
        x[0] = 1.0
    y = draw(st.sampled_from((-1.0, 1.0)))
    return x, y, vec(-3, 3), vec(1e-3, 3), vec(-3, 3), vec(1e-3, 3)


def forall_point_pairs(ctx, check):
    """Run ``check(on, x, y, m1, s1, m2, s2)`` on :func:`point_pairs`, ``on`` the online protocol under test."""
    forall_online(ctx, point_pairs(), lambda on, inst: check(on, *inst))


def _checked_loss(ctx, on, loss, x, y, m, s):
    """The implementation's bar L(m, sigma) for one point and its gradients, compared with the oracle (split
    quadrature, 1e-10 relative; the hinge's closed form): the value, checked, for the statement to use."""
    v, gm, gs = on.expected_loss(loss, x[None, :], np.array([y]), m, s)
    ov, om, osg = (
        oc.hinge_value(x[None, :], np.array([y]), m, s) if loss == "hinge" else oq.expected_loss_quad(loss, x, y, m, s)
    )
    got, want = np.concatenate([[v[0]], gm[0], gs[0]]), np.concatenate([[ov], om, osg])
    ctx.close(got, want, rtol=1e-9, atol=1e-11, label=f"{loss}: bar L and its gradients = the oracle's")
    return scalar(v[0])


def _checked_full(ctx, on, loss, x, y, m, C):
    """The implementation's full-covariance E ell(<m + C u, x>), compared with split quadrature on the ridge."""
    v = on.expected_loss_full(loss, x, y, m, C)
    ctx.close(v, oq.expected_loss_full_quad(loss, x, y, m, C)[0], rtol=1e-9, atol=1e-11, label=f"{loss}: E ell (m, C)")
    return v


@statement("003.prop1")
def prop1(ctx):
    def check(on, x, y, m1, s1, m2, s2):
        for loss in ("hinge", "absolute", "squared"):
            f = lambda m, s: _checked_loss(ctx, on, loss, x, y, m, s)
            mid = f(0.5 * (m1 + m2), 0.5 * (s1 + s2))
            avg = 0.5 * (f(m1, s1) + f(m2, s2))
            ctx.bound(mid, avg, rtol=1e-12, atol=1e-13, label=f"midpoint convexity in (m, sigma), {loss}")
        # full scale matrix (lower triangular C, theta = m + C u)
        rng = np.random.default_rng(int(abs(x[0]) * 1e6) % 2**32)
        d = x.size
        C1, C2 = _lower_tri(rng, d), _lower_tri(rng, d)
        for loss in ("hinge", "absolute"):
            f = lambda m, C: _checked_full(ctx, on, loss, x, y, m, C)
            ctx.bound(
                f(0.5 * (m1 + m2), 0.5 * (C1 + C2)),
                0.5 * (f(m1, C1) + f(m2, C2)),
                rtol=1e-12,
                atol=1e-13,
                label=f"midpoint convexity in (m, C), {loss}",
            )

    forall_point_pairs(ctx, check)
    on = ctx.adapter("online")
    # strong convexity: l = H/2 ||theta - z||^2 gives bar L - H/2 ||mu||^2 affine, hence convex (equality at midpoint);
    # every value and gradient against the closed form H/2 (||m - z||^2 + ||sigma||^2), H (m - z), H sigma
    rng = ctx.rng("sc")
    for _ in range(10):
        H, d = rng.uniform(0.1, 5), int(rng.integers(1, 4))
        z, m1, m2 = rng.normal(size=(3, d))
        s1, s2 = rng.uniform(0.01, 2, size=(2, d))

        def g(m, s):
            v, gm, gs = on.expected_loss("quadratic", z[None, :], None, m, s, H)
            want = [0.5 * H * ((m - z) @ (m - z) + s @ s)], H * (m - z), H * s
            ctx.close(
                np.concatenate([v, gm[0], gs[0]]),
                np.concatenate(want),
                rtol=1e-12,
                atol=1e-12,
                label="quadratic: bar L and its gradients = the closed form",
            )
            return scalar(v[0]) - 0.5 * H * (m @ m + s @ s)

        ctx.close(
            g(0.5 * (m1 + m2), 0.5 * (s1 + s2)),
            0.5 * (g(m1, s1) + g(m2, s2)),
            rtol=1e-12,
            atol=1e-12,
            label="bar L - H/2 ||mu||^2 affine (H-strong convexity)",
        )
        ctx.count()
    # negative control: l = |theta|; E|theta| = sqrt(2 v / pi) is concave in v = sigma^2 and (at m = 0) in the
    # expectation parameter mu_2 = m^2 + v: midpoint convexity FAILS there (why NGVI is not covered)
    x1, y0, m0 = np.array([1.0]), 0.0, np.zeros(1)
    f_v = lambda v: _checked_loss(ctx, on, "absolute", x1, y0, m0, np.array([math.sqrt(v)]))
    ctx.geq(
        f_v(0.5 * (0.01 + 4.0)) - 0.5 * (f_v(0.01) + f_v(4.0)),
        0.1,
        label="negative control: not convex in v = sigma^2 (or mu_2 = m^2 + v)",
    )
    ctx.close(f_v(4.0), math.sqrt(8 / math.pi), rtol=1e-13, label="E|N(0, 4)| = sqrt(8/pi)")


@statement("003.prop2")
def prop2(ctx):
    def check(on, x, y, m1, s1, m2, s2):
        Lp = scalar(np.linalg.norm(x))  # hinge and absolute losses of <theta, x> are ||x||-Lipschitz
        dist = scalar(np.linalg.norm(np.concatenate([m1 - m2, s1 - s2])))
        for loss in ("hinge", "absolute"):
            f = lambda m, s: _checked_loss(ctx, on, loss, x, y, m, s)
            diff = abs(f(m1, s1) - f(m2, s2))
            ctx.bound(diff, math.sqrt(2) * Lp * dist, rtol=1e-12, atol=1e-13, label=f"sqrt2 L' ({loss}, mean field)")
            ctx.bound(diff, 2 * Lp * dist, rtol=1e-12, atol=1e-13, label=f"printed 2 L' ({loss})")
        rng = np.random.default_rng(int(abs(x[0]) * 1e6) % 2**32)
        C1, C2 = _lower_tri(rng, x.size), _lower_tri(rng, x.size)
        distC = math.sqrt(scalar(np.sum((m1 - m2) ** 2) + np.sum((C1 - C2) ** 2)))
        f = lambda m, C: _checked_full(ctx, on, "hinge", x, y, m, C)
        diff = abs(f(m1, C1) - f(m2, C2))
        ctx.bound(diff, math.sqrt(2) * Lp * distC, rtol=1e-12, atol=1e-13, label="sqrt2 L' (full C, Frobenius)")

    forall_point_pairs(ctx, check)


@statement("003.assumption1")
def assumption1(ctx):
    def check(on, x, y, m1, s1, m2, s2):
        X, Y = x[None, :], np.array([y])
        at = {}
        for k, (m, s) in enumerate(((m1, s1), (m2, s2))):
            v, gm, gs = on.expected_loss("hinge", X, Y, m, s)
            g = np.concatenate([gm[0], gs[0]])
            ctx.bound(
                scalar(np.linalg.norm(g)),
                HINGE_LIP * scalar(np.linalg.norm(x)),
                rtol=1e-12,
                label="||grad bar L|| <= L",
            )
            # the closed form against split quadrature (oracle accuracy 1e-10 relative, see online_quadrature)
            qv, qm, qs = oq.expected_loss_quad("hinge", x, y, m, s)
            ctx.close(
                np.concatenate([[v[0]], g]),
                np.concatenate([[qv], qm, qs]),
                rtol=1e-9,
                atol=1e-11,
                label="closed form = quadrature",
            )
            at[k] = (scalar(v[0]), g)
        # convexity: the first-order condition at each point towards the other
        dmu = np.concatenate([m2 - m1, s2 - s1])
        for k, sign in ((0, 1.0), (1, -1.0)):
            v, g = at[k]
            ctx.geq(at[1 - k][0] - v, scalar(g @ (sign * dmu)), rtol=1e-12, atol=1e-12, label="convexity (first-order)")

    forall_point_pairs(ctx, check)


@statement("003.assumption2")
def assumption2(ctx):
    def check(on, x, _, m1, s1, m2, s2):
        H = 0.5 + abs(scalar(x[0]))
        f = lambda m, s: on.expected_loss("quadratic", x[None, :], None, m, s, H)
        v1, gm, gs = f(m1, s1)
        v2, _, _ = f(m2, s2)
        dmu = np.concatenate([m2 - m1, s2 - s1])
        lhs = scalar(v2[0] - v1[0] - np.concatenate([gm[0], gs[0]]) @ dmu)
        ctx.close(lhs, 0.5 * H * scalar(dmu @ dmu), rtol=1e-10, atol=1e-12, label="Bregman gap = H/2 ||dmu||^2")

    forall_point_pairs(ctx, check)


@statement("003.assumption3")
def assumption3(ctx):
    on = ctx.adapter("online")
    m, sg, s = sp.symbols("m sigma s", positive=True)
    kl = sp.Rational(1, 2) * ((m**2 + sg**2) / s**2 + sp.log(s**2 / sg**2) - 1)
    Hs = sp.hessian(kl, (m, sg))
    ctx.true(
        sp.simplify(Hs - sp.diag(1 / s**2, 1 / s**2 + 1 / sg**2)) == sp.zeros(2, 2),
        label="sympy Hessian = diag(1/s^2, 1/s^2 + 1/sigma^2)",
    )
    # the implementation's KL has the same Hessian: central differences (h = 1e-4, error ~ h^2 |f''''| ~ 1e-7
    # relative for sigma >= 0.2), smallest eigenvalue >= 1/s^2
    rng = ctx.rng("kl")
    for _ in range(10):
        d, s0 = int(rng.integers(1, 4)), scalar(rng.uniform(0.3, 3))
        z0 = np.concatenate([rng.normal(0, 2, d), rng.uniform(0.2, 3, d)])
        got, want = [], []

        def f(z):  # the implementation's KL, each value compared with the oracle's closed form below
            got.append(on.kl_prior(z[:d], z[d:], s0))
            want.append(oc.kl_to_prior(z[:d], z[d:], s0))
            return got[-1]

        h, n = 1e-4, 2 * d
        Hm = np.empty((n, n))
        E = np.eye(n) * h
        for i in range(n):
            for j in range(n):
                Hm[i, j] = (f(z0 + E[i] + E[j]) - f(z0 + E[i] - E[j]) - f(z0 - E[i] + E[j]) + f(z0 - E[i] - E[j])) / (
                    4 * h * h
                )
        # the same closed form in other code: rounding ~1e-15 relative, so the differences of size h^2 keep ~1e-7
        ctx.close(got, want, rtol=1e-13, atol=1e-13, label="KL(q_mu || pi) = the oracle's closed form")
        lam = scalar(np.min(np.linalg.eigvalsh(0.5 * (Hm + Hm.T))))
        ctx.geq(lam, 1 / s0**2, rtol=1e-5, label="finite-difference lambda_min >= 1/s^2")
        ctx.count()
    # the implementation's KL against quadrature of q log(q/p), 1-D (QUADPACK, 1e-10)
    for mm, ss, s0 in ((0.0, 1.0, 1.0), (1.5, 0.3, 2.0), (-2.0, 2.5, 0.7)):
        ctx.close(
            on.kl_prior(np.array([mm]), np.array([ss]), s0),
            oq.kl_quad_1d(mm, ss, 0.0, s0),
            rtol=1e-10,
            atol=1e-12,
            label="KL closed form = quadrature",
        )

"""Locatello et al., *Boosting variational inference: an optimization perspective* (seed 001): the stochastic LMO, step
rules, invariances and the FW-gap certificate.

Statements: 001.eq10, 001.claim-fixed-step-weights, 001.claim-shift-invariance, 001.claim-fw-gap-certificate,
001.claim-mog-recovery.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import strategies as st
from scipy import optimize

from refvi.verification.oracles import boosting as ob
from refvi.verification.protocol.boosting import BoostingInstance, BoostingTarget
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.boosting_001._common import (
    dense,
    i1,
    line_search,
    mixtures,
    n_examples,
    optimal_weights,
    replay_corrective,
    replay_fw,
)

# ------------------------------------------------------------------------------------------------------------------
# Eq. (10): the score-function estimator of Algorithm 2
# ------------------------------------------------------------------------------------------------------------------


@statement("001.eq10")
def eq10(ctx):
    from scipy import stats

    inst, oracle, _ = i1()
    q = dense(inst.K, (20, 64), (0.3, 0.7))
    pq = oracle.pdf(q)

    def g(z):
        z = np.atleast_1d(z)
        return np.log(pq(z)) - np.log(0.4 * stats.norm.pdf(z, -0.5, 0.5) + 0.6 * stats.norm.pdf(z, 0.6, 0.5))

    def expect(mu, sigma=0.5):
        from scipy import integrate

        a, bb = (-1 - mu) / sigma, (1 - mu) / sigma
        return integrate.quad(
            lambda z: stats.truncnorm.pdf(z, a, bb, loc=mu, scale=sigma) * g(z)[0],
            -1,
            1,
            epsabs=1e-14,
            epsrel=1e-12,
            limit=200,
        )[0]

    b = ctx.adapter("boosting")
    rng = ctx.rng(0)
    for mu in (0.0, 0.8):
        hstep = 1e-4
        target = (expect(mu + hstep) - expect(mu - hstep)) / (2 * hstep)  # central difference, error ~1e-8
        n_rep, S = 400 * ctx.profile.mc_scale, 50
        est, est_noZ = [], []
        tn = stats.truncnorm((-1 - mu) / 0.5, (1 - mu) / 0.5, loc=mu, scale=0.5)
        for _ in range(n_rep):
            Z = tn.rvs(size=(S, 1), random_state=rng)
            v = g(Z[:, 0])
            est.append(b.score_gradient([-1.0], [1.0], np.array([mu]), 0.5, Z, v)[0])
            est_noZ.append(np.mean(v * (Z[:, 0] - mu) / 0.25))
        ctx.mean_close(np.array(est)[:, None], [target], alpha=1e-6, label=f"mu = {mu}: E[estimate] = derivative")
        ctx.count(n_rep)
        if mu != 0.0:
            x = np.array(est_noZ)
            z = abs(x.mean() - target) / (x.std(ddof=1) / math.sqrt(x.size))
            ctx.geq(z, 6.0, label="without grad log Z the estimator is biased (z-score > 6)")


# ------------------------------------------------------------------------------------------------------------------
# algorithmic identities
# ------------------------------------------------------------------------------------------------------------------


@statement("001.claim-fixed-step-weights")
def claim_fixed_step_weights(ctx):
    import sympy as sp

    j, k, T = sp.symbols("j k T", integer=True, positive=True)
    expr = 2 / (k + 2) * sp.product(1 - sp.Rational(2) / (j + 2), (j, k + 1, T - 1))
    ctx.true(
        sp.simplify(sp.combsimp(expr) - 2 * (k + 1) / (T * (T + 1))) == 0,
        label="gamma_k prod_{j>k} (1 - gamma_j) = 2(k+1)/(T(T+1)) (SymPy)",
    )
    tot = sp.summation(2 * (k + 1) / (T * (T + 1)), (k, 0, T - 1))
    ctx.true(sp.simplify(tot - 1) == 0, label="the weights sum to one")
    inst, oracle, _ = i1()
    for T_ in (1, 7, 50):
        res = ctx.adapter("boosting").frank_wolfe(inst, T_, step="fixed", keep_weights=True)
        replay_fw(ctx, oracle, res, f"T = {T_}", step="fixed")
        w = np.zeros(inst.K)
        np.add.at(w, res.atom, 2.0 * (np.arange(T_) + 1) / (T_ * (T_ + 1)))
        ctx.close(res.weights, w, atol=1e-14, label=f"T = {T_}: run weights = closed form")
        ctx.close(
            np.asarray(ctx.adapter("boosting").fixed_step_weights(res.atom, inst.K), dtype=float),
            w,
            atol=1e-14,
            label=f"T = {T_}: the implementation's closed form on the run's atoms",
        )
        ctx.count()

    # the closed form on atom sequences with repeats, against the exact rational unrolling of the recursion
    def check(chosen):
        from fractions import Fraction

        K = max(chosen) + 1
        q = [Fraction(0)] * K
        for t, k in enumerate(chosen):
            g = Fraction(2, t + 2)
            q = [(1 - g) * v for v in q]
            q[k] += g
        got = np.asarray(ctx.adapter("boosting").fixed_step_weights(np.array(chosen, dtype=np.int64), K), dtype=float)
        ctx.close(
            got,
            np.array([scalar(v) for v in q]),
            rtol=1e-13,
            atol=1e-15,
            label=f"T = {len(chosen)}: closed form = unrolled recursion (exact rationals)",
        )

    ctx.forall(
        st.lists(st.integers(0, 5), min_size=1, max_size=60),
        check,
        fixed=[[0], [2, 2, 2], [0, 1, 0, 3, 3, 1, 2], list(range(6)) * 8],
    )


@statement("001.claim-shift-invariance")
def claim_shift_invariance(ctx):
    inst, oracle, _ = i1()
    b = ctx.adapter("boosting")

    def check(draw):
        (cq, wq), c = draw
        q = dense(inst.K, cq, wq)
        other = inst.shifted(c)
        sc0, sc1 = np.asarray(b.scores(inst, q)), np.asarray(b.scores(other, q))
        ctx.close(sc0, oracle.scores(q), rtol=1e-10, atol=1e-10, label="scores = oracle <s_k, log q - log p>")
        ctx.close(sc1, oracle.scores(q) - c, rtol=1e-10, atol=1e-10 * (1 + abs(c)), label="shifted scores = oracle - c")
        k0 = int(np.argmin(oracle.scores(q)))
        ctx.equal(np.argmin(sc1), k0, label="LMO argmin unchanged")
        ctx.close(q @ sc0 - sc0[k0], q @ sc1 - sc1[k0], atol=1e-11, label="FW gap unchanged")
        f0 = b.objective(inst, q)
        ctx.close(f0, oracle.f(q), rtol=1e-10, atol=1e-10, label="f(q) = the oracle's")
        ctx.close(b.objective(other, q), oracle.f(q) - c, atol=1e-11 * (1 + abs(c)), label="f shifts by -c")
        g0, g1 = b.line_search(inst, q, k0), b.line_search(other, q, k0)
        ctx.close(g0, g1, atol=1e-9, label="line-search step unchanged")
        ref = ob.line_search_1d(
            oracle.pdf(q),
            oracle.pdf(np.eye(inst.K)[k0]),
            lambda z: scalar(inst.target.logp(np.array([[z]]))[0]),
            -1.0,
            1.0,
            points=inst.means[np.nonzero(q > 0)[0], 0],
        )
        ctx.close(g0, ref, atol=1e-7, label="line-search step = argmin of the QUADPACK objective (Brent, 1e-10)")
        idx = np.union1d(np.nonzero(q > 0)[0], [k0])
        a0 = np.asarray(b.norm_corrective_weights(inst, q, idx, 5.0))
        a1 = np.asarray(b.norm_corrective_weights(other, q, idx, 5.0))
        ctx.close(a0, a1, atol=1e-8, label="norm-corrective QP weights unchanged")
        # Variant 0's weights are the exact minimiser of the quadratic model (enumerated KKT, small supports)
        G = oracle.gram[np.ix_(idx, idx)]
        a_ref = ob.simplex_qp_enumerate(5.0 * G, oracle.scores(q)[idx] - 5.0 * G @ q[idx])
        ctx.close(a0, a_ref, atol=1e-7, label="norm-corrective weights = argmin of the quadratic model")
        f0 = np.asarray(b.fully_corrective_weights(inst, q, idx))
        f1 = np.asarray(b.fully_corrective_weights(other, q, idx))
        for name, w in (("", f0), ("shifted target: ", f1)):
            aw = _embed(inst.K, idx, w)
            scw = oracle.scores(aw)[idx]
            ctx.close(scalar(aw[idx] @ scw - scw.min()), 0.0, atol=1e-6, label=f"{name}fully-corrective: gap on S ~ 0")
        ctx.close(
            oracle.f(_embed(inst.K, idx, f0)),
            oracle.f(_embed(inst.K, idx, f1)),
            atol=1e-12,
            label="fully-corrective objective value unchanged",
        )
        # Variant 1's weights minimise f on conv(S): f is no larger than SLSQP's minimum of the oracle's f on the
        # simplex over S, and the FW gap on S (>= f - min f) is at first-order-optimality level
        a = _embed(inst.K, idx, f0)
        ref = optimize.minimize(
            lambda x: oracle.f(_embed(inst.K, idx, x)),
            np.full(idx.size, 1.0 / idx.size),
            method="SLSQP",
            bounds=[(0.0, 1.0)] * idx.size,
            constraints=[dict(type="eq", fun=lambda x: x.sum() - 1.0)],
            options=dict(ftol=1e-15, maxiter=500),
        )
        ctx.bound(
            oracle.f(a), scalar(ref.fun), atol=1e-12, label="fully-corrective: f(weights) <= SLSQP min over conv(S)"
        )

    ctx.forall(
        st.tuples(mixtures(inst.K), st.floats(-50, 50)),
        check,
        fixed=[(((20, 64), (0.5, 0.5)), 12.5)],
        max_examples=n_examples(ctx, 10),
    )

    # Variant 1 on atoms that q does not use (alpha = 0 on all of S, as for a fresh active set): still the argmin
    # over conv(S)
    q = dense(inst.K, (20, 64), (0.5, 0.5))
    idx = np.array([5, 33, 70])
    a = _embed(inst.K, idx, np.asarray(b.fully_corrective_weights(inst, q, idx), dtype=float))
    sc = oracle.scores(a)[idx]
    ctx.true(
        bool(np.all(np.isfinite(a)) and np.all(a >= 0.0)) and abs(a.sum() - 1.0) < 1e-12,
        label="fully-corrective on atoms q does not use: weights on the simplex",
    )
    ctx.close(
        scalar(a[idx] @ sc - sc.min()), 0.0, atol=1e-6, label="fully-corrective on atoms q does not use: gap on S ~ 0"
    )

    # the exact line search between neighbouring atoms (0.025 apart, sd 0.5: nearly one density, so f'' along the
    # segment is ~1e-3 and a Newton iteration on a wrong curvature crawls): from the best single atom towards each
    # neighbour and back, the step is the oracle's root of the derivative (Brent, 1e-14)
    best = int(np.argmin([oracle.f(np.eye(inst.K)[k]) for k in range(inst.K)]))
    for j, k in ((best, best + 1), (best, best - 1), (best + 1, best), (best - 1, best)):
        e = np.eye(inst.K)[j]
        ctx.close(
            b.line_search(inst, e, k),
            line_search(oracle, e, k),
            atol=1e-9,
            label=f"line search from atom {j} towards its neighbour {k} (a nearly flat segment) = the oracle's argmin",
        )


def _embed(K, idx, a):
    out = np.zeros(K)
    out[idx] = a
    return out


@statement("001.claim-fw-gap-certificate")
def claim_fw_gap_certificate(ctx):
    inst, oracle, fstar = i1()
    b = ctx.adapter("boosting")
    C = oracle.diameter_sq() / oracle.eps
    T = 40 if ctx.profile.name == "ci" else 200
    runs = {
        "fixed": b.frank_wolfe(inst, T, step="fixed", keep_weights=True),
        "fixed_delta(0.5)": b.frank_wolfe(inst, T, step="fixed_delta", delta=0.5, lmo="adversarial", keep_weights=True),
        "curvature": b.frank_wolfe(inst, T, step="curvature", curvature=C, keep_weights=True),
        "local": b.frank_wolfe(inst, T, step="local", keep_weights=True),
        "line_search": b.frank_wolfe(inst, T, step="line_search", keep_weights=True),
        "norm(L=1/eps)": b.corrective(inst, 15, variant="norm", keep_weights=True),
        "norm(L=5)": b.corrective(inst, 15, variant="norm", L=5.0, keep_weights=True),
        "full": b.corrective(inst, 10, variant="full", keep_weights=True),
    }
    replays: dict[str, dict[str, Any]] = {
        "fixed": dict(step="fixed"),
        "fixed_delta(0.5)": dict(step="fixed_delta", delta=0.5, lmo="adversarial"),
        "curvature": dict(step="curvature", curvature=C),
        "local": dict(step="local"),
        "line_search": dict(step="line_search"),
        "norm(L=1/eps)": dict(variant="norm"),
        "norm(L=5)": dict(variant="norm", L=5.0),
        "full": dict(variant="full"),
    }
    for name, res in runs.items():
        kw = replays[name]
        (replay_corrective if "variant" in kw else replay_fw)(ctx, oracle, res, name, **kw)
        h = res.f - fstar
        t = int(np.argmax(h / res.gap))
        ctx.leq(scalar(np.max(h - res.gap)), 0.0, atol=1e-12, label=f"{name}: f(q^t) - f* <= gap_t, every t")
        ctx.bound(h[t], res.gap[t], atol=1e-12, label=f"{name}: f(q^t) - f* <= gap_t at its tightest t")
        ctx.geq(scalar(np.min(h)), 0.0, atol=1e-12, label=f"{name}: f(q^t) >= f* = -log P(A)")
        ctx.count(h.size)
    # the gap of any q as the implementation computes it on its own (protocol gap), against the oracle's
    for a in np.asarray(runs["curvature"].weights_history)[::8]:
        ctx.close(b.gap(inst, a), oracle.gap(a), rtol=1e-9, atol=1e-11, label="gap(q^t) = the oracle's gap")


@statement("001.claim-mog-recovery")
def claim_mog_recovery(ctx):
    b = ctx.adapter("boosting")
    for stride, wtol in ((0.1, 1e-6), (0.025, 1e-5)):
        inst, oracle, fstar = i1(stride)
        res = b.corrective(inst, 30, variant="full", keep_weights=True)
        replay_corrective(ctx, oracle, res, f"stride {stride}", variant="full")
        ctx.close(res.f[-1], fstar, atol=1e-6, label=f"stride {stride}: f(q^T) = -log P(A) to 1e-6")
        ctx.close(res.weights, optimal_weights(inst), atol=wtol, label=f"stride {stride}: weights = w_k P_k(A)/P(A)")
        ctx.count()
    # 2-D: a 2-component mixture on [-1, 1]^2, atoms on a 0.25 lattice, sigma = 0.6
    means = np.array([[-0.5, 0.25], [0.5, -0.5]])
    inst2 = BoostingInstance.grid(
        [-1.0, -1.0], [1.0, 1.0], 0.25, 0.6, BoostingTarget.mixture([0.3, 0.7], means, [0.6, 0.6]), quadrature=(10, 6)
    )
    fstar2 = -math.log(
        sum(w * ob.box_probability(m, 0.6, [-1, -1], [1, 1]) for w, m in zip([0.3, 0.7], means, strict=True))
    )
    res = b.corrective(inst2, 15, variant="full", keep_weights=True)
    replay_corrective(ctx, ob.QuadratureProblem(inst2), res, "2-D", variant="full")
    ctx.close(res.f[-1], fstar2, atol=1e-6, label="2-D: f(q^T) = -log P(A) to 1e-6")
    ctx.leq(scalar(np.max(res.f - fstar2 - res.gap)), 0.0, atol=1e-12, label="2-D: gap certificate, every t")
    ctx.count()

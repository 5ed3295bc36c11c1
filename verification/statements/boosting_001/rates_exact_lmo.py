"""Locatello et al., *Boosting variational inference: an optimization perspective* (seed 001): Frank-Wolfe with an exact
LMO: Thm 2, Cor 3, Thm 6, Thms 5 and 9.

Statements: 001.thm2, 001.cor3, 001.thm6, 001.thm5, 001.thm9; errata: E001-5.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from hypothesis import strategies as st

from refvi.verification.errata import erratum
from refvi.verification.oracles import boosting as ob
from refvi.verification.oracles import pyramidal_width as pw
from refvi.verification.protocol.boosting import BoostingInstance, BoostingTarget
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.boosting_001._common import (
    dense,
    i1,
    log_prob_box_mog,
    mixtures,
    n_examples,
    optimal_weights,
    replay_corrective,
    replay_fw,
)

I2_MEANS = (-0.75, -0.25, 0.25, 0.75)  # 4-atom relative-interior instance


I2_WEIGHTS = (0.1, 0.2, 0.3, 0.4)


I2_SIGMA = 0.25


@functools.cache
def i2():
    """I2: four atoms TN(mu, 0.25^2) at -0.75..0.75 and the same four Gaussians as target (q* in the interior)."""
    sig = (I2_SIGMA,) * 4
    inst = BoostingInstance.make(-1.0, 1.0, I2_MEANS, I2_SIGMA, BoostingTarget.mixture(I2_WEIGHTS, I2_MEANS, sig))
    return inst, ob.QuadratureProblem(inst), -log_prob_box_mog(I2_WEIGHTS, I2_MEANS, sig, -1.0, 1.0)


# ------------------------------------------------------------------------------------------------------------------
# Theorem 2, Corollary 3
# ------------------------------------------------------------------------------------------------------------------


@statement("001.thm2")
def thm2(ctx):
    import sympy as sp

    _, diff = ob.normal_square_integral_sympy()
    ctx.true(sp.simplify(diff) == 0, label="int N(z; mu, s^2)^2 dz = 1/(2 sqrt(pi) s) (SymPy)")
    b = ctx.adapter("boosting")

    def check(draw):
        d, lo, width, smin, smax, u = draw
        smax = max(smin, smax)
        lo_v, hi_v = np.full(d, lo), np.full(d, lo + width)
        rng = np.random.default_rng(int(u * 2**31))
        means = lo_v + width * rng.random((5, d))
        means[0] = lo_v  # a corner: where Z is smallest
        sig = rng.uniform(smin, smax, size=5)
        sig[0] = smax  # the atom whose mass is K exactly
        tgt = BoostingTarget.mixture([1.0], [lo_v + 0.5 * width], [1.0])
        G = np.asarray(b.gram(BoostingInstance.make(lo_v, hi_v, means, sig, tgt)))
        fc = b.family_constants(lo_v, hi_v, smin, smax)
        ref_fc = ob.family_constants_closed_form(lo_v, hi_v, smin, smax)
        ctx.close(fc.K, ref_fc["K"], rtol=1e-9, label="K = P(N(corner, sigma_max^2 I) in A) (closed form)")
        for k in range(5):
            Zk = ob.box_probability(means[k], sig[k], lo_v, hi_v)
            ref = ob.tn_inner_quad(means[k], sig[k], means[k], sig[k], lo_v, hi_v)
            ctx.close(G[k, k], ref, rtol=1e-9, label="||TN||^2 (implementation) vs QUADPACK")
            ctx.bound(
                G[k, k],
                1.0 / (sig[k] ** d * (2 * math.sqrt(math.pi)) ** d * Zk**2),
                rtol=1e-12,
                label="||TN||^2 <= int N^2 / Z^2",
            )
            ctx.geq(Zk, ref_fc["K"], rtol=1e-9, label="Z(mu, sigma) >= K = min_mu P(N(mu, sigma_max^2) in A)")
        g = np.diag(G)
        ctx.bound(
            scalar(np.max(g[:, None] + g[None, :] - 2 * G)),
            ref_fc["thm2_diam_sq"],
            rtol=1e-12,
            label="diam^2 <= 4/(sigma_min^d (2 sqrt pi)^d K^2)",
        )

    ctx.forall(
        st.tuples(
            st.integers(1, 2),
            st.floats(-3, 0),
            st.floats(0.5, 4),
            st.floats(0.2, 1.0),
            st.floats(0.2, 2.0),
            st.floats(0, 1),
        ),
        check,
        fixed=[(1, -1.0, 2.0, 0.5, 0.5, 0.3)],
        max_examples=n_examples(ctx, 10),
    )


@statement("001.cor3")
def cor3(ctx):
    b = ctx.adapter("boosting")

    def check(draw):
        d, stride, sigma = draw
        inst = BoostingInstance.grid(
            np.full(d, -1.0), np.full(d, 1.0), stride, sigma, BoostingTarget.mixture([1.0], [np.zeros(d)], [1.0])
        )
        eps, M = ob.tn_density_bounds(inst.means, inst.scales, inst.lo, inst.hi)
        G = np.asarray(b.gram(inst))
        # the whole Gram matrix against the oracle's closed form (erf products), then QUADPACK on two entries below
        ctx.close(
            G,
            ob.tn_gram(inst.means, inst.scales, inst.lo, inst.hi),
            rtol=1e-9,
            atol=1e-14,
            label="<s_i, s_j> (implementation) = closed form, every pair",
        )
        g = np.diag(G)
        D2 = g[:, None] + g[None, :] - 2 * G
        diam2, max_n2, leb = scalar(D2.max()), scalar(g.max()), 2.0**d
        ctx.bound(diam2, 4 * max_n2, rtol=1e-12, label="diam^2 <= 4 max ||q||^2")
        ctx.bound(4 * max_n2, 4 * M * M * leb, rtol=1e-12, label="4 max||q||^2 <= 4 M^2 Leb")
        ctx.bound(diam2, 2 * M, rtol=1e-12, label="diam^2 <= 2M (tighter)")
        # the implementation's Gram against QUADPACK on the farthest pair and the heaviest diagonal entry
        i, j = np.unravel_index(np.argmax(D2), G.shape)
        for a, c in ((i, j), (int(np.argmax(g)),) * 2):
            ref = ob.tn_inner_quad(inst.means[a], inst.scales[a], inst.means[c], inst.scales[c], inst.lo, inst.hi)
            ctx.close(G[a, c], ref, rtol=1e-9, atol=1e-14, label="<s_i, s_j> (implementation) vs QUADPACK")

    ctx.forall(
        st.tuples(st.integers(1, 2), st.sampled_from([0.25, 0.5, 1.0]), st.floats(0.15, 2.0)),
        check,
        fixed=[(1, 0.025, 0.5)],
        max_examples=n_examples(ctx, 10),
    )


# ------------------------------------------------------------------------------------------------------------------
# Theorem 6: curvature
# ------------------------------------------------------------------------------------------------------------------


@statement("001.thm6")
def thm6(ctx):
    inst, oracle, _ = i1()
    b = ctx.adapter("boosting")
    eps, M = oracle.eps, oracle.M
    Ldiam = oracle.diameter_sq() / eps
    paper = 4 * M * M * oracle.volume / eps
    ctx.bound(Ldiam, paper, label="L diam^2 <= 4 M^2 Leb(A) / eps")
    # the implementation's diam(A)^2 and its certified lower bound on C_f, max_ij chi^2(s_i || s_j) (the gamma -> 0
    # limit of Eq. 7 with q = s_j, y = s_j + gamma (s_i - s_j)), on I1, I2 and the wide-atom I3 (chi^2 on the oracle's
    # quadrature rule), both below L diam^2
    for name, (inst_k, oracle_k, _) in (("I1", (inst, oracle, None)), ("I2", i2()), ("I3", i_wide())):
        ctx.close(
            b.diameter_sq(inst_k),
            oracle_k.diameter_sq(),
            rtol=1e-9,
            label=f"{name}: diam(A)^2 = max_ij ||s_i - s_j||^2 (implementation vs the oracle's Gram)",
        )
        lower = b.curvature_lower_bound(inst_k)
        T, w = oracle_k.table, oracle_k.w
        chi2 = scalar(np.max((T * T * w) @ (1.0 / T).T - 1.0))
        ctx.close(lower, chi2, rtol=1e-9, label=f"{name}: C_f lower bound = max_ij chi^2(s_i || s_j)")
        ctx.bound(lower, oracle_k.diameter_sq() / oracle_k.eps, label="C_f lower bound <= L diam^2 (I1, I2, I3)")

    def check(draw):
        (cq, wq), s, gam = draw
        q = dense(inst.K, cq, wq)
        y = (1 - gam) * q
        y[s] += gam
        pq = oracle.pdf(q)
        kl = ob.kl_quad_1d(oracle.pdf(y), lambda z: math.log(pq(z)), -1.0, 1.0)
        ctx.bound(
            2.0 / gam**2 * kl, Ldiam, rtol=1e-9, atol=1e-12, label="(2/gamma^2) KL(q + gamma(s-q)||q) <= L diam^2"
        )

    # the worst pair of I1 (the largest chi^2(s_i || s_j)) at a small step, where (2/gamma^2) KL -> chi^2: the bound's
    # closest approach
    T1, w1 = oracle.table, oracle.w
    i, j = np.unravel_index(int(np.argmax((T1 * T1 * w1) @ (1.0 / T1).T)), (inst.K, inst.K))
    ctx.forall(
        st.tuples(mixtures(inst.K), st.integers(0, inst.K - 1), st.floats(0.05, 1.0)),
        check,
        fixed=[(((0,), (1.0,)), 80, 1.0), (((int(j),), (1.0,)), int(i), 0.05)],
        max_examples=n_examples(ctx, 12),
    )


# ------------------------------------------------------------------------------------------------------------------
# Theorem 5 (empirical) and the open-loop step (E001-5)
# ------------------------------------------------------------------------------------------------------------------


@erratum("E001-5")
def e001_5(ctx):
    inst, oracle, fstar = i2()
    res = ctx.adapter("boosting").frank_wolfe(inst, 200, step="fixed", keep_weights=True)
    replay_fw(ctx, oracle, res, "I2 open-loop step", step="fixed")
    h = res.f - fstar
    lows = []
    for t in range(100, 200):
        r2 = oracle.sq_dist(res.weights_history[t], int(res.atom[t]))
        lb = res.gamma[t] ** 2 * r2 / (8 * oracle.M)
        ctx.geq(max(h[t], h[t + 1]), lb, rtol=1e-6, label="max(h_t, h_t+1) >= gamma_t^2 ||s_t - q^t||^2 / (8M)")
        lows.append((t + 2) ** 2 * lb)
    ctx.geq(min(lows), 1e-3, label="(t+2)^2 * lower bound stays >= 1e-3 (||s_t - q^t|| bounded away from 0)")


@statement("001.thm5")
def thm5(ctx):
    inst, oracle, fstar = i2()
    b = ctx.adapter("boosting")
    wopt = optimal_weights(inst)
    ctx.true(bool(np.all(wopt > 0.05)), label="q* has all 4 weights > 0 (relative interior)")
    ctx.true(bool(np.linalg.eigvalsh(oracle.gram)[0] > 0), label="atoms affinely independent in L2")
    res = b.frank_wolfe(inst, 80, step="line_search", keep_weights=True)
    replay_fw(ctx, oracle, res, "I2 line search", step="line_search")
    h = res.f - fstar
    floor = 1e-12  # quadrature / rounding floor of f - f*
    ts = [t for t in range(0, h.size - 10) if h[t + 10] > floor]
    ctx.true(len(ts) >= 30, label="at least 30 windows above the floor")
    for t in ts:
        ctx.bound(
            h[t + 10] / h[t],
            0.05,
            label="h_{t+10} / h_t <= 0.05 in every window (geometric; an O(1/t^k) sequence has ratio -> 1)",
        )
    ctx.count(len(ts))
    # contrast: q* on a face of conv(A) (I1 grid): the same method is not geometric
    p1, o1, f1 = i1()
    r1 = b.frank_wolfe(p1, 200, step="line_search", keep_weights=True)
    replay_fw(ctx, o1, r1, "I1 line search", step="line_search")
    ctx.geq(r1.f[-1] - f1, 1e-5, label="I1 (optimum on a face): h_200 > 1e-5, no geometric decay")


# ------------------------------------------------------------------------------------------------------------------
# Theorem 9 (12) and Theorem 9' (13) with beta from the exact pyramidal width; Eq. (14)
# ------------------------------------------------------------------------------------------------------------------

WIDE_MEANS = (-0.8, 0.0, 0.8)  # three wide / narrow atoms on [-1, 1]: eps / M = 0.135, PWidth^2 / diam^2 = 0.74

WIDE_SCALES = (1.3, 0.5, 1.3)

WIDE_TARGET = ((0.6, 0.4), (-0.8, 0.8), (1.3, 1.3))  # the two wide atoms: q* on the edge {s_0, s_2} of conv(A)


@functools.cache
def i_wide():
    """I3: atoms TN(-0.8, 1.3^2), TN(0, 0.5^2), TN(0.8, 1.3^2) on [-1, 1]; target 0.6 N(-0.8, 1.3^2) + 0.4 N(0.8,
    1.3^2), so q* lies on a face (f* = -log P(A)); beta = eps PWidth^2 / (M diam^2) = 0.10 (delta = 1).  Runs start at
    the narrow middle atom (init=1), f - f* = 0.10."""
    inst = BoostingInstance.make(-1.0, 1.0, WIDE_MEANS, WIDE_SCALES, BoostingTarget.mixture(*WIDE_TARGET))
    return inst, ob.QuadratureProblem(inst), -log_prob_box_mog(*WIDE_TARGET, -1.0, 1.0)


@functools.cache
def thm9_beta_unit(which: str) -> float:
    """beta / delta^2 = mu PWidth^2 / (L diam^2) with mu = 1/M (f's Hessian int h^2/q >= ||h||^2 / max q) and
    L = 1/eps (Lemma 1), PWidth exact from the oracle's Gram matrix (every atom set here is linearly independent)."""
    _, oracle, _ = {"I2": i2, "I3": i_wide}[which]()
    return oracle.eps * pw.pyramidal_width(oracle.gram) ** 2 / (oracle.M * oracle.diameter_sq())


def pairwise_decrease(oracle, alpha, scores, z: int, L: float):
    """(away atom v, good?, guaranteed decrease) of the pairwise direction z - v with the quadratic model L||.||^2."""
    act = np.nonzero(alpha > 0)[0]
    v = int(act[np.argmax(scores[act])])
    if v == z:
        return v, True, 0.0
    idx = np.union1d(act, [z])
    G = oracle.gram[np.ix_(idx, idx)]
    e = np.zeros(idx.size)
    e[np.searchsorted(idx, z)] += 1.0
    e[np.searchsorted(idx, v)] -= 1.0
    n2 = scalar(e @ G @ e)
    lin = scalar(scores[z] - scores[v])  # <grad f, z - v> <= 0
    g_star = -lin / (L * n2)
    if g_star <= alpha[v]:
        return v, True, lin * lin / (2 * L * n2)  # Eq. (14)
    g = alpha[v]
    return v, False, -g * lin - 0.5 * g * g * L * n2  # drop step: gamma clipped to [0, alpha_v]


def check_rates(ctx, b, which: str, n_full: int, n_norm: int, init: int | None = None):
    """Thm 9 (12) for Variant 1 at every step and Thm' 9 (13) for Variant 0 at every good step, delta in {1, 0.5}."""
    inst, oracle, fstar = {"I2": i2, "I3": i_wide}[which]()
    L = 1.0 / oracle.eps
    for delta in (1.0, 0.5):
        beta = delta**2 * thm9_beta_unit(which)
        ctx.true(0 < beta <= delta / 2, label=f"{which}: 0 < beta <= delta/2, so (12) is the printed form")
        kw: dict[str, Any] = {} if delta == 1.0 else {"lmo": "adversarial", "delta": delta}
        for variant, n in (("full", n_full), ("norm", n_norm)):
            if n == 0:
                continue
            name = f"{which} {variant} delta={delta}"
            res = b.corrective(inst, n, variant=variant, init=init, keep_weights=True, **kw)
            replay_corrective(ctx, oracle, res, name, variant=variant, init=init, **kw)
            W = np.asarray(res.weights_history, dtype=float)
            h = res.f - fstar
            scores = [oracle.scores(w) for w in W]
            for t in range(res.atom.size):
                if variant == "full":
                    ctx.bound(h[t + 1], (1 - beta) * h[t], atol=1e-10, label=f"{which} Var 1: (12) every step")
                    continue
                _, good, _ = pairwise_decrease(oracle, W[t], scores[t], res.atom[t], L)
                if good:
                    ctx.bound(h[t + 1], (1 - beta) * h[t], atol=1e-10, label=f"{which} Var 0: (13) on good steps")
            ctx.count(res.atom.size)


@statement("001.thm9")
def thm9(ctx):
    """Thm 9 (12): Variant 1 (exact fully corrective step, delta-approximate LMO) contracts h_t = f(q^t) - f* by
    (1 - beta) at every step, beta = delta^2 mu PWidth^2 / (L diam^2).  Proof as run here: the correction makes q^t
    optimal on conv(S_t), so every active atom has score <q^t, grad> and the pairwise gap equals the FW gap g_t; the FW
    step to the LMO atom (inside the next correction's domain) gains >= min(delta^2 g_t^2 / (2 L diam^2), delta g_t
    / 2); LJ&J's h_t <= g_t^2 / (2 mu PWidth^2) (their Thm 1 proof and mu_f^A >= mu PWidth^2, Thm 6) and h_t <= g_t
    then give h_t+1 <= (1 - min(beta, delta/2)) h_t, the printed (12) whenever beta <= delta/2 (asserted on each
    instance).  Thm' 9 (13): on Variant 0's good steps, Eq. (14) with <-grad, z - v> >= delta (FW gap + away gap)
    gives the same factor.  Constants of f = KL on conv(A) in L2(A): L = 1/eps (Lemma 1), mu = 1/M; PWidth exact
    (oracle); h_t from the oracle's f of the recorded weights.  Plus Eq. (14) per step on the grid instance I1."""
    b = ctx.adapter("boosting")
    for which in ("I3", "I2"):
        G = {"I2": i2, "I3": i_wide}[which]()[1].gram
        ctx.leq(
            pw.pyramidal_width(G),
            pw.pyramidal_width_sampled(G, n_per_cone=500),
            rtol=1e-12,
            label=f"{which}: exact PWidth <= min over 500 sampled directions per face and support",
        )
    check_rates(ctx, b, "I3", n_full=5, n_norm=25, init=1)  # from the narrow middle atom: 2-3 corrective steps
    check_rates(ctx, b, "I2", n_full=6, n_norm=0)  # Var 0 with L = 1/eps = 2e10 does not move on I2
    inst, oracle, fstar = i1()
    L = 1.0 / oracle.eps  # valid smoothness constant (001.lemma1)
    runs = [
        ("norm", b.corrective(inst, 25, variant="norm", keep_weights=True)),
        ("full", b.corrective(inst, 12, variant="full", keep_weights=True)),
    ]
    # Variant 0's default smoothness constant is Lemma 1's L = 1/eps of the atom set (eps from the oracle here)
    explicit = b.corrective(inst, 25, variant="norm", L=L, keep_weights=True)
    ctx.close(
        np.asarray(runs[0][1].weights_history),
        np.asarray(explicit.weights_history),
        rtol=1e-9,
        atol=1e-12,
        label="norm: the default L is 1/eps (same run as L = 1/eps given)",
    )
    replay_corrective(ctx, oracle, explicit, "I1 norm, L = 1/eps given", variant="norm", L=L)
    for name, res in runs:
        replay_corrective(ctx, oracle, res, f"I1 corrective {name}", variant=name)
        W = np.asarray(res.weights_history, dtype=float)
        scores = [oracle.scores(w) for w in W]
        for t in range(res.atom.size):
            _, good, dec = pairwise_decrease(oracle, W[t], scores[t], res.atom[t], L)
            ctx.geq(
                res.f[t] - res.f[t + 1],
                dec,
                atol=1e-12,
                label=f"{name}: eps_t - eps_t+1 >= <grad, z - v>^2/(2L||z - v||^2) ({'good' if good else 'drop'})",
            )
        ctx.count(res.atom.size)
    h = runs[1][1].f - fstar
    for t in range(0, h.size - 5):
        if h[t + 5] > 1e-9:
            ctx.bound(h[t + 5] / h[t], 0.1, label="Var 1: h_{t+5}/h_t <= 0.1 above the floor (linear rate)")

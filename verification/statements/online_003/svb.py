"""Chérief-Abdellatif, Alquier & Khan, *A generalization bound for online variational inference* (seed 003): streaming
variational Bayes (eq. 10, Thm 3, Example 1).

Statements: 003.eq10, 003.thm3, 003.claim-thm3-printed-constant, 003.example1; errata: E003-4, E003-8.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from hypothesis import strategies as st

from refvi.verification.errata import erratum
from refvi.verification.oracles import online_comparators as oc
from refvi.verification.protocol import InstanceSkipped
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.online_003._common import (
    RTOL,
    _floats,
    _labels,
    check_replay,
    check_run_consistency,
    checked_grads,
    forall_online,
    hinge_L,
    hinge_streams,
    oracle_hinge_grads,
    sva_instances,
)

# ------------------------------------------------------------------------------------------------------------------
# SVB: eq. (10), Thm 3 (proven constant; printed constant separately), ball diameter
# ------------------------------------------------------------------------------------------------------------------


@statement("003.eq10")
def eq10(ctx):
    on = ctx.adapter("online")

    def check(inst):
        X, y, eta, s = inst["X"][:2], inst["y"][:2], inst["eta"], inst["s"]
        kw = dict(schedule="constant", eta=eta, s=s)
        res = on.run("svb", X, y, **kw)
        M, S = check_replay(ctx, "svb", X, y, res, kw, what="SVB (constant schedule)")
        # each step against the argmin of (7) from the recorded (checked) state, found by a generic minimizer with
        # the oracle's gradients there (L-BFGS-B, gtol 1e-12: argmin to ~1e-7)
        _, gm, gs = oracle_hinge_grads(X, y, M, S)
        for t in range(X.shape[0]):
            m_star, s_star = oc.svb_prox_argmin(gm[t], gs[t], M[t], S[t], eta)
            ctx.close(
                np.concatenate([M[t + 1], S[t + 1]]),
                np.concatenate([m_star, s_star]),
                rtol=1e-6,
                atol=1e-6,
                label="closed form (10) = numerical argmin of (7)",
            )

    ctx.forall(sva_instances(), check)


@st.composite
def svb_instances(draw):
    X, y, adv = draw(hinge_streams(max_T=60))
    M = draw(_floats(0.2, 3.0))
    S = draw(_floats(0.1, 1.5))
    s = S * draw(_floats(0.05, 1.0))
    return dict(X=X, y=y, adv=adv, M=M, S=S, s=s)


def check_thm3(ctx, on, inst, K_factor=1.0, const=3.0 / math.sqrt(2.0), label="Thm 3 (13), proven constant"):
    """Thm 3, convex case: regret <= const * D L sqrt(T) with K = K_factor * D sqrt(2) / L in the algorithm.  The run
    is replayed first (both projected steps with the oracle's gradients, the losses at the means, the adversary's
    labels), so the regret is computed from checked values only."""
    X, M, S, s = inst["X"], inst["M"], inst["S"], inst["s"]
    T, d = X.shape
    D = math.sqrt(d * (4 * M * M + S * S))
    L = hinge_L(X)
    kw = dict(schedule="convex", K=K_factor * D * math.sqrt(2.0) / L, s=s, mbox=M, sbox=S)
    # Thm 3's own K is asked for through its constants: the learner derives K = D sqrt(2) / L from D and L itself
    run_kw = kw if K_factor != 1.0 else dict(schedule="convex", D=D, L=L, s=s, mbox=M, sbox=S)
    y = _labels(on, "svb", inst, **run_kw)
    res = on.run("svb", X, y, **run_kw)
    check_run_consistency(ctx, inst, X, y, res, kw)
    check_replay(ctx, "svb", X, y, res, kw, adversarial=inst["adv"], what="SVB (convex schedule)")
    _, best = oc.best_hinge_point(X, y, M)
    regret = scalar(np.sum(res.losses)) - best
    ctx.bound(regret, const * D * L * math.sqrt(T), rtol=RTOL, atol=1e-9, label=label)
    return res, y, kw


@st.composite
def svb_ball_instances(draw):
    """A stream with Thm 3's ball parameter sets: radius M of the mean ball, S of the sigma ball, prior scale s with
    the prior s 1 inside the sigma ball (s sqrt(d) <= S)."""
    X, y, adv = draw(hinge_streams(max_T=60))
    M = draw(_floats(0.2, 3.0))
    S = draw(_floats(0.1, 1.5))
    s = S / math.sqrt(X.shape[1]) * draw(_floats(0.05, 1.0))
    return dict(X=X, y=y, adv=adv, M=M, S=S, s=s)


def check_thm3_ball(ctx, on, inst, const=3.0 / math.sqrt(2.0), label="Thm 3 (13) on the balls, proven constant"):
    """Thm 3, convex case, on the ball parameter sets: the run replayed (both projected steps onto the balls, the
    losses, the adversary's labels), the regret against the best point of the mean ball <= const D L sqrt(T)."""
    X, Mb, Sb, s = inst["X"], inst["M"], inst["S"], inst["s"]
    T, d = X.shape
    D = math.sqrt(thm3_D2("ball", Mb, Sb, d))
    L = hinge_L(X)
    run_kw = dict(schedule="convex", D=D, L=L, s=s, mball=Mb, sball=Sb)
    try:
        y = _labels(on, "svb", inst, **run_kw)
        res = on.run("svb", X, y, **run_kw)
    except TypeError as exc:  # an implementation whose run does not take the ball keywords declines
        if "mball" not in str(exc) and "sball" not in str(exc):
            raise
        raise InstanceSkipped(f"online.run('svb') without the ball parameter sets (mball, sball): {exc}") from None
    check_run_consistency(ctx, inst, X, y, res, {})
    # both steps replayed with the oracle's gradients and projections: a_t = K / sqrt t, K = D sqrt(2) / L
    Mt, St = check_replay(ctx, "svb", X, y, res, run_kw, adversarial=inst["adv"], what="SVB (convex schedule, balls)")
    ctx.true(bool(np.all(np.linalg.norm(Mt, axis=1) <= Mb * (1 + 1e-12))), label="||m_t|| <= Mbar in every round")
    ctx.true(
        bool(np.all(St >= 0) and np.all(np.linalg.norm(St, axis=1) <= Sb * (1 + 1e-12))),
        label="sigma_t >= 0, ||sigma_t|| <= Sbar in every round",
    )
    lower, primal = oc.best_hinge_ball(X, y, Mb)
    # the comparator: a certified lower bound of the ball's optimum (so the regret below is never under-stated),
    # within 1e-6 of the primal value at the point it suggests (the optimum is found, not just bounded)
    ctx.leq(primal - lower, 1e-6 * (1.0 + abs(primal)), label="ball comparator: duality gap <= 1e-6")
    ctx.bound(scalar(np.sum(res.losses)) - lower, const * D * L * math.sqrt(T), rtol=RTOL, atol=1e-9, label=label)


#: the fixed instances of the convex case: an adaptive adversary on a repeated pair of points (box and balls)
THM3_FIXED = [dict(X=np.array([[1.0, 2.0], [-1.0, 0.5]] * 20), y=np.ones(40), adv=True, M=1.0, S=1.0, s=1.0)]
THM3_BALL_FIXED = [dict(X=np.array([[1.0, 2.0], [-1.0, 0.5]] * 20), y=np.ones(40), adv=True, M=0.5, S=1.0, s=0.5)]


@statement("003.thm3")
def thm3(ctx):
    def check(on, inst):
        res, y, kw = check_thm3(ctx, on, inst)
        X = inst["X"]
        # the implementation's gradients at the (checked) iterates, compared with the oracle's: the sign fact the
        # proof needs (convex loss): grad_sigma >= 0, hence sigma nonincreasing (clip inactive)
        gs = checked_grads(ctx, on, X, y, res.M, res.S, what="SVB")[2]
        ctx.geq(scalar(np.min(gs)), 0.0, label="bar g_sigma >= 0 (convex loss)")
        # exact in real arithmetic; the float evaluation sigma^2 / (hypot(sigma, u) + u) may round up by a few ulps
        ctx.leq(
            scalar(np.max(res.S[1:] - res.S[:-1] * (1 + 8 * np.finfo(float).eps))), 0.0, label="sigma_t nonincreasing"
        )
        # the algebraic identity of the sigma step (App. 6.5), a_t = eta_t sigma_t^2 = K / sqrt(t):
        # sigma_{t+1}^2 = sigma_t^2 + a^2 g^2 / 2 - a sigma_t g sqrt(1 + x^2), x = a g / (2 sigma_t)
        T = X.shape[0]
        a = kw["K"] / np.sqrt(np.arange(1, T + 1))[:, None]
        sig, sig1 = res.S[:-1], res.S[1:]
        with np.errstate(divide="ignore", invalid="ignore"):
            root = np.where(sig > 0, np.sqrt(sig**2 + (a * gs / 2) ** 2), a * gs / 2)
        rhs = sig**2 + 0.5 * a**2 * gs**2 - a * gs * root
        scale = np.maximum(1.0, sig**2 + (a * gs) ** 2)
        ctx.close(sig1**2 / scale, rhs / scale, atol=1e-10, label="sigma-step identity")

    forall_online(ctx, svb_instances(), check, fixed=THM3_FIXED)

    # the ball parameter sets of the examples: M_m = {||m|| <= Mbar}, M_sigma = {sigma >= 0, ||sigma|| <= Sbar}, with
    # D^2 = 4 Mbar^2 + Sbar^2 (E003-8's corrected D, 003.example1), the learner's projections onto the balls
    forall_online(ctx, svb_ball_instances(), lambda on, inst: check_thm3_ball(ctx, on, inst), fixed=THM3_BALL_FIXED)

    # strongly convex case (14): l_t = H/2 ||theta - z_t||^2, z_t in [-Z, Z]^d, M_m = [-M, M]^d, M_sigma = [0, S]^d
    def check_sc(on, inst):
        H, M, S, Zb, seed, T, d = inst[:7]
        rng = np.random.default_rng(seed)
        Z = rng.uniform(-Zb, Zb, size=(T, d)) if len(inst) == 7 else np.asarray(inst[7], dtype=np.float64)
        kw = dict(schedule="strong", H_sc=H, s=S, mbox=M, sbox=S)
        res = on.run("svb", Z, None, loss="quadratic", H=H, **kw)
        # the step replayed (eq. 10 with a_t = 2/(H t)): bar L = H/2 (||m - z||^2 + ||sigma||^2) has gm = H (m - z)
        # and gs = H sigma, every round, and the losses at the means
        check_replay(ctx, "svb", Z, None, res, kw, loss="quadratic", H=H, what="SVB (strongly convex schedule)")
        L = H * math.sqrt(d * ((M + Zb) ** 2 + S**2))  # sup ||grad bar L|| over the box and the data
        _, best = oc.best_quadratic_point(Z, H, M)
        ctx.bound(
            scalar(np.sum(res.losses)) - best,
            L * L * (1 + math.log(T)) / H,
            rtol=RTOL,
            label="Thm 3 (14) strongly convex",
        )

    forall_online(
        ctx,
        st.tuples(
            _floats(0.1, 5.0),
            _floats(0.1, 3.0),
            _floats(0.05, 2.0),
            _floats(0.1, 3.0),
            st.integers(0, 2**32 - 1),
            st.integers(1, 200),
            st.integers(1, 3),
        ),
        check_sc,
        # where (14) bites: one round at the data's edge z = Zb with M = Zb / 2 (regret H (2 Zb M - M^2) / 2 against
        # L^2 / H = H ((M + Zb)^2 + S^2): ratio 1/6 as S -> 0), and an alternating stream
        fixed=[(1.0, 0.5, 0.05, 1.0, 0, 1, 1, [[1.0]]), (2.0, 0.5, 0.05, 1.0, 0, 8, 1, [[1.0], [-1.0]] * 4)],
    )


@erratum("E003-4")
def e003_4(ctx):
    lhs = sum(0.5 / math.sqrt(t) for t in (1, 2))
    ctx.true(lhs > math.sqrt(2) / 2 + 0.1, label="printed step sum K L^2/(2 sqrt t) <= K L^2 sqrt(T)/2 fails, T=2")
    D, L, K, T = sp.symbols("D L K T", positive=True)
    chain = (D**2 / K + K * L**2) * sp.sqrt(T)
    at_paper = sp.simplify(chain.subs(K, D * sp.sqrt(2) / L) / (D * L * sp.sqrt(T)))
    ctx.true(sp.simplify(at_paper - 3 / sp.sqrt(2)) == 0, label="(D^2/K + K L^2) at K = D sqrt2/L is 3/sqrt2 DL")
    ctx.true(
        sp.simplify(at_paper - sp.sqrt(2)) != 0 and scalar(at_paper) > scalar(sp.sqrt(2)),
        label="the proven constant 3/sqrt2 exceeds the printed sqrt2: the printed bound is not implied",
    )


@statement("003.claim-thm3-printed-constant")
def thm3_printed(ctx):
    """The printed constant sqrt(2) (E003-4: unproven, not refuted) on the boxes and on Thm 3's balls, on drawn and
    adaptive streams, every run replayed first."""
    printed = dict(const=math.sqrt(2.0), label="printed constant sqrt(2) D L sqrt(T)")
    forall_online(ctx, svb_instances(), lambda on, inst: check_thm3(ctx, on, inst, **printed), fixed=THM3_FIXED)
    forall_online(
        ctx,
        svb_ball_instances(),
        lambda on, inst: check_thm3_ball(ctx, on, inst, const=math.sqrt(2.0), label="printed constant on the balls"),
        fixed=THM3_BALL_FIXED,
    )


def _thm3_set_points(kind, Mb, Sb, d, rng, n=64):
    """Candidate points of M = M_m x M_sigma for the Thm 3 examples: the extreme points that attain the suprema
    (axis points / corners) plus random interior and boundary points.  Returns (m, sigma), each (N, d)."""
    if kind == "ball":  # ||m|| <= Mbar, sigma >= 0, ||sigma|| <= Sbar
        eye = np.eye(d)
        u = rng.normal(size=(n, d))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        r = rng.uniform(size=(n, 1)) ** (1.0 / d)
        m = np.vstack([Mb * eye, -Mb * eye, Mb * u, Mb * r * u])
        v = np.abs(rng.normal(size=(n, d)))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        sig = np.vstack([Sb * eye, np.full((1, d), Sb / math.sqrt(d)), np.zeros((1, d)), Sb * v, Sb * r * v])
        # membership (a point outside the set would make the search meaningless)
        assert np.all(np.linalg.norm(m, axis=1) <= Mb * (1 + 1e-12))
        assert np.all(sig >= 0) and np.all(np.linalg.norm(sig, axis=1) <= Sb * (1 + 1e-12))
    else:  # boxes [-Mbar, Mbar]^d x [0, Sbar]^d
        signs = rng.choice([-1.0, 1.0], size=(n, d))
        m = np.vstack([Mb * signs, -Mb * signs, rng.uniform(-Mb, Mb, size=(n, d))])
        sig = np.vstack(
            [
                np.full((1, d), Sb),
                np.zeros((1, d)),
                Sb * rng.integers(0, 2, size=(n, d)),
                rng.uniform(0, Sb, size=(n, d)),
            ]
        )
    return m, sig


def thm3_D2(kind, Mb, Sb, d):
    """Thm 3's D^2 = sup{||m - m'||^2 + ||sigma||^2 : m, m' in M_m, sigma in M_sigma} for the two examples."""
    return (4 * Mb**2 + Sb**2) * (d if kind == "box" else 1)


def thm3_pair_search(kind, Mb, Sb, d, rng):
    """Search over pairs theta = (m, sigma), theta' = (m', sigma') in M x M.

    Returns (proof, diam): ``proof`` is the sup of ||theta - theta'||^2 over pairs whose comparator has sigma' = 0
    (0 in M_sigma): exactly the quantity sum_j (m_{t,j} - m_j)^2 + sigma_{t,j}^2 that App. 6.5 bounds by D^2 (the
    proof reduces every comparator to mu = (m, 0) by Jensen); ``diam`` is the sup over all pairs (sigma' != 0
    allowed), the squared diameter of M."""
    m, sig = _thm3_set_points(kind, Mb, Sb, d, rng)
    dm = np.max(np.sum((m[:, None, :] - m[None, :, :]) ** 2, axis=2))
    # all pairs (theta, theta'), on a joint grid of (m, sigma) x (m', sigma')
    ds = np.sum((sig[:, None, :] - sig[None, :, :]) ** 2, axis=2)
    zero = np.all(sig == 0, axis=1)
    proof = dm + scalar(np.max(ds[:, zero]))
    diam = dm + scalar(np.max(ds))
    return scalar(proof), scalar(diam)


@statement("003.example1")
def example1(ctx):
    def check(inst):
        kind, Mb, Sb, d, seed = inst
        proof, diam = thm3_pair_search(kind, Mb, Sb, d, np.random.default_rng(seed))
        D2 = thm3_D2(kind, Mb, Sb, d)
        # the search only evaluates points of M (checked), so it can never exceed the sup; it contains the attaining
        # pair (antipodal / opposite-corner m, m' with sigma = Sbar e_1 or Sbar 1), so it reaches it: float
        # rounding of a handful of squares and sums, rtol 1e-12
        ctx.bound(proof, D2, rtol=1e-12, label=f"{kind}: searched sup ||m-m'||^2 + ||sigma||^2 <= D^2")
        ctx.geq(proof, D2, rtol=1e-12, label=f"{kind}: D^2 attained by a pair in M x M")
        # D is NOT the diameter of M: for balls with d >= 2 two different axes give ||sigma - sigma'||^2 = 2 Sbar^2.
        # The proof never uses it (its comparator is (m, 0)); recorded so that nobody 'corrects' D to the diameter
        diam_exact = (4 * Mb**2 + (2 if d >= 2 else 1) * Sb**2) if kind == "ball" else D2
        ctx.bound(diam, diam_exact, rtol=1e-12, label=f"{kind}: searched diam(M)^2 <= its closed form")
        ctx.geq(diam, diam_exact, rtol=1e-12, label=f"{kind}: diam(M)^2 attained")

    ctx.forall(
        st.tuples(
            st.sampled_from(("ball", "box")),
            _floats(0.1, 20.0),
            _floats(0.1, 5.0),
            st.integers(1, 5),
            st.integers(0, 2**32 - 1),
        ),
        check,
        fixed=[("ball", 20.0, 1.0, 2, 0), ("ball", 1.0, 1.0, 1, 1), ("box", 1.0, 2.0, 3, 2)],
    )


@erratum("E003-8")
def e003_8(ctx):
    Mb = Sb = 0.1
    m, mp, sig = np.array([Mb, 0.0]), np.array([-Mb, 0.0]), np.array([Sb, 0.0])
    ctx.true(
        np.linalg.norm(m) <= Mb and np.linalg.norm(mp) <= Mb and np.all(sig >= 0) and np.linalg.norm(sig) <= Sb,
        label="the pair lies in M_m x M_m x M_sigma",
    )
    val = math.sqrt(scalar(np.sum((m - mp) ** 2) + np.sum(sig**2)))
    printed = 4 * Mb**2 + Sb**2
    ctx.true(val > printed * 4, label=f"sqrt(||m-m'||^2 + ||sigma||^2) = {val:.4f} > printed D = {printed:.4f}")

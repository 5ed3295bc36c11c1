"""Chérief-Abdellatif, Alquier & Khan, *A generalization bound for online variational inference* (seed 003):
exponentially weighted aggregation (Lemma 1, Def. 2, Thm 1, eq. 18, EWA in 2-D).

Statements: 003.lemma1, 003.def2, 003.thm1, 003.eq18, 003.claim-ewa-2d.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from hypothesis import strategies as st
from scipy.special import logsumexp

from refvi.verification.oracles import online_comparators as oc
from refvi.verification.oracles import online_paths as OP
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.online_003._common import RTOL, _floats

# ------------------------------------------------------------------------------------------------------------------
# Lemma 1, Def. 2 / eq. (2), Thm 1, eq. (18)
# ------------------------------------------------------------------------------------------------------------------


@statement("003.lemma1")
def lemma1(ctx):
    def check(inst):
        n, seed = inst
        rng = np.random.default_rng(seed)
        log_pi = np.log(rng.dirichlet(np.ones(n)))
        h = rng.uniform(-20, 20, size=n)
        rhs = scalar(logsumexp(h + log_pi))
        gibbs = np.exp(h + log_pi - rhs)
        val = lambda p: scalar(p @ h - np.sum(np.where(p > 0, p * (np.log(np.where(p > 0, p, 1)) - log_pi), 0)))
        # equality at the Gibbs measure: rounding only (n <= 50 terms of size <= 40): 1e-12 relative
        ctx.close(val(gibbs), rhs, rtol=1e-12, atol=1e-12, label="E_p h - KL at Gibbs p = log E_pi e^h")
        for p in (rng.dirichlet(np.ones(n)), rng.dirichlet(0.1 * np.ones(n)), np.eye(n)[rng.integers(n)]):
            ctx.bound(val(p), rhs, rtol=1e-12, atol=1e-12, label="E_p h - KL(p||pi) <= log E_pi e^h")

    ctx.forall(st.tuples(st.integers(1, 50), st.integers(0, 2**32 - 1)), check, fixed=[(1, 0), (2, 1), (50, 2)])
    # continuous variant: pi = N(0, 1), h(t) = a t - c t^2 / 2: log E e^h = a^2 / (2 (1 + c)) - log(1 + c) / 2,
    # attained by p = N(a / (1 + c), 1 / (1 + c)); check the closed form against quadrature
    from scipy import integrate

    for a, c in ((0.0, 0.0), (1.5, 0.5), (-2.0, 3.0)):
        q, _ = integrate.quad(
            lambda t: math.exp(a * t - c * t * t / 2 - t * t / 2) / math.sqrt(2 * math.pi),
            -40,
            40,
            epsabs=0,
            epsrel=1e-13,
            limit=400,
        )
        ctx.close(
            math.log(q),
            a * a / (2 * (1 + c)) - 0.5 * math.log(1 + c),
            rtol=1e-11,
            atol=1e-12,
            label="continuous Gibbs value by quadrature",
        )
        ctx.count()


def _quad_loss(theta, y):
    return (theta - y) ** 2 / 4.0


def _abs_loss(theta, y):
    return np.abs(theta - y) / 2.0


@functools.cache
def _gl512():
    """The 512-point Gauss-Legendre rule on [-1, 1] (computed on first use: 0.8 s, not at import)."""
    return np.polynomial.legendre.leggauss(512)


def check_ewa_path(ctx, res, loss, data, eta, log_prior=None, breaks=(), box=None, interval=(-1.0, 1.0), what="EWA"):
    """Every round of a reported EWA run against the oracle's exact tempered posteriors (2) of the first t - 1 losses
    (:func:`refvi.verification.oracles.online_paths.ewa_path_1d` / ``ewa_path_2d``, its own fine quadrature): the
    decisions hat theta_t, the log normalisers log N_t, the losses ell_t(hat theta_t) at those decisions and the mix
    losses -(log N_(t+1) - log N_t) / eta.  Returns the oracle's path."""
    if box is None:
        lo, hi = interval
        path = OP.ewa_path_1d(loss, data, eta, lo, hi, log_prior=log_prior, breaks=breaks)
    else:
        lo, hi = box
        path = OP.ewa_path_2d(loss, data, eta, lo, hi, log_prior=log_prior)
    ln_or, means_or = path[0], path[1]
    means, ln = np.asarray(res.means, dtype=np.float64), np.asarray(res.log_norm, dtype=np.float64)
    ctx.close(means, means_or, atol=1e-9, label=f"{what}: hat theta_t = mean of the exact posterior (2), every t")
    ctx.close(ln, ln_or, rtol=1e-9, atol=1e-9, label=f"{what}: log N_t = the exact log partition, every t")
    _check_ewa_losses(ctx, loss, data, res)
    ctx.close(
        np.asarray(res.mix_loss, dtype=np.float64),
        -(ln[1:] - ln[:-1]) / eta,
        rtol=1e-10,
        atol=1e-10,
        label="mix loss = -(log N_(t+1) - log N_t) / eta",
    )
    return path


#: test functions of the final posterior in Def. 2: E_(p_(T+1)) f for these f, on the implementation's own nodes
_TEST_FNS = (("theta", lambda t: t), ("theta^2", lambda t: t * t), ("cos(3 theta)", lambda t: np.cos(3.0 * t)))


@statement("003.def2")
def def2(ctx):
    on = ctx.adapter("online")

    def check(inst):
        ys, eta = inst
        data = np.array(ys)
        res = on.ewa_1d(_quad_loss, data, eta, -1.0, 1.0, n_nodes=512)
        # the sequential update = the batch formula (2) at every round: decisions and normalisers, exactly
        ln, _, onodes, ow = check_ewa_path(ctx, res, _quad_loss, data, eta, what="Def. 2")
        # the final posterior p_(T+1) as the implementation represents it, on its own nodes by its own rule (any
        # correct one): its expectations are the exact posterior's, and its weights divided by the exact posterior
        # density at its nodes are a quadrature rule of [-1, 1] (they integrate 1, theta, theta^2 exactly)
        nodes = ctx.given(
            np.asarray(res.nodes, dtype=np.float64), "the implementation's quadrature nodes: any rule on [lo, hi]"
        )
        w = np.exp(np.asarray(res.log_post, dtype=np.float64))
        for name, f in _TEST_FNS:
            ctx.close(w @ f(nodes), ow @ f(onodes), atol=1e-9, label=f"E_(p_(T+1)) {name} = the exact posterior's")
        cum = sum((_quad_loss(nodes, yy) for yy in data), np.zeros(nodes.shape))
        log_density = -math.log(2.0) - eta * cum - ln[-1]  # p_(T+1) = pi exp(-eta sum l) / N_(T+1), pi = 1/2
        implied = np.exp(np.asarray(res.log_post, dtype=np.float64) - log_density)
        for k in range(3):
            ctx.close(
                implied @ nodes**k,
                (1.0 - (-1.0) ** (k + 1)) / (k + 1),
                atol=1e-9,
                label=f"weights / exact density at the nodes integrate theta^{k} over [-1, 1]",
            )
        # Gibbs (oracle only): p_{T+1} minimizes E_p sum l + KL(p || pi) / eta over distributions on a fine rule
        z, wq = _gl512()
        cumq = sum((_quad_loss(z, yy) for yy in data), np.zeros_like(z))
        lb = np.log(wq) - eta * cumq
        lb -= logsumexp(lb)
        lpi = np.log(wq / wq.sum())
        obj = lambda lp: scalar(np.exp(lp) @ (cumq + (lp - lpi) / eta))
        best = obj(lb)
        rng = np.random.default_rng(len(ys))
        for _ in range(5):
            lp = lb + rng.normal(0, 0.3, size=lb.size)
            lp -= logsumexp(lp)
            ctx.geq(obj(lp), best, atol=1e-12, label="perturbed p does not beat the Gibbs posterior")

    ctx.forall(
        st.tuples(st.lists(_floats(-1, 1), min_size=0, max_size=15), _floats(0.05, 5.0)),
        check,
        fixed=[([1.0, -1.0, 0.5], 1.0)],
    )


_TILT_LOC, _TILT_SCALE = 0.4, 0.5


_TILT_LOGZ = math.log(
    0.5
    * (
        math.erf((1.0 - _TILT_LOC) / (_TILT_SCALE * math.sqrt(2.0)))
        - math.erf((-1.0 - _TILT_LOC) / (_TILT_SCALE * math.sqrt(2.0)))
    )
)


def _tilted_log_prior(theta):
    """Normalised log-density of N(0.4, 0.5^2) truncated to [-1, 1] (scalar or array): a prior the uniform one is
    not, so an EWA that ignores ``log_prior`` shows in the partition function and the posterior means."""
    z = (np.asarray(theta, dtype=np.float64) - _TILT_LOC) / _TILT_SCALE
    return -0.5 * z * z - math.log(_TILT_SCALE * math.sqrt(2.0 * math.pi)) - _TILT_LOGZ


def _thm1_instance(inst, on):
    ys, eta, kind = inst[:3]
    prior = _tilted_log_prior if len(inst) > 3 and inst[3] == "tilted" else None
    data = np.array(ys)
    loss = _quad_loss if kind == "quadratic" else _abs_loss
    res = on.ewa_1d(
        loss, data, eta, -1.0, 1.0, log_prior=prior, n_nodes=2000, breaks=data if kind == "absolute" else ()
    )
    return data, loss, res, prior


THM1_STRAT = st.tuples(
    st.lists(_floats(-1, 1), min_size=1, max_size=30),
    _floats(0.05, 5.0),
    st.sampled_from(("quadratic", "absolute")),
    st.sampled_from(("uniform", "tilted")),
)


THM1_FIXED = [
    ([1.0, -1.0] * 10, 2.0, "absolute", "uniform"),
    ([1.0] * 25, 0.1, "quadratic", "uniform"),
    ([0.3], 5.0, "absolute", "uniform"),
    ([-0.8, 0.9, -0.7] * 3, 1.5, "quadratic", "tilted"),
]


# Accuracy of the composite Gauss-Legendre EWA (panels split at the kinks y_t of |theta - y_t|, ~2000 nodes): the
# log-normalizers agree with adaptive quadrature to < 1e-11 on these instances, so atol = 1e-9 on sums of <= 30
# terms bounded by 1 is the oracle's accuracy with margin.


def _check_ewa_losses(ctx, loss, data, res):
    """The reported losses are ell_t at the reported decisions hat theta_t, every round (recomputed, not trusted)."""
    means = np.asarray(res.means, dtype=np.float64)
    want = np.array(
        [
            scalar(np.ravel(loss(means[t] if means.ndim > 1 else np.array([means[t]]), data[t]))[0])
            for t in range(len(data))
        ]
    )
    ctx.close(
        np.asarray(res.losses, dtype=np.float64),
        want,
        rtol=1e-12,
        atol=1e-14,
        label="reported loss of round t = ell_t(hat theta_t), every t",
    )


@statement("003.thm1")
def thm1(ctx):
    on = ctx.adapter("online")

    def check(inst):
        data, loss, res, prior = _thm1_instance(inst, on)
        eta, T = inst[1], data.size
        lse = oc.ewa_log_partition(
            lambda t: scalar(sum(loss(np.array([t]), yy)[0] for yy in data)),
            eta,
            -1.0,
            1.0,
            log_prior=None if prior is None else (lambda t: scalar(prior(t))),
            breaks=list(data),
        )
        rhs = eta * T / 8.0 - lse / eta
        # every decision (hence every loss) and normaliser against the oracle's exact path
        check_ewa_path(ctx, res, loss, data, eta, prior, data if inst[2] == "absolute" else (), what="Thm 1")
        ctx.bound(scalar(np.sum(res.losses)), rhs, rtol=RTOL, atol=1e-9, label="Thm 1 (3), B = 1")
        # the telescoping normalizer of the proof, log N_{T+1} = log E_pi exp(-eta sum l), by adaptive quadrature
        ctx.close(res.log_norm[-1], lse, rtol=1e-9, atol=1e-9, label="log N_{T+1} = exact log partition")

    ctx.forall(THM1_STRAT, check, fixed=THM1_FIXED)


@statement("003.eq18")
def eq18(ctx):
    on = ctx.adapter("online")

    def check(inst):
        data, loss, res, prior = _thm1_instance(inst, on)
        eta = inst[1]
        check_ewa_path(ctx, res, loss, data, eta, prior, data if inst[2] == "absolute" else (), what="(18)")
        for t in range(data.size):
            ctx.bound(res.losses[t], eta / 8.0 + res.mix_loss[t], rtol=RTOL, atol=1e-9, label=f"(18) at t={t + 1}")
        # log N_t halfway against adaptive quadrature of the first t - 1 losses (the oracle path's cross-check)
        ln = np.asarray(res.log_norm, dtype=np.float64)
        h = data.size // 2
        lse = oc.ewa_log_partition(
            lambda th: scalar(sum(loss(np.array([th]), yy)[0] for yy in data[:h])),
            eta,
            -1.0,
            1.0,
            log_prior=None if prior is None else (lambda th: scalar(prior(th))),
            breaks=list(data[:h]),
        )
        ctx.close(ln[h], lse, rtol=1e-9, atol=1e-9, label=f"log N_{h + 1} = exact log partition of {h} rounds")

    ctx.forall(THM1_STRAT, check, fixed=THM1_FIXED)
    # negative control: a SAMPLE of p_t instead of its mean breaks (18) (no Jensen step).  Round 1, uniform prior on
    # [-1, 1], l_1 = (theta - 1)^2 / 4, eta = 1: the sample theta = -1 suffers 1 > 1/8 - log E e^{-l} = 0.4814...
    res = on.ewa_1d(_quad_loss, np.array([1.0]), 1.0, -1.0, 1.0, n_nodes=2000)
    check_ewa_path(ctx, res, _quad_loss, np.array([1.0]), 1.0, what="(18), one round")
    sample_loss = scalar(_quad_loss(np.array([-1.0]), 1.0)[0])
    ctx.geq(sample_loss, 1.0 / 8.0 + res.mix_loss[0] + 0.1, label="negative control: (18) fails at a sample")


# ------------------------------------------------------------------------------------------------------------------
# EWA in two dimensions (Algorithm 1 on a box): Thm 1, (18) and the exact posterior
# ------------------------------------------------------------------------------------------------------------------


def _lin_loss(theta, D):
    """(y - <theta, x>)^2 / 4 with x in [-1/2, 1/2]^2, y in [-1, 1], theta in [-1, 1]^2: values in [0, 1] (B = 1),
    coupling the two coordinates (the partition function does not factorize)."""
    x, y = D
    return (y - np.asarray(theta, dtype=np.float64) @ np.asarray(x, dtype=np.float64)) ** 2 / 4.0


@st.composite
def ewa2d_instances(draw):
    T = draw(st.integers(1, 10))
    xs = draw(st.lists(st.tuples(_floats(-0.5, 0.5), _floats(-0.5, 0.5)), min_size=T, max_size=T))
    ys = draw(st.lists(_floats(-1, 1), min_size=T, max_size=T))
    return dict(
        data=[(np.array(x), y) for x, y in zip(xs, ys, strict=True)],
        eta=draw(_floats(0.05, 5.0)),
        prior=draw(st.sampled_from(("uniform", "tilted"))),
    )


EWA2D_FIXED = [
    dict(
        data=[(np.array([0.5, -0.5]), 1.0), (np.array([0.5, 0.5]), -1.0), (np.array([-0.5, 0.3]), 0.7)],
        eta=2.0,
        prior="tilted",
    ),
    dict(data=[(np.array([0.5, 0.5]), 1.0)] * 8, eta=0.3, prior="uniform"),
]


@statement("003.claim-ewa-2d")
def ewa_2d_claims(ctx):
    on = ctx.adapter("online")
    box = (np.array([-1.0, -1.0]), np.array([1.0, 1.0]))

    def check(inst):
        data, eta = inst["data"], inst["eta"]
        tilted = inst["prior"] == "tilted"
        prior = (lambda th: _tilted_log_prior(th[:, 0]) + _tilted_log_prior(th[:, 1])) if tilted else None
        res = on.ewa_2d(_lin_loss, data, eta, *box, log_prior=prior, n_nodes=48)
        T = len(data)
        # every decision, loss, normaliser and mix loss against the oracle's exact path (tensor Gauss-Legendre,
        # validated against dblquad to 1e-15 in tests/verification/test_oracles.py)
        ln = check_ewa_path(ctx, res, _lin_loss, data, eta, prior, box=box, what="2-D")[0]
        ctx.bound(
            scalar(np.sum(res.losses)), eta * T / 8.0 - ln[-1] / eta, rtol=RTOL, atol=1e-9, label="Thm 1 (3), d = 2"
        )
        for t in range(T):
            ctx.bound(res.losses[t], eta / 8.0 + res.mix_loss[t], rtol=RTOL, atol=1e-9, label=f"(18) at t={t + 1}")

    ctx.forall(ewa2d_instances(), check, fixed=EWA2D_FIXED, max_examples=min(ctx.profile.max_examples, 12))

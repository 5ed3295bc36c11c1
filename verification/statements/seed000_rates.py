"""Seed 000 (Domke, Garrigos & Gower), rate theorems of §3 and §9 and the VI corollaries of §4: Thms 6, 7, 9, 10,
27, Lemma 28, Cors 11, 12, 30, with errata E000-4 (Thm 9 Eq. 13) and E000-7 (Lemma 28 and the 1/sqrt(T) bounds of
Thm 7 and Thm 10 Eq. 14 that rest on it).

Three kinds of evidence:

* the one-step inequalities the proofs rest on, checked exactly in conditional expectation: E over u ~ N(0, I) by a
  tensor Gauss-Hermite rule whose nodes are fed one by one to the implementation's optimizer (T = 1), compared
  with the proof's chain of upper bounds computed from the oracles (exact l, grad l, w*, mode);
* the rates themselves, statistically: seeded repetitions of the implementation's optimizer, the objective gap or
  distance computed exactly (closed form for Gaussian / linear targets, quadrature for logistic ones), and
  ``ctx.mean_leq`` (false alarm <= 1e-6 per check);
* the generic scalar recursions of Thm 27 and Lemma 28 exactly, and the errata on generic instances whose
  expectations are exact (:func:`..oracles.rates.multiplicative_noise_moments`).

Constants: M, mu from the oracle model (:func:`..oracles.hessian_bounds.model_constants`, never the implementation),
a and b from Thm 26 (energy: a = 2(d+3)M^2, b = a ||w* - wbar||^2; entropy on W_M: a = 4(d+3)M^2,
b = a ||w* - wbar||^2 + 2dM, erratum E000-3).  The optimizer under test is reached only through
``ctx.impl.prox_sgd`` / ``ctx.impl.proj_sgd``, with the target as a plain ``TargetSpec`` record.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from refvi.verification.errata import erratum
from refvi.verification.oracles import hessian_bounds as hb
from refvi.verification.oracles import rates as ro
from refvi.verification.oracles import sgd_reference
from refvi.verification.oracles import vi_objective as vo
from refvi.verification.oracles.quadrature import tensor_rule
from refvi.verification.protocol import datasets
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import statement

SRC = "Domke, Garrigos & Gower (seed 000)"
ALPHA = 1e-6


# ------------------------------------------------------------------------------------------------------- instances
class Instance:
    """An oracle model, the target spec handed to the implementation, and the model's exact constants (from the
    oracle, never the implementation) and optimum in V = ``structure``."""

    def __init__(self, model, structure):
        self.model, self.structure = model, structure
        self.target = specs.from_model(model)
        self.mu, self.M = hb.model_constants(model)
        self.d = self.target.dim
        self.ms, self.Cs, self.fs = vo.solve(model, structure)
        self.zbar = ro.mode(model)
        self.dist_bar = float(np.sum((self.ms - self.zbar) ** 2) + np.sum(self.Cs ** 2))   # ||w* - wbar||^2

    def ab(self, estimator):
        if estimator == "energy":
            a = 2.0 * (self.d + 3) * self.M**2
            return a, a * self.dist_bar
        a = 4.0 * (self.d + 3) * self.M**2
        return a, a * self.dist_bar + 2.0 * self.d * self.M       # E000-3: 2 d L with L = M

    def dist(self, m, C):
        return float(np.sum((m - self.ms) ** 2) + np.sum((C - self.Cs) ** 2))

    def gap(self, m, C):
        return vo.objective(self.model, m, C) - self.fs


def gaussian(rng, d, kappa=1.5):
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    lam = np.exp(rng.uniform(0.0, math.log(kappa), d))
    lam[0] = 1.0
    P = (Q * lam) @ Q.T
    P = 0.5 * (P + P.T)
    return {"kind": "gaussian", "mean": rng.standard_normal(d), "precision": P}


def linear(rng, N, d, scale=0.3):
    return {"kind": "linear", "X": scale * rng.standard_normal((N, d)), "y": rng.standard_normal(N),
            "noise_scale": 1.0, "prior_scale": 1.0}


def logistic(rng, N, d, scale=0.5):
    return {"kind": "logistic", "X": scale * rng.standard_normal((N, d)),
            "y": np.where(rng.random(N) < 0.5, -1.0, 1.0), "prior_scale": 1.0}


def real_linear():
    return datasets.model_for("diabetes")        # 442 x 11, standardized with intercept, noise and prior scale 1


def start_point(inst, rng, structure, scale=1.0):
    """A w^0 in the domain: tril with a positive diagonal, or symmetric in W_M."""
    d = inst.d
    m = inst.ms + scale * rng.standard_normal(d)
    if structure == "tril":
        C = np.tril(0.3 * scale * rng.standard_normal((d, d)), -1) + np.diag(rng.uniform(0.5, 1.5, d))
    else:
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        C = (Q * (1.0 / math.sqrt(inst.M) + rng.uniform(0.0, 1.0, d))) @ Q.T
        C = 0.5 * (C + C.T)
    return m, C


def run(ctx, kind, inst, m0, C0, gammas, U, weights=None):
    """The optimizer under test (``ctx.impl``): returns (m_T, C_T, m_avg, C_avg)."""
    if kind == "prox":
        out = ctx.impl.prox_sgd(inst.target, m0, C0, gammas, U, "energy", inst.structure, weights)
    else:
        out = ctx.impl.proj_sgd(inst.target, m0, C0, gammas, U, inst.M, "entropy", inst.structure, weights)
    return tuple(np.asarray(x, dtype=np.float64) for x in out)


def _few(ctx, n):
    """Hypothesis examples for the Gauss-Hermite one-step checks: n in ci, the profile's count in deep."""
    return n if ctx.profile.name == "ci" else max(n, ctx.profile.max_examples // 10)


def repetitions(ctx, base=64):
    return base * ctx.profile.mc_scale


def draws(ctx, stream, R, T, d, S=1):
    return ctx.rng(stream).standard_normal((R, T, S, d))


#: slack on a measured decay exponent (:meth:`Context.decay`): O(1/T) rates are measured in their noise-dominated
#: regime (slopes -0.94 to -1.07 here); the theta-averaged O(1/sqrt T) rates approach -1/2 from above, slowly (the
#: theta weights favour the first T/(4(d+3)) iterates, still bias-dominated at T ~ 10^3: slopes -0.30 to -0.68)
SLACK_1_OVER_T = 0.2
SLACK_1_OVER_SQRT_T = 0.25


def curve(ctx, kind, inst, m0, C0, Ts, schedule, R, stream, *, weights=None, metric="dist"):
    """The implementation's optimizer run R times to each horizon T in ``Ts`` with steps ``schedule(T)``: per T, the
    draws of ||w^T - w*||^2 (``metric="dist"``) or of the exact gap f(wbar^T) - f* of the average weighted by
    ``weights(T, steps)`` (``metric="gap"``)."""
    out = []
    for T in Ts:
        gam = schedule(T)
        wts = None if weights is None else weights(T, gam)
        UU = draws(ctx, f"{stream}/{T}", R, gam.size, inst.d)
        runs = (run(ctx, kind, inst, m0, C0, gam, UU[r], wts) for r in range(R))
        out.append([inst.dist(*o[:2]) if metric == "dist" else inst.gap(*o[2:]) for o in runs])
    return out


def check_rate(ctx, Ts, curves, bound_of, exponent, slack, label):
    """The theorem's bound at every horizon (``mean_leq``) and its exponent over all of them (``decay``)."""
    for T, vals in zip(Ts, curves):
        ctx.mean_leq(vals, bound_of(T), alpha=ALPHA, label=f"{label}, T = {T}")
    ctx.decay(Ts, curves, exponent, slack=slack, alpha=ALPHA, label=f"{label}: decay exponent")


# ------------------------------------------------------------------------------------------- one-step machinery
def one_step_moments(ctx, kind, inst, m, C, gamma, order=10):
    """Per Gauss-Hermite node u: the implementation's w^{t+1} and the oracle's sample gradient; returns the rule
    weights W, the squared distances ||w^{t+1} - w*||^2, the un-prox'ed ||w^t - gamma g - ... ||^2 terms and g."""
    U, W = tensor_rule(inst.d, order)
    est = "energy" if kind == "prox" else "entropy"
    out = []
    for u in U:
        m1, C1, _, _ = run(ctx, kind, inst, m, C, np.array([gamma]), u[None, None, :])
        gm, gC = ro.energy_sample(inst.model, m, C, u, inst.structure)
        if est == "entropy":
            gC = gC - ro.proj(np.linalg.inv(C).T, inst.structure)
        out.append((m1, C1, gm, gC))
    return U, W, out


# ------------------------------------------------------------------------------------------- Defs. 5 and 8
def _reference_params(model):
    """The raw arrays :func:`..oracles.sgd_reference.sgd` takes for an oracle model."""
    k = model["kind"]
    if k == "gaussian":
        return (model["mean"], model["precision"])
    if k == "linear":
        return (model["X"], model["y"], 1.0 / model["noise_scale"] ** 2, 1.0 / model["prior_scale"] ** 2)
    return (model["X"], model["y"], 1.0 / model["prior_scale"] ** 2)


def _replay(ctx, method, args):
    """T steps of the implementation's optimizer on fixed base samples against the plain-NumPy reference loop
    (oracles.sgd_reference, written from Defs. 5 / 8 with numpy only), iterate and average.  Data sizes straddle the
    blocking of fused kernels (N = 5 < 16, N = 16, N = 37 = 2 blocks + a remainder) and the noise and prior scales
    are not 1, so 1/s and 1/s^2 differ."""
    kind, d, S, seed, clip_active, N, (sn, sp) = args
    rng = np.random.default_rng(seed)
    model = {"gaussian": lambda: gaussian(rng, d, kappa=3.0), "linear": lambda: linear(rng, N, d),
             "logistic": lambda: logistic(rng, N, d)}[kind]()
    if kind == "linear":
        model["noise_scale"], model["prior_scale"] = sn, sp
    elif kind == "logistic":
        model["prior_scale"] = sp
    structure = "tril" if method == "prox" else "sym"
    inst = Instance(model, structure)
    T = 3
    m0, C0 = start_point(inst, rng, structure)
    if clip_active:       # start below the floor 1/sqrt(M): the first projection (or prox) must act
        C0 = np.eye(d) * (0.2 / math.sqrt(inst.M)) if structure == "sym" else np.diag(rng.uniform(0.01, 0.05, d))
    gammas = rng.uniform(0.2, 1.0, T) / (2 * inst.M)
    U = rng.standard_normal((T, S, d))
    weights = rng.dirichlet(np.ones(T + 1))
    got = run(ctx, method, inst, m0, C0, gammas, U, weights)
    ref = sgd_reference.sgd(method, kind, _reference_params(model), m0, C0, U, gammas,
                            "energy" if method == "prox" else "entropy", structure, inst.M, weights)
    scale = 1.0 + max(float(np.max(np.abs(x))) for x in ref)
    # two float64 evaluations of the same three updates (BLAS vs loops, eigh vs eigh): rounding only
    for name, a, b in zip(("m_T", "C_T", "m_avg", "C_avg"), got, ref):
        ctx.close(a, b, atol=1e-10 * scale, label=f"{method}-SGD {kind} d={d} S={S}: {name} == reference")
    if method == "proj":
        ctx.geq(np.linalg.eigvalsh(got[1])[0], 1.0 / math.sqrt(inst.M), rtol=1e-10,
                label="Proj-SGD iterate lies in W_M (lambda_min >= 1/sqrt(M))")
        # in V = S^d up to the rounding of Q diag(lambda) Q^T (a few ulp of the largest entry)
        ctx.close(got[1], got[1].T, atol=1e-14 * scale, label="Proj-SGD iterate is symmetric")
    else:
        ctx.close(got[1], np.tril(got[1]), atol=0.0, label="Prox-SGD iterate is lower triangular")
        ctx.geq(np.min(np.diag(got[1])), 0.0, label="Prox-SGD iterate has a positive diagonal")


_SCALES = st.sampled_from(((1.0, 1.0), (0.5, 2.0), (2.5, 0.7)))
_REPLAY = st.tuples(st.sampled_from(("gaussian", "linear", "logistic")), st.integers(1, 4), st.sampled_from((1, 4)),
                    st.integers(0, 2**31 - 1), st.booleans(), st.sampled_from((5, 16, 37)), _SCALES)


@statement("000.def5", title="Prox-SGD iterates w <- prox_{gamma h}(w - gamma g_energy) and their weighted average, "
                             "replayed exactly against a plain-NumPy loop written from the definition",
           source=f"{SRC}, Def. 5 with Eq. (6) and Lemma 31", kind="exact", uses=("prox_sgd",))
def def5(ctx):
    ctx.forall(_REPLAY, lambda args: _replay(ctx, "prox", args),
               fixed=[("logistic", 2, 1, 0, True, 37, (1.0, 2.0)), ("logistic", 3, 1, 3, False, 16, (1.0, 0.7)),
                      ("linear", 3, 4, 1, False, 5, (0.5, 2.0)), ("linear", 2, 1, 2, True, 37, (2.5, 0.7)),
                      ("gaussian", 4, 4, 4, False, 5, (1.0, 1.0))], max_examples=_few(ctx, 6))


@statement("000.def8", title="Proj-SGD iterates w <- proj_{W_M}(w - gamma g_ent) and their weighted average, "
                             "replayed exactly against a plain-NumPy loop written from the definition",
           source=f"{SRC}, Def. 8 with Eq. (8) and Lemma 32", kind="exact", uses=("proj_sgd",))
def def8(ctx):
    ctx.forall(_REPLAY, lambda args: _replay(ctx, "proj", args),
               fixed=[("logistic", 2, 1, 0, True, 37, (1.0, 2.0)), ("gaussian", 3, 4, 1, True, 5, (1.0, 1.0)),
                      ("linear", 2, 1, 2, False, 16, (0.5, 2.0)), ("linear", 3, 1, 5, True, 37, (2.5, 0.7))],
               max_examples=_few(ctx, 6))


# ---------------------------------------------------------------------------------------------------- Thm 6
@statement("000.thm6", title="Prox-SGD, strongly convex l: E||w^{T+1} - w*||^2 <= (1 - gamma mu)^T ||w^0 - w*||^2 "
                             "+ (2 gamma/mu)(b + M^2 ||w* - wbar||^2) (Eq. 10); decaying step (Eq. 11)",
           source=f"{SRC}, Thm 6 (§3.1, proof §9.3), Eqs. (10), (11)", kind="statistical", uses=("prox_sgd",))
def thm6(ctx):
    # (i) one-step chain in conditional expectation, exact by 10-point-per-axis Gauss-Hermite (the integrands are
    # polynomial in u (E2, E3) or analytic (E1): rule error < 1e-10 relative here, tolerance 1e-9)
    def one_step(inst_args):
        kind_model, d, seed = inst_args
        rng = ctx.rng(f"thm6/one/{kind_model}/{d}/{seed}")
        model = gaussian(rng, d) if kind_model == "gaussian" else linear(rng, 4, d)
        inst = Instance(model, "tril")
        a, b = inst.ab("energy")
        gamma = min(inst.mu / (2 * a), 1 / inst.mu) * float(rng.uniform(0.3, 1.0))
        m, C = start_point(inst, rng, "tril")
        U, W, out = one_step_moments(ctx, "prox", inst, m, C, gamma)
        gsm, gsC = ro.grad_l(inst.model, inst.ms, inst.Cs, "tril")
        e1 = e2 = 0.0
        for w, (m1, C1, gm, gC) in zip(W, out):
            lhs = inst.dist(m1, C1)
            rhs = float(np.sum((m - inst.ms - gamma * (gm - gsm)) ** 2) + np.sum((C - inst.Cs - gamma * (gC - gsC)) ** 2))
            # pathwise: non-expansive prox and the fixed point w* = prox(w* - gamma grad l(w*)) (Lemma 29)
            ctx.bound(lhs, rhs, rtol=1e-10, atol=1e-13, label="pathwise ||w+ - w*||^2 <= ||w - w* - gamma(g - grad l(w*))||^2")
            e1 += w * lhs
            e2 += w * rhs
        D = inst.dist(m, C)
        e3 = (1 - 2 * gamma * inst.mu + 2 * gamma**2 * a) * D + 2 * gamma**2 * (b + inst.M**2 * inst.dist_bar)
        e4 = (1 - gamma * inst.mu) * D + 2 * gamma**2 * (b + inst.M**2 * inst.dist_bar)
        ctx.bound(e1, e2, rtol=1e-9, label="E||w+ - w*||^2 <= E||w - w* - gamma(g - grad l(w*))||^2")
        ctx.bound(e2, e3, rtol=1e-9, label="... <= (1 - 2 gamma mu + 2 gamma^2 a) D + 2 gamma^2 (b + M^2 ||w* - wbar||^2)")
        ctx.bound(e3, e4, rtol=1e-12, label="gamma <= mu/(2a): ... <= (1 - gamma mu) D + 2 gamma^2 (...)")

    ctx.forall(st.tuples(st.sampled_from(["gaussian", "linear"]), st.integers(1, 2), st.integers(0, 10**6)),
               one_step, fixed=[("gaussian", 1, 0), ("linear", 2, 0)], max_examples=_few(ctx, 4))

    # (ii) Eq. (10), constant step, and Eq. (11), decaying min-form step at three horizons with its O(1/T)
    # exponent, statistically
    rng = ctx.rng("thm6/rate")
    for model, T in ((gaussian(rng, 2), 80), (logistic(rng, 6, 2), 80)):
        inst = Instance(model, "tril")
        a, b = inst.ab("energy")
        sig = b + inst.M**2 * inst.dist_bar
        m0, C0 = start_point(inst, rng, "tril", 2.0)
        D0 = inst.dist(m0, C0)
        R = repetitions(ctx)
        gamma = min(inst.mu / (2 * a), 1 / inst.mu)
        UU = draws(ctx, f"thm6/{model['kind']}", R, T + 1, inst.d)
        vals = [inst.dist(*run(ctx, "prox", inst, m0, C0, np.full(T + 1, gamma), UU[r])[:2]) for r in range(R)]
        ctx.mean_leq(vals, (1 - gamma * inst.mu) ** T * D0 + 2 * gamma / inst.mu * sig, alpha=ALPHA,
                     label=f"Eq. (10) on {model['kind']}, T = {T}")

        def min_form(Tn, inst=inst, a=a):
            t = np.arange(Tn)
            return np.minimum(inst.mu / (2 * a), (1 / inst.mu) * (2 * t + 1) / (t + 1) ** 2)

        Ts = (100, 400, 1600)
        curves = curve(ctx, "prox", inst, m0, C0, Ts, min_form, R, f"thm6/dec/{model['kind']}")
        check_rate(ctx, Ts, curves,
                   lambda Tn, a=a, inst=inst, D0=D0, sig=sig: 16 * math.floor(a / inst.mu**2) ** 2 / Tn**2 * D0
                   + sig / inst.mu**2 * 8 / Tn, -1.0, SLACK_1_OVER_T,
                   f"Eq. (11) (min-form decaying step) on {model['kind']}")
        ctx.count()


# ---------------------------------------------------------------------------------------------------- Thm 7
def _theta_weights(theta, T, first):
    """theta^{t+1} on w^t for t = first..first+T-1, over w^0..w^T (normalized)."""
    w = np.zeros(T + 1)
    e = np.arange(T, dtype=float)
    w[first:first + T] = theta ** e
    return w / w.sum()


@statement("000.thm7", title="Prox-SGD, convex l: E[f(wbar^T) - inf f] <= gamma (a ||w^0 - w*||^2/(1 - theta^T) + b), "
                             "theta = 1/(1 + 2 a gamma^2); the gamma = 1/(M sqrt T) bound as corrected by E000-7",
           source=f"{SRC}, Thm 7 (§3.1, proof §9.4)", kind="statistical", erratum="E000-7", uses=("prox_sgd",))
def thm7(ctx):
    # (i) one-step inequality (29): 1/2 E||w+ - w*||^2 - 1/2 ||w - w*||^2 <= -gamma E[f(w+) - f*] + gamma^2 V[g]
    def one_step(inst_args):
        d, seed = inst_args
        rng = ctx.rng(f"thm7/one/{d}/{seed}")
        inst = Instance(gaussian(rng, d, kappa=3.0), "tril")
        gamma = float(rng.uniform(0.2, 1.0)) / inst.M
        m, C = start_point(inst, rng, "tril")
        U, W, out = one_step_moments(ctx, "prox", inst, m, C, gamma)
        gtm, gtC = ro.grad_l(inst.model, m, C, "tril")
        e_dist = e_gap = var = 0.0
        for w, (m1, C1, gm, gC) in zip(W, out):
            e_dist += w * inst.dist(m1, C1)
            e_gap += w * inst.gap(m1, C1)
            var += w * float(np.sum((gm - gtm) ** 2) + np.sum((gC - gtC) ** 2))
        D = inst.dist(m, C)
        ctx.bound(0.5 * e_dist - 0.5 * D + gamma * e_gap, gamma**2 * var, rtol=1e-8, atol=1e-12,
                label="one-step (29): 1/2 E||w+ - w*||^2 - 1/2 D + gamma E gap <= gamma^2 V[g]")

    ctx.forall(st.tuples(st.integers(1, 2), st.integers(0, 10**6)), one_step, fixed=[(2, 0)], max_examples=_few(ctx, 3))

    # (ii) the theta-average bound at gamma = 1/M, and at gamma = 1/(M sqrt T) for three horizons T with the
    # corrected bound and its O(1/sqrt T) exponent, statistically
    rng = ctx.rng("thm7/rate")
    for model, T in ((linear(rng, 5, 2), 100), (logistic(rng, 6, 2), 60)):
        inst = Instance(model, "tril")
        a, b = inst.ab("energy")
        m0, C0 = start_point(inst, rng, "tril", 1.0)
        D0 = inst.dist(m0, C0)
        R = repetitions(ctx, 32)

        def theta_avg(Tn, gam, a=a):
            return _theta_weights(1 / (1 + 2 * a * gam[0] ** 2), Tn, 1)

        def theta_bound(Tn, gamma, a=a, b=b, D0=D0):
            return gamma * (a * D0 / (1 - (1 / (1 + 2 * a * gamma**2)) ** Tn) + b)

        gaps, = curve(ctx, "prox", inst, m0, C0, (T,), lambda Tn: np.full(Tn, 1 / inst.M), R,
                      f"thm7/{model['kind']}/1/M", weights=theta_avg, metric="gap")
        ctx.mean_leq(gaps, theta_bound(T, 1 / inst.M), alpha=ALPHA,
                     label=f"Thm 7 theta-average bound, {model['kind']}, gamma = 1/M, T = {T}")
        Ts = (64, 256, 1024)
        curves = curve(ctx, "prox", inst, m0, C0, Ts, lambda Tn, M=inst.M: np.full(Tn, 1 / (M * math.sqrt(Tn))), R,
                       f"thm7/{model['kind']}/sqrtT", weights=theta_avg, metric="gap")
        for Tn, vals in zip(Ts, curves):
            ctx.mean_leq(vals, theta_bound(Tn, 1 / (inst.M * math.sqrt(Tn))), alpha=ALPHA,
                         label=f"Thm 7 theta-average bound, {model['kind']}, gamma = 1/(M sqrt T), T = {Tn}")
        check_rate(ctx, Ts, curves,
                   lambda Tn, a=a, b=b, D0=D0, M=inst.M: a / math.sqrt(Tn) * D0 * (M / (2 * a) + 1 / M)
                   + b / (M * math.sqrt(Tn)), -0.5, SLACK_1_OVER_SQRT_T,
                   f"Thm 7 1/(M sqrt T) bound (E000-7), {model['kind']}")
        ctx.count()


# ---------------------------------------------------------------------------------------------------- Thm 9
@erratum("E000-4", where="Thm 9, Eq. (13) (decaying step of Proj-SGD)",
         printed="E||w^T - w*||^2 <= (32 a/mu^2) ||w^0 - w*||^2 / T^2 + (2b/mu^2)(8/T)",
         corrected="Thm 27 with L = a/mu, sigma^2 = b/2, mu_hat = mu/2 gives E||w^T - w*||^2 <= "
                   "16 floor(2a/mu^2)^2 ||w^0 - w*||^2 / T^2 + (2b/mu^2)(8/T) (switching schedule of Thm 27)",
         instance="f(w) = w^2/2 on W = R (mu = 1), g = w (1 + xi sqrt(63)), xi = +-1: unbiased, E g^2 = 64 w^2 "
                  "(a = 64, b = 0); w^0 = 1, gamma_t = min{1/128, 2(2t+1)/(t+1)^2}: exact E w_107^2 = 0.2833 > "
                  "printed 32*64/107^2 = 0.1789")
def e000_4(ctx):
    a, mu, T = 64.0, 1.0, 107
    t = np.arange(T)
    for name, gam in (("min form", np.minimum(mu / (2 * a), (2 / mu) * (2 * t + 1) / (t + 1) ** 2)),
                      ("switching form", np.where(t < 4 * math.floor(2 * a / mu**2), mu / (2 * a),
                                                  (2 / mu) * (2 * t + 1) / (t + 1) ** 2))):
        r, _ = ro.multiplicative_noise_moments(gam, mu, a)
        printed = 32 * a / mu**2 / T**2
        corrected = 16 * math.floor(2 * a / mu**2) ** 2 / T**2
        # r is an exact product of T rational-ish factors: rounding ~1e-14 relative
        ctx.geq(r[T], printed + 0.1, label=f"E w_T^2 exceeds the printed Eq. (13) ({name})")
        ctx.bound(r[T], corrected, label=f"corrected Eq. (13) holds ({name})")
        ctx.count()


@statement("000.thm9", title="Proj-SGD, strongly convex f on closed convex W: Eq. (12); decaying step Eq. (13) "
                             "as corrected by E000-4",
           source=f"{SRC}, Thm 9 (§3.2, proof §9.5), Eqs. (12), (13)", kind="statistical", erratum="E000-4",
           uses=("proj_sgd",))
def thm9(ctx):
    # (i) one-step chain (31)-(32) in conditional expectation on W_M (symmetric C), exact by Gauss-Hermite
    def one_step(inst_args):
        d, seed = inst_args
        rng = ctx.rng(f"thm9/one/{d}/{seed}")
        inst = Instance(gaussian(rng, d), "sym")
        a, b = inst.ab("entropy")
        gamma = min(inst.mu / (2 * a), 2 / inst.mu) * float(rng.uniform(0.3, 1.0))
        m, C = start_point(inst, rng, "sym")
        U, W, out = one_step_moments(ctx, "proj", inst, m, C, gamma)
        e1 = e2 = eg2 = 0.0
        for w, (m1, C1, gm, gC) in zip(W, out):
            lhs = inst.dist(m1, C1)
            rhs = float(np.sum((m - gamma * gm - inst.ms) ** 2) + np.sum((C - gamma * gC - inst.Cs) ** 2))
            ctx.bound(lhs, rhs, rtol=1e-10, atol=1e-13, label="pathwise: projection is non-expansive, w* in W_M")
            e1 += w * lhs
            e2 += w * rhs
            eg2 += w * float(np.sum(gm**2) + np.sum(gC**2))
        D = inst.dist(m, C)
        ctx.bound(eg2, a * D + b, rtol=1e-9, label="Thm 26 (E000-3): E||g_ent||^2 <= a D + b on W_M")
        gap = inst.gap(m, C)
        e3 = (1 - inst.mu * gamma / 2) * D - 2 * gamma * gap + b * gamma**2
        ctx.bound(e1, e2, rtol=1e-9, label="E||w+ - w*||^2 <= E||w - gamma g - w*||^2")
        ctx.bound(e2, e3, rtol=1e-9, label="(32): ... <= (1 - mu gamma/2) D - 2 gamma (f(w) - f*) + b gamma^2")

    ctx.forall(st.tuples(st.integers(1, 2), st.integers(0, 10**6)), one_step, fixed=[(2, 0)], max_examples=_few(ctx, 3))

    # (ii) Eq. (12) and corrected Eq. (13) (switching and min-form schedules), statistically
    rng = ctx.rng("thm9/rate")
    inst = Instance(gaussian(rng, 1), "sym")
    a, b = inst.ab("entropy")
    m0, C0 = start_point(inst, rng, "sym", 2.0)
    D0 = inst.dist(m0, C0)
    R = repetitions(ctx)
    T = 60
    gamma = min(inst.mu / (2 * a), 2 / inst.mu)
    UU = draws(ctx, "thm9/const", R, T, 1)
    vals = [inst.dist(*run(ctx, "proj", inst, m0, C0, np.full(T, gamma), UU[r])[:2]) for r in range(R)]
    ctx.mean_leq(vals, (1 - inst.mu * gamma / 2) ** T * D0 + 2 * gamma * b / inst.mu, alpha=ALPHA,
                 label="Eq. (12), T = 60")
    mu_h, L = inst.mu / 2, a / inst.mu

    def switching(T):
        t = np.arange(T)
        return np.where(t < 4 * math.floor(L / mu_h), 1 / (2 * L), (1 / mu_h) * (2 * t + 1) / (t + 1) ** 2)

    def min_form(T):
        t = np.arange(T)
        return np.minimum(inst.mu / (2 * a), (2 / inst.mu) * (2 * t + 1) / (t + 1) ** 2)

    Ts = (400, 1600, 6400)
    for name, schedule in (("switching", switching), ("min form", min_form)):
        curves = curve(ctx, "proj", inst, m0, C0, Ts, schedule, R, f"thm9/{name}")
        check_rate(ctx, Ts, curves, lambda T: 16 * math.floor(2 * a / inst.mu**2) ** 2 * D0 / T**2
                   + 2 * b / inst.mu**2 * 8 / T, -1.0, SLACK_1_OVER_T, f"corrected Eq. (13), {name} schedule")
    ctx.count()


# ---------------------------------------------------------------------------------------------------- Thm 10
@statement("000.thm10", title="Proj-SGD, convex f: E[f(wbar^T) - inf f] <= (gamma/2)(a ||w^0 - w*||^2/(1 - theta^T) "
                              "+ b), theta = 1/(1 + a gamma^2); Eq. (14) as corrected by E000-7",
           source=f"{SRC}, Thm 10 (§3.2, proof §9.6), Eq. (14)", kind="statistical", erratum="E000-7",
           uses=("proj_sgd",))
def thm10(ctx):
    # (i) one-step: 2 gamma (f(w) - f*) <= (1 + a gamma^2) D - E||w+ - w*||^2 + b gamma^2, exact by Gauss-Hermite
    def one_step(inst_args):
        d, seed = inst_args
        rng = ctx.rng(f"thm10/one/{d}/{seed}")
        inst = Instance(gaussian(rng, d, kappa=3.0), "sym")
        a, b = inst.ab("entropy")
        gamma = float(rng.uniform(0.05, 1.0))
        m, C = start_point(inst, rng, "sym")
        U, W, out = one_step_moments(ctx, "proj", inst, m, C, gamma)
        e1 = sum(w * inst.dist(m1, C1) for w, (m1, C1, _, _) in zip(W, out))
        D = inst.dist(m, C)
        ctx.bound(2 * gamma * inst.gap(m, C), (1 + a * gamma**2) * D - e1 + b * gamma**2, rtol=1e-9,
                label="Thm 10 one-step: 2 gamma gap <= (1 + a gamma^2) D - E||w+ - w*||^2 + b gamma^2")

    ctx.forall(st.tuples(st.integers(1, 2), st.integers(0, 10**6)), one_step, fixed=[(2, 0)], max_examples=_few(ctx, 3))

    # (ii) the theta-average bound at gamma = 1/(2M), and at gamma = 1/sqrt T for three horizons T with Eq. (14)
    # (corrected) and its O(1/sqrt T) exponent, statistically
    rng = ctx.rng("thm10/rate")
    for model, T in ((linear(rng, 5, 2), 100), (logistic(rng, 6, 2), 60)):
        inst = Instance(model, "sym")
        a, b = inst.ab("entropy")
        m0, C0 = start_point(inst, rng, "sym", 1.0)
        D0 = inst.dist(m0, C0)
        R = repetitions(ctx, 32)

        def theta_avg(Tn, gam, a=a):
            return _theta_weights(1 / (1 + a * gam[0] ** 2), Tn, 0)

        def theta_bound(Tn, gamma, a=a, b=b, D0=D0):
            return gamma / 2 * (a * D0 / (1 - (1 / (1 + a * gamma**2)) ** Tn) + b)

        gaps, = curve(ctx, "proj", inst, m0, C0, (T,), lambda Tn: np.full(Tn, 1 / (2 * inst.M)), R,
                      f"thm10/{model['kind']}/1/2M", weights=theta_avg, metric="gap")
        ctx.mean_leq(gaps, theta_bound(T, 1 / (2 * inst.M)), alpha=ALPHA,
                     label=f"Thm 10 theta-average bound, {model['kind']}, gamma = 1/(2M), T = {T}")
        Ts = (64, 256, 1024)
        curves = curve(ctx, "proj", inst, m0, C0, Ts, lambda Tn: np.full(Tn, 1 / math.sqrt(Tn)), R,
                       f"thm10/{model['kind']}/sqrtT", weights=theta_avg, metric="gap")
        for Tn, vals in zip(Ts, curves):
            ctx.mean_leq(vals, theta_bound(Tn, 1 / math.sqrt(Tn)), alpha=ALPHA,
                         label=f"Thm 10 theta-average bound, {model['kind']}, gamma = 1/sqrt T, T = {Tn}")
        check_rate(ctx, Ts, curves, lambda Tn, a=a, b=b, D0=D0: 0.5 * D0 / math.sqrt(Tn) * (1 + a) + 0.5 * b / math.sqrt(Tn),
                   -0.5, SLACK_1_OVER_SQRT_T, f"Eq. (14) corrected by E000-7, {model['kind']}")
        ctx.count()


# ------------------------------------------------------------------------------------------- Thm 27, Lemma 28
@statement("000.thm27", title="generic recursion (18) with the switching step 1/(2L) then (1/mu)(2t+1)/(t+1)^2 gives "
                              "Eq. (19): 16 floor(L/mu)^2 r_0/(T+1)^2 + (sigma^2/mu^2) 8/(T+1)",
           source=f"{SRC}, Thm 27 (§9.1), Eqs. (18), (19)", kind="exact", uses=())
def thm27(ctx):
    def check(inst):
        ratio, mu, sigma2, r0, T = inst
        L = ratio * mu
        t = np.arange(T + 1)
        ts = 4 * math.floor(L / mu)
        gam = np.where(t < ts, 1 / (2 * L), (1 / mu) * (2 * t + 1) / (t + 1) ** 2)
        r = ro.worst_case_recursion(gam, mu, sigma2, r0)      # r[T+1]: the largest E||w^{T+1} - w*||^2 under (18)
        bound = 16 * math.floor(L / mu) ** 2 / (T + 1) ** 2 * r0 + sigma2 / mu**2 * 8 / (T + 1)
        # sums of T+1 positive terms: rounding <= (T+1) eps relative; when t* = 0 the exact factor 1 - gamma_0 mu = 0
        # is computed as 1 - (1/mu) mu, up to 2 eps, times r_0
        ctx.bound(r[T + 1], bound, rtol=1e-12, atol=4.5e-16 * r0, label="Eq. (19) bounds the worst-case sequence of (18)")

    ctx.forall(st.tuples(st.floats(0.5, 40.0), st.floats(0.1, 10.0), st.floats(0.0, 10.0), st.floats(0.0, 100.0),
                         st.integers(0, 3000)), check,
               fixed=[(1.0, 1.0, 1.0, 1.0, 0), (10.0, 1.0, 1.0, 100.0, 39), (10.0, 1.0, 1.0, 100.0, 40)])


@erratum("E000-7", where="Lemma 28 proof (first display), hence the 1/sqrt(T) bounds of Thm 7 ('in particular') and "
                         "Thm 10 Eq. (14)",
         printed="1/(1 - theta^T) <= 1/((1 - theta) T), giving gamma (a D/(1 - theta^T) + b) <= (a D/sqrt T)(1/(AB) + "
                 "A/T) + A b/sqrt T",
         corrected="Bernoulli's inequality goes the other way (1 - theta^T <= T(1 - theta)); (1 + B gamma^2)^T >= "
                   "1 + T B gamma^2 gives 1/(1 - theta^T) <= 1 + 1/(A^2 B), so the bound is (a D/sqrt T)(1/(AB) + A) "
                   "+ A b/sqrt T: still O(1/sqrt T), with A in place of A/T",
         instance="Lemma 28 with A = B = a = D = 1, b = 0, T = 100: premise 0.1587 > printed conclusion 0.101. "
                  "Thm 7 on f(w) = w^2/2 (M = 1, h = 0), g = w(1 + xi sqrt 3) (a = 4, b = 0), w^0 = 1, T = 100, "
                  "gamma = 1/10: exact E f(wbar^T) = 0.0907 > printed 0.054.  Thm 10 on the same f with g = w(1 + 3 xi) "
                  "(a = 10), gamma = 1/10, T = 100: exact E f(wbar^T) = 0.161 > printed Eq. (14) 0.055")
def e000_7(ctx):
    T, A, B = 100, 1.0, 1.0
    gamma = A / math.sqrt(T)
    theta = 1 / (1 + B * gamma**2)
    premise = gamma / (1 - theta**T)
    ctx.geq(premise, (1 / math.sqrt(T)) * (1 / (A * B) + A / T) + 0.05, label="Lemma 28: premise > printed conclusion")
    ctx.geq(1 - theta**T, 0.0, label="sanity")
    ctx.bound(1 - theta**T, T * (1 - theta), label="Bernoulli: 1 - theta^T <= T (1 - theta) (the reverse of the proof)")
    # Thm 7 generic instance: exact E f(wbar^T) from second moments (no Monte Carlo)
    M, a = 1.0, 4.0
    gamma = 1 / (M * math.sqrt(T))
    theta = 1 / (1 + 2 * a * gamma**2)
    r, E = ro.multiplicative_noise_moments(np.full(T, gamma), M, a)
    w = _theta_weights(theta, T, 1)
    Ef = 0.5 * M * float(w @ E @ w)
    ctx.geq(Ef, 1 / math.sqrt(T) * (M / 2 + a / (M * T)) + 0.03, label="Thm 7 printed 1/(M sqrt T) bound fails")
    ctx.bound(Ef, gamma * a / (1 - theta**T), label="Thm 7 main (theta) bound holds")
    ctx.bound(Ef, a / math.sqrt(T) * (M / (2 * a) + 1 / M), label="Thm 7 corrected 1/(M sqrt T) bound holds")
    # Thm 10 generic instance, gamma = 1/sqrt T, theta = 1/(1 + a gamma^2), average over w^0..w^{T-1}
    a = 10.0
    gamma = 1 / math.sqrt(T)
    theta = 1 / (1 + a * gamma**2)
    r, E = ro.multiplicative_noise_moments(np.full(T, gamma), 1.0, a)
    w = _theta_weights(theta, T, 0)
    Ef = 0.5 * float(w @ E @ w)
    ctx.geq(Ef, 0.5 / math.sqrt(T) * (1 + a / T) + 0.1, label="Thm 10 printed Eq. (14) fails")
    ctx.bound(Ef, 0.5 / math.sqrt(T) * (1 + a), label="Thm 10 corrected Eq. (14) holds")
    ctx.count(3)


@statement("000.lemma28", title="gamma = A/sqrt(T) turns gamma (a D/(1 - theta^T) + b), theta = 1/(1 + B gamma^2), "
                                "into O(1/sqrt T): (a D/sqrt T)(1/(AB) + A) + A b/sqrt T (E000-7)",
           source=f"{SRC}, Lemma 28 (§9.2)", kind="exact", erratum="E000-7", uses=())
def lemma28(ctx):
    import sympy as sp

    # the corrected key step, symbolically: (1 + x)^T >= 1 + T x for x >= 0, T = 1..6 (Bernoulli)
    x = sp.symbols("x", nonnegative=True)
    for T in range(1, 7):
        diff = sp.expand((1 + x) ** T - 1 - T * x)
        ctx.true(all(c >= 0 for c in sp.Poly(diff, x).all_coeffs()), label=f"(1+x)^{T} - 1 - {T}x has >= 0 coefficients")

    def check(inst):
        A, B, a, D, b, T = inst
        gamma = A / math.sqrt(T)
        # 1 - theta^T = -expm1(-T log1p(B gamma^2)), without the cancellation of 1 - theta when B gamma^2 << 1
        one_minus = -math.expm1(-T * math.log1p(B * gamma**2))
        premise = gamma * (a * D / one_minus + b)
        bound = a / math.sqrt(T) * D * (1 / (A * B) + A) + A * b / math.sqrt(T)
        # equality at T = 1 (Bernoulli is tight there): rounding of a few operations, 1e-12 relative
        ctx.bound(premise, bound, rtol=1e-12, label="corrected Lemma 28")

    ctx.forall(st.tuples(st.floats(0.01, 10), st.floats(0.01, 100), st.floats(0.01, 100), st.floats(0.0, 10),
                         st.floats(0.0, 10), st.integers(1, 10**6)), check, fixed=[(1.0, 1.0, 1.0, 1.0, 0.0, 100)])


# ---------------------------------------------------------------------------------------------------- Cor 30
@statement("000.cor30", title="Prox-SGD with gamma = A log T/T, A >= 1/mu, T/log T >= 2aA/mu: E||w^{T+1} - w*||^2 <= "
                              "||w^0 - w*||^2/T + (2A log T/(mu T))(b + M^2 ||w* - wbar||^2)",
           source=f"{SRC}, Cor 30 (§9.3)", kind="statistical", uses=("prox_sgd",))
def cor30(ctx):
    rng = ctx.rng("cor30")
    inst = Instance(gaussian(rng, 1), "tril")
    a, b = inst.ab("energy")
    A = 1 / inst.mu
    m0, C0 = start_point(inst, rng, "tril", 2.0)
    D0 = inst.dist(m0, C0)
    R = repetitions(ctx)
    sig = b + inst.M**2 * inst.dist_bar
    Ts = (120, 480, 1920)
    for T in Ts:
        ctx.geq(T / math.log(T), 2 * a * A / inst.mu, label=f"T/log T >= 2aA/mu (hypothesis), T = {T}")
        gamma = A * math.log(T) / T
        ctx.bound((1 - gamma * inst.mu) ** T, 1 / T, label=f"(1 - gamma mu)^T <= T^{{-mu A}} <= 1/T, T = {T}")
    # the iterate w^{T+1}: T + 1 steps of gamma = A log T / T; the rate log T / T has local exponent
    # -1 + 1/log T, so the exponent is checked against the least-squares slope of log(log T / T) itself
    curves = curve(ctx, "prox", inst, m0, C0, Ts, lambda T: np.full(T + 1, A * math.log(T) / T), R, "cor30/run")
    lt = np.log(Ts)
    shape_exponent = float(np.polyfit(lt, np.log(np.log(Ts) / np.asarray(Ts)), 1)[0])
    check_rate(ctx, Ts, curves, lambda T: D0 / T + 2 * A * math.log(T) / (inst.mu * T) * sig, shape_exponent,
               SLACK_1_OVER_T, "Cor 30 bound")
    ctx.count()


# ---------------------------------------------------------------------------------------------------- Cors 11, 12
@statement("000.cor11", title="Prox-SGD for VI (triangular C, g_energy): gamma = 1/(M sqrt T) gives "
                              "E[f(wbar^T) - f*] = O(1/sqrt T); the decaying step of Thm 6 gives E||w^T - w*||^2 = O(1/T)",
           source=f"{SRC}, Cor 11 (§4)", kind="statistical", uses=("prox_sgd",))
def cor11(ctx):
    # the O(.) with the explicit constant of Thm 7 + Lemma 28 (corrected, E000-7), on real data (diabetes, d = 11),
    # at three horizons.  No exponent here: with mu/M ~ 1e-3 the run is bias-dominated far beyond T = 1600 (measured
    # slope -0.09); the O(1/sqrt T) exponent of this step is checked in 000.thm7 where the regime is reached.
    inst = Instance(real_linear(), "tril")
    a, b = inst.ab("energy")
    m0, C0 = np.zeros(inst.d), np.eye(inst.d)
    D0 = inst.dist(m0, C0)
    R = repetitions(ctx, 8)
    Ts = (100, 400, 1600)

    def weights(T, gam):
        return _theta_weights(1 / (1 + 2 * a * gam[0] ** 2), T, 1)

    curves = curve(ctx, "prox", inst, m0, C0, Ts, lambda T: np.full(T, 1 / (inst.M * math.sqrt(T))), R, "cor11",
                   weights=weights, metric="gap")
    for T, gaps in zip(Ts, curves):
        bound = a / math.sqrt(T) * D0 * (inst.M / (2 * a) + 1 / inst.M) + b / (inst.M * math.sqrt(T))
        ctx.mean_leq(gaps, bound, alpha=ALPHA, label=f"diabetes: E gap <= C/sqrt(T), T = {T}")
        ctx.count()
    # strongly concave case: Thm 6 decaying step on a small logistic model, E||w^T - w*||^2 <= Eq. (11) = O(1/T),
    # with its exponent
    rng = ctx.rng("cor11/sc")
    inst = Instance(logistic(rng, 6, 2), "tril")
    a, b = inst.ab("energy")
    m0, C0 = start_point(inst, rng, "tril", 1.0)
    D0 = inst.dist(m0, C0)
    sig = b + inst.M**2 * inst.dist_bar
    R = repetitions(ctx, 32)

    def min_form(T):
        t = np.arange(T)
        return np.minimum(inst.mu / (2 * a), (1 / inst.mu) * (2 * t + 1) / (t + 1) ** 2)

    Ts = (200, 800, 3200)
    check_rate(ctx, Ts, curve(ctx, "prox", inst, m0, C0, Ts, min_form, R, "cor11/sc"),
               lambda T: 16 * math.floor(a / inst.mu**2) ** 2 / T**2 * D0 + sig / inst.mu**2 * 8 / T, -1.0,
               SLACK_1_OVER_T, "logistic: E||w^T - w*||^2 <= Eq. (11)")


@statement("000.cor12", title="Proj-SGD for VI (symmetric C, g_ent, W_M): gamma = 1/sqrt T gives "
                              "E[f(wbar^T) - f*] = O(1/sqrt T); the decaying step of Thm 9 gives E||w^T - w*||^2 = O(1/T)",
           source=f"{SRC}, Cor 12 (§4)", kind="statistical", uses=("proj_sgd",))
def cor12(ctx):
    rng = ctx.rng("cor12")
    inst = Instance(linear(rng, 5, 2, scale=0.3), "sym")
    a, b = inst.ab("entropy")
    m0, C0 = start_point(inst, rng, "sym", 1.0)
    D0 = inst.dist(m0, C0)
    R = repetitions(ctx, 16)

    def weights(T, gam):
        return _theta_weights(1 / (1 + a * gam[0] ** 2), T, 0)

    Ts = (400, 1600, 6400)
    curves = curve(ctx, "proj", inst, m0, C0, Ts, lambda T: np.full(T, 1 / math.sqrt(T)), R, "cor12",
                   weights=weights, metric="gap")
    check_rate(ctx, Ts, curves, lambda T: 0.5 * D0 / math.sqrt(T) * (1 + a) + 0.5 * b / math.sqrt(T), -0.5,
               SLACK_1_OVER_SQRT_T, "linear: E gap <= C/sqrt(T) (Eq. 14 corrected)")
    ctx.count()
    inst = Instance(gaussian(rng, 1), "sym")
    a, b = inst.ab("entropy")
    m0, C0 = start_point(inst, rng, "sym", 1.0)
    D0 = inst.dist(m0, C0)
    R = repetitions(ctx, 32)

    def switching(T):
        t = np.arange(T)
        return np.where(t < 4 * math.floor(2 * a / inst.mu**2), inst.mu / (2 * a), (2 / inst.mu) * (2 * t + 1) / (t + 1) ** 2)

    Ts = (300, 1200, 4800)
    check_rate(ctx, Ts, curve(ctx, "proj", inst, m0, C0, Ts, switching, R, "cor12/sc"),
               lambda T: 16 * math.floor(2 * a / inst.mu**2) ** 2 * D0 / T**2 + 2 * b / inst.mu**2 * 8 / T, -1.0,
               SLACK_1_OVER_T, "Gaussian: E||w^T - w*||^2 <= corrected Eq. (13)")

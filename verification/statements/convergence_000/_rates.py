"""Shared helpers, instances and constants of the convergence statements.

Seed 000 (Domke, Garrigos & Gower), rate theorems of §3 and §9 and the VI corollaries of §4: Thms 6, 7, 9, 10,
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

import dataclasses
import math

import numpy as np
from hypothesis import strategies as st

from refvi.verification.oracles import hessian_bounds as hb
from refvi.verification.oracles import rates as ro
from refvi.verification.oracles import sgd_reference
from refvi.verification.oracles import vi_objective as vo
from refvi.verification.oracles.quadrature import tensor_rule
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar

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
        self.dist_bar = scalar(np.sum((self.ms - self.zbar) ** 2) + np.sum(self.Cs**2))  # ||w* - wbar||^2

    def ab(self, estimator):
        if estimator == "energy":
            a = 2.0 * (self.d + 3) * self.M**2
            return a, a * self.dist_bar
        a = 4.0 * (self.d + 3) * self.M**2
        return a, a * self.dist_bar + 2.0 * self.d * self.M  # E000-3: 2 d L with L = M

    def dist(self, m, C):
        return scalar(np.sum((m - self.ms) ** 2) + np.sum((C - self.Cs) ** 2))

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
    return {
        "kind": "linear",
        "X": scale * rng.standard_normal((N, d)),
        "y": rng.standard_normal(N),
        "noise_scale": 1.0,
        "prior_scale": 1.0,
    }


def logistic(rng, N, d, scale=0.5):
    return {
        "kind": "logistic",
        "X": scale * rng.standard_normal((N, d)),
        "y": np.where(rng.random(N) < 0.5, -1.0, 1.0),
        "prior_scale": 1.0,
    }


def constants_and_horizon(ranges, T_range):
    """Instances (x_1, ..., x_k, T) of a bound on a worst-case recursion: a float in each (lo, hi) of ``ranges``, then
    an integer horizon T in ``T_range`` (both ends included)."""
    return st.tuples(*(st.floats(lo, hi) for lo, hi in ranges), st.integers(*T_range))


def min_form_steps(T, mu, a, c):
    """gamma_t = min{mu / (2a), (c / mu) (2t + 1) / (t + 1)^2} for t = 0..T-1: the decaying min-form step of Thm 6
    and Cor. 11 (c = 1) and of Thm 9 and Cor. 12 (c = 2, Eq. (13))."""
    t = np.arange(T)
    return np.minimum(mu / (2 * a), (c / mu) * (2 * t + 1) / (t + 1) ** 2)


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


def run(ctx, kind, inst, m0, C0, gammas, U, weights=None, estimator=None):
    """The optimizer under test (``ctx.impl``): returns (m_T, C_T, m_avg, C_avg); ``estimator`` defaults to the
    paper's (energy for Prox-SGD, entropy for Proj-SGD)."""
    if kind == "prox":
        out = ctx.impl.prox_sgd(inst.target, m0, C0, gammas, U, estimator or "energy", inst.structure, weights)
    else:
        out = ctx.impl.proj_sgd(inst.target, m0, C0, gammas, U, inst.M, estimator or "entropy", inst.structure, weights)
    return tuple(np.asarray(x, dtype=np.float64) for x in out)


#: a replayed run's final iterate and average against the reference loop's, relative to the run's largest entry: two
#: float64 evaluations of the same T updates (BLAS vs loops, two eigh); the per-step rounding (1e-16) stays small
#: relative to the run over T <= 6400 steps (measured <= 2.6e-14 on every run of the rate statements, refvi); a slip
#: in any step, in the prox, the projection, the step index or the average is O(gamma) and shows at any T
REPLAY_TOL = 1e-9


def runs(ctx, kind, inst, m0, C0, gammas, UU, weights=None, estimator=None, *, what=""):
    """The implementation's optimizer run once on each UU[r] (UU of shape (R, T, S, d)), every run replayed step by
    step on its own base samples by the plain-NumPy loop of Def. 5 / Def. 8 (:func:`..oracles.sgd_reference.sgd_batch`,
    R runs at once): the reported final iterate w^T and the reported average are compared with the replay's, run by
    run, so the rates below speak of checked values (a run reporting steps it did not take, or an average that is not
    the weighted average of its iterates, fails here).  Returns the runs' (m_T, C_T, m_avg, C_avg)."""
    estimator = estimator or ("energy" if kind == "prox" else "entropy")
    outs = [run(ctx, kind, inst, m0, C0, gammas, UU[r], weights, estimator) for r in range(len(UU))]
    ref = sgd_reference.sgd_batch(
        kind,
        inst.model["kind"],
        sgd_reference.model_params(inst.model),
        m0,
        C0,
        UU,
        gammas,
        estimator,
        inst.structure,
        inst.M,
        weights,
    )
    got = np.array([np.concatenate([np.ravel(x) for x in o]) for o in outs])
    want = np.concatenate([np.reshape(x, (len(UU), -1)) for x in ref], axis=1)
    # each run against its own scale: at gamma = 1/M some runs grow by 1e8 in mean square (Thm 7 bounds the theta
    # average, not the iterates), and one scale for all runs would excuse any slip in the others
    scale = 1.0 + np.max(np.abs(want), axis=1, keepdims=True)
    name = "Prox-SGD (Def. 5)" if kind == "prox" else "Proj-SGD (Def. 8)"
    ctx.close(
        got / scale,
        want / scale,
        atol=REPLAY_TOL,
        label=f"replay{what}: w^T and the average of each run == the reference {name} loop on its base samples",
    )
    return outs


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
    """The implementation's optimizer run R times to each horizon T in ``Ts`` with steps ``schedule(T)``, every run
    replayed (:func:`runs`): per T, the draws of ||w^T - w*||^2 (``metric="dist"``) or of the exact gap
    f(wbar^T) - f* of the average weighted by ``weights(T, steps)`` (``metric="gap"``)."""
    out = []
    for T in Ts:
        gam = schedule(T)
        wts = None if weights is None else weights(T, gam)
        UU = draws(ctx, f"{stream}/{T}", R, gam.size, inst.d)
        done = runs(ctx, kind, inst, m0, C0, gam, UU, wts, what=f", T = {T}")
        out.append([inst.dist(*o[:2]) if metric == "dist" else inst.gap(*o[2:]) for o in done])
    return out


def check_rate(ctx, Ts, curves, bound_of, exponent, slack, label):
    """The theorem's bound at every horizon (``mean_leq``) and its exponent over all of them (``decay``)."""
    for T, vals in zip(Ts, curves, strict=True):
        ctx.mean_leq(vals, bound_of(T), alpha=ALPHA, label=f"{label}, T = {T}")
    ctx.decay(Ts, curves, exponent, slack=slack, alpha=ALPHA, label=f"{label}: decay exponent")


def check_min_form_rate(ctx, kind, inst, m0, C0, a, Ts, R, stream, bound_of, label):
    """The decaying min-form step of :func:`min_form_steps` (Prox-SGD, ``kind="prox"``: c = 1, Thm 6 and Cor 11;
    Proj-SGD: c = 2, Thm 9 and Cor 12), R runs to each horizon in ``Ts`` from (m0, C0): E||w^T - w*||^2 <=
    ``bound_of(T)`` at each and the O(1/T) exponent."""
    c = 1 if kind == "prox" else 2
    curves = curve(ctx, kind, inst, m0, C0, Ts, lambda T: min_form_steps(T, inst.mu, a, c), R, stream)
    check_rate(ctx, Ts, curves, bound_of, -1.0, SLACK_1_OVER_T, label)


# ------------------------------------------------------------------------------------------- one-step machinery
def one_step_moments(ctx, kind, inst, m, C, gamma, order=10):
    """Per Gauss-Hermite node u: the implementation's w^{t+1} and the oracle's sample gradient; returns the rule
    weights W, per node (w^{t+1}, the oracle's g) and per node the reported average (with no weights: w^{t+1})."""
    U, W = tensor_rule(inst.d, order)
    est = "energy" if kind == "prox" else "entropy"
    out, averages = [], []
    for u in U:
        m1, C1, ma, Ca = run(ctx, kind, inst, m, C, np.array([gamma]), u[None, None, :])
        gm, gC = ro.energy_sample(inst.model, m, C, u, inst.structure)
        if est == "entropy":
            gC = gC - ro.proj(np.linalg.inv(C).T, inst.structure)
        out.append((m1, C1, gm, gC))
        averages.append((ma, Ca))
    return U, W, out, averages


def oracle_step(kind, inst, m, C, gamma, gm, gC):
    """The algorithm's step from w = (m, C) along the oracle's sample gradient (gm, gC): prox_{gamma h}(w - gamma g)
    (Prox-SGD, Def. 5 with Lemma 31's prox) or proj_{W_M}(w - gamma g) (Proj-SGD, Def. 8 with Lemma 32), from
    :mod:`..oracles.sgd_reference`."""
    Y = C - gamma * gC
    if kind == "prox":
        return m - gamma * gm, sgd_reference.prox_entropy(Y, gamma)
    return m - gamma * gm, sgd_reference.project(Y, inst.M, inst.structure)


def check_steps(ctx, kind, inst, m, C, gamma, out, averages):
    """Pathwise, at every Gauss-Hermite node: the implementation's w+ IS the algorithm's step along the oracle's
    sample gradient (the bounds on E||w+ - w*||^2 then speak of Def. 5 / Def. 8, not of some other map), and the
    reported average (no weights: the last iterate) is that w+ too.  Two float64 evaluations of one update (BLAS vs
    loops, two eigh): rounding only, 1e-9 of the iterate's scale."""
    got = np.array(
        [
            np.concatenate([m1, C1.ravel(), ma, Ca.ravel()])
            for (m1, C1, _, _), (ma, Ca) in zip(out, averages, strict=True)
        ]
    )
    steps = (oracle_step(kind, inst, m, C, gamma, gm, gC) for _, _, gm, gC in out)
    ref = np.array([np.concatenate([mr, Cr.ravel(), mr, Cr.ravel()]) for mr, Cr in steps])
    scale = 1.0 + scalar(np.max(np.abs(ref)))
    name = "prox_{gamma h}" if kind == "prox" else "proj_{W_M}"
    ctx.close(
        got,
        ref,
        atol=1e-9 * scale,
        label=f"pathwise: w+ = {name}(w - gamma g) at every node, the average reported is w+",
    )


@dataclasses.dataclass(frozen=True)
class OneStep:
    """One drawn one-step case: the instance, Thm 26's a and b, the step, the start w = (m, C), and per Gauss-Hermite
    node (weights W) the implementation's w+ = (m1, C1) with the oracle's sample gradient (gm, gC)."""

    inst: Instance
    a: float
    b: float
    gamma: float
    m: np.ndarray
    C: np.ndarray
    W: np.ndarray
    out: list


def forall_one_step(
    ctx, key, kind, structure, check, *, step, kappa=1.5, linear_too=False, few=3, flat=1.0, spread=1.0
):
    """Run ``check(OneStep)`` on one-step cases of the implementation's ``kind`` ("prox" / "proj") optimizer: a
    Gaussian target (its precision times ``flat``; and a linear-regression one if ``linear_too``) in d = 1, 2, the
    step ``step(inst, a, rng)``, the start ``spread`` times as far as :func:`start_point`'s; first,
    :func:`check_steps` (every node's w+ is the algorithm's step, recomputed by the oracle)."""
    estimator = "energy" if kind == "prox" else "entropy"

    def one(args):
        model_kind, (d, seed) = (args[0], args[1:]) if linear_too else ("gaussian", args)
        rng = ctx.rng(f"{key}/one/{model_kind}/{d}/{seed}" if linear_too else f"{key}/one/{d}/{seed}")
        model = gaussian(rng, d, kappa=kappa) if model_kind == "gaussian" else linear(rng, 4, d)
        if model_kind == "gaussian":
            model["precision"] = flat * model["precision"]
        inst = Instance(model, structure)
        a, b = inst.ab(estimator)
        gamma = step(inst, a, rng)
        m, C = start_point(inst, rng, structure, spread)
        _, W, out, averages = one_step_moments(ctx, kind, inst, m, C, gamma)
        check_steps(ctx, kind, inst, m, C, gamma, out, averages)
        check(OneStep(inst, a, b, gamma, m, C, W, out))

    dims = (st.integers(1, 2), st.integers(0, 10**6))
    if linear_too:
        ctx.forall(
            st.tuples(st.sampled_from(["gaussian", "linear"]), *dims),
            one,
            fixed=[("gaussian", 1, 0), ("linear", 2, 0)],
            max_examples=_few(ctx, few),
        )
    else:
        ctx.forall(st.tuples(*dims), one, fixed=[(2, 0)], max_examples=_few(ctx, few))


# ---------------------------------------------------------------------------------------------------- Thm 7
def _theta_weights(theta, T, first):
    """theta^{t+1} on w^t for t = first..first+T-1, over w^0..w^T (normalized)."""
    w = np.zeros(T + 1)
    e = np.arange(T, dtype=float)
    w[first : first + T] = theta**e
    return w / w.sum()

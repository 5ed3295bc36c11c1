"""refvi's driver as a user calls it: ``fit(target)`` with nothing else, or with one or two options, every other
argument left to the driver's own default (:meth:`~refvi.verification.protocol.core.Implementation.fit_as_user`: the
adapter passes nothing the user did not), on the user's numba model of :mod:`._user_models` (a correlated Gaussian
with condition number 1e4, 200 units off-centre along its flattest direction).

* **no options**: the driver chooses an affine frame and reports it: z0 the mode (the oracle's mean), L lower
  triangular with a positive diagonal and L^T H L = I (the Laplace frame, H the oracle's precision); the steps are
  Eq. 11's "thm6" rule on the frame's constants at the mode (M' = mu' = 1, Thm 26's a = 2(d+3)) halved k >= 0 times;
  the returned C is lower triangular (Prox-SGD, the default method); the objective trace at w^T is within 6 Monte
  Carlo standard errors of the closed form.  Accuracy, over runs with seeds 0..R-1 (the seed the only option) and two
  runs of the batched model with S = 2 and 5 samples per step (the fused loop in the frame): in the
  frame's coordinates (x = L^-1 (z - z0), C_x = L^-1 C), the squared distance of the returned tail average to the
  exact optimum (the oracle's (mean, chol(P^-1))) is at most, in mean, the average over the tail of Thm 6's one-step
  recursion B_(t+1) = (1 - gamma_t mu) B_t + 2 gamma_t^2 (b + M^2 ||w* - wbar||^2) on the steps run (each at most
  mu/(2a), checked; Jensen over the tail), a statistical check at false-alarm 1e-6.  The instance is one where
  ignoring the frame fails: the plain algorithm's expected tail-average mean at any step <= 1/M is, in the same
  metric, more than 1000 times that bound away (oracle: E m^(t+1) - mean = (I - gamma P)(E m^t - mean) exactly);
* **the defaults are what they say**: passing method "prox-sgd", average "tail", seed 0 and samples 1 gives the
  same run bit for bit as passing nothing; and the default budget grows with d as documented (T = max(10,000,
  40(d+3)) steps of S = ceil(80(d+3)/T) samples): on a Bayesian linear regression with d = 123 (N = 246, the first
  d with two samples), passing nothing is passing steps = 10,000 and samples = 2, bit for bit;
* **a logistic regression, nothing but T = 40**: the run starts at the documented ridge start, C^0 = L and m^0 the
  minimizer of the exact objective f(m, L) over m (the oracle's gradient, in the frame's metric, below 1e-4), which
  here is not the Laplace mode (1e-2 at least there);
* **"proj-sgd" only**: the Laplace frame, Eq. 13's "thm9" steps (a = 4(d+3)) halved k >= 0 times, symmetric C;
* **a step size given**: no frame, the constant step as given, every step replayed (the update of Def. 5 with the
  sample the mean update implies, as in 000.claim-fit);
* **a frame given with negative diagonal entries** (L = chol(P^-1) D, D = diag(-1, 1, -1), z0 off the mode, T = 80):
  the run is in that frame, replayed step by step in its coordinates, every reported C lower triangular with a
  positive diagonal;
* **with M given too** (the same instance: the Laplace frame L = chol(P^-1), M' = mu' = 1, with M = 4 given,
  T = 80): the caller's M sets the frame's rule, Eq. 11 on (M, mu') = (4, 1) (a = 2(d+3) 16: steps 16 times smaller
  than on the frame's M' = 1) halved k >= 0 times, each halving after a replayed climb; the run is replayed step by
  step in the frame;
* **the divergence guard, both directions** (``frame=None``, T = 100, every iterate recorded): the default step 1/M
  must climb on this target (the energy estimator's second moment grows by 1 - 2 gamma M + (d+2) gamma^2 M^2 = 4 per
  step along the stiff direction), so: every halving follows a run that blew up on the same samples (replayed by the
  oracle), *and* the reported run does not end above its start (exact objective at w^T at most
  f(w^0) + 1 + ``|f(w^0)|``/10 plus the Monte Carlo error of the driver's own estimate): a driver that never halves
  fails the second, one that halves without a climb the first.  In the frame (no options, T = 100) the first
  direction is checked the same way;
* **a target that is not convex near its mode** (the cosine-quadratic -log p = alpha cos(b^T z) + |z|^2 / 2 with
  alpha |b|^2 = 2 > 1: concave at the mode along b), no options but T = 400 (refvi runs it in two stages, the second
  in the frame of the first's result): whatever the driver does, what it reports is one run: the recorded steps go
  from 0 to T strictly increasing, with one (m, C) and one objective estimate per recorded step and T step sizes,
  every iterate finite.

Optional: an implementation without ``fit_as_user`` declines every instance (an optional feature, like frames).

Statements: 000.claim-fit-defaults.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.verification.oracles import vi_objective as vo
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.convergence_000 import _user_models as um
from refvi.verification.statements.convergence_000._fit_replay import _blows_up, _check_objective, _replay, _to_frame

#: why the returned approximation of a default run is an input of the accuracy claim (it is its subject)
RESULT = (
    "the approximation a default run returns: the claim is about its distance to the exact optimum (a statistical "
    "bound over seeds; the iterates of a 10,000-step run are recorded every 100 steps, too sparse to replay)"
)
#: why the last iterate of the guarded run is an input of the no-climb claim
LAST = (
    "the guarded run's last iterate (its C updates replayed above): the claim is that it does not end above its start"
)

#: why the recorded step indices of a run are an input of the claim
NUMBERING = (
    "the step indices a run reports for its recorded iterates (the driver's own choice of which to record): the "
    "claim is that they number one run through, 0 to T"
)

#: why the driver's default number of steps is an input of the claim
DEFAULT_STEPS = "the driver's default number of steps (its own choice): the step rule is checked at that horizon"


def _rule(name, T, M, mu, d):
    """Eq. 11 ("thm6", a = 2(d+3)M^2) or Eq. 13 ("thm9", a = 4(d+3)M^2): min(mu/(2a), (c/mu)(2t+1)/(t+1)^2)."""
    a = (2.0 if name == "thm6" else 4.0) * (d + 3) * M * M
    t = np.arange(T, dtype=np.float64)
    return np.minimum(mu / (2.0 * a), (1.0 if name == "thm6" else 2.0) / mu * (2 * t + 1) / (t + 1) ** 2)


def _halvings(ctx, gam, base, what, replay=None):
    """The steps are base / 2^k, k >= 0 (rtol 1e-7: the frame's constants are estimated, ~1e-9 here); with ``replay``
    = (U, start, mean, P, M, method), each of the k halvings follows a run at base / 2^(j-1) that blows up on the same
    samples (:func:`..fit_driver._blows_up`).  Returns k."""
    k = round(math.log2(base[0] / gam[0])) if gam.shape == base.shape and gam[0] > 0 else -1
    ctx.true(k >= 0, label=f"{what}: steps = the rule's / 2^k with k >= 0 (k = {k})")
    ctx.close(gam, base / 2.0 ** max(k, 0), rtol=1e-7, label=f"{what}: steps = the rule's / 2^k")
    if replay is not None and k >= 1:
        U, start, mean, P, M, method = replay
        unjustified = [j for j in range(1, k + 1) if not _blows_up(base / 2.0 ** (j - 1), U, start, mean, P, M, method)]
        ctx.true(not unjustified, label=f"{what}: each halving follows a run that blew up (unjustified: {unjustified})")
    return k


def _laplace(ctx, run, what):
    """The reported frame is the Laplace frame of the user's model: (z0, L) against the oracle's mean and precision."""
    ctx.true(run.frame is not None, label=f"{what}: the driver chose an affine frame and reported it")
    z0, L = (np.asarray(x, dtype=np.float64) for x in run.frame)
    # the mode by Newton on a quadratic: 1e-6 of the posterior sd (1e-2 along the flattest direction) and below
    ctx.close(z0, um.MEAN, atol=1e-6, label=f"{what}: frame z0 = the mode")
    ctx.true(bool(np.all(np.triu(L, 1) == 0) and np.all(np.diag(L) > 0)), label=f"{what}: L lower triangular, L_ii > 0")
    # L from a differenced Hessian of the user's gradient (exact for a quadratic up to rounding): 1e-6
    ctx.close(L.T @ um.PREC @ L, np.eye(um.D), atol=1e-6, label=f"{what}: L^T H L = I")
    return z0, L


def _replay_in_frame(ctx, ms, Cs, gam, z0, L, M, T, what, label=None):
    """A Prox-SGD run on the user's model in the frame z = z0 + L x, from (0, I) in the frame: every reported iterate
    mapped to x (m_x = L^-1 (m - z0), C_x the factor in V of L^-1 C C^T L^-T) and replayed step by step on the framed
    target N(L^-1 (mean - z0), (L^T P L)^-1); the steps are Eq. 11's on (M, mu' = 1) over T steps, halved k >= 0
    times, each halving after a replayed climb (``label`` names that check; default ``what``)."""
    Li = np.linalg.inv(L)
    mx, Cx = (ms - z0) @ Li.T, np.array([_to_frame(Li, C, "prox-sgd") for C in Cs])
    Px, xs = L.T @ um.PREC @ L, Li @ (um.MEAN - z0)
    U = _replay(ctx, mx, Cx, gam, xs, Px, M, "prox-sgd", what)
    start = (np.zeros(um.D), np.eye(um.D))
    _halvings(ctx, gam, _rule("thm6", T, M, 1.0, um.D), label or what, (U, start, xs, Px, M, "prox-sgd"))


def _frame_distance(run, z0, L):
    """(||w - w*||^2, ||w^0 - w*||^2, ||C*||_F^2) in the frame's coordinates for the returned (m, C) (lower
    triangular), w* the exact optimum, w^0 = (0, I)."""
    Li = np.linalg.inv(L)
    x, Cx = Li @ (np.asarray(run.m, dtype=np.float64) - z0), Li @ np.asarray(run.C, dtype=np.float64)
    xs, Cs = Li @ (um.MEAN - z0), Li @ np.linalg.cholesky(np.linalg.inv(um.PREC))
    dist = scalar(np.sum((x - xs) ** 2) + np.sum((Cx - Cs) ** 2))
    return dist, scalar(np.sum(xs**2) + np.sum((Cs - np.eye(um.D)) ** 2)), scalar(np.sum(Cs**2))


def _tail_bound(gam, D0, Cs_norm2, M, mu, d):
    """Mean over the last ceil(T/2) iterates of Thm 6's recursion (energy estimator, a = 2(d+3)M^2, b = a dist_bar,
    sigma = b + M^2 dist_bar, dist_bar = ||C*||_F^2 in the frame)."""
    a = 2.0 * (d + 3) * M * M
    sig = (a + M * M) * Cs_norm2
    # B_t = P_t (D0 + sum_(s<t) e_s / P_(s+1)), P_t = prod_(s<t) (1 - gamma_s mu), e_s = 2 gamma_s^2 sigma (vectorized)
    P = np.concatenate([[1.0], np.cumprod(1.0 - gam * mu)])
    e = 2.0 * gam * gam * sig
    out = P * (D0 + np.concatenate([[0.0], np.cumsum(e / P[1:])]))
    T = gam.size
    return scalar(np.mean(out[T - math.ceil(T / 2) + 1 :])), a


def _plain_witness(T):
    """In the frame metric (z -> L^-1 z, ||.||^2 = (.)^T P (.)), the squared error of the *expected* tail-average mean
    of the plain algorithm (no frame, from m = 0) at the largest step it may take, 1/M: a lower bound for any step
    <= 1/M (E m^(t+1) - mean = (I - gamma P)(E m^t - mean) for the energy estimator on a Gaussian target)."""
    lam, Q = np.linalg.eigh(um.PREC)
    r0 = Q.T @ (0.0 - um.MEAN)
    t = np.arange(T - math.ceil(T / 2) + 1, T + 1)
    fac = np.mean((1.0 - lam[None, :] / lam[-1]) ** t[:, None], axis=0)
    return scalar(np.sum(lam * (fac * r0) ** 2))


def _no_climb(ctx, run, what):
    """The reported run does not end above its start: f(w^T) <= f(w^0) + 1 + |f(w^0)|/10 (exact f) plus the Monte
    Carlo error of the driver's own estimates at both ends (6 standard errors each, the margin of its guard on them)."""
    n = ctx.given(run.objective_samples, "the number of base samples of the driver's objective estimates (its guard)")
    ms, Cs = np.asarray(run.ms, dtype=np.float64), np.asarray(run.Cs, dtype=np.float64)
    ctx.true(bool(np.all(np.isfinite(ms)) and np.all(np.isfinite(Cs))), label=f"{what}: every reported iterate finite")
    mT, CT = ctx.given((ms[-1], Cs[-1]), LAST)
    f0, fT = vo.objective(um.MODEL, ms[0], Cs[0]), vo.objective(um.MODEL, mT, CT)

    def se(m, C):
        A, b = C.T @ um.PREC @ C, C.T @ um.PREC @ (m - um.MEAN)
        return math.sqrt(0.5 * np.trace(A @ A) + b @ b) / math.sqrt(n)

    s0, sT = se(ms[0], Cs[0]), se(mT, CT)
    ctx.leq(
        fT,
        f0 + 1.0 + 0.1 * (abs(f0) + 6 * s0) + 6 * (s0 + sT),
        label=f"{what}: the reported run ends no higher than f(w^0) + 1 + |f(w^0)|/10 (+ estimate error)",
    )


@statement("000.claim-fit-defaults")
def claim_fit_defaults(ctx):
    target, d = um.target(False), um.D
    impl = ctx.impl

    def nothing(_):
        run = impl.fit_as_user(target)
        what = "fit(target), nothing else"
        z0, L = _laplace(ctx, run, what)
        gam = np.asarray(run.step_sizes, dtype=np.float64)
        T = int(ctx.given(gam.size, DEFAULT_STEPS))
        _halvings(ctx, gam, _rule("thm6", T, 1.0, 1.0, d), f"{what}: Eq. 11 on M' = mu' = 1")
        C = np.asarray(run.C, dtype=np.float64)
        ctx.true(bool(np.all(np.triu(C, 1) == 0) and np.all(np.diag(C) > 0)), label=f"{what}: C lower triangular")
        _check_objective(ctx, run, um.MEAN, um.PREC, what)
        again = impl.fit_as_user(target, method="prox-sgd", average="tail", seed=0, samples=1)
        for name in ("m", "C", "step_sizes"):
            ctx.equal(getattr(again, name), getattr(run, name), label=f"the documented defaults given: same {name}")
        # accuracy over seeds: the returned tail average against Thm 6's recursion on the steps run
        ratios, bounds = [], []
        # seeds 0..R-1, and the batched model with S = 2 and 5 samples per step (the average of S estimates has at
        # most one estimate's second moment: the same recursion bounds it)
        runs = [(target, {"seed": seed}) for seed in range(max(8, ctx.profile.max_examples // 2))]
        runs += [(um.target(True), {"samples": S, "seed": 100 + S}) for S in (2, 5)]
        for tgt, options in runs:
            r = run if options == {"seed": 0} else impl.fit_as_user(tgt, **options)
            label = f"fit({tgt.name}, {', '.join(f'{k}={v}' for k, v in options.items())})"
            # refvi's own claim: a numba model (per point or batched) runs its whole loop in one compiled call (another
            # implementation may report `compiled` either way, or not at all)
            if ctx.strict_methods:
                ctx.true(bool(r.compiled), label=f"{label}: refvi runs a numba model's whole loop compiled (fast path)")
            zs, Ls = _laplace(ctx, r, label)
            g = np.asarray(r.step_sizes, dtype=np.float64)
            if r is not run:
                _halvings(ctx, g, _rule("thm6", T, 1.0, 1.0, d), label)
            ctx.given((r.m, r.C), RESULT)
            ev = np.linalg.eigvalsh(Ls.T @ um.PREC @ Ls)
            dist, D0, cs2 = _frame_distance(r, zs, Ls)
            B, a = _tail_bound(g, D0, cs2, scalar(ev[-1]), scalar(ev[0]), d)
            ctx.leq(scalar(g.max()), scalar(ev[0]) / (2 * a), rtol=1e-6, label="every step <= mu'/(2a) (Thm 6)")
            ratios.append(dist / B)
            bounds.append(B)
        ctx.mean_leq(np.array(ratios), 1.0, label="E ||w_tail - w*||^2 / (Thm 6 recursion, tail mean) <= 1")
        witness = _plain_witness(T)
        ctx.true(
            witness > 1000.0 * max(bounds),
            label=f"ignoring the frame fails here: the plain run's expected error {witness:.3g} > 1000 x the bound",
        )

    def proj(_):
        run = impl.fit_as_user(target, method="proj-sgd")
        what = "fit(target, method='proj-sgd')"
        _laplace(ctx, run, what)
        gam = np.asarray(run.step_sizes, dtype=np.float64)
        _halvings(ctx, gam, _rule("thm9", int(ctx.given(gam.size, DEFAULT_STEPS)), 1.0, 1.0, d), f"{what}: Eq. 13")
        C = np.asarray(run.C, dtype=np.float64)
        ctx.close(C, C.T, atol=1e-12 * scalar(np.abs(C).max()), label=f"{what}: C symmetric")

    def given_step(_):
        gamma, T = 0.5 / um.M_TRUE, 60
        run = impl.fit_as_user(target, step_size=gamma, steps=T)
        what = f"fit(target, step_size={gamma:g}, steps={T})"
        ctx.true(run.frame is None, label=f"{what}: no frame when a step size is given")
        gam = np.asarray(run.step_sizes, dtype=np.float64)
        ctx.close(gam, np.full(T, gamma), rtol=1e-15, label=f"{what}: the constant step as given")
        ctx.equal(np.asarray(run.steps), np.arange(T + 1), label=f"{what}: every iterate recorded (T <= 100)")
        _replay(ctx, np.asarray(run.ms), np.asarray(run.Cs), gam, um.MEAN, um.PREC, um.M_TRUE, "prox-sgd", what)

    def negative_frame(_):
        L = np.linalg.cholesky(np.linalg.inv(um.PREC)) @ np.diag([-1.0, 1.0, -1.0])
        z0, T = um.MEAN + np.array([3.0, -0.05, 0.002]), 80
        run = impl.fit_as_user(target, frame=(z0, L), steps=T)
        what = "fit(target, frame=(z0, L with a negative diagonal), steps=80)"
        ms, Cs = np.asarray(run.ms, dtype=np.float64), np.asarray(run.Cs, dtype=np.float64)
        ctx.true(
            bool(np.all(np.triu(Cs, 1) == 0, axis=(1, 2)).all() and np.all(np.diagonal(Cs, axis1=1, axis2=2) > 0)),
            label=f"{what}: every reported C lower triangular with a positive diagonal",
        )
        _replay_in_frame(ctx, ms, Cs, np.asarray(run.step_sizes, dtype=np.float64), z0, L, 1.0, T, what)
        # and M given with a frame (the Laplace frame, M' = mu' = 1): the caller's M sets the frame's rule
        L, M = np.linalg.cholesky(np.linalg.inv(um.PREC)), 4.0
        run = impl.fit_as_user(target, frame=(um.MEAN, L), M=M, steps=T)
        what = f"fit(target, frame=(mode, chol(P^-1)), M={M:g}, steps={T})"
        ms, Cs = np.asarray(run.ms, dtype=np.float64), np.asarray(run.Cs, dtype=np.float64)
        gam = np.asarray(run.step_sizes, dtype=np.float64)
        _replay_in_frame(ctx, ms, Cs, gam, um.MEAN, L, M, T, what, f"{what}: Eq. 11 on (M, mu') = ({M:g}, 1)")

    def guard(framed):
        T = 100
        run = impl.fit_as_user(target, steps=T) if framed else impl.fit_as_user(target, frame=None, steps=T)
        what = f"fit(target, {'' if framed else 'frame=None, '}steps={T}): the divergence guard"
        gam = np.asarray(run.step_sizes, dtype=np.float64)
        ms, Cs = np.asarray(run.ms, dtype=np.float64), np.asarray(run.Cs, dtype=np.float64)
        ctx.equal(np.asarray(run.steps), np.arange(T + 1), label=f"{what}: every iterate recorded (T <= 100)")
        if framed:
            z0, L = _laplace(ctx, run, what)
            _replay_in_frame(ctx, ms, Cs, gam, z0, L, 1.0, T, what)
            return
        ctx.true(run.frame is None, label=f"{what}: frame=None runs in the target's coordinates")
        U = _replay(ctx, ms, Cs, gam, um.MEAN, um.PREC, um.M_TRUE, "prox-sgd", what)
        start = (np.zeros(d), np.eye(d))
        replay = (U, start, um.MEAN, um.PREC, um.M_TRUE, "prox-sgd")
        _halvings(ctx, gam, np.full(T, 1.0 / um.M_TRUE), f"{what}, 1/M", replay)
        _no_climb(ctx, run, what)

    def budget_grows_with_d(_):
        # d = 123 is the first d where S = ceil(80 (d + 3) / 10,000) = 2 (T stays 10,000 up to d = 247): a budget
        # off by one in d runs one sample there
        d_big, N = 123, 246
        rng = np.random.default_rng(130)
        X = rng.standard_normal((N, d_big))
        lin = specs.linear(X, X @ rng.standard_normal(d_big) + rng.standard_normal(N))
        T, S = max(10_000, 40 * (d_big + 3)), math.ceil(80 * (d_big + 3) / 10_000)
        run = impl.fit_as_user(lin)
        again = impl.fit_as_user(lin, steps=T, samples=S)
        for name in ("m", "C", "step_sizes"):
            ctx.equal(
                getattr(again, name),
                getattr(run, name),
                label=f"linear regression d = {d_big}: the documented budget (steps={T}, samples={S}): same {name}",
            )

    def not_convex_near_the_mode(_):
        T = 400
        run = impl.fit_as_user(specs.cosine(2.0, np.array([1.0, 0.0]), beta=1.0), steps=T)
        what = f"fit(cosine-quadratic target not convex at its mode, steps={T})"
        steps = ctx.given(np.asarray(run.steps, dtype=np.float64), NUMBERING)
        ms, Cs = np.asarray(run.ms, dtype=np.float64), np.asarray(run.Cs, dtype=np.float64)
        n = len(steps)
        ctx.true(n >= 2, label=f"{what}: at least the first and the last iterate recorded")
        ctx.equal(steps[[0, -1]], np.array([0.0, T]), label=f"{what}: the recorded steps go from 0 to T")
        ctx.geq(
            scalar(np.min(np.diff(steps))),
            1.0,
            label=f"{what}: the recorded steps strictly increase (one run, numbered through)",
        )
        ctx.true(
            len(ms) == n and len(Cs) == n and len(np.asarray(run.step_sizes)) == T,
            label=f"{what}: one recorded (m, C) per recorded step, T step sizes",
        )
        if run.objective is not None:
            ctx.true(len(np.asarray(run.objective)) == n, label=f"{what}: one objective estimate per recorded step")
        ctx.true(bool(np.all(np.isfinite(ms)) and np.all(np.isfinite(Cs))), label=f"{what}: every iterate finite")

    def ridge_start(_):
        # a logistic regression with nothing given starts at the ridge start: the mean minimizing the exact objective
        # f(m, L) with C held at the frame's L (a start away from the Laplace mode, which this instance witnesses)
        rng = np.random.default_rng(41)
        X = rng.standard_normal((24, 3)) * np.array([1.0, 2.5, 0.5])
        y = np.where(X @ np.array([1.0, -1.0, 0.5]) + 0.3 * rng.standard_normal(24) > 0, 1.0, -1.0)
        model = {"kind": "logistic", "X": X, "y": y, "prior_scale": 1.5}
        run = impl.fit_as_user(specs.from_model(model, name="logistic, d = 3"), steps=40)
        what = "fit(logistic regression, steps=40)"
        ctx.true(run.frame is not None and scalar(np.asarray(run.steps)[0]) == 0, label=f"{what}: framed, w^0 recorded")
        z0, L = (np.asarray(x, dtype=np.float64) for x in run.frame)
        m0, C0 = np.asarray(run.ms, dtype=np.float64)[0], np.asarray(run.Cs, dtype=np.float64)[0]
        ctx.close(C0, L, rtol=1e-12, atol=1e-14, label=f"{what}: C^0 = L, the frame's factor")
        gm = vo.grad_objective(model, m0, L)[0]
        ctx.close(L.T @ gm, np.zeros(3), atol=1e-4, label=f"{what}: m^0 minimizes f(m, L) (L^T grad_m f = 0)")
        at_mode = scalar(np.linalg.norm(L.T @ vo.grad_objective(model, z0, L)[0]))
        ctx.true(at_mode > 1e-2, label=f"{what}: the Laplace mode is not that start (|L^T grad_m f| {at_mode:.3g})")

    ctx.instance(nothing)
    ctx.instance(ridge_start)
    ctx.instance(proj)
    ctx.instance(given_step)
    ctx.instance(negative_frame)
    ctx.instance(guard, False)
    ctx.instance(guard, True)
    ctx.instance(not_convex_near_the_mode)
    ctx.instance(budget_grows_with_d)

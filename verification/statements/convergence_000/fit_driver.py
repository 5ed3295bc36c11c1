"""Domke, Garrigos & Gower (seed 000): the implementation's end-to-end driver (``fit``), replayed step by step.

The driver draws its own base samples, so its iterates cannot be recomputed from the outside, but on a Gaussian
target N(mu, P^-1) one step of Prox-SGD or Proj-SGD with one sample is invertible: the mean update
m' = m - gamma P(C u + m - mu) gives the sample, u = C^{-1}(P^{-1}(m - m') / gamma - m + mu), and then the scale
update is determined: C' = prox_{gamma h}(C - gamma tril(r u^T)) (Def. 5, Lemma 31) or
C' = proj_{W_M}(C - gamma (sym(r u^T) - C^{-1})) (Def. 8, Lemma 32), r = (m - m') / gamma.  So the statement checks,
from the iterates the driver reports:

* every C' against that update (the estimator, the prox or projection and the step size the driver ran);
* that the implied samples are i.i.d. N(0, I): mean 0, second moments I, and no correlation between consecutive
  steps (a reused or mis-scaled sample shows);
* the step sizes: the constant given, a named rule (Eq. 11's "thm6", Cor 11's "1/(M sqrt T)", with Thm 26's a,
  Cor 30's "A log T / T" with A = 1/mu), or the default 1/M (Prox-SGD, seed 002 Thm 6's largest step) / 1/(2M)
  (Proj-SGD, seed 002 Thm 6) halved k >= 0 times, also on short runs in d = 1 where the default needs no halving (a
  larger default would show as k < 0);
* every halving is tied to the climb that justifies it: a divergence guard restarts on the same base samples, so the
  run at the step before the j-th halving (default / 2^(j-1), j = 1..k) is replayed with the oracle's update on the
  samples the reported run implies, from the same start, and must blow up (a non-finite iterate, or the exact
  objective above f(w^0) + 1/2 at some step, half the least margin of a guard).  A default off by a power of two
  (1/(4M) for 1/(2M)) reads as one halving that no climb justifies;
* the returned (m, C) is the declared average of the iterates (last, uniform over w^1..w^T, the last ceil(T/2), or
  the theta-weighted averages of Thm 7 (Prox-SGD) and Thm 10 (Proj-SGD)), and (m_last, C_last) = w^T, with
  w^0 = (0, I) or the start given.

Runs in an affine frame z = z0 + L x (the implementation's Laplace frame, ``frame="laplace"``, or a given pair
(z0, L) with a symmetric, lower-triangular or identity L; Gaussian targets with covariance condition numbers up to
1e4) are replayed the same way in frame coordinates, with the frame's default steps (Eq. 11's "thm6" / Eq. 13's
"thm9" with the frame's (M', mu') when mu' >= M'/10, else 1/(M' sqrt T), halved k >= 0 times): the framed target
is N(L^-1(mu - z0), (L^T P L)^-1), each reported iterate maps to x-coordinates as m_x = L^-1(m - z0) and C_x = the
factor in V of L^-1 C C^T L^-T, the projection uses the frame's M' = lambda_max(L^T P L), the average is taken in the
frame, and every reported C is in V; a given start (m0, C0) in z is x^0 = L^-1(m0 - z0) with C_x^0 the factor in V
of L^-1 C0 C0^T L^-T.  A reported objective trace (plain or framed: f is the same in any frame) is checked at w^T
against the closed form.

Logistic regressions in their Laplace frame (the framed kernel's logistic branch; a constant step) are replayed the
same way with one more solve: the mean update gives g = L^-T (m_x - m_x') / gamma = -grad log p(z) at the sample's
point z, and -log p is strongly convex (its Gaussian prior), so z is the unique solution, found by damped Newton
(:func:`~refvi.verification.oracles.sgd_reference.point_of_gradient`); then u = C_x^-1 (L^-1 (z - z0) - m_x), and C_x'
must be the prox step of that u.  The frame itself is checked to be the Laplace approximation's: z0 the mode, L L^T
the inverse Hessian of -log p there.

Frames are optional: every run is one instance (``ctx.instance``), so an implementation without affine frames (its
``capabilities`` decline ``frame``, its ``supports`` declines it, or it has no ``frame`` method) gets its plain
Prox-SGD / Proj-SGD runs checked and its framed instances counted as skipped.

Statements: 000.claim-fit.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.verification.oracles.sgd_reference import neg_hess_logp, point_of_gradient, prox_entropy
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import InstanceSkipped, MissingMethod, scalar, statement
from refvi.verification.statements.convergence_000._fit_replay import (
    _check_framed_returns,
    _check_halvings,
    _check_objective,
    _gaussian,
    _in_V,
    _replay,
    _start,
    _to_frame,
    _weights,
)
from refvi.verification.statements.convergence_000.schedules import printed_steps


@statement("000.claim-fit")
def claim_fit(ctx):
    rng = ctx.rng("targets")
    T = 240 if ctx.profile.name == "ci" else 800
    samples = []

    def plain(spec):
        i, method, step, average, d, given, steps = spec
        target, P = _gaussian(rng, d)
        start = _start(rng, d, method) if given else None
        lam = np.linalg.eigvalsh(P)
        mu, M = scalar(lam[0]), scalar(lam[-1])
        a = (2.0 if method == "prox-sgd" else 4.0) * (d + 3) * M * M  # Thm 26 (energy / entropy)
        gamma = step if step is None or isinstance(step, str) else step / M
        run = ctx.impl.fit(target, method, steps=steps, step_size=gamma, average=average, seed=100 + i, init=start)
        rule = "default step" if step is None else step if isinstance(step, str) else f"gamma = {step}/M"
        what = f"{method}, d = {d}, {rule}, {average} average{', a given start' if given else ''}"
        ms, Cs = np.asarray(run.ms), np.asarray(run.Cs)
        ctx.true(ms.shape == (steps + 1, d) and Cs.shape == (steps + 1, d, d), label=f"{what}: T + 1 iterates reported")
        gam = np.asarray(run.step_sizes, dtype=np.float64)
        mean = np.asarray(target.params["mean"])
        U = _replay(ctx, ms, Cs, gam, mean, P, M, method, what, start)
        samples.append(U)
        if step is None:
            base = np.full(steps, 1.0 / M if method == "prox-sgd" else 1.0 / (2.0 * M))
            _check_halvings(
                ctx, gam, base, U, start, mean, P, M, method, f"{what} ({'1/M' if method == 'prox-sgd' else '1/(2M)'})"
            )
        elif isinstance(step, str):
            ctx.close(
                gam,
                printed_steps(step, steps, M=M, mu=mu, a=a, A=1.0 / mu),
                rtol=1e-12,
                label=f"{what}: the steps of the rule (Eq. 11, Cor 11, Cor 30 with A = 1/mu)",
            )
        else:
            ctx.close(gam, np.full(steps, gamma), rtol=1e-15, label=f"{what}: the constant step as given")
        if getattr(run, "objective", None) is not None:
            _check_objective(ctx, run, mean, P, what)
        w = _weights(average, steps, method, a, gam[0])
        ctx.close(run.m, w @ ms, rtol=1e-12, atol=1e-12, label=f"{what}: returned m = the {average} average")
        ctx.close(
            run.C, np.tensordot(w, Cs, 1), rtol=1e-12, atol=1e-12, label=f"{what}: returned C = the {average} average"
        )
        ctx.close(run.m_last, ms[-1], label=f"{what}: m_last = m^T")
        ctx.close(run.C_last, Cs[-1], label=f"{what}: C_last = C^T")

    # the default steps also on short runs in d = 1, where the default itself (not a halved one) keeps the run finite
    for i, spec in enumerate(
        [
            ("prox-sgd", None, "tail", 2, False, T),
            ("prox-sgd", 0.5, "uniform", 3, True, T),
            ("prox-sgd", 0.05, "last", 1, False, T),
            ("prox-sgd", 0.02, "theta", 3, False, T),
            ("prox-sgd", "thm6", "tail", 2, False, T),
            ("proj-sgd", None, "tail", 3, False, T),
            ("proj-sgd", 0.1, "uniform", 2, True, T),
            ("proj-sgd", 0.02, "last", 1, False, T),
            ("proj-sgd", 0.05, "theta", 2, False, T),
            ("proj-sgd", "1/(M sqrt T)", "uniform", 3, False, T),
            ("prox-sgd", "A log T / T", "uniform", 2, False, T),
            ("proj-sgd", None, "last", 1, False, 3),
            ("prox-sgd", None, "last", 1, False, 3),
        ]
    ):
        ctx.instance(plain, (i, *spec))

    # in a frame: the implementation's Laplace frame, or one given as (z0, L) (a full L: the frame iterates' C_x
    # in V map back to the factor in V of L C_x C_x^T L^T, no longer L C_x); badly conditioned Gaussians, replayed
    # in frame coordinates
    # (a frame L = I on a condition number of 30 or 300 leaves mu' < M'/10: the default rule is then 1/(M' sqrt T))
    def framed(spec):
        i, method, average, d, cond, given, init = spec[:7]
        linear = len(spec) > 7 and spec[7] == "linear"
        Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
        if linear:  # a Bayesian linear regression: Gaussian in z, P = X^T X / s_n^2 + I / s_p^2 (its own kernel)
            N, sn, sp = 2 * d + 3, 0.7, 3.0
            X = rng.standard_normal((N, d)) @ (Q * np.sqrt(np.geomspace(1.0, cond, d))) @ Q.T
            y = rng.standard_normal(N) * 2.0
            P = X.T @ X / sn**2 + np.eye(d) / sp**2
            P = 0.5 * (P + P.T)
            mu = np.linalg.solve(P, X.T @ y / sn**2)
            target = specs.linear(X, y, sn, sp)
        else:
            P = (Q * np.geomspace(1.0, cond, d)) @ Q.T
            P = 0.5 * (P + P.T)
            mu = rng.standard_normal(d) * 3.0
            target = specs.gaussian(mu, P)
        frame: str | tuple[np.ndarray, np.ndarray]  # a frame name or (z0, L)
        if given is None:
            try:
                z0, L, Mf, muf = (np.asarray(x, dtype=np.float64) for x in ctx.impl.frame(target, "laplace"))
            except MissingMethod as exc:  # no frames at all: this instance, not the statement
                raise InstanceSkipped(str(exc)) from None
            # a Gaussian target in its Laplace frame has L^T P L = I: the frame's M' = mu' = 1 (as in
            # 000.claim-implementation-frame; estimated constants, 1e-5)
            ctx.close(np.array([Mf, muf]), np.ones(2), rtol=1e-5, label="the Laplace frame's M' = mu' = 1 (Gaussian)")
            frame, name = "laplace", "the Laplace frame"
        elif given == "identity":
            z0, L = mu + 0.3 * rng.standard_normal(d), np.eye(d)
            frame, name = (z0, L), "a given frame (z0, L = I)"
        else:  # a frame from a perturbed covariance (its symmetric root or Cholesky factor; mu'/M' ~ 1e-3 here)
            E = np.eye(d) + 0.3 * rng.standard_normal((d, d))
            lam, Q = np.linalg.eigh(E @ np.linalg.inv(P) @ E.T)
            S = (Q * np.sqrt(lam)) @ Q.T
            S = 0.5 * (S + S.T)
            L = S if given == "sym" else np.linalg.cholesky(S @ S)
            z0 = mu + 0.3 * rng.standard_normal(d)
            frame, name = (z0, L), f"a given frame (z0, {'symmetric' if given == 'sym' else 'lower-triangular'} L)"
        start = None
        if init:  # a start near the posterior in z: C0 C0^T = 1.5 P^-1 (the factor in V), m0 = mu + noise
            S0 = 1.5 * np.linalg.inv(P)
            start = (
                mu + rng.standard_normal(d) * np.sqrt(np.diag(S0)),
                _to_frame(np.eye(d), np.linalg.cholesky(S0), method),
            )
        run = ctx.impl.fit(target, method, steps=T, average=average, seed=200 + i, frame=frame, init=start)
        what = (
            f"{method} in {name}, d = {d}, condition number {cond:g}, {average} average"
            + (", a given start" if init else "")
            + (", a linear regression" if linear else "")
        )
        ms, Cs = np.asarray(run.ms), np.asarray(run.Cs)
        ctx.true(ms.shape == (T + 1, d) and Cs.shape == (T + 1, d, d), label=f"{what}: T + 1 iterates reported")
        ctx.true(
            _in_V(Cs, method) and _in_V(np.asarray(run.C)[None], method),
            label=f"{what}: every reported C is in V ({'tril' if method == 'prox-sgd' else 'sym'})",
        )
        Li = np.linalg.inv(L)
        mx = (ms - z0) @ Li.T
        Cx = np.array([_to_frame(Li, C, method) for C in Cs])
        gam = np.asarray(run.step_sizes, dtype=np.float64)
        # the frame's constants from the oracle: the framed target's Hessian L^T P L
        Px = L.T @ P @ L
        ev = np.linalg.eigvalsh(Px)
        Mx, mux = scalar(ev[-1]), scalar(ev[0])
        rule = ("thm6" if method == "prox-sgd" else "thm9") if mux >= 0.1 * Mx else "1/(M sqrt T)"
        a = (2.0 if method == "prox-sgd" else 4.0) * (d + 3) * Mx * Mx  # Thm 26 (energy / entropy)
        want = printed_steps(rule, T, M=Mx, mu=mux, a=a)
        x0 = None if start is None else (Li @ (start[0] - z0), _to_frame(Li, start[1], method))
        if start is not None:
            ctx.close(ms[0], start[0], rtol=1e-9, atol=1e-9, label=f"{what}: the reported m^0 = m0")
            ctx.close(
                Cs[0],
                start[1],
                rtol=1e-9,
                atol=1e-9 * scalar(np.abs(start[1]).max()),
                label=f"{what}: the reported C^0 = C0",
            )
        U = _replay(ctx, mx, Cx, gam, Li @ (mu - z0), Px, scalar(Mx), method, what, x0)
        samples.append(U)
        _check_halvings(
            ctx,
            gam,
            want,
            U,
            x0,
            Li @ (mu - z0),
            Px,
            scalar(Mx),
            method,
            f"{what}, the frame's rule {rule!r} (M' = {Mx:.3g}, mu' = {mux:.3g})",
        )
        if getattr(run, "objective", None) is not None:  # reported in z: f is the same in any frame
            _check_objective(ctx, run, mu, P, what, target.model if linear else None)
        _check_framed_returns(ctx, run, z0, L, mx, Cx, _weights(average, T), scalar(np.abs(P).max()), what)

    # a logistic regression in its Laplace frame (the framed kernel's logistic branch), a constant step: the mean
    # update m' = m - gamma L^T g(z) gives g(z) = -grad log p(z), hence the sample's point z (a Newton solve: -log p is
    # strongly convex) and u; the C update must then be the one of that u
    def framed_logistic(spec):
        i, average, d, cond, step = spec
        Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
        N = 4 * d + 5
        X = rng.standard_normal((N, d)) @ (Q * np.sqrt(np.geomspace(1.0, cond, d))) @ Q.T
        y = np.where(X @ rng.standard_normal(d) + rng.standard_normal(N) > 0, 1.0, -1.0)
        target = specs.logistic(X, y, prior_scale=2.0)
        params = (X, y, 0.25)
        try:
            z0, L = (np.asarray(x, dtype=np.float64) for x in ctx.impl.frame(target, "laplace")[:2])
        except MissingMethod as exc:  # no frames at all: this instance, not the statement
            raise InstanceSkipped(str(exc)) from None
        what = f"prox-sgd in the Laplace frame, d = {d}, a logistic regression (condition {cond:g}), {average} average"
        # the frame is the Laplace approximation's: z0 the mode, L L^T the inverse Hessian of -log p there
        Li = np.linalg.inv(L)
        H0 = Li.T @ Li
        ctx.close(z0, point_of_gradient("logistic", params, np.zeros(d), z0), atol=1e-7, label=f"{what}: z0 = the mode")
        ctx.close(
            H0,
            neg_hess_logp("logistic", z0, params),
            rtol=1e-6,
            label=f"{what}: (L L^T)^-1 = the Hessian at z0",
        )
        run = ctx.impl.fit(target, "prox-sgd", steps=T, step_size=step, average=average, seed=300 + i, frame="laplace")
        ms, Cs = np.asarray(run.ms), np.asarray(run.Cs)
        ctx.true(ms.shape == (T + 1, d) and Cs.shape == (T + 1, d, d), label=f"{what}: T + 1 iterates reported")
        ctx.true(_in_V(Cs, "prox-sgd"), label=f"{what}: every reported C is in V (tril)")
        gam = np.asarray(run.step_sizes, dtype=np.float64)
        ctx.close(gam, np.full(T, step), rtol=1e-15, label=f"{what}: the constant step as given")
        mx = (ms - z0) @ Li.T
        Cx = np.array([_to_frame(Li, C, "prox-sgd") for C in Cs])
        ctx.close(mx[0], np.zeros(d), atol=1e-9, label=f"{what}: m_x^0 = 0 (m^0 = z0)")
        ctx.close(Cx[0], np.eye(d), atol=1e-9, label=f"{what}: C_x^0 = I (C^0 = L)")
        U = []
        for t in range(T):
            m, C, g = mx[t], Cx[t], gam[t]
            r = (m - mx[t + 1]) / g  # L^T (-grad log p(z))
            z = point_of_gradient("logistic", params, np.linalg.solve(L.T, r), z0 + L @ m)
            u = np.linalg.solve(C, Li @ (z - z0) - m)
            scale = 1.0 + scalar(np.abs(C).max()) + g * scalar(np.abs(np.outer(r, u)).max())
            ctx.close(
                Cx[t + 1],
                prox_entropy(C - g * np.tril(np.outer(r, u)), g),
                atol=1e-10 * scale,
                label=f"{what}: step {t}: C^(t+1) = the prox-sgd update of the sample its mean update implies",
            )
            U.append(u)
        samples.append(np.array(U))
        _check_framed_returns(ctx, run, z0, L, mx, Cx, _weights(average, T), scalar(np.abs(H0).max()), what)

    for i, case in enumerate(
        [
            ("prox-sgd", "tail", 2, 1e4, None, False),
            ("proj-sgd", "uniform", 3, 1e3, None, True),
            ("prox-sgd", "uniform", 2, 1e3, "sym", True),
            ("proj-sgd", "tail", 2, 1e2, "tril", False),
            ("prox-sgd", "uniform", 2, 30.0, "identity", False),
            ("proj-sgd", "tail", 3, 300.0, "identity", True),
            ("prox-sgd", "tail", 3, 1e3, None, False, "linear"),
        ]
    ):
        ctx.instance(framed, (i, *case))
    for i, case in enumerate([("tail", 3, 30.0, 0.2), ("uniform", 2, 300.0, 0.05)]):
        ctx.instance(framed_logistic, (i, *case))

    # a user's model given as plain NumPy functions (batched; a Gaussian, off-centre and correlated) in its Laplace
    # frame, a constant step: the driver evaluates the framed density through the frame's own log p (no compiled
    # kernel), which the objective trace then shows
    def framed_numpy(spec):
        i, d, cond, step = spec
        Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
        P = (Q * np.geomspace(1.0, cond, d)) @ Q.T
        P = 0.5 * (P + P.T)
        mu = 5.0 + rng.standard_normal(d) * 3.0
        const = 0.5 * scalar(np.linalg.slogdet(P)[1]) - 0.5 * d * math.log(2.0 * math.pi)
        ev = np.linalg.eigvalsh(P)

        def logp_batch(Z):
            R = np.atleast_2d(Z) - mu
            return const - 0.5 * np.einsum("si,ij,sj->s", R, P, R)

        def grad_batch(Z):
            return -(np.atleast_2d(Z) - mu) @ P

        target = specs.from_callables(
            lambda z: scalar(logp_batch(z)[0]),
            lambda z: grad_batch(z)[0],
            d,
            smoothness=scalar(ev[-1]),
            strong_convexity=scalar(ev[0]),
            logp_batch=logp_batch,
            grad_batch=grad_batch,
        )
        try:
            z0, L = (np.asarray(x, dtype=np.float64) for x in ctx.impl.frame(target, "laplace")[:2])
        except MissingMethod as exc:
            raise InstanceSkipped(str(exc)) from None
        what = f"prox-sgd in the Laplace frame, d = {d}, a Gaussian as batched NumPy functions (condition {cond:g})"
        run = ctx.impl.fit(target, "prox-sgd", steps=T, step_size=step, average="tail", seed=400 + i, frame="laplace")
        ms, Cs = np.asarray(run.ms), np.asarray(run.Cs)
        ctx.true(ms.shape == (T + 1, d) and Cs.shape == (T + 1, d, d), label=f"{what}: T + 1 iterates reported")
        gam = np.asarray(run.step_sizes, dtype=np.float64)
        ctx.close(gam, np.full(T, step), rtol=1e-15, label=f"{what}: the constant step as given")
        Li = np.linalg.inv(L)
        mx, Cx = (ms - z0) @ Li.T, np.array([_to_frame(Li, C, "prox-sgd") for C in Cs])
        Px = L.T @ P @ L
        Mx = scalar(np.linalg.eigvalsh(0.5 * (Px + Px.T))[-1])
        samples.append(_replay(ctx, mx, Cx, gam, Li @ (mu - z0), Px, Mx, "prox-sgd", what))
        if getattr(run, "objective", None) is not None:
            _check_objective(ctx, run, mu, P, what)
        _check_framed_returns(ctx, run, z0, L, mx, Cx, _weights("tail", T), scalar(np.abs(P).max()), what)

    for i, case in enumerate([(3, 100.0, 0.3)]):
        ctx.instance(framed_numpy, (i, *case))
    # the implied samples: i.i.d. N(0, I) (a reused, shared or mis-scaled sample fails here); none when every run
    # was declined (an implementation without fit)
    if not samples:
        return
    u = np.concatenate([s.ravel() for s in samples])
    ctx.mean_close(u[:, None], [0.0], label=f"implied samples: E u = 0 ({u.size} coordinates)")
    ctx.mean_close((u * u)[:, None], [1.0], label="implied samples: E u^2 = 1")
    lag = np.concatenate([(s[1:] * s[:-1]).ravel() for s in samples])
    ctx.mean_close(lag[:, None], [0.0], label="implied samples: E u_t u_(t+1) = 0 (fresh draws every step)")

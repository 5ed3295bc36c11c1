"""The replay helpers of 000.claim-fit (:mod:`.fit_driver`) and 000.claim-fit-defaults (:mod:`.fit_defaults`): the
declared averages, starts and Gaussian instances, frame coordinates, the step-by-step replay of a reported run from
the sample each mean update implies, the blow-up replay that justifies a halving, the objective-trace check and the
check of a framed run's returned averages.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.verification.oracles import vi_objective as vo
from refvi.verification.oracles.sgd_reference import project, prox_entropy
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar
from refvi.verification.statements.convergence_000.schedules import printed_weights


def _weights(average, T, method=None, a=None, gamma=None):
    """The declared average over w^0..w^T (the 50-digit oracle of 000.claim-theta-averages): "theta" is Thm 7's
    weights for Prox-SGD and Thm 10's for Proj-SGD; "tail" the last half."""
    if average == "theta":
        return printed_weights("theta7" if method == "prox-sgd" else "theta10", T, a=a, gamma=gamma)
    return printed_weights(average, T, fraction=0.5)


def _start(rng, d, method):
    """A start (m0, C0) away from (0, I): C0 lower triangular with a positive diagonal (Prox-SGD) or symmetric
    positive definite (Proj-SGD)."""
    B = 0.3 * rng.standard_normal((d, d))
    C0 = (
        np.tril(B, -1) + np.diag(rng.uniform(0.5, 1.5, d))
        if method == "prox-sgd"
        else np.eye(d) * 1.2 + 0.5 * (B + B.T) / max(1.0, scalar(np.abs(B).sum()))
    )
    return rng.standard_normal(d), C0


def _gaussian(rng, d):
    B = rng.standard_normal((d, d))
    P = B @ B.T / d + np.diag(rng.uniform(0.5, 2.0, d))
    return specs.gaussian(rng.standard_normal(d), P), P


def _to_frame(Li, C, method):
    """C_x in V with C_x C_x^T = Li C C^T Li^T: the Cholesky factor (Prox-SGD: lower triangular, positive diagonal)
    or the symmetric root (Proj-SGD)."""
    S = Li @ C @ C.T @ Li.T
    S = 0.5 * (S + S.T)
    if method == "prox-sgd":
        return np.linalg.cholesky(S)
    lam, Q = np.linalg.eigh(S)
    return (Q * np.sqrt(np.maximum(lam, 0.0))) @ Q.T


def _in_V(Cs, method):
    """Every C in V: lower triangular with a positive diagonal (Prox-SGD) or symmetric (Proj-SGD)."""
    if method == "prox-sgd":
        return not np.any(np.triu(Cs, 1)) and bool(np.all(np.diagonal(Cs, axis1=1, axis2=2) > 0))
    return bool(np.allclose(Cs, np.swapaxes(Cs, 1, 2), rtol=0.0, atol=1e-12 * scalar(np.abs(Cs).max())))


def _replay(ctx, ms, Cs, gam, mu, P, M, method, what, start=None):
    """Check every step of the iterates (ms, Cs) of a run on N(mu, P^-1) from ``start`` = (m^0, C^0) (default
    (0, I)) and return the implied samples (T, d)."""
    Pinv = np.linalg.inv(P)
    d = mu.size
    m0, C0 = (np.zeros(d), np.eye(d)) if start is None else start
    ctx.close(ms[0], m0, atol=1e-9, label=f"{what}: m^0 = {'0' if start is None else 'the given start'}")
    ctx.close(Cs[0], C0, atol=1e-9, label=f"{what}: C^0 = {'I' if start is None else 'the given start'}")
    U = []
    for t in range(gam.size):
        m, C, m1, C1, g = ms[t], Cs[t], ms[t + 1], Cs[t + 1], gam[t]
        r = (m - m1) / g
        u = np.linalg.solve(C, Pinv @ r - m + mu)
        if method == "prox-sgd":
            want = prox_entropy(C - g * np.tril(np.outer(r, u)), g)
        else:
            G = np.outer(r, u)
            want = project(C - g * (0.5 * (G + G.T) - np.linalg.inv(C)), M, "sym")
        scale = 1.0 + scalar(np.abs(C).max()) + g * scalar(np.abs(np.outer(r, u)).max())
        ctx.close(C1, want, atol=1e-9 * scale, label=f"{what}: step {t}: C^(t+1) = the {method} update")
        U.append(u)
    return np.array(U)


def _blows_up(gammas, U, start, mu, P, M, method, margin=0.5):
    """Whether Prox-SGD / Proj-SGD with the steps ``gammas`` on N(mu, P^-1), from ``start`` on the base samples
    U (T, d), blows up: an iterate not finite, or the exact objective above f(w^0) + ``margin`` at some step (the
    update of :func:`_replay`, run forwards with the oracle's energy / entropy gradient)."""
    m, C = (np.array(x, dtype=np.float64) for x in start)
    model = {"kind": "gaussian", "mean": mu, "precision": P}
    f0 = vo.objective(model, m, C)
    with np.errstate(all="ignore"):
        for gamma, u in zip(gammas, U, strict=True):
            r = P @ (C @ u + m - mu)
            G = np.outer(r, u)
            if method == "prox-sgd":
                C = prox_entropy(C - gamma * np.tril(G), gamma)
            else:
                try:
                    C = project(C - gamma * (0.5 * (G + G.T) - np.linalg.inv(C)), M, "sym")
                except np.linalg.LinAlgError:
                    return True
            m = m - gamma * r
            if not (np.all(np.isfinite(m)) and np.all(np.isfinite(C))):
                return True
            try:
                if not vo.objective(model, m, C) <= f0 + margin:
                    return True
            except (ValueError, np.linalg.LinAlgError):
                return True
    return False


def _check_halvings(ctx, gam, base, U, start, mu, P, M, method, what):
    """The default steps are base / 2^k with k >= 0, and each of the k halvings is justified: the run at
    base / 2^(j-1) blows up on the same samples (:func:`_blows_up`), j = 1..k."""
    k = round(math.log2(base[0] / gam[0])) if gam.shape == base.shape and gam[0] > 0 else -1
    ctx.true(
        k >= 0 and np.allclose(gam, base / 2.0**k, rtol=1e-9, atol=0.0),
        label=f"{what}: default steps = the rule's / 2^k, k >= 0 (k = {k})",
    )
    if k < 1:
        return
    d = mu.size
    start = (np.zeros(d), np.eye(d)) if start is None else start
    unjustified = [j for j in range(1, k + 1) if not _blows_up(base / 2.0 ** (j - 1), U, start, mu, P, M, method)]
    ctx.true(
        not unjustified,
        label=f"{what}: each of the {k} halving(s) follows a run that blew up on the same "
        f"samples (unjustified: the halvings {unjustified})",
    )


#: why the reported sample count of an objective trace is an input (it is not compared with anything)
OBJECTIVE_SAMPLES = (
    "the number of base samples the implementation says its objective trace averages: it sets the Monte Carlo "
    "standard error the reported f(w^T) is compared with the closed form in"
)


def _check_objective(ctx, run, mu, P, what, model=None):
    """The reported f(w^T) (the driver's Monte Carlo estimate on its own base samples) against the exact objective on
    N(mu, P^-1) (or on ``model``, a target whose log p is that Gaussian's up to its constant: a linear regression),
    within 6 of its standard errors (false alarm ~2e-9 per run): the per-sample -log p(C u + m) has variance
    tr(A^2)/2 + |C^T P (m - mu)|^2, A = C^T P C."""
    m, C = np.asarray(run.ms)[-1], np.asarray(run.Cs)[-1]
    f = vo.objective(model or {"kind": "gaussian", "mean": mu, "precision": P}, m, C)
    A, b = C.T @ P @ C, C.T @ P @ (m - mu)
    n = ctx.given(run.objective_samples, OBJECTIVE_SAMPLES)
    se = math.sqrt(0.5 * np.trace(A @ A) + b @ b) / math.sqrt(n)
    ctx.close(
        scalar(np.asarray(run.objective)[-1]),
        f,
        atol=6.0 * scalar(se),
        label=f"{what}: objective trace at w^T within 6 Monte Carlo standard errors of the exact f(w^T)",
    )


def _check_framed_returns(ctx, run, z0, L, mx, Cx, w, P_max, what):
    """A framed run's returned (m, C) are the average w of the frame iterates mapped back to z, and (m_last, C_last)
    its last iterate."""
    ms, Cs = np.asarray(run.ms), np.asarray(run.Cs)
    ctx.close(run.m, z0 + L @ (w @ mx), rtol=1e-9, atol=1e-9, label=f"{what}: returned m = z0 + L (average)")
    Cw = np.tensordot(w, Cx, 1)
    ctx.close(
        run.C @ np.asarray(run.C).T,
        L @ Cw @ Cw.T @ L.T,
        rtol=1e-9,
        atol=1e-9 / P_max,
        label=f"{what}: returned C C^T = L (average C_x)(average C_x)^T L^T",
    )
    ctx.close(run.m_last, ms[-1], rtol=1e-12, atol=1e-12, label=f"{what}: m_last = m^T")
    ctx.close(run.C_last, Cs[-1], rtol=1e-12, atol=1e-12, label=f"{what}: C_last = C^T")

"""Seed 002 (Domke, "Provable smoothness guarantees for BBVI"), §5.3 dynamics: Thm 6 (linear convergence of proximal
and projected gradient descent; rate typo E002-8, projected half unproven E002-4) and the exact dynamics
on the isotropic quadratic (one-step prox convergence, Heron's iteration, the period-2 cycle of
naive gradient descent).

The optimizer under test is ``ctx.impl.gradient_descent``; exact energy gradients come from
:mod:`..oracles.vi_objective` (closed form for quadratic targets, quadrature for logistic regression), v* from its
``solve``.  Thm 6 has no proof in the paper: the proximal half is standard prox-gradient theory for an M-smooth,
c-strongly convex l plus a convex h on triangular C, and is checked per step; the projected half (full C, W_M not
convex) is checked per step as well but only as an empirical claim, marked as such.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from refvi.verification.errata import erratum
from refvi.verification.oracles import vi_objective as vo
from refvi.verification.statement import scalar, statement


def _grad(model, structure):
    """The exact energy gradient (full-matrix gC) as the function grad_l(m, C) the optimizer receives."""

    def g(m, C):
        _, gm, gC = vo.free_energy(model, m, C)
        return gm, gC

    return g


def _quadratic(rng, d, lo=math.exp(-2), hi=math.exp(2)):
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    lam = np.exp(rng.uniform(math.log(lo), math.log(hi), d))
    A = (Q * lam) @ Q.T
    A = 0.5 * (A + A.T)
    return {"kind": "gaussian", "mean": rng.standard_normal(d), "precision": A}, scalar(lam.min()), scalar(lam.max())


def _logistic(rng, N, d, rho=1.0):
    X = rho * rng.standard_normal((N, d)) / math.sqrt(d)
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    model = {"kind": "logistic", "X": X, "y": y, "prior_scale": 1.0}
    M = scalar(np.linalg.eigvalsh(np.eye(d) + 0.25 * X.T @ X)[-1])
    return model, 1.0, M  # c = 1 for logistic regression with a N(0, I) prior


def _start(rng, d, method, M):
    m = 2.0 * rng.standard_normal(d)
    if method == "prox":
        C = np.tril(0.5 * rng.standard_normal((d, d)), -1) + np.diag(rng.uniform(0.2, 2.0, d))
    else:
        C = rng.standard_normal((d, d))
    return m, C


def _gaps(ctx, model, method, lam, steps, M, m0, C0):
    ms, Cs = ctx.impl.gradient_descent(_grad(model, None), m0, C0, lam, steps, method, M)
    ms, Cs = np.asarray(ms), np.asarray(Cs)
    _, _, vstar = vo.solve(model, "tril")
    return np.array([vo.objective(model, m, C) - vstar for m, C in zip(ms, Cs, strict=True)])


def _contraction(ctx, gaps, rate, floor, label):
    """F(w_{k+1}) - v* <= rate (F(w_k) - v*) + floor, for every k while the gap is above the oracle's accuracy."""
    for k in range(len(gaps) - 1):
        if gaps[k] < 1e3 * floor:
            break
        ctx.bound(gaps[k + 1], rate * gaps[k], atol=floor, label=f"{label}: per-step contraction at k = {k}")
    ctx.bound(
        gaps[-1], rate ** (len(gaps) - 1) * gaps[0], atol=floor, label=f"{label}: F(w_K) - v* <= (1 - lc)^K gap_0"
    )


@erratum("E002-8")
def _e002_8(ctx):
    model = {"kind": "gaussian", "mean": np.zeros(1), "precision": np.eye(1)}
    gaps = _gaps(ctx, model, "prox", 0.5, 5, 1.0, np.ones(1), np.eye(1))
    for k in range(5):
        ctx.close(gaps[k], 0.5 * 4.0**-k, rtol=1e-12, label=f"gap_{k} = 4^-k / 2")
    ctx.geq(gaps[4], 0.5**3 * gaps[3] * 1.9, label="printed rate (1 - lambda c)^k at k = 3 fails by a factor 2")
    ctx.count()


def _quadratic_contraction(ctx, method, key, label, fixed):
    """Thm 6's contraction on random quadratic targets (d <= 4) for 25 steps of ``method`` at a step lambda up to the
    theorem's largest (1/M for prox, 1/(2M) for projected), and step=None taking that largest step."""

    def quad(inst):
        d, seed = inst
        rng = ctx.rng(f"{key}/{d}/{seed}")
        model, c, M = _quadratic(rng, d)
        largest = M if method == "prox" else 2 * M
        lam = scalar(rng.uniform(0.05, 1.0)) / largest
        m0, C0 = _start(rng, d, method, M)
        gaps = _gaps(ctx, model, method, lam, 25, M, m0, C0)
        # closed-form objective: rounding ~1e-13 of |F| ~ 10
        _contraction(ctx, gaps, 1 - lam * c, 1e-11, label.format(d=d))
        # step=None is the theorem's largest step: the same trajectory as passing it
        a = ctx.impl.gradient_descent(_grad(model, None), m0, C0, None, 5, method, M)
        b = ctx.impl.gradient_descent(_grad(model, None), m0, C0, 1 / largest, 5, method, M)
        ctx.close(
            np.asarray(a[1]),
            np.asarray(b[1]),
            rtol=1e-14,
            atol=1e-14,
            label="default step = " + ("1/M" if method == "prox" else "1/(2M)"),
        )

    ctx.forall(
        st.tuples(st.integers(1, 4), st.integers(0, 2**32 - 1)),
        quad,
        fixed=fixed,
        max_examples=(8 if ctx.profile.name == "ci" else 200),
    )


@statement("002.thm6")
def thm6(ctx):
    _quadratic_contraction(ctx, "prox", "quad", "quadratic d={d}", [(2, 0), (4, 1)])
    rng = ctx.rng("logistic")
    for rho in (1.0, 3.0):
        model, c, M = _logistic(rng, 30, 3, rho)
        m0, C0 = _start(rng, 3, "prox", M)
        gaps = _gaps(ctx, model, "prox", 1 / M, 15, M, m0, C0)
        # v* from Newton to gradient norm <= 1e-9 (oracle): F error <= ~1e-15; quadrature ~1e-13 relative on F ~ 30
        _contraction(ctx, gaps, 1 - c / M, 1e-10, f"logistic rho={rho}")
        ctx.count()


@statement("002.claim-thm6-projected")
def thm6_projected(ctx):
    _quadratic_contraction(ctx, "projected", "proj", "projected, quadratic d={d} (empirical)", [(2, 0), (3, 1)])


# ------------------------------------------------------------------------------------------- O9: exact dynamics
def _iso(rng, d):
    a = scalar(np.exp(rng.uniform(-1.5, 1.5)))
    zs = rng.standard_normal(d)
    return {"kind": "gaussian", "mean": zs, "precision": a * np.eye(d)}, a, zs


def _iso_case(ctx, key, d, seed):
    """The isotropic quadratic of a drawn (d, seed) on the statement's stream ``key``: (rng, model, a, z*)."""
    rng = ctx.rng(f"{key}/{d}/{seed}")
    return (rng, *_iso(rng, d))


@statement("002.claim-prox-one-step")
def prox_one_step(ctx):
    def check(inst):
        d, seed = inst
        rng, model, a, zs = _iso_case(ctx, "one", d, seed)
        m0, C0 = _start(rng, d, "prox", a)
        ms, Cs = ctx.impl.gradient_descent(_grad(model, None), m0, C0, 1 / a, 2, "prox", a)
        # C - lambda a C = 0 exactly up to rounding of (1 - lambda a) C: ~1e-16 |C|; prox(0) = sqrt(lambda)
        for k in (1, 2):
            ctx.close(np.asarray(ms)[k], zs, rtol=1e-13, atol=1e-13, label=f"m_{k} = z*")
            ctx.close(np.asarray(Cs)[k], np.eye(d) / math.sqrt(a), rtol=1e-13, atol=1e-13, label=f"C_{k} = I/sqrt(a)")

    ctx.forall(st.tuples(st.integers(1, 4), st.integers(0, 2**32 - 1)), check, fixed=[(1, 0), (3, 0)])


@statement("002.claim-heron")
def heron(ctx):
    def check(inst):
        seed, c0 = inst
        rng = ctx.rng(f"heron/{seed}")
        model, a, zs = _iso(rng, 1)
        ms, Cs = ctx.impl.gradient_descent(
            _grad(model, None), np.zeros(1), np.array([[c0]]), 1 / (2 * a), 8, "projected", a
        )
        cs = np.asarray(Cs)[:, 0, 0]
        c = max(abs(c0), 1 / math.sqrt(a)) * (1.0 if c0 >= 0 else -1.0)  # the first projection
        root = 1 / math.sqrt(a)
        for k in range(1, cs.size):
            c = 0.5 * (c + (1 / a) / c)
            ctx.close(cs[k], c, rtol=1e-13, label=f"c_{k} is Heron's iterate")
            ctx.geq(abs(cs[k]), root, rtol=1e-13, label="projection inactive after step 0 (AM-GM)")
        e = [abs(abs(x) - root) / root for x in cs[1:]]
        for k in range(len(e) - 1):
            if e[k] > 1e-7:
                ctx.bound(e[k + 1], e[k] ** 2, rtol=1e-6, atol=1e-15, label="quadratic convergence e_{k+1} <= e_k^2")

    ctx.forall(
        st.tuples(st.integers(0, 2**32 - 1), st.floats(-20.0, 20.0).filter(lambda x: abs(x) > 1e-3)),
        check,
        fixed=[(0, 1e-3), (1, 10.0)],
    )


@statement("002.claim-naive-cycle")
def naive_cycle(ctx):
    def check(inst):
        d, seed = inst
        rng, model, a, zs = _iso_case(ctx, "cycle", d, seed)
        C0 = rng.standard_normal((d, d)) + 2.0 * np.eye(d)
        ms, Cs = ctx.impl.gradient_descent(_grad(model, None), rng.standard_normal(d), C0, 1 / a, 6, "naive", a)
        ms, Cs = np.asarray(ms), np.asarray(Cs)
        kappa = np.linalg.cond(C0)
        tol = 1e-12 * kappa**2
        ctx.close(ms[1], zs, rtol=1e-13, atol=1e-13, label="m_1 = z*")
        for k in range(5):
            ctx.close(Cs[k + 1], np.linalg.inv(Cs[k]).T / a, rtol=tol, atol=tol, label="C_{k+1} = C_k^{-T}/a")
        for k in range(4):
            ctx.close(Cs[k + 2], Cs[k], rtol=tol, atol=tol, label="period 2: C_{k+2} = C_k")
        off = np.linalg.norm(C0.T @ C0 - np.eye(d) / a)
        if off > 1e-3:
            ctx.geq(np.linalg.norm(Cs[1] - Cs[0]), 1e-6, label="not a fixed point: C_1 != C_0")

    ctx.forall(st.tuples(st.integers(1, 3), st.integers(0, 2**32 - 1)), check, fixed=[(1, 0), (2, 0)])

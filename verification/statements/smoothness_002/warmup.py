"""Domke, *Provable smoothness guarantees for black-box variational inference* (seed 002): the warm-up proposition of
§4.2 (per-coordinate smoothness by Cauchy-Schwarz, Eqs. 6-13) and Bessel's inequality (§3.3, D2), the step (14) that
makes Thm 2's constant M instead of sqrt(len w) M.

Gradients come from the implementation's ``energy`` averaged over the atoms of a discrete standardized base
(products of two-point laws, replicated so that a plain mean is the exact expectation); the other side is computed
from the hand-derived grad f of the cos + quadratic target (guide O3, M = beta + |alpha| ||b||^2 exactly) by exact
sums over the atoms (:mod:`refvi.verification.oracles.discrete`).

Statements: 002.claim-warmup, 002.claim-bessel.
"""

from __future__ import annotations

import math

import numpy as np

from refvi.verification.oracles import discrete as ds
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.smoothness_002._checked import energy_atoms
from refvi.verification.statements.smoothness_002._smoothness import _cos_params, _norm_w, _pair
from refvi.verification.strategies import RNG


def _grad_f(params, Z):
    alpha, b, phi, beta, z0 = params
    return (-alpha * np.sin(Z @ b + phi))[:, None] * b[None, :] + beta * (Z - z0)


def _instance(rng):
    """(d, p, atoms U, weights, replicated atoms, cos + quadratic parameters, w, v): p = 1/2 or the skewed 1/4."""
    d = int(rng.integers(1, 4))
    p = 0.5 if rng.random() < 0.5 else 0.25
    U, pw = ds.two_point_atoms(d, p)
    Urep = U if p == 0.5 else ds.replicate_rational(U, pw, 4**d)
    params = _cos_params(rng, d)
    w, v = _pair(rng, d, "full", bool(rng.random() < 0.5))
    return d, p, U, pw, Urep, params, w, v


def _impl_flat(ctx, target, m, C, Urep):
    """The implementation's exact gradient of l over the (replicated) atoms, compared with the oracle's first."""
    gm, gC = energy_atoms(ctx, target, m, C, Urep)
    return np.concatenate([gm, gC.ravel()])


def _quadratic_single_coordinate(d, M, i):
    """f = M/2 ||z||^2 and w - v along the single parameter coordinate i: |d_i l(w) - d_i l(v)| = M ||w - v||."""
    params = (0.0, np.zeros(d), 0.0, M, np.zeros(d))
    m, C = np.zeros(d), np.eye(d)
    E = np.zeros(d + d * d)
    E[i] = 0.7
    return params, (m, C), (m + E[:d], C + E[d:].reshape(d, d))


@statement("002.claim-warmup")
def prop_warmup(ctx):
    def check(inst):
        d, p, U, pw, Urep, params, (m1, C1), (m2, C2) = inst
        target = specs.cosine(*params)
        M = params[3] + abs(params[0]) * scalar(params[1] @ params[1])
        dw = _norm_w(m1 - m2, C1 - C2)
        diff = _impl_flat(ctx, target, m1, C1, Urep) - _impl_flat(ctx, target, m2, C2, Urep)
        if M == 0.0:
            return
        ctx.bound(
            scalar(np.max(np.abs(diff))),
            M * dw,
            rtol=1e-10,
            atol=1e-12,
            label=f"d = {d}, p = {p}: max_i |d_i l(w) - d_i l(v)| <= M ||w - v||",
        )
        n = d + d * d
        gap = scalar(np.linalg.norm(diff))
        if gap > 1e-12 * M * dw:
            ctx.geq(
                math.sqrt(n) * M * dw / gap,
                math.sqrt(n),
                rtol=1e-9,
                label=f"summed bound sqrt({n}) M ||w - v|| exceeds ||grad l(w) - grad l(v)|| by >= sqrt({n})",
            )

    ctx.forall(RNG.map(_instance), check, fixed=[_instance(np.random.default_rng(k)) for k in range(4)])
    # tightness: the quadratic f = M/2 ||z||^2 moved along one coordinate attains the per-coordinate bound
    for d, i in ((1, 0), (2, 3), (3, 7)):
        params, (m1, C1), (m2, C2) = _quadratic_single_coordinate(d, 1.7, i)
        U, _ = ds.two_point_atoms(d, 0.5)
        diff = _impl_flat(ctx, specs.cosine(*params), m1, C1, U) - _impl_flat(ctx, specs.cosine(*params), m2, C2, U)
        ctx.bound(
            scalar(np.max(np.abs(diff))),
            1.7 * _norm_w(m1 - m2, C1 - C2),
            rtol=1e-10,
            atol=1e-12,
            label=f"d = {d}: quadratic f along coordinate {i} (tight)",
        )


def _sides_14(ctx, params, w, v, U, pw, Urep):
    """The two sides of (14) for the cosine target ``params``: ||grad l(w) - grad l(v)||^2 from the implementation on
    the replicated atoms ``Urep``, and E_s ||grad f(t_w(u)) - grad f(t_v(u))||^2 from the oracle on the atoms ``U``
    with weights ``pw``."""
    (m1, C1), (m2, C2) = w, v
    target = specs.cosine(*params)
    diff = _impl_flat(ctx, target, m1, C1, Urep) - _impl_flat(ctx, target, m2, C2, Urep)
    D = _grad_f(params, U @ C1.T + m1) - _grad_f(params, U @ C2.T + m2)
    return scalar(diff @ diff), ds.inner(D, D, pw)


@statement("002.claim-bessel")
def claim_bessel(ctx):
    def check(inst):
        d, p, U, pw, Urep, params, (m1, C1), (m2, C2) = inst
        A = ds.basis_functions(U)  # a_i at the atoms: (atoms, d + d^2, d)
        G = np.array([[ds.inner(A[:, i, :], A[:, j, :], pw) for j in range(A.shape[1])] for i in range(A.shape[1])])
        ctx.close(G, np.eye(A.shape[1]), atol=1e-13, label=f"d = {d}, p = {p}: the a_i are orthonormal in <.,.>_s")
        rng = np.random.default_rng(d * 7919 + int(p * 4))
        X = rng.standard_normal((U.shape[0], d))  # an arbitrary vector field on the atoms
        coef = np.array([ds.inner(A[:, i, :], X, pw) for i in range(A.shape[1])])
        ctx.bound(
            scalar(coef @ coef),
            ds.inner(X, X, pw),
            rtol=1e-12,
            atol=1e-14,
            label="sum_i <a_i, x>_s^2 <= ||x||_s^2 (random field)",
        )
        ctx.bound(
            *_sides_14(ctx, params, (m1, C1), (m2, C2), U, pw, Urep),
            rtol=1e-10,
            atol=1e-13,
            label="||grad l(w) - grad l(v)||^2 <= E_s ||grad f(t_w(u)) - grad f(t_v(u))||^2 (14)",
        )

    ctx.forall(RNG.map(_instance), check, fixed=[_instance(np.random.default_rng(k)) for k in range(4)])
    # tightness: grad f affine (alpha = 0) puts grad f o t_w - grad f o t_v in the span of the a_i: equality
    for d, p in ((1, 0.25), (2, 0.5), (3, 0.25)):
        params = (0.0, np.zeros(d), 0.0, 1.3, np.linspace(-1.0, 1.0, d))
        U, pw = ds.two_point_atoms(d, p)
        Urep = U if p == 0.5 else ds.replicate_rational(U, pw, 4**d)
        (m1, C1), (m2, C2) = _pair(np.random.default_rng(11 + d), d, "full", False)
        ctx.bound(
            *_sides_14(ctx, params, (m1, C1), (m2, C2), U, pw, Urep),
            rtol=1e-10,
            atol=1e-13,
            label=f"d = {d}, p = {p}: quadratic f: (14) with equality (tight)",
        )

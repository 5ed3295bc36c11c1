"""Domke, *Provable smoothness guarantees for black-box variational inference* (seed 002): the base distributions of
location-scale families (§3.1), through the implementation's ``base_charfun``, ``base_entropy``, ``base_moments``,
``base_atoms``, ``standardize`` and ``to_base_params``.

Thms 1-2 hold for a *standardized* base (E u = 0, V u = I); any base with finite variance is standardized by
u = R (u0 - mu), R = Sigma^{-1/2}, and LocScale(m, C, standardized) = LocScale(m - C R mu, C R, s0) (§3.1).  The
statements that use characteristic functions (Thms 1, 2, 4, Examples 8-10) take them from the oracle, so the
implementation's own base laws are checked here.  Oracles: the closed-form characteristic functions of
:mod:`refvi.verification.oracles.charfun` (guide O3), enumeration of the atoms for the two-point laws
(:mod:`.oracles.discrete`), ``scipy.stats`` entropies, ``scipy.linalg.sqrtm`` for Sigma^{1/2}.

Statements: 002.claim-base-laws, 002.claim-base-atoms.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from refvi.verification.oracles import discrete as ds
from refvi.verification.protocol.bases import BaseSpec, affine
from refvi.verification.statement import scalar, statement
from refvi.verification.statements.smoothness_002._bases import (
    oracle_charfun,
    oracle_entropy,
    oracle_moments,
    random_law,
)
from refvi.verification.strategies import RNG


def _maybe_affine(rng, base, d):
    """``base``, or (half the time) an affine map of it with a triangular scale whose diagonal lies in [0.3, 3]
    (invertible) and a standard-normal shift."""
    if rng.random() < 0.5:
        A = np.tril(rng.standard_normal((d, d)), -1) + np.diag(rng.uniform(0.3, 3.0, d))
        return affine(base, rng.standard_normal(d), A)
    return base


def _instance(rng):
    """(base, d, K, m, C): a standardized law, or (half the time) an affine map of one (:func:`_maybe_affine`),
    d = 1..3, six frequencies up to |k| ~ 16 plus k = 0."""
    d = int(rng.integers(1, 4))
    base = _maybe_affine(rng, random_law(rng), d)
    K = np.vstack([np.zeros(d), rng.standard_normal((6, d)) * scalar(rng.uniform(0.1, 4.0))])
    return base, d, K, rng.standard_normal(d), rng.standard_normal((d, d))


def _fixed():
    """Every law in d = 2 standardized and behind a non-centred affine map (seed 002 Example 8's shifted Gaussian
    among them), so each closed form is reached whatever Hypothesis draws."""
    K = np.array([[0.0, 0.0], [0.3, -1.2], [2.5, 0.7], [-4.0, 3.0]])
    A = np.array([[1.5, 0.0], [-0.8, 0.5]])
    laws = [BaseSpec(k) for k in ("gaussian", "uniform", "laplace", "exponential", "rademacher")] + [
        BaseSpec("two_point", p=0.2),
        BaseSpec("student_t", nu=5.0),
        BaseSpec("student_t", nu=3.5, product=True),
    ]
    out = []
    for b in laws:
        out += [(b, 2, K, np.array([0.4, -1.0]), A.T), (affine(b, [1.0, -2.0], A), 2, K, np.array([0.4, -1.0]), A.T)]
    return out


@statement("002.claim-base-laws")
def claim_base_laws(ctx):
    def check(inst):
        base, d, K, m, C = inst
        what = f"{base!r}, d = {d}"
        got, ref = np.asarray(ctx.impl.base_charfun(base, K), dtype=np.complex128), oracle_charfun(base, K)
        ctx.close(got.real, ref.real, atol=1e-11, rtol=1e-11, label=f"{what}: Re E exp(i k^T u)")
        ctx.close(got.imag, ref.imag, atol=1e-11, rtol=1e-11, label=f"{what}: Im E exp(i k^T u)")
        mu, S = (np.asarray(v, dtype=np.float64) for v in ctx.impl.base_moments(base, d))
        mu_o, S_o = oracle_moments(base, d)
        ctx.close(mu, mu_o, atol=1e-12, label=f"{what}: E u")
        ctx.close(S, S_o, rtol=1e-12, atol=1e-12, label=f"{what}: V u")
        if not base.discrete:
            ctx.close(
                scalar(ctx.impl.base_entropy(base, d)),
                oracle_entropy(base, d),
                rtol=1e-11,
                atol=1e-11,
                label=f"{what}: differential entropy",
            )
        R = np.linalg.inv(np.real(linalg.sqrtm(S_o)))
        # the standardized law R (u0 - mu): mean 0, covariance I, and E exp(i k^T u) = exp(-i k^T R mu) phi(R k)
        std = ctx.impl.standardize(base, d)
        ctx.true(
            std.kind == "affine" and std.inner.kind != "affine",
            label=f"{what}: standardized = an affine map of a standardized law",
        )
        mu_s, S_s = oracle_moments(std, d)
        ctx.close(mu_s, np.zeros(d), atol=1e-10, label=f"{what}: the standardized base has E u = 0")
        ctx.close(S_s, np.eye(d), atol=1e-10, label=f"{what}: the standardized base has V u = I")
        diff = oracle_charfun(std, K) - np.exp(-1j * (K @ R @ mu_o)) * oracle_charfun(base, K @ R)
        ctx.close(
            np.abs(diff),
            np.zeros(len(K)),
            atol=1e-10,
            label=f"{what}: the standardized base is R (u0 - mu) with R = Sigma^(-1/2) symmetric",
        )
        if base.kind == "affine":
            m0, C0 = (np.asarray(v, dtype=np.float64) for v in ctx.impl.to_base_params(m, C, base))
            ctx.close(m0, m - C @ R @ mu_o, rtol=1e-10, atol=1e-10, label=f"{what}: m0 = m - C R mu")
            ctx.close(C0, C @ R, rtol=1e-10, atol=1e-10, label=f"{what}: C0 = C R (R symmetric)")
            ctx.close(C0 @ mu_o + m0, m, atol=1e-10, label=f"{what}: same mean")
            ctx.close(C0 @ S_o @ C0.T, C @ C.T, rtol=1e-10, atol=1e-10, label=f"{what}: same covariance")

    ctx.forall(RNG.map(_instance), check, fixed=_fixed(), max_examples=max(40, ctx.profile.max_examples))


def _atom_instance(rng):
    """(base, d): a two-point law with p in [0.05, 0.95] in d = 1..4, or (half the time) an affine map of one
    (:func:`_maybe_affine`)."""
    d, p = int(rng.integers(1, 5)), scalar(rng.uniform(0.05, 0.95))
    return _maybe_affine(rng, BaseSpec("two_point", p=p), d), d


def _atom_fixed():
    """Rademacher in d = 1..4, asymmetric two-point laws (p = 0.2, 0.7) and affine maps of both in d = 3."""
    A = np.array([[1.5, 0.0, 0.0], [-0.8, 0.5, 0.0], [0.3, 2.0, 0.7]])
    b = np.array([1.0, -2.0, 0.5])
    out = [(BaseSpec("rademacher"), d) for d in range(1, 5)]
    out += [
        (BaseSpec("two_point", p=0.2), 3),
        (BaseSpec("two_point", p=0.7), 2),
        (affine(BaseSpec("two_point", p=0.2), b, A), 3),
        (affine(BaseSpec("rademacher"), b, A), 3),
    ]
    return out


@statement("002.claim-base-atoms")
def claim_base_atoms(ctx):
    def check(inst):
        base, d = inst
        what = f"{base!r}, d = {d}"
        U, w = (np.asarray(v, dtype=np.float64) for v in ctx.impl.base_atoms(base, d))
        law = base.inner if base.kind == "affine" else base
        Uo, wo = ds.two_point_atoms(d, 0.5 if law.p is None else law.p)  # itertools enumeration of the product law
        if base.kind == "affine":
            Uo = Uo @ base.scale.T + base.shift
        ctx.true(
            U.shape == Uo.shape and w.shape == wo.shape,
            label=f"{what}: 2^d atoms of dimension d (got U {U.shape}, w {w.shape})",
        )
        if U.shape != Uo.shape or w.shape != wo.shape:
            return
        # the atoms are distinct (A invertible, hi != lo): match each oracle atom to its nearest returned atom
        dist = np.linalg.norm(Uo[:, None, :] - U[None, :, :], axis=2)
        near = np.argmin(dist, axis=1)
        ctx.true(len(set(near.tolist())) == len(near), label=f"{what}: the atoms are the 2^d points of the product law")
        ctx.close(U[near], Uo, rtol=1e-12, atol=1e-12, label=f"{what}: atom positions")
        ctx.close(w[near], wo, rtol=1e-12, atol=1e-15, label=f"{what}: atom probabilities")

    ctx.forall(RNG.map(_atom_instance), check, fixed=_atom_fixed(), max_examples=max(30, ctx.profile.max_examples))
    for b in (BaseSpec("gaussian"), affine(BaseSpec("uniform"), [0.5, 0.0], np.eye(2))):
        ctx.refuses(lambda b=b: ctx.impl.base_atoms(b, 2), label=f"{b!r}: a continuous base has no atoms")

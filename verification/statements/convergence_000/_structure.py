"""Shared helpers, instances and constants of the convergence statements.

Seed 000 (Domke, Garrigos & Gower), structural results: restriction to V (Lemmas 13-15), smoothness and convexity
of the VI objective (Lemmas 16-18), the model constants of §7.3 (Thm 21 - Cor 25, errata E000-1, E000-2, E000-5,
E000-6) and the prox / projection / adjoint computations of §9-10 (Lemmas 29, 31, 32, 33).

Oracles: :mod:`..oracles.vi_objective` (exact l, grad l and the VI optimum), :mod:`..oracles.hessian_bounds`
(-log p, its gradient and Hessian by finite differences / SymPy, written independently of refvi),
:mod:`..oracles.quadrature` (degree-3 cubature), SymPy for the symbolic identities.  The implementation is reached
only through ``ctx.impl`` and receives targets as plain :class:`~refvi.verification.protocol.targets.TargetSpec`
records built from the oracle model.  Every bound takes M and mu from the oracle
(:func:`..oracles.hessian_bounds.model_constants`); only the constant statements (Thm 21, Cor 22, Cor 23, Thm 24,
Cor 25) ask ``ctx.impl`` for its M and mu, and compare them with the tight values where the bound is attained.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from refvi.verification.oracles import hessian_bounds as hb
from refvi.verification.oracles.matrices import proj_V as proj
from refvi.verification.protocol import datasets
from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar

STRUCTS = ("full", "tril", "sym", "diag")


def random_in_W(rng: np.random.Generator, d: int, structure: str, smin: float = 0.3) -> np.ndarray:
    """A random C in V with sigma_min(C) >= smin (so C is in W, and in W_M for smin >= 1/sqrt(M)).

    tril / diag: positive diagonal; sym: positive definite; full: any invertible matrix (its determinant may be
    negative).  C is rescaled (which keeps it in V) until sigma_min(C) >= smin.
    """
    A = rng.standard_normal((d, d))
    if structure == "sym":
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        lam = smin + rng.exponential(1.0, d)
        C = (Q * lam) @ Q.T
        return 0.5 * (C + C.T)
    C = proj(A, structure)
    if structure in ("tril", "diag"):
        C[np.diag_indices(d)] = np.abs(np.diag(C)) + 0.2
    s = np.linalg.svd(C, compute_uv=False)[-1]
    if s < smin:
        C = C * (smin / s) * (1.0 + 1e-9)
    return C


def inner(A, B) -> float:
    return scalar(np.sum(np.asarray(A) * np.asarray(B)))


# ------------------------------------------------------------------------------------------------ model instances
def regression_case(inst):
    """A drawn (d, N, seed): the generator seeded by ``seed`` and, on it, a logistic (even seed) or linear (odd seed)
    regression target with N points in d dimensions: ``(rng, kind, model, target)``."""
    d, N, seed = inst
    rng = np.random.default_rng(seed)
    kind = ("logistic", "linear")[seed % 2]
    model, target = (logistic_instance if kind == "logistic" else linear_instance)(rng, N, d)
    return rng, kind, model, target


def linear_case(inst):
    """A drawn (d, N, seed) as ``(d, rng, model, target)``: Bayesian linear regression (:func:`linear_instance`)
    drawn from the generator seeded by ``seed``, which the check goes on drawing from."""
    d, N, seed = inst
    rng = np.random.default_rng(seed)
    return (d, rng) + linear_instance(rng, N, d)


def logistic_case(inst):
    """:func:`linear_case` for Bayesian logistic regression (:func:`logistic_instance`)."""
    d, N, seed = inst
    rng = np.random.default_rng(seed)
    return (d, rng) + logistic_instance(rng, N, d)


def linear_instance(rng, N: int, d: int):
    """(oracle model dict, target spec) for Bayesian linear regression with random data and scales."""
    X = rng.standard_normal((N, d))
    y = rng.standard_normal(N)
    sn, s = scalar(rng.uniform(0.3, 2.0)), scalar(rng.uniform(0.5, 2.0))
    model = {"kind": "linear", "X": X, "y": y, "noise_scale": sn, "prior_scale": s}
    return model, specs.from_model(model)


def logistic_instance(rng, N: int, d: int):
    X = rng.standard_normal((N, d))
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    s = scalar(rng.uniform(0.5, 2.0))
    model = {"kind": "logistic", "X": X, "y": y, "prior_scale": s}
    return model, specs.from_model(model)


def real_data_instance(name: str):
    """(oracle model, target spec) for a bundled data set: logistic for classification, linear for regression."""
    model = datasets.model_for(name)
    return model, specs.from_model(model, name)


def constants(model) -> tuple[float, float]:
    """(mu, M) of the model from the oracle: what every bound uses (never the implementation's values)."""
    return hb.model_constants(model)


def same_function(ctx, model, target, rng, label):
    """Evidence that the spec handed to the implementation is the oracle's model (values and gradients agree)."""
    dim = target.dim
    for z in (np.zeros(dim), rng.standard_normal(dim), 3.0 * rng.standard_normal(dim)):
        v = hb.neg_log_joint(model, z)
        # both sides are closed-form sums of O(N) terms: agreement to 1e-12 relative (rounding only)
        ctx.close(-target.logp(z), v, rtol=1e-12, atol=1e-12, label=f"{label}: -log p oracle vs spec")
        ctx.close(
            -np.asarray(target.grad_logp(z)),
            hb.grad_neg_log_joint(model, z),
            rtol=1e-11,
            atol=1e-11,
            label=f"{label}: grad -log p oracle vs spec",
        )


def seeds(dmax: int = 3, nmax: int = 6):
    """Hypothesis strategy of (d, N, seed); arrays are drawn from a numpy generator seeded by ``seed``."""
    return st.tuples(st.integers(1, dmax), st.integers(1, nmax), st.integers(0, 2**32 - 1))


def basis(d: int, structure: str) -> list[np.ndarray]:
    """An orthonormal (Frobenius) basis of V."""
    out = []
    for i in range(d):
        for j in range(d):
            E = np.zeros((d, d))
            if structure == "full" or (structure == "tril" and i >= j) or (structure == "diag" and i == j):
                E[i, j] = 1.0
            elif structure == "sym" and i >= j:
                E[i, j] = E[j, i] = 1.0 if i == j else 1.0 / np.sqrt(2.0)
            else:
                continue
            out.append(E)
    return out


def sigma_min(C) -> float:
    """The smallest singular value of C."""
    return scalar(np.linalg.svd(C, compute_uv=False)[-1])


def gaussian_instance(rng, d: int):
    """A random Gaussian target N(mu, P^{-1}) with lambda_min(P) >= 0.5, as ``(model, spec)``."""
    B = rng.standard_normal((d, d))
    P = B @ B.T + 0.5 * np.eye(d)
    P = 0.5 * (P + P.T)
    mu = rng.standard_normal(d)
    model = {"kind": "gaussian", "mean": mu, "precision": P}
    return model, specs.from_model(model)


def quadratic_instance(rng, kind, d, N):
    """A target whose gradient is affine: Gaussian (``kind == "gaussian"``) or Bayesian linear regression."""
    return gaussian_instance(rng, d) if kind == "gaussian" else linear_instance(rng, N, d)

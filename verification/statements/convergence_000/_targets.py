"""Shared target instances of the seed 000 statements: one TargetSpec of every kind (Gaussian, linear, logistic,
hierarchical logistic, cosine, plain callables) with random data, non-unit scales and data sizes around the kernels'
blocking thresholds, and a differenced Hessian of a record's closed-form gradient (the oracle side of Hessian checks).
"""

from __future__ import annotations

import numpy as np

from refvi.verification.protocol import targets as specs
from refvi.verification.statement import scalar

KINDS = ("gaussian", "linear", "logistic", "hierarchical_logistic", "cosine", "callable")
SIZES = (1, 3, 4, 7, 8, 9, 16, 17, 33)  # around 4- and 8-wide unrolling and blocking in the kernels


def target_instance(rng, kind=None):
    """A target spec of ``kind`` (drawn if None) with random data, non-unit scales and N from SIZES."""
    kind = KINDS[int(rng.integers(0, len(KINDS)))] if kind is None else kind
    N = SIZES[int(rng.integers(0, len(SIZES)))]
    d = int(rng.integers(1, 4))
    if kind == "gaussian":
        B = rng.standard_normal((d, d))
        return specs.gaussian(rng.standard_normal(d), B @ B.T + 0.5 * np.eye(d))
    X = rng.standard_normal((N, d))
    pm = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    if kind == "linear":
        return specs.linear(X, rng.standard_normal(N), scalar(rng.uniform(0.3, 2.5)), scalar(rng.uniform(0.4, 3.0)))
    if kind == "logistic":
        return specs.logistic(X, pm, scalar(rng.uniform(0.4, 3.0)))
    if kind == "hierarchical_logistic":
        G = int(rng.integers(1, 4))
        A = rng.standard_normal((d, d))
        return specs.hierarchical_logistic(
            X, pm, rng.integers(0, G, size=N), G, A @ A.T + 0.5 * np.eye(d), scalar(rng.uniform(0.3, 2.0)) * np.eye(d)
        )
    if kind == "cosine":
        return specs.cosine(
            scalar(rng.uniform(-3.0, 3.0)),
            rng.standard_normal(d),
            scalar(rng.uniform(-3.0, 3.0)),
            scalar(rng.uniform(0.0, 2.0)),
            rng.standard_normal(d),
        )
    # plain callables declaring their constants; an isotropic Gaussian has mu = M (the boundary the record allows)
    a = scalar(rng.uniform(0.3, 3.0))
    iso = specs.gaussian(rng.standard_normal(d), a * np.eye(d))
    return specs.from_callables(iso.logp, iso.grad_logp, d, smoothness=a, strong_convexity=a)


def hessian_of_gradient(target, z, h=1e-5):
    """Hess log p at z by central differences of the record's closed-form gradient (error ~1e-9 relative here)."""
    cols = [(target.grad_logp(z + h * e) - target.grad_logp(z - h * e)) / (2 * h) for e in np.eye(z.size)]
    return 0.5 * (np.array(cols) + np.array(cols).T)

"""The README's own-model example (issue 28): sblrc-blr's Bayesian linear regression on (beta, log sigma), written
by a user as ``numba.njit`` log p and gradient for one point, in a ``CallableTarget``; and refvi's built-in
``LinearRegression`` on the same X, y with sigma fixed (d = 5), whose whole loop is refvi's own fused kernel.

Shared by ``test_bench_user_model.py`` (the tracked ratio and the 2x goal) and ``peer_report.py`` (the row against
NumPyro).  beta ~ N(0, 10^2), sigma ~ half-N(0, 10^2); log sigma's log-Jacobian is added.
"""

from __future__ import annotations

import json

import numpy as np

from refvi.targets import CallableTarget, LinearRegression, posteriordb


def data():
    d = json.loads((posteriordb.models.DATA / "sblrc.json").read_text())
    return np.array(d["X"], dtype=np.float64), np.array(d["y"], dtype=np.float64)


def user_target():
    """The README's example, verbatim in substance: njit logp and grad_logp of one point z = (beta, log sigma)."""
    import numba

    X, y = data()
    N, D = X.shape

    @numba.njit
    def logp(z):
        s = np.exp(z[D])
        r = y - X @ z[:D]
        return -N * z[D] - 0.5 * r @ r / s**2 - 0.5 * z[:D] @ z[:D] / 100 - 0.5 * s**2 / 100 + z[D]

    @numba.njit
    def grad_logp(z):
        s2 = np.exp(2 * z[D])
        r = y - X @ z[:D]
        g = np.empty(D + 1)
        g[:D] = X.T @ r / s2 - z[:D] / 100
        g[D] = -N + r @ r / s2 - s2 / 100 + 1.0
        return g

    return CallableTarget(logp, grad_logp, D + 1)


def builtin_target():
    """refvi's LinearRegression on the same X, y with sigma fixed at its posterior mean (prior sd 10 on beta)."""
    X, y = data()
    sigma = float(posteriordb.load("sblrc-blr").reference["mean"][-1])
    return LinearRegression(X, y, noise_scale=sigma, prior_scale=10.0)

"""Plain-NumPy baselines of the seed-003 online learners, for the benchmarks (tests/benchmarks/test_bench_online.py)
and as an independent re-implementation in tests/kernels/test_online_kernels.py.

The stream learners are the per-point loops of the example implementation
(:mod:`refvi.verification.examples.numpy_online`, written from the paper only; it imports nothing of refvi), called
with the benchmarks' positional hyper-parameters and returning ``(losses, m, sigma)``; the batch closed forms and the
network's Monte Carlo loss are vectorised here (scipy.special.ndtr for Phi).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from refvi.verification.examples.numpy_online import NumpyOnline

SQ2PI = math.sqrt(2 * math.pi)
_EXAMPLE = NumpyOnline()


def _run(method, X, y, loss, **hyper):
    res = _EXAMPLE.run(method, X, y, loss, **hyper)
    return res.losses, res.m, res.sigma


def sva(X, y, loss, eta, s=1.0, mbox=np.inf, sbox=np.inf, H=1.0):
    return _run("sva", X, y, loss, eta=eta, s=s, mbox=mbox, sbox=sbox, H=H)


def svb(X, y, loss, K, s=1.0, mbox=np.inf, sbox=np.inf, H=1.0):
    """Thm 3 convex schedule: eta_{t,j} sigma_{t,j}^2 = K / sqrt(t)."""
    return _run("svb", X, y, loss, schedule="convex", K=K, s=s, mbox=mbox, sbox=sbox, H=H)


def ngvi(X, y, loss, eta, beta, s=1.0, mbox=np.inf, sbox=np.inf, H=1.0):
    return _run("ngvi", X, y, loss, eta=eta, beta=beta, s=s, mbox=mbox, sbox=sbox, H=H)


def oga(X, y, loss, eta, mbox=np.inf, H=1.0):
    return _run("oga", X, y, loss, eta=eta, mbox=mbox, H=H)


def ogael(X, y, loss, eta, s=1.0, lazy=False, mbox=np.inf, sbox=np.inf, H=1.0):
    return _run("ogael", X, y, loss, eta=eta, s=s, projection="lazy" if lazy else "greedy", mbox=mbox, sbox=sbox, H=H)


def expected_batch(loss, X, y, m, sigma):
    """Vectorized NumPy closed forms over all rows (hinge / absolute): (values, gm, gs)."""
    a = X @ m
    SX2 = X * X * sigma
    b = np.sqrt(SX2 @ sigma)
    if loss == "hinge":
        c = 1 - y * a
        z = c / b
        P, p = ndtr(z), np.exp(-0.5 * z * z) / SQ2PI
        return c * P + b * p, -(y * P)[:, None] * X, (p / b)[:, None] * SX2
    r = y - a
    z = r / b
    P2, p = 2 * ndtr(z) - 1, np.exp(-0.5 * z * z) / SQ2PI
    return 2 * b * p + r * P2, -P2[:, None] * X, (2 * p / b)[:, None] * SX2


def nn_mc_numpy(m, sigma, x, y, h, U):
    """Monte Carlo expected squared loss of the ReLU network, all samples at once with NumPy (rows of U)."""
    p = x.size
    TH = m + sigma * U
    W = TH[:, :h * p].reshape(-1, h, p)
    b, v, c = TH[:, h * p:h * p + h], TH[:, h * p + h:h * p + 2 * h], TH[:, -1]
    z = W @ x + b
    a = np.maximum(z, 0)
    r = y - (np.sum(a * v, axis=1) + c)
    da = (-2 * r)[:, None] * v * (z > 0)
    G = np.hstack([(da[:, :, None] * x).reshape(len(U), -1), da, (-2 * r)[:, None] * a, (-2 * r)[:, None]])
    return float(np.mean(r * r)), G.mean(0), (G * U).mean(0)

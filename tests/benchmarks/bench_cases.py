"""Shared benchmark inputs and the plain-NumPy versions of the SAME computations the kernels do.

Used by the pytest-benchmark files in this folder and by ``report_ratios.py``.  All inputs are seeded.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg

LOGISTIC_GRID = ((50, 5, 1), (50, 5, 16), (1000, 100, 1), (1000, 100, 16), (10000, 100, 16))
LINEAR_GRID = ((1000, 100, 1), (1000, 100, 16))
HIER_GRID = ((1000, 10, 4, 1), (1000, 10, 4, 16))           # (N, d, G, S)
SMALL_D_GRID = ((10, 1), (10, 16), (100, 16))               # (d, S) for gaussian / cosine
PROX_D = (10, 100)


def logistic_case(N, d, S, seed=0):
    rng = np.random.default_rng([N, d, S, seed])
    X = rng.standard_normal((N, d)) / np.sqrt(d)
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    m = rng.standard_normal(d)
    C = np.tril(0.1 * rng.standard_normal((d, d))) + np.eye(d)
    U = rng.standard_normal((S, d))
    return m, C, U, X, y, 1.0 / 1.5 ** 2


def numpy_logistic_energy(m, C, U, X, y, ipv):
    """Vectorized NumPy: Z = U C^T + m, T = y * (Z X^T), r = y sigmoid(-T) with one exp, G = Z/s^2 - r X."""
    Z = U @ C.T + m
    T = (Z @ X.T) * y
    e = np.exp(-np.abs(T))
    R = y * (np.where(T >= 0, e, 1.0) / (1.0 + e))
    G = Z * ipv - R @ X
    return G.mean(axis=0), (G.T @ U) / U.shape[0]


def floor_parts(m, C, U, X, y, ipv):
    """The unavoidable work for S > 1, each part timed alone: logits X Z^T, the exp over N x S, and R^T X."""
    Z = np.ascontiguousarray(U @ C.T + m)
    L = X @ Z.T
    R = np.ascontiguousarray(L.T)
    buf = np.empty_like(L)
    return (lambda: X @ Z.T, lambda: np.exp(L, out=buf), lambda: R @ X)


def linear_case(N, d, S, seed=0):
    m, C, U, X, _, ipv = logistic_case(N, d, S, seed)
    y = np.random.default_rng(seed).standard_normal(N)
    return m, C, U, X, y, 1.0 / 0.7 ** 2, ipv


def numpy_linear_energy(m, C, U, X, y, inv_noise_var, ipv):
    Z = U @ C.T + m
    R = (Z @ X.T - y) * inv_noise_var
    G = R @ X + Z * ipv
    return G.mean(axis=0), (G.T @ U) / U.shape[0]


def hier_case(N, d, G, S, seed=0):
    rng = np.random.default_rng([N, d, G, S, seed])
    X = rng.standard_normal((N, d)) / np.sqrt(d)
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    groups = rng.integers(0, G, N).astype(np.int64)
    D = (G + 1) * d
    P = np.zeros((D, D))
    P[:d, :d] = (1.0 + G) * np.eye(d)
    for k in range(G):
        a = (k + 1) * d
        P[:d, a:a + d] = P[a:a + d, :d] = -np.eye(d)
        P[a:a + d, a:a + d] = np.eye(d)
    m = rng.standard_normal(D)
    C = np.tril(0.1 * rng.standard_normal((D, D))) + np.eye(D)
    U = rng.standard_normal((S, D))
    return m, C, U, X, y, groups, P


def numpy_hier_energy(m, C, U, X, y, groups, P):
    S, D = U.shape
    d = X.shape[1]
    Z = U @ C.T + m
    Zg = Z[:, d:].reshape(S, -1, d)[:, groups, :]                   # S x N x d
    T = np.einsum("nd,snd->sn", X, Zg) * y
    e = np.exp(-np.abs(T))
    R = y * (np.where(T >= 0, e, 1.0) / (1.0 + e))
    Gneg = Z @ P
    contrib = R[:, :, None] * X[None, :, :]                         # S x N x d
    blocks = np.zeros((S, D // d - 1, d))
    np.add.at(blocks, (slice(None), groups), contrib)
    Gneg[:, d:] -= blocks.reshape(S, -1)
    return Gneg.mean(axis=0), (Gneg.T @ U) / S


def gaussian_case(d, S, seed=0):
    rng = np.random.default_rng([d, S, seed])
    A = rng.standard_normal((d, d))
    P = A @ A.T / d + np.eye(d)
    m, mean = rng.standard_normal(d), rng.standard_normal(d)
    C = np.tril(0.1 * rng.standard_normal((d, d))) + np.eye(d)
    return m, C, rng.standard_normal((S, d)), mean, P


def numpy_gaussian_energy(m, C, U, mean, P):
    G = (U @ C.T + m - mean) @ P
    return G.mean(axis=0), (G.T @ U) / U.shape[0]


def cosine_case(d, S, seed=0):
    rng = np.random.default_rng([d, S, seed, 1])
    m, b, z0 = rng.standard_normal(d), rng.standard_normal(d) / np.sqrt(d), rng.standard_normal(d)
    C = np.tril(0.1 * rng.standard_normal((d, d))) + np.eye(d)
    return m, C, rng.standard_normal((S, d)), 1.3, b, 0.3, 2.0, z0


def numpy_cosine_energy(m, C, U, alpha, b, phi, beta, z0):
    Z = U @ C.T + m
    G = beta * (Z - z0) - (alpha * np.sin(Z @ b + phi))[:, None] * b
    return G.mean(axis=0), (G.T @ U) / U.shape[0]


def sym_case(d, seed=0):
    rng = np.random.default_rng([d, seed])
    A = rng.standard_normal((d, d))
    return 0.5 * (A + A.T), 1.0                     # about half the eigenvalues are below 1/sqrt(M) = 1


def numpy_project_wm(C, M):
    lam, Q = np.linalg.eigh(C)
    return (Q * np.maximum(lam, 1.0 / np.sqrt(M))) @ Q.T


def scipy_eigh(C, M):
    return scipy.linalg.eigh(C)


def numpy_entropy_prox(C, gamma):
    out = C.copy()
    c = np.diag(C)
    r = np.hypot(c, 2.0 * np.sqrt(gamma))
    np.fill_diagonal(out, np.where(c >= 0, 0.5 * (c + r), 2.0 * gamma / (r - np.minimum(c, 0.0))))
    return out


def numpy_project_singular(C, M):
    U, s, Vt = np.linalg.svd(C)
    return (U * np.maximum(s, 1.0 / np.sqrt(M))) @ Vt


def race(benchmark, impl, group, kernel, numpy_version, args, check):
    """One side of a kernel-vs-NumPy race in the same run: time ``kernel`` (``impl == "kernel"``) or
    ``numpy_version`` on ``args`` in the benchmark ``group``, and check the timed result against the NumPy version."""
    benchmark.group = group
    check(benchmark(kernel if impl == "kernel" else numpy_version, *args), numpy_version(*args))


def min_time(fn, rounds=7, min_seconds=0.02):
    """Minimum over ``rounds`` of the mean time of a batch of calls lasting >= ``min_seconds`` (seconds/call)."""
    fn()
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
        if t >= min_seconds:
            break
        n *= 2
    best = t / n
    for _ in range(rounds - 1):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best

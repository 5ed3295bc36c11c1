"""Plain-NumPy loops of the seed-003 online learners: the same computations as refvi.kernels.online, written per
point with NumPy vector operations (and scipy.special.ndtr for Phi).  Used as the benchmark baseline
(tests/benchmarks/test_bench_online.py) and as an independent re-implementation in
tests/kernels/test_online_kernels.py."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

SQ2PI = math.sqrt(2 * math.pi)


def expected(loss, x, y, m, sigma, H=1.0):
    """(bar L, gm, gs) of one point, mean-field Gaussian, closed forms (seed 003 §4)."""
    if loss == "quadratic":
        r = m - x
        return 0.5 * H * (r @ r + sigma @ sigma), H * r, H * sigma
    a = m @ x
    sx2 = sigma * x * x
    b = math.sqrt(sigma @ sx2)
    if loss == "squared":
        r = y - a
        return r * r + b * b, -2 * r * x, 2 * sx2
    if loss == "hinge":
        c = 1 - y * a
        if b == 0:
            return max(c, 0.0), -y * x * (c > 0), np.zeros_like(x)
        z = c / b
        P, p = ndtr(z), math.exp(-0.5 * z * z) / SQ2PI
        return c * P + b * p, -y * P * x, p * sx2 / b
    r = y - a
    if b == 0:
        return abs(r), -np.sign(r) * x, np.zeros_like(x)
    z = r / b
    P2, p = 2 * ndtr(z) - 1, math.exp(-0.5 * z * z) / SQ2PI
    return 2 * b * p + r * P2, -P2 * x, 2 * p * sx2 / b


def point_loss(loss, x, y, th, H=1.0):
    if loss == "quadratic":
        return 0.5 * H * float((th - x) @ (th - x))
    a = th @ x
    return {"hinge": max(0.0, 1 - y * a), "squared": (y - a) ** 2, "absolute": abs(y - a)}[loss]


def _shrink(sig, u):
    return np.where(u > 0, sig * sig / (np.hypot(sig, u) + u), np.hypot(sig, u) - u)


def sva(X, y, loss, eta, s=1.0, mbox=np.inf, sbox=np.inf, H=1.0):
    d = X.shape[1]
    m, sig, Gm, Gs = np.zeros(d), np.full(d, s), np.zeros(d), np.zeros(d)
    out = np.empty(X.shape[0])
    for t in range(X.shape[0]):
        out[t] = point_loss(loss, X[t], y[t], m, H)
        _, gm, gs = expected(loss, X[t], y[t], m, sig, H)
        Gm += gm
        Gs += gs
        m = np.clip(-eta * s * s * Gm, -mbox, mbox)
        sig = np.clip(_shrink(s, 0.5 * eta * s * s * Gs), 0, sbox)
    return out, m, sig


def svb(X, y, loss, K, s=1.0, mbox=np.inf, sbox=np.inf, H=1.0):
    """Thm 3 convex schedule: eta_{t,j} sigma_{t,j}^2 = K / sqrt(t)."""
    d = X.shape[1]
    m, sig = np.zeros(d), np.full(d, s)
    out = np.empty(X.shape[0])
    for t in range(X.shape[0]):
        out[t] = point_loss(loss, X[t], y[t], m, H)
        _, gm, gs = expected(loss, X[t], y[t], m, sig, H)
        a = K / math.sqrt(t + 1)
        m = np.clip(m - a * gm, -mbox, mbox)
        sig = np.clip(_shrink(sig, 0.5 * a * gs), 0, sbox)
    return out, m, sig


def ngvi(X, y, loss, eta, beta, s=1.0, mbox=np.inf, sbox=np.inf, H=1.0):
    d = X.shape[1]
    m, sig = np.zeros(d), np.full(d, s)
    out = np.empty(X.shape[0])
    floor = 0.0 if sbox == np.inf else 1 / sbox ** 2
    for t in range(X.shape[0]):
        _, gm, gs = expected(loss, X[t], y[t], m, sig, H)
        out[t] = point_loss(loss, X[t], y[t], m, H)
        prec = np.maximum((1 - beta) / sig ** 2 + beta / s ** 2 + 2 * eta * beta * gs / (2 * sig), floor)
        v = 1 / prec
        m = np.clip(m - beta * v * (eta * gm + m / s ** 2), -mbox, mbox)
        sig = np.sqrt(v)
    return out, m, sig


def oga(X, y, loss, eta, mbox=np.inf, H=1.0):
    d = X.shape[1]
    th = np.zeros(d)
    out = np.empty(X.shape[0])
    for t in range(X.shape[0]):
        x = X[t]
        out[t] = point_loss(loss, x, y[t], th, H)
        a = th @ x
        if loss == "hinge":
            g = -y[t] * x if 1 - y[t] * a > 0 else np.zeros(d)
        elif loss == "squared":
            g = -2 * (y[t] - a) * x
        elif loss == "absolute":
            g = -np.sign(y[t] - a) * x
        else:
            g = H * (th - x)
        th = np.clip(th - eta * g, -mbox, mbox)
    return out, th, None


def ogael(X, y, loss, eta, s=1.0, lazy=False, mbox=np.inf, sbox=np.inf, H=1.0):
    d = X.shape[1]
    m, sig, Gm, Gs = np.zeros(d), np.full(d, s), np.zeros(d), np.zeros(d)
    out = np.empty(X.shape[0])
    for t in range(X.shape[0]):
        out[t] = point_loss(loss, X[t], y[t], m, H)
        _, gm, gs = expected(loss, X[t], y[t], m, sig, H)
        Gm += gm
        Gs += gs
        if lazy:
            m, sig = np.clip(-eta * Gm, -mbox, mbox), np.clip(s - eta * Gs, 0, sbox)
        else:
            m, sig = np.clip(m - eta * gm, -mbox, mbox), np.clip(sig - eta * gs, 0, sbox)
    return out, m, sig


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

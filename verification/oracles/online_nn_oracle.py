"""Oracle for the one-hidden-layer ReLU network of seed 003 (numpy only, never refvi): the squared loss and its
gradient written with whole-matrix NumPy operations (theta = (W row-major, b, v, c)), and a central-difference
gradient as a second road (accuracy ~1e-7 relative away from ReLU kinks)."""

from __future__ import annotations

import numpy as np


def unpack(theta, p, h):
    theta = np.asarray(theta, dtype=np.float64)
    return theta[: h * p].reshape(h, p), theta[h * p : h * p + h], theta[h * p + h : h * p + 2 * h], theta[-1]


def sq_loss_grad(theta, x, y, h):
    x = np.asarray(x, dtype=np.float64)
    W, b, v, c = unpack(theta, x.size, h)
    z = W @ x + b
    a = np.maximum(z, 0.0)
    r = y - (a @ v + c)
    da = -2.0 * r * v * (z > 0)
    return float(r * r), np.concatenate([np.outer(da, x).ravel(), da, -2.0 * r * a, [-2.0 * r]])


def fd_grad(theta, x, y, h, step=1e-6):
    theta = np.asarray(theta, dtype=np.float64)
    g = np.empty_like(theta)
    for k in range(theta.size):
        e = np.zeros_like(theta)
        e[k] = step
        g[k] = (sq_loss_grad(theta + e, x, y, h)[0] - sq_loss_grad(theta - e, x, y, h)[0]) / (2 * step)
    return g


def mc_expected(m, sigma, x, y, h, U):
    """Mean over the rows u of U of (l, grad l, grad l * u) at theta = m + sigma * u."""
    vals, gm, gs = [], [], []
    for u in np.asarray(U, dtype=np.float64):
        v, g = sq_loss_grad(m + sigma * u, x, y, h)
        vals.append(v)
        gm.append(g)
        gs.append(g * u)
    return float(np.mean(vals)), np.mean(gm, axis=0), np.mean(gs, axis=0)


def _root(sig, u):
    """The positive root sigma h(u / sigma) = sqrt(sigma^2 + u^2) - u, written as sigma^2 / (sqrt(sigma^2 + u^2) + u)
    where u > 0 (no cancellation)."""
    r = np.sqrt(sig * sig + u * u)
    return np.where(u > 0, sig * sig / np.where(r + u > 0, r + u, 1.0), r - u)


def reference_run(method, X, y, h, U, *, eta=1.0, K=1.0, beta=0.01, s=1.0, mbox=20.0, sbox=1.0, m0=None):
    """The five online learners of the ReLU-network experiment written from their linear counterparts' update rules
    (SVA eq. 9 FTRL from the prior mean, SVB with a_t = K / sqrt(t), online NGVI eq. 15 with the corrected beta
    and the precision floored at 1/sbox^2, OGA on the point loss, OGA-EL greedy), each projected on
    [-mbox, mbox]^d x [0, sbox]^d, with the Monte Carlo gradients of :func:`mc_expected` on the base samples
    ``U[t]`` (n_samples, d).  Returns (losses (T,), M (T+1, d), S (T+1, d) or None)."""
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    T, p = X.shape
    d = h * (p + 2) + 1
    prior = np.zeros(d) if m0 is None else np.clip(np.asarray(m0, dtype=np.float64), -mbox, mbox)
    m, sig = prior.copy(), np.full(d, float(s))
    Gm, Gs = np.zeros(d), np.zeros(d)
    losses, M, S = [], [m.copy()], [sig.copy()]
    floor = 1.0 / sbox**2 if np.isfinite(sbox) else 0.0
    for t in range(T):
        loss, g = sq_loss_grad(m, X[t], y[t], h)
        losses.append(loss)
        if method == "oga":
            m = np.clip(m - eta * g, -mbox, mbox)
        else:
            _, gm, gs = mc_expected(m, sig, X[t], y[t], h, U[t])
            if method == "ogael":
                m, sig = np.clip(m - eta * gm, -mbox, mbox), np.clip(sig - eta * gs, 0.0, sbox)
            elif method == "sva":
                Gm, Gs = Gm + gm, Gs + gs
                m = np.clip(prior - eta * s * s * Gm, -mbox, mbox)
                sig = np.minimum(_root(np.full(d, float(s)), 0.5 * eta * s * s * Gs), sbox)
            elif method == "svb":
                a = K / np.sqrt(t + 1.0)
                m = np.clip(m - a * gm, -mbox, mbox)
                sig = np.minimum(_root(sig, 0.5 * a * gs), sbox)
            elif method == "ngvi":
                prec = np.maximum((1 - beta) / sig**2 + beta / s**2 + eta * beta * gs / sig, floor)
                v = 1.0 / prec
                m = np.clip(m - beta * v * (eta * gm + (m - prior) / s**2), -mbox, mbox)
                sig = np.sqrt(v)
            else:
                raise ValueError(f"unknown method {method!r}")
        M.append(m.copy())
        S.append(sig.copy())
    return np.array(losses), np.array(M), (None if method == "oga" else np.array(S))

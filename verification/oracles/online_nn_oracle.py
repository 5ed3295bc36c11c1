"""Oracle for the one-hidden-layer ReLU network of seed 003 (numpy only, never refvi): the squared loss and its
gradient written with whole-matrix NumPy operations (theta = (W row-major, b, v, c)), and a central-difference
gradient as a second road (accuracy ~1e-7 relative away from ReLU kinks)."""

from __future__ import annotations

import numpy as np


def unpack(theta, p, h):
    theta = np.asarray(theta, dtype=np.float64)
    return theta[:h * p].reshape(h, p), theta[h * p:h * p + h], theta[h * p + h:h * p + 2 * h], theta[-1]


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

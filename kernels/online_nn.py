"""One-hidden-layer ReLU regression network for online VI (seed 003, California experiment): forward pass, gradient
of the squared loss, and the reparameterization Monte Carlo estimate of the expected loss and its gradients.

theta = (W (h x p) row-major, b (h), v (h), c) flattened, f_theta(x) = sum_k v_k relu(<w_k, x> + b_k) + c, so
dim theta = h (p + 2) + 1.  The Monte Carlo estimate uses pre-drawn base samples U (S x dim):
theta_s = m + sigma * u_s,  bar L ~ mean_s l(theta_s),  grad_m ~ mean_s grad l(theta_s),
grad_sigma ~ mean_s grad l(theta_s) * u_s.
"""

from __future__ import annotations

import numpy as np

from refvi.kernels._jit import jit


@jit
def nn_sq_loss_grad(theta, x, y, h, g):
    """(y - f_theta(x))^2 and its gradient in theta (written into g)."""
    p = x.shape[0]
    ob = h * p
    ov = ob + h
    oc = ov + h
    f = theta[oc]
    for k in range(h):
        z = theta[ob + k]
        for j in range(p):
            z += theta[k * p + j] * x[j]
        if z > 0.0:
            f += theta[ov + k] * z
    r = y - f
    coef = -2.0 * r
    for k in range(h):
        z = theta[ob + k]
        for j in range(p):
            z += theta[k * p + j] * x[j]
        if z > 0.0:
            vk = theta[ov + k]
            for j in range(p):
                g[k * p + j] = coef * vk * x[j]
            g[ob + k] = coef * vk
            g[ov + k] = coef * z
        else:
            for j in range(p):
                g[k * p + j] = 0.0
            g[ob + k] = 0.0
            g[ov + k] = 0.0
    g[oc] = coef
    return r * r


@jit
def nn_mc_expected(m, sigma, x, y, h, U, gm, gs):
    """Monte Carlo (bar L, grad_m, grad_sigma) at q = N(m, diag sigma^2) with base samples U (S x dim)."""
    S, d = U.shape
    theta = np.empty(d)
    g = np.empty(d)
    for i in range(d):
        gm[i] = 0.0
        gs[i] = 0.0
    val = 0.0
    for s in range(S):
        for i in range(d):
            theta[i] = m[i] + sigma[i] * U[s, i]
        val += nn_sq_loss_grad(theta, x, y, h, g)
        for i in range(d):
            gm[i] += g[i]
            gs[i] += g[i] * U[s, i]
    inv = 1.0 / S
    for i in range(d):
        gm[i] *= inv
        gs[i] *= inv
    return val * inv

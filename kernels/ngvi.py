"""Numba kernels for stochastic natural-gradient VI (Wu & Gardner, seed 004).

* :func:`blr_minibatch_update` -- one stochastic NGD step for Bayesian linear regression in natural parameters,
  Eq. (8) with the mini-batch estimator (15): eta <- (1 - gamma) eta + gamma eta_hat, O(d^2 m) per step
  (upper triangle of the batch Gram matrix as contiguous dot products, then mirrored; ``reassoc`` allowed,
  agreement with the moment-form oracle to 1e-10 shown in tests/kernels/test_ngvi_kernels.py);
* :func:`ngd_blr_loop` -- T such steps with pre-drawn indices and steps, plus the omega-space weighted average of
  Theorem 1 (omega_bar_{t+1} = (1 - gamma_t) omega_bar_t + gamma_t omega_{t+1}, an O(d^3) conversion per step);
* :func:`price_logistic` -- the Bonnet/Price estimator (11) of grad_omega E_q log p for logistic regression with
  pre-drawn base samples U (z_s = mu + L u_s) on a (possibly sub-sampled, rescaled) data set.

Kernels take validated C-contiguous float64 arrays (and int64 indices); the validating API is :mod:`refvi.ngvi`.
"""

from __future__ import annotations

import numpy as np

from refvi.kernels._fastmath_exp import exp_nonpos
from refvi.kernels._jit import jit, jit_reduce


@jit_reduce
def blr_minibatch_update(lam, Lam, X, y, idx, c, lam_p, Lam_p, gamma):
    """(1 - gamma) (lam, Lam) + gamma (c sum_k y_k x_k + lam_p, Lam_p - c/2 sum_k x_k x_k^T), c = n / (m sigma2).

    The batch is gathered transposed (d x m) so every Gram entry of the upper triangle is one contiguous dot
    product (vectorized under ``reassoc``); the result is exactly symmetric."""
    d = lam.shape[0]
    m = idx.shape[0]
    XbT = np.empty((d, m))
    yb = np.empty(m)
    for k in range(m):
        r = idx[k]
        yb[k] = y[r]
        for i in range(d):
            XbT[i, k] = X[r, i]
    a = 1.0 - gamma
    h = 0.5 * c * gamma
    new_lam = np.empty(d)
    new_Lam = np.empty((d, d))
    for i in range(d):
        xi = XbT[i]
        s = 0.0
        for k in range(m):
            s += xi[k] * yb[k]
        new_lam[i] = a * lam[i] + gamma * (c * s + lam_p[i])
        for j in range(i, d):
            xj = XbT[j]
            g = 0.0
            for k in range(m):
                g += xi[k] * xj[k]
            v = a * Lam[i, j] + gamma * Lam_p[i, j] - h * g
            new_Lam[i, j] = v
            new_Lam[j, i] = v
    return new_lam, new_Lam


@jit
def expectation_of_natural(lam, Lam):
    """omega = grad A(eta): Sigma = (-2 Lam)^{-1}, xi = Sigma lam, Xi = Sigma + xi xi^T (no domain check)."""
    Sigma = np.linalg.inv(-2.0 * Lam)
    Sigma = 0.5 * (Sigma + Sigma.T)
    xi = np.dot(Sigma, lam)
    return xi, Sigma + np.outer(xi, xi)


@jit
def ngd_blr_loop(lam, Lam, xb, Xb, X, y, idx_all, gammas, c, lam_p, Lam_p, average):
    """Run len(gammas) steps of :func:`blr_minibatch_update` with batches idx_all[t]; return the final (lam, Lam)
    and, if ``average``, Theorem 1's omega average (xi_bar, Xi_bar) continued from (xb, Xb) with the same steps
    (omega_bar <- (1 - gamma) omega_bar + gamma omega_{t+1}; the inputs are not modified).  Start (xb, Xb) at
    omega(q_0) (not at zero): then the average is a convex combination of omega_0..omega_t for any steps in [0, 1]
    (weights sum to 1), and Theorem 1's weighted average when gamma_0 = 1."""
    d = lam.shape[0]
    xb = xb.copy()
    Xb = Xb.copy()
    for t in range(gammas.shape[0]):
        g = gammas[t]
        lam, Lam = blr_minibatch_update(lam, Lam, X, y, idx_all[t], c, lam_p, Lam_p, g)
        if average:
            xi, Xi = expectation_of_natural(lam, Lam)
            for i in range(d):
                xb[i] = (1.0 - g) * xb[i] + g * xi[i]
                for j in range(d):
                    Xb[i, j] = (1.0 - g) * Xb[i, j] + g * Xi[i, j]
    return lam, Lam, xb, Xb


@jit_reduce
def price_logistic(mu, L, X, y, U, idx, scale):
    """Price estimator (11) for logistic regression: with z_s = mu + L u_s and data rows idx (all rows if idx is
    empty), g = scale/S sum_s sum_i y_i sigmoid(-y_i x_i^T z_s) x_i, H = -scale/S sum_s sum_i sigmoid'(x_i^T z_s)
    x_i x_i^T; returns (g - H mu, H / 2).

    Three passes: the S x n linear predictors, one vectorized exp per predictor (``sigmoid(|t|)`` with the foundation's
    ``exp_nonpos``; sigmoid(-y t) and sigmoid'(t) both follow from it), then g and the upper triangle of H as
    contiguous dot products over the (transposed) data."""
    S, d = U.shape
    n = idx.shape[0] if idx.shape[0] > 0 else X.shape[0]
    Z = np.empty((S, d))
    for s in range(S):
        for i in range(d):
            acc = mu[i]
            for j in range(i + 1):
                acc += L[i, j] * U[s, j]
            Z[s, i] = acc
    XT = np.empty((d, n))
    Tm = np.empty(n * S)
    yb = np.empty(n * S)
    for k in range(n):
        r = idx[k] if idx.shape[0] > 0 else k
        for s in range(S):
            t = 0.0
            for i in range(d):
                t += X[r, i] * Z[s, i]
            Tm[k * S + s] = t
            yb[k * S + s] = y[r]
        for i in range(d):
            XT[i, k] = X[r, i]
    A = np.empty(n * S)
    W = np.empty(n * S)
    for q in range(n * S):
        t = Tm[q]
        e = exp_nonpos(-abs(t))
        p = 1.0 / (1.0 + e)  # sigmoid(|t|)
        A[q] = yb[q] * (1.0 - p if yb[q] * t >= 0.0 else p)  # y sigmoid(-y t)
        W[q] = p * (1.0 - p)  # sigmoid(t) sigmoid(-t)
    cg = np.zeros(n)
    w = np.zeros(n)
    for k in range(n):
        a = 0.0
        b = 0.0
        for s in range(S):
            a += A[k * S + s]
            b += W[k * S + s]
        cg[k] = a
        w[k] = -b
    f = scale / S
    g = np.empty(d)
    H = np.empty((d, d))
    WX = np.empty(n)
    for i in range(d):
        xi = XT[i]
        acc = 0.0
        for k in range(n):
            acc += cg[k] * xi[k]
            WX[k] = w[k] * xi[k]
        g[i] = f * acc
        for j in range(i, d):
            xj = XT[j]
            h = 0.0
            for k in range(n):
                h += WX[k] * xj[k]
            H[i, j] = f * h
            H[j, i] = f * h
    gx = g - np.dot(H, mu)
    return gx, 0.5 * H

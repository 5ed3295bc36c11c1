"""Online VI for a one-hidden-layer ReLU regression network (seed 003, the California experiment; non-convex, so no
bound applies).  Expected losses and gradients are Monte Carlo (reparameterization) with pre-drawn base samples from
a seeded generator; the loss suffered is l_t at the mean.  The five methods use the update rules of their linear
counterparts (SVA eq. 9, SVB Thm 3 schedule, NGVI eq. 15 with the precision floored at 1/sbox^2, OGA, OGA-EL greedy),
all projected on [-mbox, mbox]^d x [0, sbox]^d.  A Python loop over rounds calls the Numba kernels of
:mod:`refvi.kernels.online_nn` (dim theta ~ 10^2, so the per-round kernel dominates).
"""

from __future__ import annotations

import math

import numpy as np

from refvi._checks import as_generator, as_matrix, as_vector, positive_scalar
from refvi.kernels import online_nn as kn
from refvi.online._stream import OnlineResult, check_box, check_step

METHODS = ("oga", "ogael", "sva", "svb", "ngvi")


def n_params(p: int, h: int) -> int:
    """dim theta = h (p + 2) + 1 for p inputs and h hidden units."""
    return h * (p + 2) + 1


def nn_predict(theta, X, h: int) -> np.ndarray:
    """f_theta(x) for every row of X (plain NumPy)."""
    X = as_matrix(X, "X")
    p = X.shape[1]
    theta = as_vector(theta, "theta", n_params(p, h))
    W = theta[: h * p].reshape(h, p)
    b, v, c = theta[h * p : h * p + h], theta[h * p + h : h * p + 2 * h], theta[-1]
    return np.maximum(X @ W.T + b, 0.0) @ v + c


def _shrink(sig, u):
    """Vectorized sigma h(u / sigma) = sqrt(sigma^2 + u^2) - u, cancellation-free for u > 0 (as
    kernels.online.shrink)."""
    r = np.hypot(sig, u)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(u > 0, np.where(r + u > 0, sig * sig / (r + u), 0.0), r - u)


def run_nn(
    method: str,
    X,
    y,
    *,
    h: int,
    eta: float = 1.0,
    K: float = 1.0,
    beta: float = 0.01,
    s: float = 1.0,
    mbox: float = 20.0,
    sbox: float = 1.0,
    n_samples: int = 1,
    seed=0,
    m0=None,
    base_samples=None,
    record: bool = False,
) -> OnlineResult:
    """Run ``method`` in METHODS over the regression stream (X, y) with the squared loss of the ReLU network.

    ``m0`` is the prior mean and initial mean (default 0, a saddle of the ReLU network where OGA cannot move; the
    notebook uses a small random m0 for every method); ``seed`` fixes the Monte Carlo draws, or ``base_samples``
    (T, n_samples, dim theta) gives them (round t uses theta = m + sigma * u for the rows u of base_samples[t]).
    ``record=True`` keeps the iterates (``M``, ``S``: row t = state used at round t, row T = after the stream)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    X = as_matrix(X, "X")
    T, p = X.shape
    y = as_vector(y, "y", T)
    if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 1:
        raise ValueError(f"h (hidden width) must be a positive integer, got {h!r}")
    eta, K = check_step(eta, "eta"), check_step(K, "K")
    beta, s = positive_scalar(beta, "beta"), positive_scalar(s, "s")
    if beta > 1:
        raise ValueError(f"beta must lie in (0, 1], got {beta}")
    mbox, sbox = check_box(mbox, "mbox"), check_box(sbox, "sbox")
    if s > sbox:
        raise ValueError(f"the prior scale s = {s} must lie in the sigma box [0, sbox = {sbox}]")
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    d = n_params(p, h)
    if base_samples is not None:
        base_samples = np.asarray(base_samples, dtype=np.float64)
        if base_samples.ndim != 3 or base_samples.shape[0] != T or base_samples.shape[2] != d:
            raise ValueError(
                f"base_samples must have shape (T, n_samples, dim theta) = ({T}, n, {d}), got {base_samples.shape}"
            )
        if not np.all(np.isfinite(base_samples)):
            raise ValueError("base_samples must be finite")
    m_prior = np.zeros(d) if m0 is None else np.clip(as_vector(m0, "m0", d), -mbox, mbox)
    m = m_prior.copy()
    sig = np.full(d, s)
    Gm, Gs = np.zeros(d), np.zeros(d)
    gm, gs, g = np.empty(d), np.empty(d), np.empty(d)
    rng = as_generator(seed, "seed")
    losses = np.empty(T)
    M = np.empty((T + 1, d)) if record else None
    S = np.empty((T + 1, d)) if record and method != "oga" else None
    floor = 1.0 / sbox**2 if np.isfinite(sbox) else 0.0
    for t in range(T):
        if M is not None:
            M[t] = m
        if S is not None:
            S[t] = sig
        x, yt = X[t], y[t]
        losses[t] = kn.nn_sq_loss_grad(m, x, yt, h, g)
        if method == "oga":
            m = np.clip(m - eta * g, -mbox, mbox)
            continue
        U = rng.standard_normal((n_samples, d)) if base_samples is None else np.ascontiguousarray(base_samples[t])
        kn.nn_mc_expected(m, sig, x, yt, h, U, gm, gs)
        if method == "ogael":
            m, sig = np.clip(m - eta * gm, -mbox, mbox), np.clip(sig - eta * gs, 0.0, sbox)
        elif method == "sva":
            Gm += gm
            Gs += gs
            m = np.clip(m_prior - eta * s * s * Gm, -mbox, mbox)
            sig = np.minimum(_shrink(np.full(d, s), 0.5 * eta * s * s * Gs), sbox)
        elif method == "svb":
            a = K / math.sqrt(t + 1)
            m = np.clip(m - a * gm, -mbox, mbox)
            sig = np.minimum(_shrink(sig, 0.5 * a * gs), sbox)
        else:  # ngvi
            prec = np.maximum((1 - beta) / sig**2 + beta / s**2 + eta * beta * gs / sig, floor)
            if not np.all(prec > 0):
                raise ValueError(f"stream row {t}: the NGVI precision would be <= 0; pass a finite sbox")
            v = 1.0 / prec
            m = np.clip(m - beta * v * (eta * gm + (m - m_prior) / s**2), -mbox, mbox)
            sig = np.sqrt(v)
    if M is not None:
        M[T] = m
    if S is not None:
        S[T] = sig
    return OnlineResult(losses, m, None if method == "oga" else sig, M, S)

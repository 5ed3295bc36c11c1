"""Every round of exact EWA (seed 003, Algorithm 1 / eq. 2) at once, by the oracle's own fine quadrature (numpy only,
never refvi): the tempered posterior p_t ∝ pi exp(-eta sum_{i<t} ell_i) before each round, its mean (the decision
hat theta_t) and its log normaliser log N_t = log E_pi exp(-eta sum_{i<t} ell_i).

The interval (1-D) is cut at the loss kinks ``breaks`` and every piece into subpanels of width <= ``width`` with a
``k``-point Gauss-Legendre rule each; the box (2-D) is a tensor product of such rules (the statements' 2-D losses are
smooth).  On every subpanel the integrand exp(log pi - eta sum ell) is smooth (the exponential of a polynomial of
degree <= 2 with curvature <= ~100 on the statements' instances), so the rule is exact to rounding: the log
normalisers agree with adaptive quadrature (``online_comparators.ewa_log_partition``, ``ewa_box_moments``) to
< 1e-13 (``tests/verification/test_oracles.py``).  Every round is one log-sum-exp over the same nodes, so a whole
path costs one pass.
"""

from __future__ import annotations

import math

import numpy as np


def _panel_rule(lo: float, hi: float, breaks=(), width: float = 0.05, k: int = 20):
    """(nodes, weights) of the composite Gauss-Legendre rule on [lo, hi], cut at ``breaks`` and into subpanels of
    width <= ``width``."""
    z, w = np.polynomial.legendre.leggauss(k)
    cuts = sorted({float(lo), float(hi)} | {float(b) for b in np.ravel(breaks) if lo < b < hi})
    nodes, wts = [], []
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        n = max(1, math.ceil((b - a) / width))
        edges = np.linspace(a, b, n + 1)
        for u, v in zip(edges[:-1], edges[1:], strict=True):
            nodes.append(u + 0.5 * (v - u) * (z + 1.0))
            wts.append(0.5 * (v - u) * w)
    return np.concatenate(nodes), np.concatenate(wts)


def _lse(a, axis=-1):
    top = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(top, axis=axis) + np.log(np.sum(np.exp(a - top), axis=axis))


def _path(losses, log_base, nodes, eta):
    """log N_t (t = 1..T+1), the means (T, ...) and the final posterior weights from the per-round losses at the
    nodes (T, K) and the log prior-times-weight ``log_base`` (K,)."""
    T = losses.shape[0]
    cum = np.vstack([np.zeros((1, losses.shape[1])), np.cumsum(losses, axis=0)])  # (T + 1, K)
    logits = log_base[None, :] - eta * cum
    log_norm = _lse(logits, axis=1)
    post = np.exp(logits - log_norm[:, None])
    means = post[:T] @ nodes
    return log_norm, means, post[T]


def ewa_path_1d(loss, data, eta, lo, hi, log_prior=None, breaks=(), width=0.05, k=20):
    """(log_norm (T+1,), means (T,), nodes (K,), final posterior weights (K,)) of EWA on [lo, hi]: ``loss(nodes,
    D_t)`` the losses at an array of points, ``log_prior(nodes)`` a normalised log-density on [lo, hi] (uniform if
    None), ``breaks`` the loss kinks.  ``means[t]`` is the decision of round t (the posterior of the first t losses),
    ``log_norm[t]`` is log N_{t+1}; the final weights give E_{p_{T+1}} f as weights @ f(nodes)."""
    nodes, wts = _panel_rule(lo, hi, breaks, width, k)
    lp = np.full(nodes.size, -math.log(hi - lo)) if log_prior is None else np.asarray(log_prior(nodes), float)
    data = list(data)
    L = np.array([np.asarray(loss(nodes, D), dtype=np.float64) for D in data]).reshape(len(data), nodes.size)
    log_norm, means, final = _path(L, np.log(wts) + lp, nodes, eta)
    return log_norm, means, nodes, final


def ewa_path_2d(loss, data, eta, lo, hi, log_prior=None, width=0.25, k=16):
    """(log_norm (T+1,), means (T, 2)) of EWA on the box [lo_1, hi_1] x [lo_2, hi_2] by the tensor product of the
    composite rules: ``loss(nodes (K, 2), D_t)`` the losses at the points, ``log_prior(nodes)`` a normalised
    log-density on the box (uniform if None)."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    (n1, w1), (n2, w2) = (_panel_rule(lo[i], hi[i], (), width, k) for i in range(2))
    nodes = np.column_stack([np.repeat(n1, n2.size), np.tile(n2, n1.size)])
    wts = np.repeat(w1, n2.size) * np.tile(w2, n1.size)
    area = float(np.prod(hi - lo))
    lp = np.full(wts.size, -math.log(area)) if log_prior is None else np.asarray(log_prior(nodes), float)
    data = list(data)
    L = np.array([np.asarray(loss(nodes, D), dtype=np.float64) for D in data]).reshape(len(data), wts.size)
    log_norm, means, _ = _path(L, np.log(wts) + lp, nodes, eta)
    return log_norm, means

"""Exact tempered Bayes / EWA (seed 003, Algorithm 1 and eq. (2)) by quadrature on a 1-D interval or a 2-D box.

p_{t+1}(theta) ∝ p_t(theta) exp(-eta ell_t(theta)) is kept as log-weights on Gauss-Legendre nodes; hat theta_t is the
posterior mean.  Also returned: log N_t = log E_pi exp(-eta sum_{i<t} ell_i) (the telescoping normalizers of the proof
of Thm 1) and -1/eta log E_{p_t} exp(-eta ell_t) (the right side of the per-step inequality (18) without eta B^2/8).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable

import numpy as np
from scipy.special import logsumexp

from refvi._checks import as_vector, positive_scalar


@dataclasses.dataclass
class EWAResult:
    means: np.ndarray  # (T,) hat theta_t (decision at round t, from D_{1:t-1}); (T, 2) for ewa_2d
    losses: np.ndarray  # (T,) ell_t(hat theta_t)
    log_norm: np.ndarray  # (T+1,) log N_t, t = 1..T+1 (N_1 = 1)
    mix_loss: np.ndarray  # (T,) -1/eta log E_{p_t} exp(-eta ell_t)
    nodes: np.ndarray
    log_post: np.ndarray  # (K,) final normalized log-weights of p_{T+1} on the nodes


@functools.lru_cache(maxsize=16)
def _legendre(n: int):
    return np.polynomial.legendre.leggauss(n)


def gauss_legendre(lo: float, hi: float, n: int, breaks=()):
    """Nodes and weights of a composite Gauss-Legendre rule on [lo, hi]: one panel per interval between the sorted
    ``breaks`` (kinks of the losses), about n nodes in total (at least 16 per panel).  On a panel where the integrand
    is smooth the rule converges geometrically (panel sizes are rounded up to a power of two); a kink inside a panel
    costs accuracy O(n^-2)."""
    cuts = np.unique(
        np.concatenate([[lo, hi], [b for b in np.asarray(breaks, dtype=np.float64).ravel() if lo < b < hi]])
    )
    want = max(16, int(n) // (cuts.size - 1))
    k = 1 << int(math.ceil(math.log2(want)))  # a power of two, so the cached rules are reused
    z, w = _legendre(k)
    nodes, weights = [], []
    for a, b in itertools.pairwise(cuts):
        half = 0.5 * (b - a)
        nodes.append(a + half * (z + 1.0))
        weights.append(half * w)
    return np.concatenate(nodes), np.concatenate(weights)


def ewa_1d(
    loss: Callable[[np.ndarray, float], np.ndarray],
    data,
    eta: float,
    lo: float,
    hi: float,
    log_prior: Callable[[np.ndarray], np.ndarray] | None = None,
    n_nodes: int = 2000,
    breaks=(),
) -> EWAResult:
    """Run EWA with prior density exp(log_prior) (uniform if None) on Theta = [lo, hi] over the stream ``data``.

    ``loss(theta_nodes, D_t)`` must return the finite losses at the nodes; ``breaks`` lists the kinks of the losses
    (e.g. ``data`` for ``|theta - D_t|``) so that the composite rule integrates every panel of smoothness exactly."""
    eta = positive_scalar(eta, "eta")
    data = as_vector(data, "data")
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"need a finite interval lo < hi, got [{lo}, {hi}]")
    nodes, w = gauss_legendre(lo, hi, n_nodes, breaks)
    lp = np.zeros_like(nodes) if log_prior is None else np.asarray(log_prior(nodes), dtype=np.float64)
    if lp.shape != nodes.shape or not np.all(np.isfinite(lp)):
        raise ValueError("log_prior must return finite values at the quadrature nodes")
    logw = np.log(w) + lp
    logw -= logsumexp(logw)  # the prior pi as normalized weights
    means, losses, log_norm, mix, log_post = _run(loss, data, eta, nodes, logw, lambda post: float(post @ nodes))
    return EWAResult(means, losses, log_norm, mix, nodes, log_post)


def _run(loss, data, eta, nodes, logw, mean_of):
    """The EWA recursion on fixed quadrature nodes (1-D or 2-D): ``logw`` the normalized log prior weights."""
    T = len(data)
    cum = np.zeros(logw.shape[0])
    means, losses, mix = [], np.empty(T), np.empty(T)
    log_norm = np.empty(T + 1)
    log_norm[0] = 0.0
    for t in range(T):
        lpost = logw - eta * cum
        lz = logsumexp(lpost)
        post = np.exp(lpost - lz)
        means.append(mean_of(post))
        lt = np.asarray(loss(nodes, data[t]), dtype=np.float64)
        if lt.shape != (nodes.shape[0],) or not np.all(np.isfinite(lt)):
            raise ValueError(f"loss must return one finite value per node (round {t})")
        losses[t] = float(np.asarray(loss(np.asarray(means[t])[None], data[t]), dtype=np.float64).ravel()[0])
        mix[t] = -logsumexp(lpost - lz - eta * lt) / eta
        cum += lt
        log_norm[t + 1] = logsumexp(logw - eta * cum)
    lpost = logw - eta * cum
    return np.array(means), losses, log_norm, mix, lpost - logsumexp(lpost)


def ewa_2d(
    loss: Callable[[np.ndarray, object], np.ndarray],
    data,
    eta: float,
    lo,
    hi,
    log_prior: Callable[[np.ndarray], np.ndarray] | None = None,
    n_nodes: int = 64,
) -> EWAResult:
    """EWA on the box Theta = [lo_1, hi_1] x [lo_2, hi_2] with prior density exp(log_prior) (uniform if None), by a
    tensor Gauss-Legendre rule with ``n_nodes`` nodes per axis (smooth losses: the rule converges geometrically).

    ``loss(theta_nodes (K, 2), D_t)`` returns the K losses; ``data`` is a sequence of observations D_t (any objects
    the loss understands, e.g. rows of an array).  Means are (T, 2)."""
    eta = positive_scalar(eta, "eta")
    lo, hi = as_vector(lo, "lo", 2), as_vector(hi, "hi", 2)
    if not np.all(hi > lo):
        raise ValueError(f"need lo < hi in both coordinates, got lo={lo}, hi={hi}")
    if int(n_nodes) != n_nodes or n_nodes < 2:
        raise ValueError(f"n_nodes must be an integer >= 2, got {n_nodes!r}")
    z, w = _legendre(int(n_nodes))
    ax = [lo[j] + 0.5 * (hi[j] - lo[j]) * (z + 1.0) for j in range(2)]
    wx = [0.5 * (hi[j] - lo[j]) * w for j in range(2)]
    nodes = np.stack(np.meshgrid(ax[0], ax[1], indexing="ij"), axis=-1).reshape(-1, 2)
    weights = np.outer(wx[0], wx[1]).ravel()
    lp = np.zeros(nodes.shape[0]) if log_prior is None else np.asarray(log_prior(nodes), dtype=np.float64)
    if lp.shape != (nodes.shape[0],) or not np.all(np.isfinite(lp)):
        raise ValueError("log_prior must return one finite value per node")
    logw = np.log(weights) + lp
    logw -= logsumexp(logw)
    if len(data) == 0:
        raise ValueError("data must hold at least one observation")
    means, losses, log_norm, mix, log_post = _run(loss, data, eta, nodes, logw, lambda post: post @ nodes)
    return EWAResult(means, losses, log_norm, mix, nodes, log_post)

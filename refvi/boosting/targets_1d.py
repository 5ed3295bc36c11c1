"""Targets of the paper's experiments (seed 001 §5) with the exact quantities the theory needs.

* :class:`GaussianMixtureTarget`: p_x = sum_k w_k N(m_k, diag tau_k^2) (normalized, any d).  When every component
  is an admissible atom ("MoG-in-family"), p_A = sum_k [w_k P_k(A)/P(A)] TN_k lies in conv(A) and
  f* = KL(p_A || p_x) = -log P_{p_x}(A) exactly (Eq. 5): :meth:`GaussianMixtureTarget.log_prob_box` and
  :meth:`GaussianMixtureTarget.optimal_weights`.
* :class:`CauchyTarget`: the 1-D Cauchy(x0, scale) density; P(A) by arctan.

Both expose ``logp(Z)`` on an (S, d) batch like every refvi target, and ``dim``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special
from scipy.special import logsumexp

from refvi._checks import as_matrix, as_vector, positive_scalar


class GaussianMixtureTarget:
    """Normalized mixture of diagonal Gaussians."""

    def __init__(self, weights, means, scales):
        means = np.asarray(means, dtype=np.float64)
        if means.ndim == 1:
            means = means[:, None]
        self.means = as_matrix(means, "means")
        K, d = self.means.shape
        w = as_vector(weights, "weights", K)
        if np.any(w < 0) or abs(w.sum() - 1.0) > 1e-9:
            raise ValueError(f"weights must be non-negative and sum to one, got {w}")
        self.weights = w / w.sum()
        sc = np.asarray(scales, dtype=np.float64)
        sc = np.broadcast_to(sc[:, None] if sc.ndim == 1 else sc, (K, d)).copy()
        if not np.all(np.isfinite(sc)) or not np.all(sc > 0):
            raise ValueError("component scales must be finite and > 0")
        self.scales = sc
        self.dim = d
        self.name = "gaussian_mixture"

    def logp(self, Z) -> np.ndarray:
        Z = np.asarray(Z, dtype=np.float64)
        if Z.ndim == 1:
            Z = Z[:, None] if self.dim == 1 else Z[None, :]
        t = (Z[None] - self.means[:, None, :]) / self.scales[:, None, :]
        lk = (-0.5 * t * t - np.log(self.scales[:, None, :]) - 0.5 * math.log(2 * math.pi)).sum(-1)
        return logsumexp(lk, axis=0, b=self.weights[:, None])

    def component_log_prob_box(self, box) -> np.ndarray:
        """log P_k(A) = sum_j log(Phi(b) - Phi(a)) per component."""
        a = (box.lo - self.means) / self.scales
        b = (box.hi - self.means) / self.scales
        return _log_ndtr_diff(a, b).sum(1)

    def log_prob_box(self, box) -> float:
        """log P_{p_x}(z in A); f* = -log_prob_box when the components are atoms (Eq. 5)."""
        return float(logsumexp(self.component_log_prob_box(box), b=self.weights))

    def optimal_weights(self, atoms) -> np.ndarray:
        """Weights over ``atoms`` of p_A = sum_k w_k P_k(A)/P(A) TN_k (requires every component to be an atom)."""
        lp = self.component_log_prob_box(atoms.box)
        wa = self.weights * np.exp(lp - self.log_prob_box(atoms.box))
        out = np.zeros(len(atoms))
        for k in range(self.means.shape[0]):
            out[atoms.index_of(self.means[k], self.scales[k])] += wa[k]
        return out


class CauchyTarget:
    """Cauchy(x0, scale) in 1-D (the paper's heavy-tailed target, truncated to the box by the boosting problem)."""

    def __init__(self, loc: float = 0.0, scale: float = 1.0):
        self.loc = float(loc)
        self.scale = positive_scalar(scale, "scale")
        self.dim = 1
        self.name = "cauchy"

    def logp(self, Z) -> np.ndarray:
        z = np.asarray(Z, dtype=np.float64).reshape(-1)
        u = (z - self.loc) / self.scale
        return -math.log(math.pi * self.scale) - np.log1p(u * u)

    def log_prob_box(self, box) -> float:
        lo, hi = float(box.lo[0]), float(box.hi[0])
        return math.log((math.atan((hi - self.loc) / self.scale) - math.atan((lo - self.loc) / self.scale)) / math.pi)


def _log_ndtr_diff(a, b):
    """log(Phi(b) - Phi(a)) elementwise, tail-accurate (log_ndtr and log1mexp)."""
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    upper = a > 0  # both in the upper tail: use symmetry
    lo = np.where(upper, -b, a)
    hi = np.where(upper, -a, b)
    lhi, llo = special.log_ndtr(hi), special.log_ndtr(lo)
    return lhi + np.log1p(-np.exp(llo - lhi))

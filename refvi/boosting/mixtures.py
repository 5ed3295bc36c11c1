"""Finite mixtures q = sum_k alpha_k s_k of truncated Gaussian atoms.

These are the iterates of boosting VI: points of conv(A) (seed 001, Eq. 4).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from refvi._checks import as_generator, as_vector
from refvi.boosting.atoms import AtomSet

WEIGHT_TOL = 1e-9


def check_weights(alpha, K: int, name: str = "weights") -> np.ndarray:
    """Mixture weights: length K, finite, >= 0 and summing to 1 (``|sum - 1| <= 1e-9``); returned renormalized."""
    a = as_vector(alpha, name, K)
    if np.any(a < 0):
        raise ValueError(f"{name} must be non-negative (min {a.min():.3g}): a mixture lies in the simplex")
    s = float(a.sum())
    if abs(s - 1.0) > WEIGHT_TOL:
        raise ValueError(f"{name} must sum to one, they sum to {s!r}")
    return a / s


class Mixture:
    """q(z) = sum_k alpha_k s_k(z) with ``alpha`` a dense weight vector over the atoms of ``atoms``."""

    def __init__(self, atoms: AtomSet, weights):
        if not isinstance(atoms, AtomSet):
            raise TypeError(f"atoms must be an AtomSet, got {type(atoms).__name__}")
        self.atoms = atoms
        self.weights = check_weights(weights, len(atoms))

    @classmethod
    def from_components(cls, atoms: AtomSet, indices, weights) -> Mixture:
        a = np.zeros(len(atoms))
        np.add.at(a, np.asarray(indices, dtype=np.int64), np.asarray(weights, dtype=np.float64))
        return cls(atoms, a)

    @property
    def active(self) -> np.ndarray:
        return np.nonzero(self.weights > 0)[0]

    def logpdf(self, Z) -> np.ndarray:
        act = self.active
        L = self.atoms.logpdf(Z)[act]
        return logsumexp(L, axis=0, b=self.weights[act][:, None])

    def pdf(self, Z) -> np.ndarray:
        return np.exp(self.logpdf(Z))

    def sample(self, n: int, rng) -> np.ndarray:
        """Ancestral sampling: a component by weight, then a draw from it (§4.2)."""
        rng = as_generator(rng)
        act = self.active
        counts = rng.multinomial(int(n), self.weights[act])
        out = [self.atoms.sample(k, c, rng) for k, c in zip(act, counts, strict=True) if c > 0]
        Z = np.concatenate(out, axis=0)
        return Z[rng.permutation(Z.shape[0])]

    def mean(self) -> np.ndarray:
        act = self.active
        return sum(self.weights[k] * self.atoms.moments(k)[0] for k in act)

    def var(self) -> np.ndarray:
        """Per-coordinate variance (law of total variance)."""
        act = self.active
        m = self.mean()
        out = np.zeros(self.atoms.dim)
        for k in act:
            mk, vk = self.atoms.moments(k)
            out += self.weights[k] * (vk + (mk - m) ** 2)
        return out

    def norm_sq(self) -> float:
        """||q||^2_{L2} = alpha^T G alpha on the active atoms."""
        act = self.active
        sub = self.atoms.subset(act)
        a = self.weights[act]
        return float(a @ sub.gram() @ a)

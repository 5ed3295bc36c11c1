"""Location-scale families q(w) = LocScale(m, C, s): z = C u + m, u ~ s (seed 002 §3.1, Eq. 1).

With a standardized base s (E u = 0, V u = I) the energy l(w) = E f(C u + m) keeps the smoothness and strong
convexity constants of f (seed 002 Thms 1-2).  Density: ``q(z) = s(C^{-1}(z - m)) / |det C|``; entropy
``Entropy[s] + log|det C|``; h(w) = -Entropy[q] has grad_C h = -proj_V(C^{-T}) and grad_m h = 0 for every base.

The reparameterization map, its adjoint and the projection onto V are those of :mod:`refvi.families.gaussian`
(shared, not duplicated).  The energy and entropy estimators of :mod:`refvi.estimators` take pre-drawn base
samples U and are unbiased for any base: pass ``U = family.draw_base(rng, n, d)``.  The ``score`` and ``stl``
estimators use the Gaussian score (C^{-T} u, C^{-T}(u u^T - I)) and are therefore correct for the Gaussian base
only (for another base the score estimator is biased and STL is not "sticking the landing").
"""

from __future__ import annotations

import numpy as np

from refvi._checks import as_samples, as_vector, check_scale, check_structure
from refvi.families import gaussian
from refvi.families.bases import AffineBase, Base, _inv_sqrt, standardize


class LocationScale:
    """LocScale(m, C, base) with C restricted to the subspace V named by ``structure`` (full / tril / sym / diag)."""

    def __init__(self, base: Base, structure: str = "full"):
        if not isinstance(base, Base):
            raise TypeError(f"base must be a refvi.families.bases.Base, got {type(base).__name__}")
        self.base = base
        self.structure = check_structure(structure)

    @property
    def standardized(self) -> bool:
        return bool(self.base.standardized)

    # ---- validation ----------------------------------------------------------------------------------------
    def _params(self, m, C):
        m = as_vector(m, "m")
        d = self.base._d(m.shape[0])
        C = _invertible(check_scale(C, d, self.structure))
        return m, C, d

    # ---- sampling and density ------------------------------------------------------------------------------
    def draw_base(self, rng_or_seed, n: int, d: int) -> np.ndarray:
        """Pre-drawn base samples U (n, d), u ~ s, for the gradient estimators."""
        return self.base.sample(rng_or_seed, n, d)

    def sample(self, m, C, rng_or_seed, n: int) -> np.ndarray:
        """n draws z = C u + m, shape (n, d)."""
        m, C, d = self._params(m, C)
        return gaussian.transform(m, C, self.base.sample(rng_or_seed, n, d))

    def log_density(self, z, m, C):
        """log q(z | m, C) = log s(C^{-1}(z - m)) - log|det C| (seed 002 §3.1), for rows of z or one z."""
        m, C, d = self._params(m, C)
        single = np.ndim(z) == 1
        Z = as_samples(z, d, "z")
        U = np.linalg.solve(C, (Z - m).T).T
        out = self.base.log_density(U) - np.linalg.slogdet(C)[1]
        return out[0] if single else out

    # ---- entropy --------------------------------------------------------------------------------------------
    def entropy(self, C) -> float:
        """Entropy[q] = Entropy[s] + log|det C| (Cover & Thomas §8.6; seed 002 §3.1)."""
        d = np.shape(C)[0] if np.ndim(C) == 2 else -1
        C = _invertible(check_scale(C, self.base._d(d), self.structure))
        return self.base.entropy(d) + float(np.linalg.slogdet(C)[1])

    def neg_entropy(self, C) -> float:
        """h(w) = -Entropy[q(w)] (seed 002 Eq. 4), including the base's constant."""
        return -self.entropy(C)

    def grad_neg_entropy(self, C) -> np.ndarray:
        """grad_C h = -proj_V(C^{-T}) for every base (the base only shifts h by a constant)."""
        if self.structure in ("full", "sym"):
            _invertible(check_scale(C, np.shape(C)[0] if np.ndim(C) == 2 else -1, self.structure))
        return gaussian.grad_neg_entropy(C, self.structure)

    # ---- the affine map ---------------------------------------------------------------------------------------
    def proj_V(self, X) -> np.ndarray:
        return gaussian.proj_V(X, self.structure)

    def transform(self, m, C, U) -> np.ndarray:
        """t_w(u) = C u + m for each row of U."""
        return gaussian.transform(m, C, U)

    def adjoint(self, z, u):
        """t_w^*(z) = (z, proj_V(z u^T)): the gradient of <z, t_w(u)> in w = (m, C)."""
        return gaussian.adjoint(z, u, self.structure)

    # ---- moments ------------------------------------------------------------------------------------------------
    def mean(self, m, C) -> np.ndarray:
        """E z = C E u + m (= m for a standardized base)."""
        m, C, d = self._params(m, C)
        return C @ self.base.mean(d) + m

    def cov(self, m, C) -> np.ndarray:
        """V z = C V[u] C^T (= C C^T for a standardized base)."""
        m, C, d = self._params(m, C)
        return C @ self.base.cov(d) @ C.T

    def __repr__(self) -> str:
        return f"LocationScale({self.base!r}, structure={self.structure!r})"


def standardized_family(base: Base, d: int, structure: str = "full") -> tuple[LocationScale, AffineBase]:
    """LocationScale over the standardized version of ``base``, and that standardized base.

    The map between parameters is (m, C) -> (m - C Sigma^{-1/2} mu, C Sigma^{-1/2}) (standardized -> original); it
    keeps a full C full but not a triangular C triangular, so ``structure`` should be "full" unless Sigma is diagonal.
    """
    s = standardize(base, d)
    return LocationScale(s, structure), s


def to_base_params(m, C, base: Base):
    """Parameters (m0, C0) of LocScale(., ., base) giving the same law as LocScale(m, C, standardize(base)).

    The standardized base is u = R (u0 - mu) with R = Sigma^{-1/2}, so C u + m = C R u0 + (m - C R mu).
    """
    m = as_vector(m, "m")
    d = base._d(m.shape[0])
    C = check_scale(C, d, "full", require_domain=False)
    mu, R = base.mean(d), _inv_sqrt(base.cov(d))
    return m - C @ R @ mu, C @ R


def _invertible(C):
    """Reject numerically singular C (check_scale only tests sigma_min > 0, which rounding can satisfy)."""
    sv = np.linalg.svd(C, compute_uv=False)
    if not sv[-1] > C.shape[0] * np.finfo(np.float64).eps * sv[0]:
        raise ValueError(
            f"C must be invertible: it is numerically singular (singular values {sv[0]:.3g} .. {sv[-1]:.3g})"
        )
    return C

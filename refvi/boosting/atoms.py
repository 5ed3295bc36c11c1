"""Truncated Gaussian atoms on a box (seed 001 §3, assumptions A1-A2, Thm 8).

An atom is s(z) = N(z; mu, diag sigma^2) 1_A(z) / Z(mu, sigma) on the box A = [lo, hi] (a product of intervals), with
its mean inside the box.  :class:`AtomSet` is a finite set of atoms (the quantized set of Thm 9), :class:`Box` the
common support A.  The constants of the paper for a finite set are exact here: eps = min_k min_{z in A} s_k(z) (the
farthest corner of the box), M = max_k max_z s_k(z) (at the mean), ||s_i - s_j||^2 from the closed-form Gram matrix.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import special

from refvi._checks import as_matrix, as_vector, positive_scalar
from refvi.kernels import boosting as kb


@dataclasses.dataclass(frozen=True)
class Box:
    """The support A = [lo_1, hi_1] x ... x [lo_d, hi_d] shared by all atoms (A1)."""

    lo: np.ndarray
    hi: np.ndarray

    def __init__(self, lo, hi):
        lo = as_vector(np.atleast_1d(lo), "lo")  # as_vector refuses strings, None, objects by name
        hi = as_vector(np.atleast_1d(hi), "hi", lo.shape[0])
        if not np.all(hi > lo):
            raise ValueError(
                f"the box must have positive volume: need hi > lo in every dimension, got lo={lo}, hi={hi}"
            )
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @property
    def dim(self) -> int:
        return self.lo.shape[0]

    @property
    def volume(self) -> float:
        """Lebesgue measure Leb(A) (Cor 3)."""
        return float(np.prod(self.hi - self.lo))

    @property
    def diameter(self) -> float:
        """Euclidean diameter of A (the "diam(A)" in the exponent of Thm 8)."""
        return float(np.linalg.norm(self.hi - self.lo))

    def contains(self, Z) -> np.ndarray:
        Z = np.atleast_2d(Z)
        return np.all((Z >= self.lo) & (Z <= self.hi), axis=1)

    def grid(self, stride: float) -> np.ndarray:
        """Means on the lattice lo + stride * k inside the box (the quantized means of §5), shape (K, d)."""
        stride = positive_scalar(stride, "stride")
        axes = []
        for lo, hi in zip(self.lo, self.hi, strict=True):
            n = int(math.floor((hi - lo) / stride * (1 + 1e-12))) + 1
            axes.append(lo + stride * np.arange(n))
        mesh = np.meshgrid(*axes, indexing="ij")
        return np.ascontiguousarray(np.stack([m.ravel() for m in mesh], axis=1))


def as_box(box) -> Box:
    if isinstance(box, Box):
        return box
    if isinstance(box, (tuple, list)) and len(box) == 2:
        return Box(box[0], box[1])
    raise TypeError(f"box must be a Box or a (lo, hi) pair, got {type(box).__name__}")


class AtomSet:
    """A finite set of truncated Gaussian atoms TN(mu_k, diag sigma_k^2; A), k = 0..K-1.

    ``means`` (K, d) must lie in the box; ``scales`` is a scalar (isotropic, shared), a (K,) vector (isotropic per
    atom) or a (K, d) array (diagonal).  All are validated: sigma > 0, means inside A.
    """

    def __init__(self, box, means, scales):
        self.box = as_box(box)
        d = self.box.dim
        means = np.asarray(means, dtype=np.float64)
        if means.ndim == 1 and d == 1:
            means = means[:, None]
        means = as_matrix(means, "means", (None, d))
        if means.shape[0] < 1:
            raise ValueError("an atom set needs at least one atom")
        outside = ~self.box.contains(means)
        if np.any(outside):
            i = int(np.argmax(outside))
            raise ValueError(
                f"atom means must lie in the box [lo, hi] (A1, Thm 8): mean {means[i]} of atom {i} is "
                f"outside lo={self.box.lo}, hi={self.box.hi}"
            )
        K = means.shape[0]
        sc = np.asarray(scales, dtype=np.float64)
        if sc.ndim == 0:
            sc = np.full((K, d), float(sc))
        elif sc.ndim == 1:
            if sc.shape[0] != K:
                raise ValueError(
                    f"atom scales: a vector gives one isotropic sigma per atom, so it needs {K} entries (one per "
                    f"atom), got {sc.shape[0]}; pass a ({K}, {d}) array for diagonal scales"
                )
            sc = np.repeat(sc[:, None], d, axis=1)
        sc = as_matrix(sc, "scales", (K, d))
        if not np.all(sc > 0):
            raise ValueError(f"atom scales sigma must be > 0, got min sigma = {sc.min():.3g}")
        self.means = np.ascontiguousarray(means)
        self.scales = np.ascontiguousarray(sc)
        self.log_normalizers = kb.tn_log_normalizers(self.means, self.scales, self.box.lo, self.box.hi)
        self._gram = None

    # ---- construction ---------------------------------------------------------------------------------------
    @classmethod
    def grid(cls, box, stride: float, sigma) -> AtomSet:
        """Atoms with means on the stride-lattice of the box and a common scale (the paper's quantized set)."""
        box = as_box(box)
        return cls(box, box.grid(stride), sigma)

    def __len__(self) -> int:
        return self.means.shape[0]

    @property
    def dim(self) -> int:
        return self.box.dim

    def subset(self, idx) -> AtomSet:
        idx = np.asarray(idx, dtype=np.int64)
        return AtomSet(self.box, self.means[idx], self.scales[idx])

    def index_of(self, mu, sigma=None, tol: float = 1e-9) -> int:
        """Index of the atom with mean ``mu`` (and scale ``sigma`` if given); ValueError if absent."""
        mu = as_vector(np.atleast_1d(mu), "mu", self.dim)
        ok = np.all(np.abs(self.means - mu) <= tol, axis=1)
        if sigma is not None:
            ok &= np.all(np.abs(self.scales - np.broadcast_to(sigma, (self.dim,))) <= tol, axis=1)
        hits = np.nonzero(ok)[0]
        if hits.size == 0:
            raise ValueError(f"no atom with mean {mu} (sigma {sigma}) in this atom set")
        return int(hits[0])

    # ---- densities ------------------------------------------------------------------------------------------
    def logpdf(self, Z, k=None) -> np.ndarray:
        """log s_k(z) for z in the rows of Z: shape (K, S) for all atoms or (S,) for atom ``k``; -inf outside A."""
        Z = np.asarray(Z, dtype=np.float64)
        if Z.ndim == 1:
            Z = Z[:, None] if self.dim == 1 else Z[None, :]
        Z = as_matrix(Z, "Z", (None, self.dim))
        ks = np.arange(len(self)) if k is None else np.atleast_1d(k)
        mu = self.means[ks][:, None, :]
        sg = self.scales[ks][:, None, :]
        t = (Z[None] - mu) / sg
        out = (-0.5 * t * t - np.log(sg) - 0.5 * math.log(2 * math.pi)).sum(-1) - self.log_normalizers[ks][:, None]
        out = np.where(self.box.contains(Z)[None, :], out, -np.inf)
        return out[0] if k is not None and np.ndim(k) == 0 else out

    def sample(self, k: int, n: int, rng) -> np.ndarray:
        """n draws from atom k by the inverse CDF (exact; the mean is inside A so no tail cancellation)."""
        rng = np.random.default_rng(rng)
        mu, sg = self.means[k], self.scales[k]
        a = special.ndtr((self.box.lo - mu) / sg)
        b = special.ndtr((self.box.hi - mu) / sg)
        u = rng.random((int(n), self.dim))
        z = mu + sg * special.ndtri(a + u * (b - a))
        return np.clip(z, self.box.lo, self.box.hi)

    def moments(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(mean, variance) per coordinate of atom k (truncated-normal closed form)."""
        mu, sg = self.means[k], self.scales[k]
        a = (self.box.lo - mu) / sg
        b = (self.box.hi - mu) / sg
        Z = special.ndtr(b) - special.ndtr(a)
        pa, pb = np.exp(-0.5 * a * a) / math.sqrt(2 * math.pi), np.exp(-0.5 * b * b) / math.sqrt(2 * math.pi)
        m = mu + sg * (pa - pb) / Z
        v = sg**2 * (1 + (a * pa - b * pb) / Z - ((pa - pb) / Z) ** 2)
        return m, v

    # ---- constants (A2, Thm 2, Cor 3) ------------------------------------------------------------------------
    def density_bounds(self) -> tuple[float, float]:
        """(eps, M): exact min and max of the atom densities over A (min at the farthest corner, max at the mean)."""
        far = np.maximum(self.means - self.box.lo, self.box.hi - self.means)
        log_common = -np.log(self.scales).sum(1) - 0.5 * self.dim * math.log(2 * math.pi) - self.log_normalizers
        log_min = log_common - 0.5 * ((far / self.scales) ** 2).sum(1)
        return float(np.exp(log_min.min())), float(np.exp(log_common.max()))

    def gram(self) -> np.ndarray:
        """G[i, j] = <s_i, s_j>_{L2}: closed form."""
        if self._gram is None:
            self._gram = kb.gram_matrix(self.means, self.scales, self.box.lo, self.box.hi)
        return self._gram

    def diameter_sq(self) -> float:
        """diam(A-set)^2 = max_{i,j} ||s_i - s_j||^2 (attained at atoms since ||.||^2 is convex; Cor 3)."""
        G = self.gram()
        g = np.diag(G)
        return float(np.max(g[:, None] + g[None, :] - 2 * G))

    def max_norm_sq(self) -> float:
        """max_k ||s_k||^2."""
        return float(np.max(np.diag(self.gram())))

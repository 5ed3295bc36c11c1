"""Base distributions s of location-scale families z = C u + m, u ~ s (seed 002 §3.1).

Standardized bases (E u = 0, V u = I, so that Thms 1-2 of seed 002 hold with the constants of f):

* product bases, iid coordinates: :class:`GaussianBase` N(0, 1), :class:`UniformBase` U[-sqrt3, sqrt3],
  :class:`LaplaceBase` Laplace(0, 1/sqrt2), :class:`CenteredExponentialBase` Exp(1) - 1 (skewed),
  :class:`RademacherBase` (+-1, discrete, no density), :class:`TwoPointBase` (asymmetric two-point, discrete);
* :class:`StudentTBase` the standardized Student-t, nu > 2: u = g sqrt((nu - 2) / chi2_nu), elliptical (multivariate t
  with shape (nu-2)/nu I, seed 002 Example 10) or, with ``product=True``, iid univariate standardized t coordinates.

:class:`AffineBase` is A u0 + b for a base u0 (non-standard bases such as the shifted Gaussian of seed 002 Example 8 or
the shape-parameterized Student-t of Example 9), and :func:`standardize` returns the standardized version
LocScale(-Sigma^{-1/2} mu, Sigma^{-1/2}, s0) of any base with finite variance (seed 002 §3.1).

Every base offers ``sample(rng_or_seed, n, d)``, ``log_density(U)`` (where a density exists), ``entropy(d)`` (closed
form; discrete bases raise), ``mean(d)``, ``cov(d)`` and the characteristic function ``charfun(K) = E exp(i K u)``
for rows K of shape (..., d).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from refvi._checks import as_matrix, as_samples, as_vector, positive_scalar

SQRT2 = math.sqrt(2.0)
SQRT3 = math.sqrt(3.0)


def _dim(d) -> int:
    if isinstance(d, bool) or int(d) != d or d < 1:
        raise ValueError(f"dimension d must be a positive integer, got {d!r}")
    return int(d)


def _count(n) -> int:
    if isinstance(n, bool) or int(n) != n or n < 0:
        raise ValueError(f"number of samples n must be a non-negative integer, got {n!r}")
    return int(n)


def _rng(rng_or_seed) -> np.random.Generator:
    if isinstance(rng_or_seed, np.random.Generator):
        return rng_or_seed
    if rng_or_seed is None or isinstance(rng_or_seed, (bool, float)):
        raise TypeError("pass a numpy.random.Generator or an integer seed (None would be non-deterministic)")
    return np.random.default_rng(rng_or_seed)


def _freqs(K) -> tuple[np.ndarray, bool]:
    K = np.asarray(K, dtype=np.float64)
    if not np.all(np.isfinite(K)):
        raise ValueError("frequencies K contain non-finite values")
    single = K.ndim == 1
    return (K[None, :] if single else K), single


class Base:
    """A distribution of u in R^d.  Subclasses fix the law; ``d`` is passed to each method."""

    name = "base"
    has_density = True
    discrete = False
    standardized = True
    fixed_dim: int | None = None  # set when the base only exists in one dimension (AffineBase)

    def _d(self, d) -> int:
        d = _dim(d)
        if self.fixed_dim is not None and d != self.fixed_dim:
            raise ValueError(f"{self.name} lives in dimension {self.fixed_dim}, got d={d}")
        return d

    def sample(self, rng_or_seed, n: int, d: int) -> np.ndarray:
        """n iid draws, shape (n, d); deterministic given the seed / generator state."""
        return self._sample(_rng(rng_or_seed), _count(n), self._d(d))

    def log_density(self, U) -> np.ndarray:
        """log s(u) for each row of U (n, d) or a single u (d,); -inf outside the support."""
        if not self.has_density:
            raise ValueError(f"{self.name} base is discrete: it has no density (no log-density, no entropy)")
        single = np.ndim(U) == 1
        d = self._d(np.shape(U)[-1])
        out = self._log_density(as_samples(U, d, "U"))
        return out[0] if single else out

    def entropy(self, d: int) -> float:
        """Differential entropy of s in dimension d (closed form)."""
        if not self.has_density:
            raise ValueError(f"{self.name} base is discrete: it has no density, so no differential entropy")
        return float(self._entropy(self._d(d)))

    def mean(self, d: int) -> np.ndarray:
        return np.zeros(self._d(d))

    def cov(self, d: int) -> np.ndarray:
        return np.eye(self._d(d))

    def charfun(self, K) -> np.ndarray:
        """E exp(i K^T u) for K of shape (d,) or (n, d); complex."""
        K, single = _freqs(K)
        self._d(K.shape[1])
        out = self._charfun(K)
        return out[0] if single else out

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    # the law, supplied by each subclass (inputs already validated by the public methods above)
    def _sample(self, rng: np.random.Generator, n: int, d: int) -> np.ndarray:
        raise NotImplementedError

    def _log_density(self, U: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _entropy(self, d: int) -> float:
        raise NotImplementedError

    def _charfun(self, K: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class ProductBase(Base):
    """iid coordinates with a scalar law: log-density, entropy and characteristic function factorize."""

    # the scalar law, supplied by each subclass (discrete laws have no _logpdf1 / _entropy1)
    def _sample1(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        raise NotImplementedError

    def _logpdf1(self, U: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _entropy1(self) -> float:
        raise NotImplementedError

    def _psi(self, K: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _sample(self, rng, n, d):
        return self._sample1(rng, (n, d))

    def _log_density(self, U):
        return np.sum(self._logpdf1(U), axis=1)

    def _entropy(self, d):
        return d * self._entropy1()

    def _charfun(self, K):
        return np.prod(self._psi(K), axis=1)


class GaussianBase(ProductBase):
    """N(0, I): psi(k) = exp(-k^2/2), entropy (d/2) log(2 pi e)."""

    name = "gaussian"

    def _sample1(self, rng, shape):
        return rng.standard_normal(shape)

    def _logpdf1(self, U):
        return -0.5 * U * U - 0.5 * math.log(2.0 * math.pi)

    def _entropy1(self):
        return 0.5 * math.log(2.0 * math.pi * math.e)

    def _psi(self, K):
        return np.exp(-0.5 * K * K).astype(np.complex128)


class UniformBase(ProductBase):
    """Uniform[-sqrt3, sqrt3]: psi(k) = sin(sqrt3 k) / (sqrt3 k), entropy log(2 sqrt3) per coordinate."""

    name = "uniform"

    def _sample1(self, rng, shape):
        return rng.uniform(-SQRT3, SQRT3, shape)

    def _logpdf1(self, U):
        return np.where(np.abs(U) <= SQRT3, -math.log(2.0 * SQRT3), -np.inf)

    def _entropy1(self):
        return math.log(2.0 * SQRT3)

    def _psi(self, K):
        return np.sinc(SQRT3 * K / math.pi).astype(np.complex128)  # np.sinc(x) = sin(pi x) / (pi x)


class LaplaceBase(ProductBase):
    """Laplace(0, 1/sqrt2): density ``exp(-sqrt2 |u|) / sqrt2``, psi(k) = 1 / (1 + k^2/2), entropy 1 + log(2)/2."""

    name = "laplace"

    def _sample1(self, rng, shape):
        return rng.laplace(0.0, 1.0 / SQRT2, shape)

    def _logpdf1(self, U):
        return -SQRT2 * np.abs(U) - 0.5 * math.log(2.0)

    def _entropy1(self):
        return 1.0 + 0.5 * math.log(2.0)

    def _psi(self, K):
        return (1.0 / (1.0 + 0.5 * K * K)).astype(np.complex128)


class CenteredExponentialBase(ProductBase):
    """Exp(1) - 1 (skewed): density exp(-(u + 1)) on u > -1, psi(k) = exp(-ik) / (1 - ik), entropy 1."""

    name = "exponential"

    def _sample1(self, rng, shape):
        return rng.standard_exponential(shape) - 1.0

    def _logpdf1(self, U):
        return np.where(U >= -1.0, -(U + 1.0), -np.inf)

    def _entropy1(self):
        return 1.0

    def _psi(self, K):
        return np.exp(-1j * K) / (1.0 - 1j * K)


class TwoPointBase(ProductBase):
    """Standardized two-point law: P(u = sqrt((1-p)/p)) = p, P(u = -sqrt(p/(1-p))) = 1 - p.

    p = 1/2 is the Rademacher base.  Discrete: no density and no entropy.  ``atoms(d)`` lists the 2^d atoms of the
    product law with their probabilities (the exact expectation is a finite sum).
    """

    name = "two_point"
    has_density = False
    discrete = True

    def __init__(self, p: float = 0.5):
        p = positive_scalar(p, "p")
        if not p < 1.0:
            raise ValueError(f"p must lie in (0, 1), got {p}")
        self.p = p
        self.hi = math.sqrt((1.0 - p) / p)
        self.lo = -math.sqrt(p / (1.0 - p))

    def _sample1(self, rng, shape):
        return np.where(rng.random(shape) < self.p, self.hi, self.lo)

    def _psi(self, K):
        return self.p * np.exp(1j * self.hi * K) + (1.0 - self.p) * np.exp(1j * self.lo * K)

    def atoms(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """(atoms (2^d, d), probabilities (2^d,)) of the product law."""
        d = self._d(d)
        bits = (np.arange(2**d)[:, None] >> np.arange(d)[None, :]) & 1  # 1 -> the 'hi' atom
        U = np.where(bits == 1, self.hi, self.lo)
        k = bits.sum(axis=1)
        w = self.p**k * (1.0 - self.p) ** (d - k)
        return U.astype(np.float64), w

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p!r})"


class RademacherBase(TwoPointBase):
    """Rademacher +-1 with probability 1/2 each: psi(k) = cos k; discrete (no density, no entropy)."""

    name = "rademacher"

    def __init__(self):
        super().__init__(0.5)

    def _psi(self, K):
        return np.cos(K).astype(np.complex128)

    def __repr__(self) -> str:
        return "RademacherBase()"


class StudentTBase(Base):
    """Standardized Student-t, nu > 2: u = g sqrt((nu - 2) / W), g ~ N(0, I), W ~ chi2_nu (seed 002 Example 10).

    Elliptical by default (one W for all coordinates: the multivariate t with shape (nu-2)/nu I); ``product=True``
    gives iid univariate standardized t coordinates.  Characteristic function of one elliptical block:
    Psi(kappa) = K_{nu/2}(r) r^{nu/2} / (Gamma(nu/2) 2^{nu/2-1}), r = sqrt(nu - 2) kappa, kappa = ||k||.
    """

    name = "student_t"

    def __init__(self, nu: float, product: bool = False):
        nu = positive_scalar(nu, "nu")
        if not nu > 2.0:
            raise ValueError(f"the standardized Student-t needs nu > 2 (finite variance), got nu={nu}")
        self.nu = nu
        self.product = bool(product)

    def _sample(self, rng, n, d):
        g = rng.standard_normal((n, d))
        W = rng.chisquare(self.nu, (n, d) if self.product else (n, 1))
        return g * np.sqrt((self.nu - 2.0) / W)

    def _block_logpdf(self, sq, k):
        nu = self.nu
        return (
            special.gammaln(0.5 * (nu + k))
            - special.gammaln(0.5 * nu)
            - 0.5 * k * math.log((nu - 2.0) * math.pi)
            - 0.5 * (nu + k) * np.log1p(sq / (nu - 2.0))
        )

    def _log_density(self, U):
        if self.product:
            return np.sum(self._block_logpdf(U * U, 1), axis=1)
        return self._block_logpdf(np.sum(U * U, axis=1), U.shape[1])

    def _block_entropy(self, k):
        nu = self.nu
        a, b = 0.5 * (nu + k), 0.5 * nu
        h_t = (
            -special.gammaln(a)
            + special.gammaln(b)
            + 0.5 * k * math.log(nu * math.pi)
            + a * (special.digamma(a) - special.digamma(b))
        )
        return h_t + 0.5 * k * math.log((nu - 2.0) / nu)  # u = sqrt((nu-2)/nu) t

    def _entropy(self, d):
        return d * self._block_entropy(1) if self.product else self._block_entropy(d)

    def _Psi(self, kappa):
        nu = self.nu
        r = math.sqrt(nu - 2.0) * np.asarray(kappa, dtype=np.float64)
        out = np.ones_like(r)
        pos = r > 0
        rp = r[pos]
        # K_v(r) = kve(v, r) exp(-r); logs keep r^{nu/2} K_{nu/2}(r) finite for large r.  K_v(r) overflows only for
        # r < 1e-308^(1/v), where r^v K_v(r) = Gamma(v) 2^(v-1) (1 + O(r^(2 min(v, 1)))) and Psi is 1 to the last bit.
        with np.errstate(over="ignore"):
            val = np.exp(
                np.log(special.kve(0.5 * nu, rp))
                - rp
                + 0.5 * nu * np.log(rp)
                - special.gammaln(0.5 * nu)
                - (0.5 * nu - 1.0) * math.log(2.0)
            )
        out[pos] = np.where(np.isfinite(val), val, 1.0)
        return out

    def _charfun(self, K):
        if self.product:
            return np.prod(self._Psi(np.abs(K)), axis=1).astype(np.complex128)
        return self._Psi(np.sqrt(np.sum(K * K, axis=1))).astype(np.complex128)

    def __repr__(self) -> str:
        return f"StudentTBase(nu={self.nu!r}, product={self.product!r})"


class AffineBase(Base):
    """The law of A u0 + b, u0 ~ ``base`` (fixed dimension d = len(b)).

    mean A mu0 + b, covariance A Sigma0 A^T, entropy H0 + log|det A|, log-density log s0(A^{-1}(u - b)) - log|det A|,
    characteristic function exp(i k^T b) psi0(A^T k).  ``standardized`` is computed from the moments.
    """

    name = "affine"

    def __init__(self, base: Base, shift, scale):
        if not isinstance(base, Base):
            raise TypeError(f"base must be a refvi Base, got {type(base).__name__}")
        b = as_vector(shift, "shift")
        d = b.shape[0]
        A = as_matrix(scale, "scale", (d, d))
        if base.fixed_dim is not None and base.fixed_dim != d:
            raise ValueError(f"shift has length {d} but the inner base lives in dimension {base.fixed_dim}")
        s_min = np.linalg.svd(A, compute_uv=False)[-1]
        if not s_min > 1e-12 * max(1.0, np.abs(A).max()):
            raise ValueError(f"scale must be invertible (smallest singular value {s_min:.3g})")
        self.base, self.shift, self.scale, self.fixed_dim = base, b, A, d
        self.has_density = base.has_density
        self.discrete = base.discrete
        self.name = f"affine({base.name})"
        mu, S = self.mean(d), self.cov(d)
        self.standardized = bool(np.allclose(mu, 0.0, atol=1e-12) and np.allclose(S, np.eye(d), atol=1e-12))

    def _sample(self, rng, n, d):
        return self.base.sample(rng, n, d) @ self.scale.T + self.shift

    def _log_density(self, U):
        U0 = np.linalg.solve(self.scale, (U - self.shift).T).T
        return self.base.log_density(U0) - np.linalg.slogdet(self.scale)[1]

    def _entropy(self, d):
        return self.base.entropy(d) + np.linalg.slogdet(self.scale)[1]

    def mean(self, d):
        d = self._d(d)
        return self.scale @ self.base.mean(d) + self.shift

    def cov(self, d):
        d = self._d(d)
        return self.scale @ self.base.cov(d) @ self.scale.T

    def _charfun(self, K):
        return np.exp(1j * (K @ self.shift)) * self.base.charfun(K @ self.scale)

    def atoms(self, d: int):
        """Atoms and probabilities when the inner base is discrete."""
        if not hasattr(self.base, "atoms"):
            raise ValueError(f"{self.base.name} is not a discrete base with atoms")
        U0, w = self.base.atoms(self._d(d))
        return U0 @ self.scale.T + self.shift, w

    def __repr__(self) -> str:
        return f"AffineBase({self.base!r}, shift={self.shift.tolist()}, scale={self.scale.tolist()})"


def _inv_sqrt(S: np.ndarray) -> np.ndarray:
    """S^{-1/2}, the symmetric inverse square root of a base covariance (positive definite, else refused)."""
    lam, Q = np.linalg.eigh(0.5 * (S + S.T))
    if not lam[0] > 0:
        raise ValueError(f"the base covariance must be positive definite (smallest eigenvalue {lam[0]:.3g})")
    return (Q * lam**-0.5) @ Q.T


def standardize(base: Base, d: int) -> AffineBase:
    """s = LocScale(-Sigma^{-1/2} mu, Sigma^{-1/2}, s0): E u = 0, V u = I (seed 002 §3.1).

    LocScale(m, C, s) is LocScale(m - C Sigma^{-1/2} mu, C Sigma^{-1/2}, s0): the same set of distributions.
    """
    if not isinstance(base, Base):
        raise TypeError(f"base must be a refvi Base, got {type(base).__name__}")
    d = base._d(d)
    mu, S = base.mean(d), base.cov(d)
    R = _inv_sqrt(S)
    if isinstance(base, AffineBase):  # compose the affine maps rather than nest them
        return AffineBase(base.base, R @ (base.shift - mu), R @ base.scale)
    return AffineBase(base, -R @ mu, R)


def shifted_gaussian(mu0) -> AffineBase:
    """N(mu0, I): the non-standardized base of seed 002 Example 8."""
    mu0 = as_vector(mu0, "mu0")
    return AffineBase(GaussianBase(), mu0, np.eye(mu0.shape[0]))


def student_t_shape(nu: float, d: int) -> AffineBase:
    """The standard multivariate t_nu (shape I, covariance nu/(nu-2) I): seed 002 Example 9's non-standard base."""
    t = StudentTBase(nu)
    d = _dim(d)
    return AffineBase(t, np.zeros(d), math.sqrt(t.nu / (t.nu - 2.0)) * np.eye(d))


STANDARD_BASES = {
    "gaussian": GaussianBase,
    "uniform": UniformBase,
    "laplace": LaplaceBase,
    "exponential": CenteredExponentialBase,
    "rademacher": RademacherBase,
}


def get_base(name: str, **kwargs) -> Base:
    """Build a base by name: gaussian, uniform, laplace, exponential, rademacher, two_point(p=), student_t(nu=)."""
    if name in STANDARD_BASES:
        if kwargs:
            raise TypeError(f"base {name!r} takes no parameters, got {sorted(kwargs)}")
        return STANDARD_BASES[name]()
    if name == "two_point":
        return TwoPointBase(**kwargs)
    if name == "student_t":
        return StudentTBase(**kwargs)
    raise ValueError(f"unknown base {name!r}; expected one of {sorted(STANDARD_BASES) + ['two_point', 'student_t']}")
